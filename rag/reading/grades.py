"""How well a sentence answers a question: one relevance score, an absolute floor, and a grade.

The score is the MiniLM cosine between question and sentence plus a share for the question's content
words the sentence repeats (MiniLM alone under-rates rare names such as 'SignSGD'). It is absolute (not
relative to the other candidates), so it can say "nothing here answers" as well as "this answers":

    answers   score >= ANSWERS_AT     the sentence answers the question on its own
    related   score >= FLOOR          on the question's topic; quoted only when nothing better exists
    weak      below FLOOR             does not answer it: never quoted by the extractive answerer

The grade is taken of the relevance plus a bonus when the sentence's role is one the question's kind
wants (ROLE_BONUS): a problem statement relates to a "how" question, a method answers it.

Both answerers grade each citation this way (bench/pubmedqa_answers.py chose the thresholds on the
first half of PubMedQA PQA-L, see docs/design.md "Answers and abstention").
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
from pydantic import BaseModel

# Chosen on PubMedQA PQA-L questions 1-200 (bench/pubmedqa_answers.py --tune --limit 200; docs/quality.md). The role
# bonus is the lever: 0 -> 0.40 of answers quote the conclusion, 0.1 -> 0.58, 0.2 -> 0.69, 0.3 -> 0.73-0.76.
ROLE_BONUS = 0.3  # added to a sentence's rank (and grade score) when its role answers the question's kind

Grade = Literal["answers", "related", "weak"]

# FLOOR: on PubMedQA PQA-L questions 1-200 (bench/pubmedqa_answers.py --tune) any floor from 0.30 to 0.40
# quotes a conclusion sentence as often (the lead is the same), so the highest is kept: a sentence scoring
# below 0.40 shares little with the question. ANSWERS_AT (what another paper's best sentence must reach
# on relevance alone to be quoted too; a grade takes relevance plus the role bonus, see rag.tasks.extractive):
# from 0.5 to 0.65 the same share of answers quotes its conclusion; other abstracts' share of the quoted
# sentences falls from 19 % to 9 %. 0.60 (15 %) keeps a second paper that answers a seed question
# (0.64) which 0.65 drops.
FLOOR = 0.40
ANSWERS_AT = 0.60
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


_stemmer = None


def content_stems(text: str) -> set[str]:
    """Stemmed content words (stop words and one-letter tokens dropped)."""
    global _stemmer
    if _stemmer is None:
        import Stemmer

        _stemmer = Stemmer.Stemmer("english")
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1]
    return set(_stemmer.stemWords(words))


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
