"""Rhetorical roles of an abstract's sentences: background, objective, method, result, other.

A small classifier trained on CSAbstruct (Cohan et al. 2019; `bench/train_roles.py` reproduces it) over
the MiniLM sentence vectors the library already computes (each sentence alone in a two-pass library; in a
one-pass one, its tokens pooled inside its chunk's forward pass and read out, rag.embedders.readout; through
an embedder without token states, its own vector). The shipped model (rag.reading.role_sequence) is five
bidirectional GRUs over the abstract's sentences, each entering as its vector, its position and its hashed
words (rhetorical cues like "we propose"), their probabilities averaged. This module keeps the features and
the former model, RoleModel, which the training script still fits and weighs on dev: a first multinomial
logistic regression over each sentence's own vector, its neighbours' vectors, the abstract's mean vector, its
position and its hashed words; a second over each sentence's and its two neighbours' first-pass probabilities
on each side; an optional Viterbi pass over role transitions (the dev set turned it off). Inference is numpy
only; the weights ship in `rag/reading/roles.npz` (sentences embedded alone) and `roles.pooled.npz` (read-out
vectors of one-pass libraries, rag.reading.vector_kind), no download.

    classify(sentences, embedder) -> list[Role]          one abstract
    classify_many(list_of_sentence_lists, embedder)      many, one embedding call
    encode(roles) -> "BOMRR"  /  decode("BOMRR") -> roles   the compact form stored with a paper
    model_id(kind)                                       the weights' identity, stored beside the roles

Stored roles are versioned: a record keeps the model_id() of the classifier that gave its roles, so
after the weights are retrained (or a library switches between one and two passes) the stored roles of unchanged papers are not trusted -- answers
compute them afresh (roles_of) and the next ingest stores the new ones (roles_to_store), without
re-embedding anything.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.reading.role_features import LEXICAL_SIZE, ROLES, Role, _POS_BINS, features, lexical  # noqa: F401 (re-exported)
from rag.reading.role_sequence import SequenceRoleModel
from rag.reading.vector_kind import STANDALONE, vector_kind, weights_for

_LETTER = {"background": "B", "objective": "O", "method": "M", "result": "R", "other": "X"}
_ROLE_OF = {v: k for k, v in _LETTER.items()}
WEIGHTS = Path(__file__).with_name("roles.npz")


def encode(roles: list[Role]) -> str:
    """One letter per sentence (B, O, M, R, X): what a paper record stores."""
    return "".join(_LETTER[r] for r in roles)


def decode(code: str) -> list[Role]:
    return [_ROLE_OF.get(c, "other") for c in code or ""]


def context(log_proba: np.ndarray) -> np.ndarray:
    """Second-pass features of one abstract: each sentence's first-pass role log-probabilities, its two
    neighbours' on each side (zeros past the ends), and its position."""
    p = np.asarray(log_proba, dtype=np.float32)
    n, k = p.shape
    z = np.zeros((2, k), dtype=np.float32)
    padded = np.vstack([z, p, z])
    rel = np.arange(n) / max(1, n - 1)
    pos = np.stack([rel, rel**2, np.arange(n) == 0, np.arange(n) == n - 1], axis=1).astype(np.float32)
    return np.hstack([p, padded[1:n + 1], padded[3:n + 3], padded[0:n], padded[4:n + 4], pos])


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


