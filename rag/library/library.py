"""The library: one object the CLI, the UI, the tasks and the tests all call, wiring the rooms that do the work.

    rag.library.collections   the two Chroma collections (paper records, chunk vectors) and the generation stamp
    rag.library.catalogue     the catalogue and BM25 index, cached per generation; paper reads; facets
    rag.library.chunks        dense reads: nearest chunks, chunk texts
    rag.library.ingest        writing: batches, deletes, in an order a crash cannot harm
    rag.library.recut         the chunk collection rebuilt from the paper records (chunk settings changed, store repaired)
    rag.library.removal       removing papers or whole sources, in the same crash-safe order
    rag.library.retitle       derived titles re-derived when their rules changed (metadata only)
    rag.library.locks         one writer per library
    rag.library.chroma        the Chroma client; the embedded-store guard (rag.library.store) or a server's store jobs
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from rag.library.catalogue import Catalogue, Facets
from rag.library.chroma import make_client, store_for
from rag.library.chunks import ChunkIndex
from rag.library.collections import Collections
from rag.library.embcache import open_cache
from rag.errors import LibraryBusy, LibraryError
from rag.library.ingest import IngestReport, Ingestor, chunking_of
from rag.library.locks import library_lock
from rag.records import Paper
from rag.library.removal import Remover, RemoveReport, SourceSummary
from rag.library.retitle import retitle_if_stale
from rag.settings import Settings, library_name_problem

__all__ = ["Library", "LibraryError", "LibraryBusy", "IngestReport", "Facets", "RemoveReport", "SourceSummary"]


class Library:
    """A named library in a Chroma store. Its rooms are public for what callers need beyond the
    delegates below: `collections`, `records` (the Catalogue), `chunks`, `ingestor`, `store`."""

    def __init__(self, settings: Settings, embedder=None, client=None, local_dir: Path | None = None):
        from rag.embedders import make_embedder, resolve

        if problem := library_name_problem(settings.library):  # --library bypasses Settings' own check
            raise LibraryError(problem)
        self.settings = settings
        self.name = settings.library
        self.embedder = embedder if embedder is not None else make_embedder(settings)
        self.client = client if client is not None else make_client(settings.home, settings.chroma_url)
        if local_dir is not None:
            self.dir = local_dir
        elif settings.chroma_url:
            key = re.sub(r"[^A-Za-z0-9]+", "_", settings.chroma_url).strip("_")
            self.dir = settings.home / "servers" / key / self.name
        else:
            self.dir = settings.library_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.collections = Collections(self.client, self.name, chunking_of(settings),
                                       "pooled" if settings.chunk.one_pass else "standalone")
        # A library keeps the sentence vectors it was built with (two-pass ones and their weights stay two-pass).
        one_pass = self.collections.sentences == "pooled"
        if one_pass != settings.chunk.one_pass:
            settings = settings.model_copy(update={"chunk": settings.chunk.model_copy(update={"one_pass": one_pass})})
            self.settings = settings
        # Model, dimension and normalisation must match what the library was built with (not where it runs).
        self.identity = resolve(self.name, self.embedder, self.collections.recorded)
        self.collections.identity = self.identity.as_metadata()
        cache = open_cache(settings.home / "cache", self.identity) if self.identity.model != "hashing-fake" else None
        self.store = store_for(settings.chroma_url, settings.home, self.dir, self.collections)
        self.records = Catalogue(self.collections, settings, self.dir, self.store)
        self.chunks = ChunkIndex(self.collections, self.records, self.store, self.embedder, bool(settings.chroma_url))
        self.ingestor = Ingestor(self.collections, self.records, self.store, self.embedder, cache, settings,
                                 self.write_lock)
        self.remover = Remover(self.ingestor, self.write_lock)
        self.text_embedder = self.ingestor.sentence_embedder()  # for sentences in tasks (pooled in their chunks)
        self.store.recut = self.ingestor.recut  # the guard's rebuild ends in the ingestor's re-cut
        self.store.check_before_load()
        retitle_if_stale(self)  # derived titles under older rules: re-derived, metadata only (rag.library.retitle)

    @contextlib.contextmanager
    def write_lock(self, timeout: float | None = None) -> Iterator[None]:
        """One writer per library: a second ingest waits, then gives up with a clear message (LibraryBusy)."""
        timeout = self.settings.lock_timeout if timeout is None else timeout
        with library_lock(self.dir, self.name, timeout) as deadline, self.store.writing(deadline, timeout):
            yield

    # -- the catalogue ---------------------------------------------------------------------

    @property
    def catalogue(self) -> dict[str, dict]:
        """Paper id -> record metadata, as of the last refresh (replaced, never changed in place)."""
        return self.records.entries

    @property
    def lexical(self):
        return self.records.lexical

    @property
    def n_chunks(self) -> int:
        return self.records.n_chunks

    def refresh(self) -> None:
        self.records.refresh()

    def papers(self) -> list[Paper]:
        return self.records.papers()

    def get_papers(self, ids: list[str], refresh: bool = True) -> dict[str, Paper]:
        return self.records.get_papers(ids, refresh)

    def facets(self) -> Facets:
        return self.records.facets()

    def stats(self) -> dict:
        return {**self.records.stats(), "embedder_dimension": self.identity.dimension,
                "embedder_runs_on": self.embedder_runs_on}

    @property
    def embedder_runs_on(self) -> str:
        """Where vectors come from: 'in process, onnxruntime CPU' (or CUDA), or 'endpoint URL (...)'."""
        return str(getattr(self.embedder, "runs_on", "in process"))

    def __len__(self) -> int:
        self.records.refresh()
        return len(self.records.entries)

    # -- chunks ----------------------------------------------------------------------------

    def embed_query(self, text: str) -> np.ndarray:
        return self.chunks.embed_query(text)

    def dense(self, vector: np.ndarray, n: int, where: dict | None = None, refresh: bool = True,
              admitted: Callable[[str], bool] | None = None, share: float | None = None,
              min_papers: int = 3) -> list[tuple[str, str, float, str]]:
        return self.chunks.dense(vector, n, where, refresh, admitted, share, min_papers)

    def chunk_texts(self, ids: list[str]) -> dict[str, str]:
        return self.chunks.chunk_texts(ids)

    # -- writing ---------------------------------------------------------------------------

    def ingest(self, paths: Iterable[Path], fields: dict[str, str] | None = None,
               progress: bool | None = None, on_progress: Callable[[int], None] | None = None, *,
               source: str | None = None, remember_paths: bool = True) -> IngestReport:
        """Add what is new, replace what changed, leave the rest; see IngestReport for the counts.
        `source` names a file's source outright; `remember_paths=False` for uploads (rag.library.sources)."""
        return self.ingestor.ingest(paths, fields, progress, on_progress, source=source, remember_paths=remember_paths)

    def remove(self, ids: Iterable[str]) -> RemoveReport:
        """Take these papers out of the library (vectors, BM25, catalogue), whichever sources hold them.
        Ids the library does not hold are listed in `not_found`, not an error. Crash-safe: a rerun finishes."""
        return self.remover.remove(ids)

    def sources(self) -> list[SourceSummary]:
        """Every source (file) of the library with its paper counts, by name."""
        return self.remover.sources()

    def remove_source(self, source: str) -> RemoveReport:
        """Take a source out: `source` is its id (as `sources()` lists it), the path it was read from, or
        its file name when only one source has that name (UserError if none, or several: it names them).
        Its papers leave unless another source also holds them (those stay, under that source: `kept`)."""
        return self.remover.remove_source(source)

    def drop(self) -> None:
        """Delete the whole library (store collections and local caches)."""
        self.collections.drop()
        shutil.rmtree(self.dir, ignore_errors=True)
