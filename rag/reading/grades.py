"""How well a sentence answers a question: a relevance score, and a grade of the answer scorer's probability.

`relevance` is the MiniLM cosine between question and sentence plus a share for the question's content
words the sentence repeats (MiniLM alone under-rates rare names such as 'SignSGD'); topicality and the
answer scorer's features read it. What a sentence is graded by is the answer scorer's probability that it
answers (rag.reading.answer_scorer), against two thresholds on that probability:

    answers   probability >= ANSWERS_AT   the sentence answers the question on its own
    related   probability >= FLOOR        bears on the question; quoted only when nothing better exists
    weak      below FLOOR                 does not answer it: never quoted by the extractive answerer

Both answerers, summaries and evidence lists grade each citation this way (rag.reading.citation_grades).
The thresholds are chosen on mlqa train end to end, each train question scored by the scorer's fold model
that did not see it (bench/tune_answer_pick.py --folds; docs/quality.md, "Answers: the answer-sentence
scorer"): ANSWERS_AT 0.95, the only value of the grid at which at least 0.85 of the quotes graded `answers`
quote a marked answer or partial sentence of the question's paper (0.880 out of fold; 0.90 gave 0.766);
FLOOR 0.10: 0.05 and 0.10 hit 0.629 of train, 0.20 0.610, and the higher of the tied ones is kept. A question
whose best sentence is below it is not answered.
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
from pydantic import BaseModel

from rag.reading.stems import stem_words

Grade = Literal["answers", "related", "weak"]

FLOOR = 0.10
ANSWERS_AT = 0.95
# What topicality's near misses must reach on relevance (not a probability): 0.40, chosen on PubMedQA as the
# answerer's relevance floor before the answer scorer.
RELEVANCE_FLOOR = 0.40
OVERLAP_WEIGHT = 0.3

_STOP = frozenset("""a an the of in on for to and or with by from as at is are was were be been this that these those
it its we our they their what which who whom how why when where do does did can could should would may might
there here than then so such not no into over under about between via using use used show shows new""".split())


class Graded(BaseModel):
    """A citation's grade: how well its evidence answers the question, and the score it rests on."""

    grade: Grade
    score: float

    def as_json(self) -> dict:
        return {"grade": self.grade, "score": round(self.score, 4)}


def grade_of(score: float, floor: float = FLOOR, answers_at: float = ANSWERS_AT) -> Grade:
    return "answers" if score >= answers_at else "related" if score >= floor else "weak"


def graded(score: float, floor: float = FLOOR, answers_at: float = ANSWERS_AT) -> Graded:
    return Graded(grade=grade_of(score, floor, answers_at), score=float(score))


def content_stems(text: str) -> set[str]:
    """Stemmed content words (stop words and one-letter tokens dropped)."""
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1]
    return set(stem_words(words))


def relevance(question: str, sentences: list[str], embedder, question_vector: np.ndarray | None = None) -> np.ndarray:
    """Each sentence's relevance score for the question (see the module docstring)."""
    if not sentences:
        return np.zeros(0, dtype=np.float32)
    if question_vector is None:
        vecs = embedder.embed_array([question] + list(sentences))
        qv, sv = vecs[0], vecs[1:]
    else:
        qv, sv = question_vector, embedder.embed_array(list(sentences))
    sims = (sv @ qv).astype(np.float32)
    q = content_stems(question)
    if q:
        sims = sims + OVERLAP_WEIGHT * np.array([len(q & content_stems(s)) / len(q) for s in sentences],
                                                dtype=np.float32)
    return sims
