"""How likely a sentence of an abstract is to answer a question: one learned score behind quotes and grades.

Similarity alone rewards the sentence that restates the question ("In this work, we study X"), not the one
that answers it ("We show that X ..."). The scorer reads, for each sentence of ONE abstract: its MiniLM
cosine to the question and how it stands against the abstract's other sentences, the question's words it
repeats and the words it adds, its position and neighbours, its rhetorical role (rag.reading.roles), its
wording (own-voice findings "we show / prove / find", result verbs, definitions, background cues), each
also crossed with the question's kind (rag.reading.questions). A logistic regression over these, trained
by `bench/train_answer_scorer.py` on mlqa, PubMedQA and SciFact train splits, gives the probability that
the sentence answers; the weights ship in `answer_scorer.npz` (numpy only, loaded once, nothing downloaded).

    probabilities(question, abstracts, embedder, roles=None) -> one array per abstract
    score_abstract(question, sentences, vectors, question_vector, roles) -> array   (vectors given)
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Iterator

import numpy as np

from rag.reading.grades import content_stems, relevance
from rag.reading.questions import kind
from rag.reading.roles import ROLES, _is_minilm
from rag.reading.vector_kind import STANDALONE, vector_kind, weights_for
from rag.reading.standalone import standing
from rag.reading.voice import defines, own_voice

WEIGHTS = Path(__file__).with_name("answer_scorer.npz")
KINDS = ("how", "finding", "why", "problem", "topic", "other")

_FINDING_OPEN = re.compile(
    r"^(?:[^,]{0,60},\s+)?(?:we (?:(?:also|further|then|first|empirically|theoretically|formally|rigorously|"
    r"thus|therefore|additionally|finally) )?(?:show|prove|find|found|demonstrate|establish|observe|obtain|derive|"
    r"reveal|confirm|discover|conclude|verify|identify|argue)s?(?:ed|d)?\b|"
    r"(?:our|the|these|experimental|empirical|extensive|numerical) (?:\w+ ){0,2}(?:results?|experiments?|"
    r"findings|analysis|evaluations?|simulations?|theory) (?:\w+ )?(?:show|demonstrate|indicate|suggest|reveal|"
    r"confirm|establish|prove)s?\b|(?:this|which) (?:shows|proves|implies|establishes|demonstrates))",
    re.IGNORECASE)
_CONTRIB_OPEN = re.compile(r"^(?:[^,]{0,60},\s+)?(?:we (?:\w+ )?(?:propose|introduce|present|develop|design|"
                           r"devise|describe)|(?:this|our) (?:paper|work) (?:proposes|introduces|presents))\b",
                           re.IGNORECASE)
_STUDY_OPEN = re.compile(r"^(?:[^,]{0,60},\s+)?(?:we (?:\w+ )?(?:study|consider|investigate|explore|examine|"
                         r"focus|address|revisit|ask|tackle|analy[sz]e)|(?:this|our) (?:paper|work|study) "
                         r"(?:studies|considers|investigates|explores|examines|focuses|addresses))\b",
                         re.IGNORECASE)
_RESULT_WORDS = re.compile(r"\b(?:outperform\w*|improv\w*|achiev\w*|state[- ]of[- ]the[- ]art|significant\w*|"
                           r"reduc\w*|increas\w*|faster|better|superior|surpass\w*|gains?|leads? to|results? in|"
                           r"enables?|allows?|guarantees?|converges?|bounds?|optimal|matches|consistently|"
                           r"effective\w*|robust\w*|associated with|correlated|no difference)\b", re.IGNORECASE)
_BACKGROUND_WORDS = re.compile(r"\b(?:however|remains?|challeng\w*|limited|recent(?:ly)?|has been|have been|"
                               r"promising|widely|popular|existing|prior|traditional|typically|often|unclear|"
                               r"unknown|little|lack\w*|suffer\w*|fail\w*|difficult\w*|problem\w*)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d")

BASE = ("cos", "cos_minus_best", "cos_minus_mean", "is_best", "cos_rank", "overlap", "overlap_minus_best",
        "adds", "position", "first", "last", "abstract_length", "prev_cos", "next_cos", "length",
        "own_voice", "finding_opening", "contribution_opening", "study_opening", "result_words",
        "background_words", "defines", "leans", "question_mark", "number", "after_study", "after_finding",
        *(f"role_{r}" for r in ROLES), "domain")
# The features each question kind re-weighs (kind x feature), besides the kind's own intercept.
CROSSED = ("cos", "cos_minus_best", "overlap", "adds", "position", "first", "last", "own_voice", "finding_opening",
           "contribution_opening", "study_opening", "result_words", "background_words", "defines",
           *(f"role_{r}" for r in ROLES))
# What the abstract's field re-weighs: a biomedical abstract answers in its labelled conclusion at the end, a
# machine-learning one after "we show" in the middle ("domain" is where the abstract's mean vector lies on
# the line from ML abstracts to biomedical ones, learned with the weights).
BY_DOMAIN = ("cos", "cos_minus_best", "position", "first", "last", "finding_opening", "contribution_opening",
             "study_opening", "background_words", "number", *(f"role_{r}" for r in ROLES))
NAMES = (*BASE, *(f"kind_{k}" for k in KINDS), *(f"{k}*{f}" for k in KINDS for f in CROSSED),
         *(f"domain*{f}" for f in BY_DOMAIN))
_CROSS_IDX = [BASE.index(f) for f in CROSSED]
_DOMAIN_IDX = [BASE.index(f) for f in BY_DOMAIN]


def poses_the_study(sentence: str) -> bool:
    """ "In this work, we study X", "This paper investigates X": the sentence that states what is asked."""
    return bool(_STUDY_OPEN.match(sentence.strip()))


def contribution_opening(sentence: str) -> bool:
    """Whether a sentence opens as a paper's contribution ("In this paper, we propose X", "We study Y")."""
    return bool(_CONTRIB_OPEN.match(sentence) or _STUDY_OPEN.match(sentence))


