"""Ingest's pipeline: a batch's chunks and vectors are made on a worker thread while the batch before it is written.

Ingest was embedder-bound with Chroma's writes (and the loader) added on top; with one batch in flight
they happen during the next batch's embedding. A batch is cut into chunks on the caller's thread before
it is handed over, so the worker goes from one batch's model calls straight to the next's (an embedding
service on hardware of its own never waits for the chunker). Writes stay on the caller's thread, in order,
so the crash-order rules of rag.library.ingest (a paper's chunks before its record) are untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

import numpy as np

from rag.library.chunking import Window, chunks_of
from rag.library.embcache import EmbeddingCache, one_pass
from rag.reading.roles import role_sentences
from rag.records import Chunk, Paper


def one_blas_thread() -> AbstractContextManager:
    """numpy's BLAS held to one thread while ingest runs (process-wide: a server's other requests meanwhile too).
    The writer's numpy products (the role classifier's GRU steps) run beside the model's pass on the other thread;
    OpenBLAS's workers, left spinning after each product, took the cores from ONNX Runtime's pass
    (bench/ingest_throughput.py, docs/performance.md)."""
    from threadpoolctl import threadpool_limits  # imported here: commands that only read never pay for it

    return threadpool_limits(limits=1, user_api="blas")


@dataclass
class Cut:
    """A batch cut for embedding: its chunks, each paper's chunk count, and every text to embed (the chunks'
    texts first, then any the model should see in the same call); with `windows`, the chunks' sentence places."""

    chunks: list[Chunk]
    n_chunks: dict[str, int]
    texts: list[str]
    windows: list = field(default_factory=list)  # rag.library.chunking.Window per chunk, for the one-pass embedder


def cut_batch(papers: list[Paper], cut: Callable[[Paper], list[Window]], embedder,
              cache: EmbeddingCache | None, enabled: bool = True) -> Cut:
    """A batch's chunks, chunk counts and texts to embed, with the chunks' sentence places for a one-pass embedder."""
    chunks: list[Chunk] = []
    wins: list[Window] = []
    n_chunks: dict[str, int] = {}
    for p in papers:
        pw = cut(p)
        n_chunks[p.paper_id] = len(pw)
        chunks.extend(chunks_of(p, pw))
        wins.extend(pw)
    if one_pass(embedder, cache, enabled):
        # One forward pass per chunk gives its sentences' vectors too (roles, answers, summaries read them).
        return Cut(chunks, n_chunks, [c.text for c in chunks], wins)
    # Without token states the role sentences go into the same call, so the model sees one
    # token-sorted stream and the writer thread only finds them in the cache (rag.reading.roles).
    extra = role_sentences(papers, embedder) if cache is not None else []
    return Cut(chunks, n_chunks, [c.text for c in chunks] + extra)


@dataclass
class Plan:
    """One batch's changes: papers to (re)write, with their chunks (`cut`) and vectors (`embed`); papers whose
    record only moved; papers another source already stored that this one holds too (`joined`)."""

    size: int
    papers: list[Paper]
    moved: list[Paper]
    joined: list[Paper]
    source_id: str
    source_path: str
    cut: Callable[[list[Paper]], Cut]
    embed: Callable[[Cut], np.ndarray]
    dropping: str = ""  # a source letting go of these papers (its version gives way to this source's own)
    _future: Future | None = field(default=None, repr=False)
    _cut: Cut | None = field(default=None, repr=False)

    def start(self, pool: ThreadPoolExecutor | None) -> None:
        if pool is not None:
            self._cut = self.cut(self.papers)
            self._future = pool.submit(self.embed, self._cut)

    def result(self) -> tuple[list[Chunk], dict[str, int], np.ndarray]:
        if self._future is None:
            self._cut = self.cut(self.papers)
        vecs = self._future.result() if self._future is not None else self.embed(self._cut)
        return self._cut.chunks, self._cut.n_chunks, vecs

    def cancel(self) -> None:
        if self._future is not None:
            self._future.cancel()

    def pending(self) -> dict[str, dict]:
        """What the catalogue will hold for these papers once written, as far as classifying needs."""
        return {p.paper_id: {"hash": p.content_hash, "source": p.source, "position": p.position,
                             "source_id": self.source_id, "source_path": self.source_path, "also_in": "[]"}
                for p in self.papers + self.moved}


class OneAhead:
    """`swap` starts a plan's embedding on one worker thread and hands back the plan before it, to be
    written while this one embeds. `overlap=False` embeds each batch when it is written (benches compare)."""

    def __init__(self, overlap: bool = True):
        self.overlap = overlap
        self._pool: ThreadPoolExecutor | None = None
        self._current: Plan | None = None

    def planned(self) -> dict[str, dict]:
        return self._current.pending() if self._current is not None else {}

    def swap(self, plan: Plan | None) -> Plan | None:
        if plan is not None and self.overlap:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="paperchat-ingest-embed")
            plan.start(self._pool)
        prev, self._current = self._current, plan
        return prev

    def close(self) -> None:
        """Drop a batch embedded but not written (an error, Ctrl-C): it is never half-written."""
        if self._current is not None:
            self._current.cancel()
            self._current = None
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
