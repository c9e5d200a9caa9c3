"""One vector per paper for the map: the normalised mean of its chunk vectors, read from the store.

The chunks are what ingest already embedded (sentence windows, title prefixed), so the map costs no
embedding; their mean stands for the whole abstract.
"""

from __future__ import annotations

import numpy as np

from rag.maps.layout import unit_rows


def paper_vectors(library, paper_ids: list[str] | None = None) -> tuple[list[str], np.ndarray]:
    """(ids, unit vectors) for the given papers of the catalogue (all when None), in the order given;
    papers without a stored chunk are left out."""
    library.refresh()
    catalogue = library.catalogue
    want = list(catalogue) if paper_ids is None else [p for p in dict.fromkeys(paper_ids) if p in catalogue]
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    for cids, vecs in library.chunks.vectors(None if paper_ids is None else want):
        for cid, v in zip(cids, vecs):
            pid = cid.rsplit("#", 1)[0]
            if pid in sums:
                sums[pid] += v
                counts[pid] += 1
            else:
                sums[pid] = v.copy()
                counts[pid] = 1
    ids = [p for p in want if p in sums]
    if not ids:
        return [], np.zeros((0, library.identity.dimension or 384), dtype=np.float32)
    return ids, unit_rows(np.stack([sums[p] / counts[p] for p in ids]))
