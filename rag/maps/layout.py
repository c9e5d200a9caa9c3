"""Two-dimensional positions for paper vectors: fit a layout (t-SNE), place later papers by their neighbours.

t-SNE (openTSNE: Annoy neighbours, FFT-interpolated gradients, linear in n) because, measured side by
side with UMAP on SciFact's MiniLM vectors (bench/map_layout.py), it keeps more of each paper's nearest
neighbours on the picture (share 0.486 vs 0.388, trustworthiness 0.972 vs 0.957) and it needs no numba:
nothing is compiled at run time, so neither a fresh install nor a fresh process pays a warm-up (UMAP's
numba compile cost 15.6 s of CPU even for 76 papers, and recompiled in each new process). Started from
PCA, so the global arrangement follows the main axes of the vectors. PCA alone is fast but crowds every
topic into one blob (share 0.021).

Papers added after the fit are placed at the distance-weighted mean of the positions of their nearest
laid-out papers (by cosine of their vectors). Keeping only vectors and positions spares pickling the
fitted model (its neighbour index grows with the library) and works for any layout method.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from rag.maps.small_tsne import tsne

PLACE_NEIGHBOURS = 10
ITERATIONS = 300  # after the exaggerated phase: on SciFact 150 + 300 keep the share of 250 + 500 (0.484 vs 0.486) for half the CPU
EXAGGERATION_ITERATIONS = 150
EXACT_UP_TO = 200  # papers: up to here the exact t-SNE of rag.maps.small_tsne (no scikit-learn import; see there)
_BLOCK = 1024  # new papers compared with the laid-out ones per matrix product (bounds memory at 87k)


def unit_rows(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    return m / np.clip(np.linalg.norm(m, axis=1, keepdims=True), 1e-12, None)


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """The two leading principal components (the baseline the bench compares with, and the layout of
    libraries too small for t-SNE)."""
    x = np.asarray(vectors, dtype=np.float64)
    x = x - x.mean(axis=0, keepdims=True)
    if len(x) < 2 or not np.any(x):
        return np.zeros((len(x), 2), dtype=np.float32)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    out = x @ vt[:2].T
    if out.shape[1] < 2:
        out = np.pad(out, ((0, 0), (0, 2 - out.shape[1])))
    return out.astype(np.float32)


def tsne_2d(vectors: np.ndarray, perplexity: float = 30.0, seed: int | None = 42) -> np.ndarray:
    """openTSNE on cosine distance: exact neighbours below 1,000 papers, Annoy's above; Barnes-Hut
    gradients below 5,000, FFT-interpolated ones above (linear in n). Imported here: it pulls in
    scikit-learn. No numba: nothing is compiled at run time, so a fresh process pays no warm-up."""
    x = np.asarray(vectors, dtype=np.float32)
    n = len(x)
    if n <= EXACT_UP_TO:
        p = min(perplexity, max(2.0, (n - 1) / 3.0))
        return tsne(unit_rows(x), pca_2d(x), p, EXAGGERATION_ITERATIONS, ITERATIONS)
    from openTSNE import TSNE, affinity, nearest_neighbors

    # Threads only pay past a few thousand papers: below, their start-up per iteration costs more than
    # they save (76 papers: 3.8 s on one thread, 10 s on two, under load).
    jobs = 1 if n < 2000 else _cores()
    perplexity = min(perplexity, max(2.0, (n - 1) / 3.0))
    # The neighbour index is built here rather than by name: openTSNE's own choice imports pynndescent
    # (and with it numba, compiling) merely to see whether it is installed.
    knn = nearest_neighbors.Sklearn if n < 1000 else nearest_neighbors.Annoy
    index = knn(x, min(n - 1, int(3 * perplexity)), metric="cosine", n_jobs=jobs, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        aff = affinity.PerplexityBasedNN(perplexity=perplexity, knn_index=index, n_jobs=jobs, random_state=seed)
        t = TSNE(n_components=2, initialization="pca", n_iter=ITERATIONS, early_exaggeration_iter=EXAGGERATION_ITERATIONS,
                 negative_gradient_method="bh" if n < 5000 else "fft", n_jobs=jobs, random_state=seed, verbose=False)
        out = t.fit(x, affinities=aff)
    return np.asarray(out, dtype=np.float32)


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def fit(vectors: np.ndarray, perplexity: float = 30.0, seed: int | None = 42) -> tuple[np.ndarray, str]:
    """Positions of the rows of `vectors` and the method used: t-SNE from 16 papers on, PCA below (a
    neighbourhood of 30 means little with fewer papers than that), fixed spots for one or two."""
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32), "none"
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32), "single"
    if n < 16:
        return pca_2d(vectors), "pca"
    return tsne_2d(vectors, perplexity, seed), "tsne"


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
