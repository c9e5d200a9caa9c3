"""How a summary's papers are ordered and grouped: MMR over the on-topic papers, then clustering chosen by silhouette."""

from __future__ import annotations

import math

import numpy as np

from rag.library.embcache import CachedEmbedder
from rag.records import Paper
from rag.tasks.linkage import Dendrogram
from rag.tasks.topicality import Reading

CANDIDATES = 30  # papers retrieved; rag.tasks.topicality decides which of them the summary is about
MAX_PAPERS = 15  # after MMR: a summary longer than this stops being one
MMR_LAMBDA = 0.7
MAX_THEMES = 6


def depth(k: int) -> int:
    """How many papers to retrieve for a summary or table of at most k papers: an area's core papers rank
    down to ~4k in the mlqa train areas' retrieval (rag.tasks.area_scorer then decides which belong)."""
    return max(CANDIDATES, 4 * k)


def unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-12)


def paper_text(p: Paper) -> str:
    return f"{p.title}. {p.abstract}" if p.title and not p.title_derived else p.abstract


def select_papers(readings: list[Reading], emb: CachedEmbedder, max_papers: int = MAX_PAPERS,
                  lam: float = MMR_LAMBDA) -> tuple[list[Reading], np.ndarray]:
    """The on-topic papers in MMR order (how much their contribution is about the topic, against
    redundancy with those already chosen), at most max_papers, with their vectors."""
    if not readings:
        return [], np.zeros((0, 1))
    vecs = emb([paper_text(r.paper) for r in readings])
    # how probably each belongs to the area (rag.tasks.area_scorer), else how topical its contribution is
    rel = np.array([r.probability or r.score for r in readings])
    chosen: list[int] = []
    rest = list(range(len(readings)))
    while rest and len(chosen) < max_papers:
        if not chosen:
            j = max(rest, key=lambda i: rel[i])
        else:
            red = (vecs[rest] @ vecs[chosen].T).max(axis=1)
            scores = lam * rel[rest] - (1 - lam) * red
            j = rest[int(np.argmax(scores))]
        chosen.append(j)
        rest.remove(j)
    for i in chosen:
        readings[i].vec = vecs[i]
    return [readings[i] for i in chosen], vecs[chosen]


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


def centred_distances(vecs: np.ndarray) -> np.ndarray:
    """Cosine distances between the papers' vectors less their mean, symmetric with a zero diagonal. Centring
    removes what every paper shares (the topic itself), so the differences drive the grouping."""
    c = vecs - vecs.mean(axis=0, keepdims=True)
    c = c / np.clip(np.linalg.norm(c, axis=1, keepdims=True), 1e-12, None)
    d = np.clip(1.0 - c @ c.T, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    return (d + d.T) / 2


def cluster(vecs: np.ndarray, max_themes: int = MAX_THEMES) -> list[np.ndarray]:
    """Index groups: average-linkage agglomerative clustering on cosine distance of the centred paper
    vectors, the number of groups (2..6) chosen by silhouette. Fewer than 4 papers make one theme."""
    n = len(vecs)
    if n < 4:
        return [np.arange(n)]
    # Silhouettes of abstract vectors are low and flat (0.05-0.2 on the seeds), so k is kept where
    # themes read well: about 2-5 papers each, then the silhouette picks within that range.
    lo, hi = max(2, math.ceil(n / 5)), max(2, min(max_themes, n // 2))
    return best_cut(centred_distances(vecs), range(lo, hi + 1))


def best_cut(d: np.ndarray, ks) -> list[np.ndarray]:
    """Index groups: the average-linkage tree of distances `d` cut into each k of `ks`, the cut of two groups
    or more with the highest silhouette kept (one group when none has two)."""
    tree = Dendrogram(d)
    best, best_labels = -2.0, None
    for k in ks:
        labels = tree.cut(k)
        if len(np.unique(labels)) < 2:
            continue
        s = _silhouette(d, labels)
        if s > best + 1e-9:
            best, best_labels = s, labels
    if best_labels is None:
        return [np.arange(len(d))]
    return [np.flatnonzero(best_labels == k) for k in np.unique(best_labels)]
