"""Topic regions of a map: group the points where they lie on the picture, name each group.

Grouped on the 2-D positions (k-means), not on the full vectors, so that a region is one contiguous
patch of the picture and its label sits among its own papers (what a reader sees as a region is what is
named). Named by the theme namer of summaries (rag.tasks.summarise.name_themes) over each region's most
typical papers (nearest its mean vector): distinctive terms against the other regions.
"""

from __future__ import annotations

import numpy as np

from rag.maps.layout import unit_rows

NAME_SAMPLE = 40  # papers per region read to name it (the most typical ones); bounds naming at 87k


def n_regions(n: int, most: int) -> int:
    """About n ** 0.4 regions: 6 for the 76 seeds, 31 for SciFact's 5k, capped at `most`."""
    if n < 4:
        return 1
    return int(max(2, min(most, round(n ** 0.4), n // 2)))


def group(coords: np.ndarray, k: int, seed: int = 42) -> np.ndarray:
    """Region label (0..k-1) of every point: k-means on the positions, regions numbered by size."""
    n = len(coords)
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    if k <= 1 or n < 4:
        return np.zeros(n, dtype=np.int32)
    from scipy.cluster.vq import kmeans2

    x = np.asarray(coords, dtype=np.float64)
    x = (x - x.mean(axis=0)) / max(float(x.std()), 1e-9)
    rng = np.random.default_rng(seed)
    try:
        _, labels = kmeans2(x, k, minit="++", iter=30, rng=rng)
    except TypeError:  # scipy < 1.15 calls it seed
        _, labels = kmeans2(x, k, minit="++", iter=30, seed=rng)
    sizes = np.bincount(labels, minlength=k)
    order = np.argsort(-sizes, kind="stable")  # biggest region first; empty ones (rare) dropped
    remap = np.full(k, -1, dtype=np.int32)
    remap[order[sizes[order] > 0]] = np.arange(int((sizes > 0).sum()), dtype=np.int32)
    return remap[labels]


def centres(coords: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Each region's mean position (where its label goes)."""
    out = np.zeros((k, 2), dtype=np.float32)
    for r in range(k):
        idx = labels == r
        if idx.any():
            out[r] = coords[idx].mean(axis=0)
    return out


def nearest_region(points: np.ndarray, region_centres: np.ndarray) -> np.ndarray:
    """The region of each new point: the one with the nearest centre, as k-means assigns (regions keep
    their names while papers are placed into them)."""
    if len(points) == 0 or len(region_centres) == 0:
        return np.zeros(len(points), dtype=np.int32)
    d = ((points[:, None, :] - region_centres[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1).astype(np.int32)


def typical(vectors: np.ndarray, labels: np.ndarray, k: int, sample: int = NAME_SAMPLE) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per region: the indices of its `sample` papers nearest its mean vector, and that (unit) mean."""
    groups, centroids = [], []
    for r in range(k):
        idx = np.flatnonzero(labels == r)
        c = unit_rows(vectors[idx].mean(axis=0, keepdims=True))[0] if len(idx) else np.zeros(vectors.shape[1])
        sims = unit_rows(vectors[idx]) @ c if len(idx) else np.zeros(0)
        groups.append(idx[np.argsort(-sims)[:sample]])
        centroids.append(c.astype(np.float32))
    return groups, centroids


def name(groups: list[list], centroids: list[np.ndarray], emb=None) -> list[tuple[str, list[str]]]:
    """(name, terms) per region, from its papers (full Paper records, abstracts included)."""
    from rag.tasks.theme_names import name_themes

    background = [p for g in groups for p in g]
    return name_themes(groups, background, "", emb, centroids if emb is not None else None)