class RoleModel:
    """Weights of the classifier: a first linear layer over sentence features (vectors, position, hashed
    words), a second over each sentence's and its neighbours' first-pass probabilities, and role
    transitions for an optional Viterbi pass (weight 0 turns it off)."""

    def __init__(self, coef1: np.ndarray, intercept1: np.ndarray, coef2: np.ndarray, intercept2: np.ndarray,
                 start: np.ndarray, trans: np.ndarray, prior: np.ndarray, trans_weight: float,
                 vectors: str = "standalone"):
        self.vectors = vectors  # the sentence vectors it was trained on: "pooled" in their chunk, or "standalone"
        self.coef1, self.intercept1 = coef1.astype(np.float32), intercept1.astype(np.float32)
        self.coef2, self.intercept2 = coef2.astype(np.float32), intercept2.astype(np.float32)
        self.start, self.trans, self.prior = start, trans, prior  # log-probabilities
        self.trans_weight = float(trans_weight)

    @property
    def dimension(self) -> int:
        """The sentence-vector size it was trained on."""
        return (self.coef1.shape[1] - LEXICAL_SIZE - _POS_BINS - 3) // 4

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> "RoleModel":
        with np.load(path) as z:
            return cls(z["coef1"], z["intercept1"], z["coef2"], z["intercept2"], z["start"], z["trans"], z["prior"],
                       float(z["trans_weight"]), str(z["vectors"]) if "vectors" in z.files else "standalone")

    def save(self, path: Path) -> None:
        np.savez_compressed(path, coef1=self.coef1.astype(np.float16), intercept1=self.intercept1,
                            coef2=self.coef2, intercept2=self.intercept2, start=self.start, trans=self.trans,
                            prior=self.prior, trans_weight=np.float32(self.trans_weight), vectors=np.array(self.vectors))

    def first_pass(self, vectors: np.ndarray, sentences: list[str]) -> np.ndarray:
        x = np.hstack([features(vectors), lexical(sentences)])
        return _log_softmax(x @ self.coef1.T + self.intercept1)

    def second_pass(self, first: np.ndarray) -> np.ndarray:
        return _log_softmax(context(first) @ self.coef2.T + self.intercept2)

    def decode(self, log_proba: np.ndarray) -> np.ndarray:
        """The most likely role sequence: per-sentence scores (posterior over prior, as in hybrid HMMs)
        plus weighted transition log-probabilities; with weight 0, each sentence's most likely role."""
        n = len(log_proba)
        if n == 0:
            return np.zeros(0, dtype=int)
        w = self.trans_weight
        if w == 0:
            return log_proba.argmax(axis=1)
        emit = log_proba - w * self.prior
        score = emit[0] + w * self.start
        back = np.zeros((n, len(ROLES)), dtype=int)
        for i in range(1, n):
            cand = score[:, None] + w * self.trans
            back[i] = cand.argmax(axis=0)
            score = cand.max(axis=0) + emit[i]
        path = [int(score.argmax())]
        for i in range(n - 1, 0, -1):
            path.append(int(back[i][path[-1]]))
        return np.array(path[::-1])

    def predict(self, vectors: np.ndarray, sentences: list[str]) -> list[Role]:
        if len(sentences) == 0:
            return []
        return [ROLES[i] for i in self.decode(self.second_pass(self.first_pass(vectors, sentences)))]

    def predict_many(self, abstracts: list[tuple[np.ndarray, list[str]]]) -> list[list[Role]]:
        return [self.predict(v, s) for v, s in abstracts]


def load_weights(path: Path):
    """The role model a weights file holds: the GRUs (rag.reading.role_sequence) or the two logistic passes."""
    with np.load(path) as z:
        gru = "kind" in z.files and str(z["kind"]) == "gru"
    if gru:
        return SequenceRoleModel.load(path)
    return RoleModel.load(path)


@lru_cache(maxsize=2)
def _load(path: Path):
    return load_weights(path)


