"""What a role classifier reads of a sentence, shared by both models (rag.reading.roles.RoleModel, the
logistic passes; rag.reading.role_sequence.SequenceRoleModel, the GRUs): the five roles, each sentence's
vector with its neighbours' and position, and its hashed words."""

from __future__ import annotations

import re
import zlib
from typing import Literal

import numpy as np

Role = Literal["background", "objective", "method", "result", "other"]
ROLES: tuple[Role, ...] = ("background", "objective", "method", "result", "other")
_POS_BINS = 5


def features(vectors: np.ndarray) -> np.ndarray:
    """One row per sentence of ONE abstract: own vector, previous and next vectors (zeros past the ends),
    the abstract's mean vector, and position (first, last, relative position in bins, length)."""
    v = np.asarray(vectors, dtype=np.float32)
    n, d = v.shape
    if n == 0:
        return np.zeros((0, 4 * d + _POS_BINS + 3), dtype=np.float32)
    zero = np.zeros((1, d), dtype=np.float32)
    prev = np.vstack([zero, v[:-1]])
    nxt = np.vstack([v[1:], zero])
    mean = np.repeat(v.mean(axis=0, keepdims=True), n, axis=0)
    return np.hstack([v, prev, nxt, mean, position(n)]).astype(np.float32)


def position(n: int) -> np.ndarray:
    """Where each of an abstract's n sentences stands: relative position in bins, first, last, and the
    abstract's length (capped at 20 sentences)."""
    rel = np.arange(n) / max(1, n - 1)
    pos = np.zeros((n, _POS_BINS + 3), dtype=np.float32)
    pos[np.arange(n), np.minimum((rel * _POS_BINS).astype(int), _POS_BINS - 1)] = 1.0
    if n:
        pos[0, _POS_BINS] = 1.0
        pos[-1, _POS_BINS + 1] = 1.0
        pos[:, _POS_BINS + 2] = min(n, 20) / 20.0
    return pos


LEXICAL_SIZE = 1 << 12


def lexical(sentences: list[str], size: int = LEXICAL_SIZE) -> np.ndarray:
    """Hashed binary bag of the words and word pairs of each sentence, and of its opening words: the
    rhetorical cues ("we propose", "results show", "to address") that MiniLM's topical vectors blur."""
    out = np.zeros((len(sentences), size), dtype=np.float32)
    for i, s in enumerate(sentences):
        w = re.findall(r"[a-z]+|\d+", s.lower())
        toks = set(w) | {a + "_" + b for a, b in zip(w, w[1:])} | {"^" + x for x in w[:3]} | {"^^" + "_".join(w[:2])}
        for t in toks:
            out[i, zlib.crc32(t.encode()) % size] = 1.0
    return out
