"""A sentence's vector read out of its chunk's forward pass, made to stand in for the sentence embedded alone.

The mean of a sentence's token states inside its chunk carries the chunk's topic: on held-out paperlists
abstracts, in ingest's 500-character windows, its cosine to the same sentence embedded alone is 0.78 on
average (0.88 read out), so every model trained on stand-alone vectors (roles, the answer scorer, the area
scorer) reads it differently. A linear read-out, fitted by ridge regression from [that mean, the chunk's
vector, 1] to the stand-alone vector, brings it close (bench/train_sentence_readout.py reports the held-out
cosine before and after), and then one set of weights serves libraries built either way. The matrix ships
in `sentence_readout.npz` (float16, numpy only, nothing downloaded); its identity keys the cached vectors, so
a retrained read-out never mixes with the last.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).with_name("sentence_readout.npz")


@lru_cache(maxsize=1)
def _matrix() -> np.ndarray:
    with np.load(WEIGHTS) as z:
        return z["w"].astype(np.float32)  # (2 * dimension + 1, dimension)


@lru_cache(maxsize=1)
def readout_id() -> str:
    """The shipped read-out's identity: the first 8 hex digits of its file's SHA-256."""
    return hashlib.sha256(WEIGHTS.read_bytes()).hexdigest()[:8]


def features(spans: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """[unit span mean, unit vector of its chunk, 1] per span (`chunks`: one row per span, or one for all)."""
    spans = np.asarray(spans, dtype=np.float32)
    chunks = np.broadcast_to(np.asarray(chunks, dtype=np.float32), spans.shape)
    return np.hstack([spans, chunks, np.ones((len(spans), 1), dtype=np.float32)])


def read_out(spans: np.ndarray, chunks: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Unit vectors standing in for the spans' sentences embedded alone (NaN rows stay NaN: no token inside)."""
    if not len(spans):
        return np.asarray(spans, dtype=np.float32)
    m = features(spans, chunks) @ (_matrix() if w is None else w)
    return (m / np.clip(np.linalg.norm(m, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)
