"""Average-linkage agglomerative clustering in numpy, cut into at most k groups: scipy's
`linkage(method="average")` + `fcluster(criterion="maxclust")`, for the few dozen papers of a summary.

Importing scipy.cluster.hierarchy cost a cold `paperchat summarise` ~0.22 s of its ~1.2 s (bench/cold_start.py);
the clustering itself is a few dozen merges. tests/test_themes_linkage.py checks the groups equal scipy's.
"""

from __future__ import annotations

import numpy as np


class Dendrogram:
    """The merges of average linkage over a symmetric distance matrix, in the order they happen."""

    def __init__(self, d: np.ndarray):
        n = len(d)
        dist = np.array(d, dtype=np.float64)
        np.fill_diagonal(dist, np.inf)
        size = np.ones(n)
        height = np.zeros(n)  # per row: the highest merge inside its cluster (scipy's monocrit for maxclust)
        self.n, self.merges = n, []  # (row kept, row merged into it, height of everything below)
        for _ in range(n - 1):
            i, j = np.unravel_index(int(np.argmin(dist)), dist.shape)
            h = dist[i, j]
            # Lance-Williams update for the average: the new cluster's mean distance to every other one
            row = (size[i] * dist[i] + size[j] * dist[j]) / (size[i] + size[j])
            dist[i], dist[:, i] = row, row
            dist[j], dist[:, j] = np.inf, np.inf
            dist[i, i] = np.inf
            size[i] += size[j]
            height[i] = max(h, height[i], height[j])
            self.merges.append((int(i), int(j), float(height[i])))

    def cut(self, k: int) -> np.ndarray:
        """Labels 1.. of at most k groups: the lowest height at which the tree falls into k or fewer (ties at
        that height can give fewer, as fcluster's maxclust does), groups numbered by their first member."""
        n = self.n
        if k >= n:
            return np.arange(1, n + 1)
        at = sorted(h for _, _, h in self.merges)[n - k - 1] if k >= 1 else np.inf
        root = list(range(n))

        def find(x: int) -> int:
            while root[x] != x:
                root[x] = root[root[x]]
                x = root[x]
            return x

        for i, j, h in self.merges:
            if h <= at:
                root[find(j)] = find(i)
        roots = [find(x) for x in range(n)]
        label: dict[int, int] = {}
        return np.array([label.setdefault(r, len(label) + 1) for r in roots])