def features(question: str, sentences: list[str], vectors: np.ndarray, question_vector: np.ndarray,
             roles: list[str] | None = None, question_kind: str | None = None,
             domain: np.ndarray | None = None) -> np.ndarray:
    """One row per sentence of ONE abstract (columns: NAMES). Vectors are L2-normalised MiniLM vectors;
    `domain` is the learned direction from ML to biomedical abstracts (the shipped model's by default)."""
    n = len(sentences)
    if n == 0:
        return np.zeros((0, len(NAMES)), dtype=np.float32)
    v = np.asarray(vectors, dtype=np.float32)
    cos = v @ np.asarray(question_vector, dtype=np.float32)
    q = content_stems(question)
    stems = [content_stems(s) for s in sentences]
    overlap = np.array([len(q & s) / len(q) if q else 0.0 for s in stems], dtype=np.float32)
    adds = np.array([len(s - q) / len(s) if s else 0.0 for s in stems], dtype=np.float32)
    rs = roles if roles is not None and len(roles) == n else ["other"] * n
    order = np.argsort(-cos)
    rank = np.empty(n, dtype=np.float32)
    rank[order] = np.arange(n)
    f = np.zeros((n, len(BASE)), dtype=np.float32)
    col = {name: i for i, name in enumerate(BASE)}
    f[:, col["cos"]] = cos
    f[:, col["cos_minus_best"]] = cos - cos.max()
    f[:, col["cos_minus_mean"]] = cos - cos.mean()
    f[:, col["is_best"]] = rank == 0
    f[:, col["cos_rank"]] = rank / max(1, n - 1)
    f[:, col["overlap"]] = overlap
    f[:, col["overlap_minus_best"]] = overlap - overlap.max()
    f[:, col["adds"]] = adds
    f[:, col["position"]] = np.arange(n) / max(1, n - 1)
    f[0, col["first"]] = 1.0
    f[-1, col["last"]] = 1.0
    f[:, col["abstract_length"]] = min(n, 20) / 20.0
    f[1:, col["prev_cos"]] = cos[:-1]
    f[:-1, col["next_cos"]] = cos[1:]
    study = np.zeros(n, dtype=np.float32)
    finding = np.zeros(n, dtype=np.float32)
    for i, s in enumerate(sentences):
        s = s.strip()
        f[i, col["length"]] = min(len(s.split()), 60) / 60.0
        f[i, col["own_voice"]] = own_voice(s)
        finding[i] = bool(_FINDING_OPEN.match(s))
        f[i, col["finding_opening"]] = finding[i]
        f[i, col["contribution_opening"]] = bool(_CONTRIB_OPEN.match(s))
        study[i] = bool(_STUDY_OPEN.match(s))
        f[i, col["study_opening"]] = study[i]
        f[i, col["result_words"]] = min(len(_RESULT_WORDS.findall(s)), 3) / 3.0
        f[i, col["background_words"]] = min(len(_BACKGROUND_WORDS.findall(s)), 3) / 3.0
        f[i, col["defines"]] = defines(s)
        f[i, col["leans"]] = standing(s) is None
        f[i, col["question_mark"]] = s.endswith("?")
        f[i, col["number"]] = bool(_NUMBER.search(s))
        f[i, col[f"role_{rs[i]}" if rs[i] in ROLES else "role_other"]] = 1.0
    # A finding often follows the sentence that poses the study ("We study X. We show that ...").
    f[1:, col["after_study"]] = np.maximum.accumulate(study)[:-1]
    f[1:, col["after_finding"]] = finding[:-1]
    d = model().domain if domain is None else domain
    # 0 for an abstract like the ML training abstracts, 1 like the biomedical ones (d[-2:] are their means on
    # the direction d[:-2]): crossed features stay 0 on ML abstracts, so theirs are learned from ML rows.
    lo, hi = float(d[-2]), float(d[-1])
    if v.shape[1] == len(d) - 2:  # another embedder's vectors (the tests' hashing fake) say nothing of it
        f[:, col["domain"]] = np.clip((float(v.mean(axis=0) @ d[:-2]) - lo) / max(hi - lo, 1e-6), 0.0, 1.0)
    k = question_kind or kind(question)
    onehot = np.zeros((n, len(KINDS)), dtype=np.float32)
    onehot[:, KINDS.index(k)] = 1.0
    crossed = (onehot[:, :, None] * f[:, None, _CROSS_IDX]).reshape(n, -1)
    by_domain = f[:, [col["domain"]]] * f[:, _DOMAIN_IDX]
    return np.hstack([f, onehot, crossed, by_domain])


