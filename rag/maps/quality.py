"""Whether a map means something: how many of each paper's nearest neighbours on the picture are among
its nearest by vector (used by bench/map_quality.py and the tests)."""

from __future__ import annotations

import numpy as np

from rag.maps.layout import unit_rows


def vector_neighbours(vectors: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """The k nearest papers by cosine of each of `rows` (all when None), itself left out."""
    v = unit_rows(vectors)
    rows = np.arange(len(v)) if rows is None else rows
    out = np.empty((len(rows), k), dtype=np.int64)
    for s in range(0, len(rows), 512):
        r = rows[s : s + 512]
        sims = v[r] @ v.T
        sims[np.arange(len(r)), r] = -np.inf
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[s : s + 512] = np.take_along_axis(top, order, axis=1)
    return out


def map_neighbours(xy: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """The k nearest papers on the map (Euclidean) of each of `rows`, itself left out."""
    from scipy.spatial import cKDTree

    rows = np.arange(len(xy)) if rows is None else rows
    _, idx = cKDTree(xy).query(xy[rows], k=k + 1)
    out = np.empty((len(rows), k), dtype=np.int64)
    for i, (r, nb) in enumerate(zip(rows, idx)):
        nb = [j for j in nb if j != r][:k]
        out[i] = nb
    return out


def neighbour_share(vectors: np.ndarray, xy: np.ndarray, k: int = 10, sample: int | None = None,
                    seed: int = 0) -> float:
    """Mean share of each paper's k nearest on the map that are among its k nearest by vector (1.0: the
    map keeps every neighbourhood; k / n: a random placement)."""
    n = len(xy)
    k = min(k, n - 1)
    rows = None
    if sample is not None and sample < n:
        rows = np.sort(np.random.default_rng(seed).choice(n, sample, replace=False))
    a = vector_neighbours(vectors, k, rows)
    b = map_neighbours(np.asarray(xy, dtype=np.float64), k, rows)
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(a, b)]))
