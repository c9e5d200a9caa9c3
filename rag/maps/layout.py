"""Two-dimensional positions for paper vectors: fit a layout (UMAP), place later papers by their neighbours.

UMAP because it keeps local neighbourhoods (what a reader means by "near") and still separates topics
into islands, installs offline from PyPI (umap-learn, numba), and lays out 87k papers on two cores
(bench/map_layout.py); scikit-learn's t-SNE keeps neighbourhoods as well but draws no global arrangement
and cannot add points, PCA is fast but crowds every topic into one blob (on SciFact it keeps 2 % of each
paper's 10 nearest neighbours, UMAP 39 %: same bench).

Papers added after the fit are placed at the distance-weighted mean of the positions of their nearest
laid-out papers (by cosine of their vectors). That is what UMAP's own `transform` starts from; keeping
only vectors and positions spares pickling the fitted model (its neighbour graph and search index grow
with the library) and works for any layout method.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

PLACE_NEIGHBOURS = 10
_BLOCK = 1024  # new papers compared with the laid-out ones per matrix product (bounds memory at 87k)


def unit_rows(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    return m / np.clip(np.linalg.norm(m, axis=1, keepdims=True), 1e-12, None)


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """The two leading principal components (the baseline the bench compares with, and the layout of
    libraries too small for UMAP)."""
    x = np.asarray(vectors, dtype=np.float64)
    x = x - x.mean(axis=0, keepdims=True)
    if len(x) < 2 or not np.any(x):
        return np.zeros((len(x), 2), dtype=np.float32)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    out = x @ vt[:2].T
    if out.shape[1] < 2:
        out = np.pad(out, ((0, 0), (0, 2 - out.shape[1])))
    return out.astype(np.float32)


def umap_2d(vectors: np.ndarray, n_neighbors: int = 15, min_dist: float = 0.05, seed: int | None = 42) -> np.ndarray:
    """UMAP on cosine distance. Imported here: umap (numba) costs seconds to import and compile."""
    os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "numba"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "n_jobs overridden by random_state", tqdm / numba chatter
        import umap

        reducer = umap.UMAP(n_components=2, n_neighbors=min(n_neighbors, len(vectors) - 1), min_dist=min_dist,
                            metric="cosine", random_state=seed, low_memory=True, verbose=False)
        out = reducer.fit_transform(np.asarray(vectors, dtype=np.float32))
    return np.asarray(out, dtype=np.float32)


def fit(vectors: np.ndarray, n_neighbors: int = 15, min_dist: float = 0.05, seed: int | None = 42) -> tuple[np.ndarray, str]:
    """Positions of the rows of `vectors` and the method used: UMAP from 16 papers on, PCA below (UMAP's
    neighbour graph means little with fewer papers than neighbours), fixed spots for one or two."""
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32), "none"
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32), "single"
    if n < 16:
        return pca_2d(vectors), "pca"
    return umap_2d(vectors, n_neighbors, min_dist, seed), "umap"


def place(new: np.ndarray, vectors: np.ndarray, coords: np.ndarray, k: int = PLACE_NEIGHBOURS) -> np.ndarray:
    """Positions for `new` vectors among laid-out ones: the mean of their k nearest neighbours' positions,
    weighted by inverse squared cosine distance (the nearest count most)."""
    if len(new) == 0:
        return np.zeros((0, 2), dtype=np.float32)
    if len(vectors) == 0:
        return np.zeros((len(new), 2), dtype=np.float32)
    base = unit_rows(vectors)
    q = unit_rows(new)
    k = min(k, len(base))
    out = np.empty((len(q), 2), dtype=np.float32)
    for s in range(0, len(q), _BLOCK):
        sims = q[s : s + _BLOCK] @ base.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        ts = np.take_along_axis(sims, top, axis=1)
        w = 1.0 / (1.0 - ts + 0.01) ** 2  # inverse-square distance (Shepard): a near twin takes its twin's spot
        w /= w.sum(axis=1, keepdims=True)
        out[s : s + _BLOCK] = np.einsum("ij,ijk->ik", w, coords[top])
    return out
