"""What a library does on embedded Chroma to never load torn files: check them, vouch for them, rebuild what fails.

Embedded Chroma can crash the process loading HNSW files a killed process tore (rag.library.store.childcheck),
and any process may write them: a writer, and a reader applying Chroma's log on its first read. So
the files' fingerprints (sizes, mtimes) are kept in the library folder (`vouched.json`) whenever a
check passed, and a process loads only files that match them; others are checked first
(rag.library.store.hnswfiles, ~2 s at 400k chunks, milliseconds at SciFact's size), and what fails is rebuilt
without being loaded. A writer leaves a `writing` marker while it holds the write lock: if it dies,
the next lock holder also loads the collections in a child process before this one does.

rag.library.chroma.ServerStore does the same jobs for a Chroma server, where none of this is needed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rag.library.collections import REBUILD, Collections
from rag.errors import LibraryBusy, LibraryError, StoreFull
from rag.library.locks import library_lock
from rag.library.store.childcheck import failing, vector_dirs
from rag.library.store.client import reload
from rag.library.store.hnswfiles import fingerprint, problems
from rag.library.store.repair import loads, restore_records

log = logging.getLogger(__name__)

_SETTLE = 10.0  # seconds a reader waits for a live writer's half-saved HNSW files to read as whole
_WRITING = "writing"  # in the library folder while a process holds the write lock
_VOUCHED = "vouched.json"  # fingerprints of the store's vector files as last checked sound
# Bytes free below which no repair is started: on a full disk Chroma cannot apply its last writes, so its
# collections fail to load although nothing is torn, and a repair (which rewrites the library) would fail
# half-way, or salvage the records without those still in Chroma's log (a search after an ingest that
# filled a 3 MB tmpfs restored 256 of its papers, or waited forever inside Chroma; issue 28, item 12).
MIN_FREE = 64 << 20

# (store handle, library) -> the generation this process's view of the store is current for.
_VIEWS: dict[tuple[int, str], str] = {}


class EmbeddedStore:
    """The guard of one library on embedded Chroma. `recut` rebuilds the chunk collection from the
    paper records (rag.library.ingest.Ingestor.recut); the library wires it in once the ingestor exists."""

    def __init__(self, home: Path, folder: Path, cols: Collections):
        self.home, self.dir, self.cols = home, folder, cols
        self.recut: Callable[[], int] = lambda: 0

    # -- this process's view -----------------------------------------------------------------

    def saw(self, gen: str) -> None:
        """This process wrote the generation, so its view of the store has it."""
        _VIEWS[self.cols.view_key()] = gen

    def catch_up(self, gen: str) -> None:
        """Embedded Chroma keeps each process's vector index in memory and never re-reads what another
        process wrote (chroma-core/chroma#3792): its queries miss those vectors, and filtered ones fail
        with "Error finding id". When the generation moved and this process did not move it, reload
        this process's view of the store."""
        key = self.cols.view_key()
        if _VIEWS.setdefault(key, gen) == gen:
            return
        self.check_before_load()  # before this process reloads files another process may have torn
        reload(getattr(self.cols.client, "_server", None))
        _VIEWS[key] = gen

    # -- the writer's session ----------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, deadline: float, timeout: float) -> Iterator[None]:
        """Inside the library's write lock: check what no check has passed, mark the store as being
        written (the marker outlives a writer that dies mid-write), and vouch for the files at the end:
        what this writer leaves is checked once, here, not by every reader."""
        self._check_or_rebuild()
        marker = self.dir / _WRITING
        marker.write_text(str(os.getpid()))
        try:
            yield
        finally:
            self.vouch()
            marker.unlink(missing_ok=True)

    @contextlib.contextmanager
    def _write_now(self) -> Iterator[None]:
        """The whole write lock, if it is free right now (else LibraryBusy)."""
        with library_lock(self.dir, self.cols.name, 0) as deadline, self.writing(deadline, 0):
            yield

    # -- checks ------------------------------------------------------------------------------

    def check_before_load(self) -> None:
        """Before this process loads Chroma's files, make sure a check has passed them (a writer died, or
        some process changed them since). A live writer vouches for its own when it ends."""
        deadline = time.monotonic() + _SETTLE
        while True:
            if not (self.dir / _WRITING).exists() and self._vouched() == self._fingerprints():
                return
            try:
                with library_lock(self.dir, self.cols.name, 0):
                    self._check_or_rebuild()
                    return
            except LibraryBusy:
                pass
            # A live writer is changing the files: load them when they read as whole, not mid-save.
            if not self._checked()[1] or time.monotonic() > deadline:
                return
            time.sleep(0.2)

    def _check_or_rebuild(self) -> None:
        """With the write lock held: check files that no check has passed, before anything here loads them.
        Files that fail are rebuilt (the records from SQLite, the chunks from the records), never loaded."""
        died = (self.dir / _WRITING).exists()
        if not died and self._vouched() == self._fingerprints():
            return
        prints, bad = self._checked()
        if not bad and died:
            # Sound bytes can still answer wrongly: a child loads them (safe now) and checks its answers.
            bad = failing(self.home / "chroma", [self.cols.papers.name, self.cols.chunks.name])
            if not bad:
                prints, bad = self._checked()  # loading may have flushed Chroma's log into the files
        if bad:
            log.warning("library %r: %s; Chroma cannot safely load %s; rebuilding", self.cols.name,
                        "the last ingest was killed mid-write" if died else "a process was killed writing its files",
                        " and ".join(bad))
            self.rebuild(records_too=self.cols.papers.name in bad)
            self.vouch()
        else:
            self._record(prints)
        (self.dir / _WRITING).unlink(missing_ok=True)

    def vouch(self) -> None:
        """With the write lock held, as a writer finishes: record the files' fingerprints if they pass."""
        if self._vouched() == self._fingerprints():
            return
        prints, bad = self._checked()
        if bad:  # not expected of a live writer; the next process to open the library rebuilds them
            log.warning("library %r: the files Chroma left for %s do not pass the check", self.cols.name,
                        " and ".join(bad))
            return
        self._record(prints)

    def _vector_files(self) -> dict[str, tuple[str, Path, bool]]:
        """Collection id -> (name, HNSW folder, whether its vectors are normalised)."""
        cols = {str(c.id): (c.name, c is self.cols.chunks) for c in (self.cols.papers, self.cols.chunks)}
        try:
            dirs = vector_dirs(self.home / "chroma", list(cols))
        except Exception:  # noqa: BLE001 - no SQLite file yet, or not this layout: nothing to check
            return {}
        return {cid: (cols[cid][0], d, cols[cid][1]) for cid, d in dirs.items()}

    def _fingerprints(self) -> dict:
        return {cid: fingerprint(d) for cid, (_, d, _) in self._vector_files().items()}

    def _vouched(self) -> dict | None:
        try:
            return json.loads((self.dir / _VOUCHED).read_text())
        except (OSError, ValueError):
            return None

    def _checked(self) -> tuple[dict, list[str]]:
        """The files' fingerprints, taken before checking them, and the collections whose files fail."""

        def fails(d: Path, norm: bool) -> bool:
            try:
                return bool(problems(d, norm))
            except Exception:  # noqa: BLE001 - files that cannot even be read are not sound
                return True

        with getattr(self.cols.client, "store_lock", None) or contextlib.nullcontext():  # no process mid-save
            files = self._vector_files()
            prints = {cid: fingerprint(d) for cid, (_, d, _) in files.items()}
            return prints, [name for name, d, norm in files.values() if fails(d, norm)]

    def _record(self, prints: dict) -> None:
        try:
            tmp = self.dir / f".{_VOUCHED}.{os.getpid()}"
            tmp.write_text(json.dumps(prints))
            tmp.replace(self.dir / _VOUCHED)
        except OSError:  # a read-only library folder: the next process checks again
            pass

    # -- repair ------------------------------------------------------------------------------

    def readable(self) -> bool:
        """Whether Chroma can load both collections."""
        return loads(self.cols.papers) and loads(self.cols.chunks)

    def repair_after(self, exc: Exception) -> None:
        """A read failed: rebuild what Chroma cannot load, unless a writer is at work; else re-raise."""
        if self.readable():
            raise exc
        self.refuse_if_full()
        try:
            with self._write_now():
                self.rebuild_if_unloadable()
        except LibraryBusy:
            raise LibraryError(f"library {self.cols.name!r}: Chroma cannot load the store and an ingest is "
                               f"writing to it; try again when it has finished") from exc

    def finish_rebuild(self) -> bool:
        """The generation says a chunk rebuild is under way, or was killed half-way: finish it if no one
        is writing. True if it did (and left the library refreshed)."""
        with contextlib.suppress(LibraryBusy), self._write_now():
            return self.rebuild_if_unloadable()
        return False

    def rebuild_if_unloadable(self) -> bool:
        """With the write lock held: rebuild the collections Chroma cannot load. True if it did."""
        records_ok = loads(self.cols.papers)
        if records_ok and loads(self.cols.chunks) and not self.cols.generation().startswith(REBUILD):
            return False  # (a rebuild stamp without a writer: a rebuild was killed half-way; do it again)
        self.rebuild(records_too=not records_ok)
        return True

    def refuse_if_full(self) -> None:
        """StoreFull when the disk holding the store has less than MIN_FREE bytes free."""
        store = self.home / "chroma"
        try:
            free = shutil.disk_usage(store).free
        except OSError:
            return
        if free < MIN_FREE:
            raise StoreFull(f"the disk holding {store} is full ({free / 1e6:.1f} MB free), so Chroma cannot apply the "
                            f"last writes to library {self.cols.name!r} — free some space and run the same command "
                            "again: what was written is kept, and nothing is repaired or removed on a full disk")

    def rebuild(self, records_too: bool) -> None:
        """The one rebuild of a bad store, with the write lock held: the paper records from Chroma's SQLite
        file (when Chroma cannot load them), then the chunk vectors from the records. Never on a full disk."""
        self.refuse_if_full()
        if records_too:
            restore_records(self.cols, self.home / "chroma" / "chroma.sqlite3")
        self.recut()