class AnswerScorer:
    """Over standardised features (the training mean/scale): a logistic regression (`coef`, `intercept`), or
    with `hidden` weights a one-hidden-layer network (relu(z @ w1 + b1) @ coef + intercept); and the domain
    line (mean biomedical minus mean ML sentence vector of the training abstracts, unit length, then the two
    sets' mean positions on it)."""

    def __init__(self, coef: np.ndarray, intercept: float, mean: np.ndarray, scale: np.ndarray, domain: np.ndarray,
                 names=NAMES, w1: np.ndarray | None = None, b1: np.ndarray | None = None):
        self.coef = np.asarray(coef, dtype=np.float32).ravel()
        self.domain = np.asarray(domain, dtype=np.float32)
        self.intercept = float(intercept)
        self.mean = np.asarray(mean, dtype=np.float32)
        self.scale = np.asarray(scale, dtype=np.float32)
        self.w1 = None if w1 is None else np.asarray(w1, dtype=np.float32)
        self.b1 = None if b1 is None else np.asarray(b1, dtype=np.float32)
        if tuple(names) != NAMES:
            raise ValueError("answer_scorer.npz was trained on other features: retrain it "
                             "(bench/train_answer_scorer.py)")

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> "AnswerScorer":
        with np.load(path) as z:
            hidden = (z["w1"], z["b1"]) if "w1" in z.files else (None, None)
            return cls(z["coef"], float(z["intercept"]), z["mean"], z["scale"], z["domain"],
                       [str(x) for x in z["names"]], *hidden)

    def save(self, path: Path) -> None:
        extra = {} if self.w1 is None else {"w1": self.w1.astype(np.float16), "b1": self.b1}
        np.savez_compressed(path, coef=self.coef, intercept=np.float32(self.intercept), mean=self.mean,
                            scale=self.scale, domain=self.domain, names=np.array(NAMES), **extra)

    def predict(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float32) - self.mean) / self.scale
        if self.w1 is not None:
            z = np.maximum(z @ self.w1.astype(np.float32) + self.b1, 0.0)
        return 1.0 / (1.0 + np.exp(-(z @ self.coef + self.intercept)))


