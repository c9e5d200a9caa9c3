"""Exact t-SNE in numpy, for small libraries (up to rag.maps.layout.EXACT_UP_TO papers).

openTSNE approximates the gradient (Barnes-Hut, FFT) to be linear in n, but importing it imports
scikit-learn and scipy.stats, and its PCA start goes through scikit-learn: 4-6 s under load before the
first iteration, more than the whole fit of a few hundred papers. The exact gradient on n x n matrices
costs nothing at that size, so a fresh install's first map of the seeds needs no such import
(docs/performance.md, "Opening the Map tab"). Same recipe as the large fit: cosine neighbourhoods of the
given perplexity, a PCA start, early exaggeration 12 then plain descent, gains and momentum.
"""

from __future__ import annotations

import numpy as np

EXAGGERATION = 12.0


def _affinities(x: np.ndarray, perplexity: float) -> np.ndarray:
    """Symmetric joint probabilities P: per row, a Gaussian over squared distances whose entropy matches
    log(perplexity), found by bisection on its precision, all rows at once."""
    n = len(x)
    d = np.clip(1.0 - x @ x.T, 0.0, None) ** 2  # cosine distance, squared (as openTSNE's affinities)
    np.fill_diagonal(d, np.inf)
    target = np.log(perplexity)
    lo, hi = np.zeros(n), np.full(n, np.inf)
    beta = np.ones(n)
    for _ in range(64):
        w = np.exp(-(d - d.min(axis=1, keepdims=True)) * beta[:, None])
        s = w.sum(axis=1)
        p = w / s[:, None]
        h = np.log(s) + beta * (p * np.where(np.isfinite(d), d - d.min(axis=1, keepdims=True), 0.0)).sum(axis=1)
        high = h > target  # entropy too high: sharpen
        lo = np.where(high, beta, lo)
        hi = np.where(high, hi, beta)
        beta = np.where(np.isinf(hi), beta * 2.0, (lo + hi) / 2.0)
        if np.all(np.abs(h - target) < 1e-5):
            break
    p = (p + p.T) / (2.0 * n)
    return np.maximum(p, 1e-12)


def tsne(x: np.ndarray, init: np.ndarray, perplexity: float, exaggeration_iter: int, n_iter: int) -> np.ndarray:
    """Positions of the unit rows of x, started from `init` (n x 2)."""
    n = len(x)
    p = _affinities(np.asarray(x, dtype=np.float64), perplexity)
    y = np.asarray(init, dtype=np.float64)
    y = (y - y.mean(axis=0)) / max(float(y[:, 0].std()), 1e-12) * 1e-4  # openTSNE's PCA start: std 1e-4
    update, gains = np.zeros_like(y), np.ones_like(y)
    rate = max(n / EXAGGERATION, 50.0)  # openTSNE's "auto" learning rate
    # einsum, not @: BLAS threads on these small products cost 8x the work itself on a busy machine
    for it in range(exaggeration_iter + n_iter):
        exag, momentum = (EXAGGERATION, 0.5) if it < exaggeration_iter else (1.0, 0.8)
        sq = (y**2).sum(axis=1)
        num = 1.0 / (1.0 + np.clip(sq[:, None] + sq[None, :] - 2.0 * np.einsum("ik,jk->ij", y, y), 0.0, None))
        np.fill_diagonal(num, 0.0)
        w = (exag * p - np.maximum(num / num.sum(), 1e-12)) * num
        grad = (w.sum(axis=1)[:, None] * y - np.einsum("ij,jk->ik", w, y))  # sum_j w_ij (y_i - y_j); openTSNE's scale (no factor 4)
        gains = np.where(np.sign(grad) != np.sign(update), gains + 0.2, gains * 0.8).clip(0.01, None)
        update = momentum * update - rate * gains * grad
        y = y + update
        y -= y.mean(axis=0)
    return y.astype(np.float32)