@lru_cache(maxsize=2)
def _file_id(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def model(kind: str = STANDALONE):
    """The shipped classifier for sentence vectors of `kind` (rag.reading.vector_kind), loaded once per file."""
    return _load(weights_for(WEIGHTS, kind))


def model_id(kind: str = STANDALONE) -> str:
    """The shipped classifier's identity for vectors of `kind`: the first 12 hex digits of its weights file's
    SHA-256 (two files, two identities: roles from one kind are not trusted in a library of the other; one
    file, as now, one identity)."""
    return _file_id(weights_for(WEIGHTS, kind))


def roles_current(meta: dict, kind: str = STANDALONE) -> bool:
    """Whether a stored record's roles came from the shipped classifier for the library's vectors (a record
    from before roles, or before they were versioned, has none it can vouch for)."""
    return "roles" in meta and meta.get("roles_model") == model_id(kind)


def classify_vectors(vectors: np.ndarray, sentences: list[str], kind: str = STANDALONE) -> list[Role]:
    """Roles of one abstract's sentences from their (L2-normalised MiniLM) vectors of `kind` and texts, in order."""
    return model(kind).predict(vectors, sentences)


def classify_many(abstracts: list[list[str]], embedder) -> list[list[Role]]:
    """Roles for several abstracts' sentence lists, embedding every sentence in one call."""
    flat = [s for ss in abstracts for s in ss]
    if not flat:
        return [[] for _ in abstracts]
    if not _is_minilm(embedder):
        # Trained on MiniLM vectors: another embedder's (the tests' hashing fake, an endpoint) say nothing here.
        return [["other"] * len(ss) for ss in abstracts]
    kind = vector_kind(embedder)  # a one-pass library's sentences are pooled in their chunks: those weights
    vecs = np.asarray(embedder.embed_array(flat), dtype=np.float32)
    if vecs.shape[1] != model(kind).dimension:
        return [["other"] * len(ss) for ss in abstracts]
    parts, i = [], 0
    for ss in abstracts:
        parts.append((vecs[i : i + len(ss)], ss))
        i += len(ss)
    return model(kind).predict_many(parts)  # the GRUs step through all the abstracts at once


def roles_to_store(papers: list, stored: dict[str, dict], changed, embedder) -> dict[str, str]:
    """paper_id -> its sentences' roles in the stored form (encode), for records ingest is about to write:
    computed for papers `changed` (new or edited) and for records `stored` without roles from the shipped
    classifier (roles_current); otherwise the stored roles are kept (never recomputed). Through a caching
    embedder the sentence vectors stay cached, where the answerer finds them."""
    kind = vector_kind(embedder)
    todo = [p for p in papers if p.paper_id in changed or not roles_current(stored.get(p.paper_id, {}), kind)]
    kept = [p for p in todo if p.paper_id not in changed]  # (the changed ones were just read in their chunks)
    if kept and callable(prime := getattr(embedder, "prime", None)):
        prime(kept)  # records from before one-pass vectors: one chunk pass each, no sentence embedded alone
    found = classify_many([_classified(p) for p in todo], embedder) if todo else []
    out = {p.paper_id: stored.get(p.paper_id, {}).get("roles", "") for p in papers}
    out.update({p.paper_id: encode(r) for p, r in zip(todo, found)})
    return out


def _classified(paper) -> list[str]:
    """The sentences a paper's roles are classified from (the whole abstract when it does not split)."""
    from rag.reading.sentences import split_sentences

    return split_sentences(paper.abstract) or [paper.abstract]


def role_sentences(papers: list, embedder) -> list[str]:
    """The sentences roles_to_store will embed for these papers (none when the embedder is not MiniLM),
    so ingest can embed them ahead, with the chunks."""
    if not _is_minilm(embedder):
        return []
    return list(dict.fromkeys(s for p in papers for s in _classified(p)))


# Names under which a service serves all-MiniLM-L6-v2 (TEI, Infinity and vLLM use the Hub name). Its fp32
# vectors and our int8 ones agree to a cosine of 0.9995 (docs/scale.md), well inside what the
# role classifier tells apart, so a library built through such a service carries roles too.
_MINILM_NAMES = ("all-minilm-l6-v2-onnx-int8", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2")


def _is_minilm(embedder) -> bool:
    """Whether the vectors come from the MiniLM the classifier was trained on (through cache wrappers):
    the in-process model, or a service serving all-MiniLM-L6-v2 under one of its usual names."""
    for _ in range(4):
        if str(getattr(embedder, "model_id", "") or "").lower() in _MINILM_NAMES:
            return True
        embedder = getattr(embedder, "embedder", None)
        if embedder is None:
            return False
    return False


def classify(sentences: list[str], embedder) -> list[Role]:
    """Roles of one abstract's sentences (as rag.reading.sentences.split_sentences cuts them), in order."""
    return classify_many([sentences], embedder)[0]


# (role model, MiniLM or not, abstract hash) -> roles, for papers stored without current roles (bounded below)
_LAZY: dict[tuple[str, bool, str], list[Role]] = {}


def roles_of(papers: list, embedder) -> list[list[Role]]:
    """Each paper's sentence roles, aligned with rag.reading.sentences.split_sentences(paper.abstract): the ones
    stored with the paper at ingest by the shipped classifier, or -- for a library built before roles were
    stored, or by another role model -- computed now (and memoised in this process; `paperchat ingest`
    stores them for good)."""
    from rag.records import text_hash
    from rag.reading.sentences import split_sentences

    if callable(prime := getattr(embedder, "prime", None)):
        prime(papers)  # their sentences' vectors from one chunk pass each, if the library lacks them
    out: list[list[Role] | None] = []
    todo: dict[tuple[str, bool, str], list[str]] = {}
    mid = model_id(vector_kind(embedder))
    lazy_key = lambda p: (mid, _is_minilm(embedder), text_hash(p.abstract))  # noqa: E731
    for p in papers:
        sents = split_sentences(p.abstract) or ([p.abstract] if p.abstract else [])
        stored = decode(getattr(p, "roles", "") or "")
        if len(stored) == len(sents) and getattr(p, "roles_model", "") == mid:
            out.append(stored)
            continue
        key = lazy_key(p)
        out.append(None)
        if key not in _LAZY:
            todo[key] = sents
    if todo:
        keys = list(todo)
        for k, r in zip(keys, classify_many([todo[k] for k in keys], embedder)):
            if len(_LAZY) > 20000:
                _LAZY.clear()
            _LAZY[k] = r
    return [r if r is not None else _LAZY.get(lazy_key(p), []) for r, p in zip(out, papers)]
