"""The summary's theme grouping (rag.tasks.linkage) groups papers exactly as scipy's average linkage cut by
maxclust did, without importing scipy when a summary starts (bench/cold_start.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from rag.tasks.linkage import Dendrogram
from rag.tasks.themes import centred_distances

hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
distance = pytest.importorskip("scipy.spatial.distance")


def _groups(labels) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(np.asarray(labels) == v).tolist()) for v in np.unique(labels)}


@pytest.mark.parametrize("seed", range(40))
def test_groups_equal_scipys_average_linkage_cut_at_every_k(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 46))
    # papers around a few sub-areas, as a summary's on-topic papers are
    centres = rng.normal(size=(int(rng.integers(2, 7)), 384))
    vecs = centres[rng.integers(0, len(centres), n)] + rng.normal(scale=rng.uniform(0.3, 2.0), size=(n, 384))
    d = centred_distances(vecs)  # as rag.tasks.themes.cluster reads a summary's paper vectors
    z = hierarchy.linkage(distance.squareform(d, checks=False), method="average")
    tree = Dendrogram(d)
    for k in range(1, n + 1):
        assert _groups(tree.cut(k)) == _groups(hierarchy.fcluster(z, k, criterion="maxclust")), (n, k)


def test_a_summary_starts_without_importing_scipy():
    code = ("import json, sys, numpy as np; from rag.tasks.themes import cluster; "
            "g = cluster(np.random.default_rng(0).normal(size=(12, 8))); "
            "print(json.dumps([sorted(int(i) for x in g for i in x), 'scipy' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    papers, scipy_loaded = json.loads(out)
    assert papers == list(range(12)) and not scipy_loaded
