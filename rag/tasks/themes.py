"""Which papers a summary covers and how they group: a relevance floor and MMR, then clustering chosen by silhouette."""

from __future__ import annotations

import math

import numpy as np

from ..embcache import CachedEmbedder
from ..records import Hit, Paper

# Chosen on 28 hand-labelled research areas of the seeds (18 phrases, 10 one- or two-word topics; 69
# area-paper pairs), with z-score fusion and 500-character chunks: a retrieved paper joins the summary when
# its retrieval score is at least FUSED_FLOOR times the best paper's, and it either matches the topic's
# words (BM25 > 0) or the cosine of its best chunk to the topic is at least RELATIVE_FLOOR times the best
# paper's and at least RELEVANCE_FLOOR. Macro recall 0.90 / precision 0.55 on the phrases, 0.98 / 0.66 on
# the short topics (at 0.45: 0.85 / 0.70 and 0.96 / 0.80 — recall is what a reader misses, so the looser won).
CANDIDATES = 30
FUSED_FLOOR = 0.3
RELEVANCE_FLOOR = 0.25
RELATIVE_FLOOR = 0.5
MAX_PAPERS = 15  # after MMR: a summary longer than this stops being one
MMR_LAMBDA = 0.7
MAX_THEMES = 6


def unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-12)


def paper_text(p: Paper) -> str:
    return f"{p.title}. {p.abstract}" if p.title and not p.title_derived else p.abstract


def select_papers(topic: str, hits: list[Hit], emb: CachedEmbedder, max_papers: int = MAX_PAPERS,
                  floor: float = RELEVANCE_FLOOR, relative: float = RELATIVE_FLOOR, fused: float = FUSED_FLOOR,
                  lam: float = MMR_LAMBDA) -> tuple[list[Hit], np.ndarray]:
    """Papers above the relevance floor, in MMR order (relevance against redundancy), at most max_papers."""
    top = max(h.dense for h in hits)
    rel_score = _relative_scores(hits)
    idx = [i for i, (h, r) in enumerate(zip(hits, rel_score))
           if r >= fused and (h.lexical > 0 or h.dense >= max(floor, relative * top))] or [0]
    keep = [hits[i] for i in idx]
    vecs = emb([paper_text(h.paper) for h in keep])
    rel = np.array([rel_score[i] for i in idx])  # retrieval relevance: the better signal here (see above)
    chosen: list[int] = []
    rest = list(range(len(keep)))
    while rest and len(chosen) < max_papers:
        if not chosen:
            j = max(rest, key=lambda i: rel[i])
        else:
            red = (vecs[rest] @ vecs[chosen].T).max(axis=1)
            scores = lam * rel[rest] - (1 - lam) * red
            j = rest[int(np.argmax(scores))]
        chosen.append(j)
        rest.remove(j)
    return [keep[i] for i in chosen], vecs[chosen]


def _relative_scores(hits: list[Hit]) -> list[float]:
    """Retrieval scores as a share of the best one (min-max when the best is not positive), so the floor
    does not depend on the fusion method's scale (z-scores, min-max or RRF)."""
    s = np.array([h.score for h in hits], dtype=float)
    if s.size == 0:
        return []
    if s.max() > 0:
        return (np.clip(s, 0, None) / s.max()).tolist()
    span = s.max() - s.min()
    return ((s - s.min()) / span if span > 0 else np.ones_like(s)).tolist()


# -- clustering


def _silhouette(d: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette over points (a point alone in its cluster scores 0)."""
    n = len(labels)
    s = np.zeros(n)
    ks = np.unique(labels)
    for i in range(n):
        same = labels == labels[i]
        if same.sum() <= 1:
            continue
        a = d[i, same].sum() / (same.sum() - 1)
        b = min(d[i, labels == k].mean() for k in ks if k != labels[i])
        s[i] = (b - a) / max(a, b) if max(a, b) > 0 else 0.0
    return float(s.mean())


def cluster(vecs: np.ndarray, max_themes: int = MAX_THEMES) -> list[np.ndarray]:
    """Index groups: average-linkage agglomerative clustering on cosine distance of the centred paper
    vectors, the number of groups (2..6) chosen by silhouette. Fewer than 4 papers make one theme."""
    n = len(vecs)
    if n < 4:
        return [np.arange(n)]
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    # Centring removes what every paper shares (the topic itself), so the differences drive the grouping.
    c = vecs - vecs.mean(axis=0, keepdims=True)
    c = c / np.clip(np.linalg.norm(c, axis=1, keepdims=True), 1e-12, None)
    d = np.clip(1.0 - c @ c.T, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    d = (d + d.T) / 2
    z = linkage(squareform(d, checks=False), method="average")
    best, best_labels = -2.0, None
    # Silhouettes of abstract vectors are low and flat (0.05-0.2 on the seeds), so k is kept where
    # themes read well: about 2-5 papers each, then the silhouette picks within that range.
    lo, hi = max(2, math.ceil(n / 5)), max(2, min(max_themes, n // 2))
    for k in range(lo, hi + 1):
        labels = fcluster(z, k, criterion="maxclust")
        if len(np.unique(labels)) < 2:
            continue
        s = _silhouette(d, labels)
        if s > best + 1e-9:
            best, best_labels = s, labels
    if best_labels is None:
        return [np.arange(n)]
    return [np.flatnonzero(best_labels == k) for k in np.unique(best_labels)]