@lru_cache(maxsize=2)
def _load(path: Path) -> AnswerScorer:
    return AnswerScorer.load(path)


def model() -> AnswerScorer:
    """The shipped scorer for sentences embedded alone, read once per process (a few kilobytes)."""
    return _load(WEIGHTS)


def model_for(kind: str) -> AnswerScorer:
    """The shipped scorer for sentence vectors of `kind` (rag.reading.vector_kind): answer_scorer.npz for both
    kinds while no answer_scorer.pooled.npz ships (a one-pass library's vectors are read out to stand in for
    sentences embedded alone), loaded once for both (cached by the file); inside `scored_by`, its model."""
    return _override[-1] if _override else _load(weights_for(WEIGHTS, kind))


_override: list = []


@contextmanager
def scored_by(m) -> Iterator[None]:
    """Every sentence scored inside the block is scored by `m` (anything with `predict(features)`), whatever
    the vectors' kind: how bench/tune_answer_pick.py scores each train question by the fold model that did
    not see it. (It used to swap `model`, which score_abstract stopped reading when weights per kind came in,
    so its "out of fold" figures from then on were the shipped model's, in sample.)"""
    _override.append(m)
    try:
        yield
    finally:
        _override.pop()


def score_abstract(question: str, sentences: list[str], vectors: np.ndarray, question_vector: np.ndarray,
                   roles: list[str] | None = None, kind: str = STANDALONE) -> np.ndarray:
    """Each sentence's probability of answering the question, for one abstract whose vectors (of `kind`)
    are given."""
    if not sentences:
        return np.zeros(0, dtype=np.float32)
    return model_for(kind).predict(features(question, sentences, vectors, question_vector, roles)).astype(np.float32)


def probabilities(question: str, abstracts: list[list[str]], embedder,
                  roles: list[list[str]] | None = None) -> list[np.ndarray]:
    """Per abstract (a list of its sentences), each sentence's probability of answering the question; one
    embedding call for the question and every sentence."""
    flat = [s for ss in abstracts for s in ss]
    if not flat:
        return [np.zeros(0, dtype=np.float32) for _ in abstracts]
    if not _is_minilm(embedder):
        # Trained on MiniLM's cosines: another embedder's (an endpoint's model, the tests' hashing fake) sit
        # on another scale, so the probability falls back to the relevance score (rag.reading.grades) in 0..1.
        rel = np.clip(relevance(question, flat, embedder), 0.0, 1.0)
        return _split(rel, abstracts)
    vecs = np.asarray(embedder.embed_array([question] + flat), dtype=np.float32)
    vecs = vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
    qv, sv = vecs[0], vecs[1:]
    kind = vector_kind(embedder)  # the question is embedded alone either way; the sentences may be pooled
    out, i = [], 0
    for a, ss in enumerate(abstracts):
        rs = roles[a] if roles and a < len(roles) else None
        out.append(score_abstract(question, ss, sv[i : i + len(ss)], qv, rs, kind))
        i += len(ss)
    return out


def _split(flat: np.ndarray, abstracts: list[list[str]]) -> list[np.ndarray]:
    out, i = [], 0
    for ss in abstracts:
        out.append(np.asarray(flat[i : i + len(ss)], dtype=np.float32))
        i += len(ss)
    return out
