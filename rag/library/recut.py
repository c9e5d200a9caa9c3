"""Re-cutting a library: the chunk collection rebuilt from the paper records, which hold the abstracts.

Chunks and vectors are derived data, and the embedding cache makes re-embedding cheap. Done after the chunk
settings changed, and after a store repair (rag.library.store), so that chunks and records agree whatever a crash left.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

import numpy as np

from rag.library.catalogue import Catalogue, paper_from_meta
from rag.library.collections import REBUILD, Collections, chunk_metadata, paged
from rag.records import Chunk, Paper

log = logging.getLogger(__name__)


def rebuild_chunks(cols: Collections, catalogue: Catalogue, chunk: Callable[[list[Paper]], list[Chunk]],
          embed: Callable[[list[str]], np.ndarray], chunking: str, batch: int) -> int:
    """Rebuild `cols`' chunks (`chunk` cuts, `embed` gives vectors, `batch` papers at a time) and record
    `chunking` as how they were cut. Call with the write lock held. Returns the number of papers re-indexed."""
    log.warning("library %r: rebuilding the chunk vector index from the %d paper records",
                cols.name, cols.papers.count())
    catalogue.set_generation(f"{REBUILD}{uuid.uuid4().hex}")
    cols.new_chunks()
    done = 0
    for got in paged(cols.papers, ["documents", "metadatas"]):
        papers = [paper_from_meta(pid, m or {}, doc or "") for pid, doc, m in
                  zip(got["ids"], got["documents"], got["metadatas"])]
        metas = {pid: dict(m or {}) for pid, m in zip(got["ids"], got["metadatas"])}
        for s in range(0, len(papers), batch):
            part = papers[s : s + batch]
            chunks = chunk(part)
            vecs = embed([c.text for c in chunks])
            cols.chunks.upsert(ids=[c.chunk_id for c in chunks], embeddings=vecs,
                               metadatas=[chunk_metadata(c, metas[c.paper_id].get("venue", ""),
                                                         metas[c.paper_id].get("year")) for c in chunks])
            n_of: dict[str, int] = {}
            for c in chunks:
                n_of[c.paper_id] = n_of.get(c.paper_id, 0) + 1
            moved = [p.paper_id for p in part if int(metas[p.paper_id].get("n_chunks", 0)) != n_of.get(p.paper_id, 0)]
            if moved:  # chunking settings changed since: the records follow
                cols.papers.update(ids=moved, metadatas=[{**metas[i], "n_chunks": n_of.get(i, 0)} for i in moved])
            done += len(part)
    cols.chunking = chunking
    catalogue.set_generation(uuid.uuid4().hex)
    catalogue.generation = None
    catalogue.refresh()
    return done
