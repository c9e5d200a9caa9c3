"""Chunk reads: the nearest chunks to a query vector (filtered or not), chunk texts by id, and stored chunk vectors."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from rag.library.catalogue import Catalogue
from rag.library.collections import Collections, chunk_text, in_pages, paged


class ChunkIndex:
    """Dense reads over a library's chunk collection, kept to the papers of its catalogue."""

    scan = 8000  # most nearest chunks a filtered search reads to filter itself (~40 ms at 87k papers)

    def __init__(self, cols: Collections, catalogue: Catalogue, store, embedder, server: bool):
        self.cols, self.catalogue, self.store, self.embedder = cols, catalogue, store, embedder
        self._server = server  # a Chroma server: its index never lags its metadata

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed_array([text])[0]

    def dense(self, vector: np.ndarray, n: int, where: dict | None = None, refresh: bool = True,
              admitted: Callable[[str], bool] | None = None, share: float | None = None,
              min_papers: int = 3) -> list[tuple[str, str, float, str]]:
        """Nearest chunks: (chunk_id, paper_id, cosine similarity, ""), best first.

        Only distances come back from Chroma (a chunk id names its paper): asking for metadatas and
        documents of 800 results costs 16 ms against 4 ms (bench/latency.py); the few chunk texts
        shown are fetched afterwards with chunk_texts().

        A filter comes as Chroma's `where` and, to run it here, as `admitted` (its test of a paper id,
        e.g. Facets.admitted) with `share` (the fraction of papers it admits): Chroma's own
        `where` costs in proportion to the chunks it admits (at 87k papers, 300-800 ms for a venue or a
        year range) while a wider unfiltered query costs ~5 ms per 1,000 results. The nearest
        n/share chunks (at most `scan`) hold every admitted chunk nearer than the last of them, so what
        passes the filter is exact, only possibly fewer than n (the papers missing are farther than all
        of those found, and BM25 still ranks them). Chroma filters when fewer than `min_papers` pass."""
        if refresh:
            self.catalogue.refresh()
        total = self.catalogue.n_chunks
        if total == 0 or (where and share is not None and share <= 0):
            return []
        if where and admitted is not None and share is not None:
            scan = min(total, max(n, int(n / share) + 1), self.scan)
            rows = self.dense_rows(vector, scan, None, admitted)
            if scan >= total or len({pid for _, pid, _, _ in rows}) >= min_papers:
                return rows[:n]
        return self.dense_rows(vector, min(n, total), where, admitted)[:n]

    def dense_rows(self, vector: np.ndarray, n: int, where: dict | None,
                   admitted: Callable[[str], bool] | None) -> list[tuple[str, str, float, str]]:
        """Chroma's n nearest (filtered by Chroma with `where`), kept if in the catalogue and `admitted`."""
        include = ["distances"]
        try:
            res = self.cols.chunks.query(query_embeddings=[vector.tolist()], n_results=n, where=where or None,
                                         include=include)
        except Exception as exc:  # noqa: BLE001
            if not self.store.readable():
                self.store.repair_after(exc)
                return self.dense_rows(vector, n, where, admitted)
            if not where or admitted is None or self._server:
                raise
            # Embedded store while another process writes to it: this process's vector index lags its
            # metadata and a filtered query fails. Query unfiltered and filter here instead.
            res = self.cols.chunks.query(query_embeddings=[vector.tolist()],
                                         n_results=min(max(4 * n, 400), self.catalogue.n_chunks), include=include)
        out = []
        catalogue = self.catalogue.entries
        for cid, d in zip(res["ids"][0], res["distances"][0]):
            pid = cid.rsplit("#", 1)[0]
            meta = catalogue.get(pid)
            if meta is not None and (admitted is None or admitted(pid)):
                out.append((cid, pid, 1.0 - float(d), ""))
        return out

    def chunk_texts(self, ids: list[str]) -> dict[str, str]:
        if not ids:
            return {}
        # the text is in the metadata, or the document of a library written before
        want, include = list(dict.fromkeys(ids)), ["documents", "metadatas"]
        try:
            got = self.cols.chunks.get(ids=want, include=include)
        except Exception as exc:  # noqa: BLE001
            self.store.repair_after(exc)
            got = self.cols.chunks.get(ids=want, include=include)
        return {cid: chunk_text(d, m) for cid, d, m in zip(got["ids"], got["documents"], got["metadatas"])}

    def vectors(self, paper_ids: list[str] | None = None) -> Iterator[tuple[list[str], np.ndarray]]:
        """(chunk ids, their stored vectors) a page at a time: of the given papers' chunks, or of every chunk
        in the store (the map averages them per paper; nothing is embedded again)."""
        if paper_ids is None:
            for got in paged(self.cols.chunks, ["embeddings"]):
                yield list(got["ids"]), np.asarray(got["embeddings"], dtype=np.float32)
            return
        entries = self.catalogue.entries
        ids = [f"{p}#{i}" for p in paper_ids if p in entries for i in range(int(entries[p].get("n_chunks", 0)))]
        for part in in_pages(ids):
            got = self.cols.chunks.get(ids=list(part), include=["embeddings"])
            yield list(got["ids"]), np.asarray(got["embeddings"], dtype=np.float32)
