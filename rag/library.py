"""The library: a Chroma collection of chunk vectors, a paper catalogue and a BM25 index.

Chroma is the one source of truth (so replicas sharing a Chroma server agree); the catalogue and the
lexical index are local caches rebuilt whenever the library's *generation* stamp changes.

Write order makes a crash harmless: a paper's chunks are written before its catalogue record, and a
paper only exists once its record does; chunks without a record are ignored by readers and swept
by the next ingest. The generation is set to a "dirty" stamp before the first write and to a fresh
one after the last, so every reader's caches notice any change, finished or not.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pickle
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from .chunking import chunk_paper
from .embcache import CachedEmbedder, EmbeddingCache, embed_with_cache
from .lexical import LexicalIndex
from .records import Chunk, Paper, Rejection
from .settings import Settings

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
_BATCH = 128  # papers per write: small enough to lose little to a crash, large enough to batch the embedder
_PAGE = 5000  # rows per Chroma read/write call (under its max batch size)
_SCAN = 8000  # most nearest chunks a filtered search reads to filter itself (~40 ms at 87k papers)
_CACHE_FORMAT = "v2"  # bump when the cached catalogue or lexical index changes shape (v2: BM25 over papers)


_SETTLE = 10.0  # seconds a reader waits for a live writer's half-saved HNSW files to read as whole
_LOCK_BEAT = 5.0  # seconds between heartbeats of a server-side write lock
_LOCK_STALE = 60.0  # a server-side lock without a heartbeat for this long belongs to a dead writer


def _host_id() -> str:
    """This host and PID namespace: a PID is only meaningful within both (containers share hostnames)."""
    import socket

    try:
        ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        ns = 0
    return f"{socket.gethostname()}:{ns}"


def _lock_is_stale(meta: dict) -> bool:
    parts = str(meta.get("owner", "")).rsplit(":", 2)  # host:pidns:pid:random
    host, pid = (parts[0], parts[1]) if len(parts) == 3 else ("", "")
    if host == _host_id() and pid.isdigit() and int(pid) != os.getpid():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True  # its writer died on this host (kill -9, power cut of a container...)
        except PermissionError:
            pass
    try:
        return time.time() - float(meta.get("beat") or 0) > _LOCK_STALE
    except (TypeError, ValueError):
        return True


_WRITING = "writing"  # in the library folder while a process holds the write lock (embedded store)
_VOUCHED = "vouched.json"  # fingerprints of the store's vector files as last checked sound (embedded store)
_REBUILD = "dirty-rebuild-"  # the generation stamp while the chunk collection is rebuilt (see _repair_store)

# (store handle, library) -> the generation this process's view of the store is current for.
_VIEWS: dict[tuple[int, str], str] = {}


class Facets:
    """Venue and year of every paper, in lexical-index order, as arrays: a filter is then a few vector
    comparisons, for BM25's mask and for the dense side alike (at 87k papers a Python loop over the
    catalogue cost 27 ms per query)."""

    def __init__(self, catalogue: dict[str, dict], ids: list[str]):
        metas = [catalogue.get(pid, {}) for pid in ids]
        venues = [m.get("venue") or "" for m in metas]
        self.spelled = {v.lower(): v for v in venues}  # any spelling -> the stored one
        self._codes = {v: i for i, v in enumerate(sorted(self.spelled))}
        self._venue = np.array([self._codes[v.lower()] for v in venues], dtype=np.int32)
        self._year = np.array([int(m.get("year") or 0) for m in metas], dtype=np.int32)
        self._row = {pid: i for i, pid in enumerate(ids)}

    def mask(self, venue: str | None, year_from: int | None, year_to: int | None) -> np.ndarray:
        """1.0 for each paper (in lexical-index order) that passes, else 0.0; the venue in any case."""
        keep = np.ones(len(self._year), dtype=bool)
        if venue:
            code = self._codes.get(venue.lower())
            keep &= (self._venue == code) if code is not None else False
        if year_from is not None:
            keep &= self._year >= year_from
        if year_to is not None:
            keep &= self._year <= year_to
        return keep.astype(np.float32)

    def admitted(self, mask: np.ndarray) -> Callable[[str], bool]:
        """The mask as a test of one paper id."""
        row = self._row
        return lambda pid: (i := row.get(pid)) is not None and mask[i] > 0


class LibraryError(RuntimeError):
    """A problem the user can act on; the CLI prints it as one line."""


class LibraryBusy(LibraryError):
    pass


class IngestReport(BaseModel):
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    rejected: int = 0
    rejections: list[Rejection] = Field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"added {self.added}, updated {self.updated}, unchanged {self.unchanged}, "
                f"rejected {self.rejected}" + (f", removed {self.removed}" if self.removed else ""))


def _paper_meta(p: Paper, n_chunks: int) -> dict:
    return {
        "title": p.title, "title_derived": p.title_derived, "authors": json.dumps(p.authors),
        "year": p.year or 0, "venue": p.venue, "url": p.url, "source": p.source, "position": p.position,
        "hash": p.content_hash, "n_chunks": n_chunks,
    }


def lexical_text(title: str, abstract: str) -> str:
    return f"{title}. {abstract}" if title else abstract


def _paper_from_meta(pid: str, m: dict, abstract: str = "") -> Paper:
    return Paper(
        paper_id=pid, abstract=abstract, title=m.get("title", ""), title_derived=bool(m.get("title_derived")),
        authors=json.loads(m.get("authors") or "[]"), year=m.get("year") or None, venue=m.get("venue", ""),
        url=m.get("url", ""), source=m.get("source", ""), position=int(m.get("position") or 0),
    )


class Library:
    def __init__(self, settings: Settings, embedder=None, client=None, local_dir: Path | None = None):
        from .chroma import make_client
        from .embeddings import get_embedder

        if not _NAME.match(settings.library):
            raise LibraryError(f"library name {settings.library!r} must be letters, digits, '-' or '_'")
        self.settings = settings
        self.name = settings.library
        self.embedder = embedder if embedder is not None else get_embedder(settings.embedder)
        self.client = client if client is not None else make_client(settings.home, settings.chroma_url)
        if local_dir is not None:
            self.dir = local_dir
        elif settings.chroma_url:
            key = re.sub(r"[^A-Za-z0-9]+", "_", settings.chroma_url).strip("_")
            self.dir = settings.home / "servers" / key / self.name
        else:
            self.dir = settings.library_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        model = getattr(self.embedder, "model_id", type(self.embedder).__name__)
        self._chunks = self.client.get_or_create_collection(
            f"paperchat-{self.name}-chunks", embedding_function=None,
            configuration={"hnsw": {"space": "cosine", "ef_search": 200}},
        )
        self._papers = self.client.get_or_create_collection(
            f"paperchat-{self.name}-papers", embedding_function=None,
            metadata={"embedder": model, "generation": "new", "chunking": self._chunking_wanted()},
        )
        # How the stored chunks were cut; an ingest under other chunk settings re-cuts them all.
        self._chunking = (self._papers.metadata or {}).get("chunking") or self._chunking_wanted()
        built_with = (self._papers.metadata or {}).get("embedder")
        if built_with and built_with != model:
            raise LibraryError(f"library {self.name!r} was built with embedder {built_with}, not {model}; "
                               f"use another PAPERCHAT_LIBRARY or set PAPERCHAT_EMBEDDER to match")
        self._model = model
        self._cache = (EmbeddingCache(settings.home / "cache" / f"{model}.sqlite", self.embedder.dimension)
                       if model != "hashing-fake" else None)
        self.text_embedder = CachedEmbedder(self.embedder, self._cache)  # for sentences in tasks
        self._generation: str | None = None
        self.catalogue: dict[str, dict] = {}
        self.lexical = LexicalIndex()
        self._check_store()

    # -- generation and caches -------------------------------------------------------------

    def _chunking_wanted(self) -> str:
        cs = self.settings.chunk
        return f"{cs.max_chars} chars/{cs.max_tokens} tokens"

    def _current_generation(self) -> str:
        col = self.client.get_collection(self._papers.name, embedding_function=None)
        if col.id != self._papers.id:  # another Library in this process rebuilt the store (a repair)
            self._papers = col
            self._chunks = self.client.get_collection(self._chunks.name, embedding_function=None)
        meta = col.metadata or {}
        self._chunking = meta.get("chunking") or self._chunking  # another process may have re-cut the chunks
        return meta.get("generation", "new")

    def _set_generation(self, gen: str) -> None:
        _VIEWS[self._view_key()] = gen  # this process wrote it, so its view of the store has it
        self._papers.modify(metadata={"embedder": self._model, "generation": gen, "chunking": self._chunking})

    def _view_key(self) -> tuple[int, str]:
        return id(getattr(self.client, "_server", self.client)), self.name

    def _catch_up_with_other_processes(self, gen: str) -> None:
        """Embedded Chroma keeps each process's vector index in memory and never re-reads what another
        process wrote (chroma-core/chroma#3792): its queries miss those vectors, and filtered ones fail
        with "Error finding id". When the generation moved and this process did not move it, reload
        this process's view of the store. A Chroma server needs none of this."""
        key = self._view_key()
        seen = _VIEWS.setdefault(key, gen)
        if seen == gen or self.settings.chroma_url:
            return
        self._check_store()  # before this process reloads files another process may have torn
        from .chroma import reload

        reload(getattr(self.client, "_server", None))
        _VIEWS[key] = gen

    def refresh(self, _repaired: bool = False) -> None:
        """Bring the catalogue and lexical index up to the store's current generation."""
        gen = self._current_generation()
        if gen == self._generation:
            return
        self._catch_up_with_other_processes(gen)
        if gen.startswith(_REBUILD) and not _repaired:
            # A chunk rebuild is under way, or was killed half-way: finish it if no one is writing.
            with contextlib.suppress(LibraryBusy):
                with self._write_lock(timeout=0):
                    if self._repair_store():
                        return
        cache = self.dir / f"cache-{_CACHE_FORMAT}-{gen}"
        if not gen.startswith("dirty") and (cache / "done").exists():
            with open(cache / "catalogue.pkl", "rb") as f:
                self.catalogue = pickle.load(f)
            self.lexical = LexicalIndex.load(cache / "lexical")
        else:
            try:
                self._rebuild_caches(gen)
            except Exception as exc:  # noqa: BLE001
                if _repaired:
                    raise
                self._repair_after(exc)
                return self.refresh(_repaired=True)
        self._generation = gen

    def _read_all(self, col, include: list[str]) -> Iterator[dict]:
        offset = 0
        while True:
            got = col.get(include=include, limit=_PAGE, offset=offset)
            if not got["ids"]:
                return
            yield got
            offset += len(got["ids"])

    def _rebuild_caches(self, gen: str) -> None:
        catalogue: dict[str, dict] = {}
        for got in self._read_all(self._papers, ["metadatas"]):
            for pid, m in zip(got["ids"], got["metadatas"]):
                catalogue[pid] = dict(m or {})
        # BM25 indexes whole papers (title + abstract): on SciFact train that beats BM25 over chunks
        # (0.700 vs 0.672-0.689 nDCG@10, bench/tune). Papers come from their records, so a paper is in
        # the lexical index exactly when it is in the catalogue.
        ids, texts = [], []
        for got in self._read_all(self._papers, ["documents"]):
            for pid, doc in zip(got["ids"], got["documents"]):
                if pid in catalogue:
                    ids.append(pid)
                    texts.append(lexical_text(catalogue[pid].get("title", ""), doc or ""))
        self.catalogue = catalogue
        self.lexical = LexicalIndex.build(ids, texts, self.settings.retrieval.bm25_k1, self.settings.retrieval.bm25_b)
        if gen.startswith("dirty"):
            return  # an ingest is under way or crashed: do not persist a cache it will invalidate
        tmp = self.dir / f".tmp-{uuid.uuid4().hex}"
        tmp.mkdir()
        with open(tmp / "catalogue.pkl", "wb") as f:
            pickle.dump(catalogue, f, protocol=pickle.HIGHEST_PROTOCOL)
        self.lexical.save(tmp / "lexical")
        (tmp / "done").write_text(gen)
        target = self.dir / f"cache-{_CACHE_FORMAT}-{gen}"
        with contextlib.suppress(OSError):
            os.replace(tmp, target)
        for old in self.dir.glob("cache-*"):
            if old.name != target.name:
                shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)

    # -- reading ---------------------------------------------------------------------------

    def papers(self) -> list[Paper]:
        """The catalogue (without abstract texts), in source and position order."""
        self.refresh()
        ps = [_paper_from_meta(pid, m) for pid, m in self.catalogue.items()]
        return sorted(ps, key=lambda p: (p.source, p.position, p.paper_id))

    def get_papers(self, ids: list[str], refresh: bool = True) -> dict[str, Paper]:
        """Full papers, abstracts included, for the given ids (those in the catalogue). `refresh=False`
        keeps the view a caller has just refreshed (a search checks the generation once, not per call)."""
        if refresh:
            self.refresh()
        want = [i for i in dict.fromkeys(ids) if i in self.catalogue]
        if not want:
            return {}
        try:
            got = self._papers.get(ids=want, include=["documents", "metadatas"])
        except Exception as exc:  # noqa: BLE001
            self._repair_after(exc)
            got = self._papers.get(ids=want, include=["documents", "metadatas"])
        return {pid: _paper_from_meta(pid, m or {}, doc or "")
                for pid, doc, m in zip(got["ids"], got["documents"], got["metadatas"])}

    def __len__(self) -> int:
        self.refresh()
        return len(self.catalogue)

    def stats(self) -> dict:
        self.refresh()
        venues: dict[str, int] = {}
        years: dict[str, int] = {}
        for m in self.catalogue.values():
            venues[m.get("venue") or "?"] = venues.get(m.get("venue") or "?", 0) + 1
            y = str(m.get("year") or "?")
            years[y] = years.get(y, 0) + 1
        return {
            "library": self.name, "papers": len(self.catalogue), "chunks": self.n_chunks,
            "store": self.settings.chroma_url or str(self.settings.home / "chroma"), "embedder": self._model,
            "chunking": self._chunking,
            "venues": dict(sorted(venues.items())), "years": dict(sorted(years.items())),
        }

    @property
    def n_chunks(self) -> int:
        # Memoised per catalogue object: the catalogue is replaced, never changed in place.
        cat = self.catalogue
        if getattr(self, "_n_chunks_of", None) is not cat:
            self._n_chunks = sum(int(m.get("n_chunks", 0)) for m in cat.values())
            self._n_chunks_of = cat
        return self._n_chunks

    def facets(self) -> Facets:
        """Built once per catalogue and lexical index (both are replaced, never changed, on refresh)."""
        cat, lex = self.catalogue, self.lexical
        memo = getattr(self, "_facets_of", None)
        if memo is None or memo[0] is not cat or memo[1] is not lex:
            memo = self._facets_of = (cat, lex, Facets(cat, lex.ids))
        return memo[2]

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
        n/share chunks (at most _SCAN) hold every admitted chunk nearer than the last of them, so what
        passes the filter is exact, only possibly fewer than n (the papers missing are farther than all
        of those found, and BM25 still ranks them). Chroma filters when fewer than `min_papers` pass."""
        if refresh:
            self.refresh()
        total = self.n_chunks
        if total == 0 or (where and share is not None and share <= 0):
            return []
        if where and admitted is not None and share is not None:
            scan = min(total, max(n, int(n / share) + 1), _SCAN)
            rows = self._dense_rows(vector, scan, None, admitted)
            if scan >= total or len({pid for _, pid, _, _ in rows}) >= min_papers:
                return rows[:n]
        return self._dense_rows(vector, min(n, total), where, admitted)[:n]

    def _dense_rows(self, vector: np.ndarray, n: int, where: dict | None,
                    admitted: Callable[[str], bool] | None) -> list[tuple[str, str, float, str]]:
        """Chroma's n nearest (filtered by Chroma with `where`), kept if in the catalogue and `admitted`."""
        include = ["distances"]
        try:
            res = self._chunks.query(query_embeddings=[vector.tolist()], n_results=n, where=where or None,
                                     include=include)
        except Exception as exc:  # noqa: BLE001
            if not self._store_readable():
                self._repair_after(exc)
                return self._dense_rows(vector, n, where, admitted)
            if not where or admitted is None or self.settings.chroma_url:
                raise
            # Embedded store while another process writes to it: this process's vector index lags its
            # metadata and a filtered query fails. Query unfiltered and filter here instead.
            res = self._chunks.query(query_embeddings=[vector.tolist()], n_results=min(max(4 * n, 400), self.n_chunks),
                                     include=include)
        out = []
        catalogue = self.catalogue
        for cid, d in zip(res["ids"][0], res["distances"][0]):
            pid = cid.rsplit("#", 1)[0]
            meta = catalogue.get(pid)
            if meta is not None and (admitted is None or admitted(pid)):
                out.append((cid, pid, 1.0 - float(d), ""))
        return out

    def chunk_texts(self, ids: list[str]) -> dict[str, str]:
        if not ids:
            return {}
        try:
            got = self._chunks.get(ids=list(dict.fromkeys(ids)), include=["documents"])
        except Exception as exc:  # noqa: BLE001
            self._repair_after(exc)
            got = self._chunks.get(ids=list(dict.fromkeys(ids)), include=["documents"])
        return dict(zip(got["ids"], got["documents"]))

    # -- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _write_lock(self, timeout: float | None = None):
        """One writer per library: a second ingest waits, then gives up with a clear message."""
        timeout = self.settings.lock_timeout if timeout is None else timeout
        fh = open(self.dir / "write.lock", "w")
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    fh.close()
                    raise LibraryBusy(f"library {self.name!r} is busy: another ingest is writing to it "
                                      f"(waited {timeout:.0f} s); try again when it has finished") from None
                time.sleep(0.2)
        try:
            if self.settings.chroma_url:
                with self._store_lock(deadline, timeout):
                    yield
            else:
                # The marker outlives a writer that dies mid-write; the next lock holder checks the store.
                marker = self.dir / _WRITING
                self._check_store_locked()
                marker.write_text(str(os.getpid()))
                try:
                    yield
                finally:
                    self._vouch()  # what this writer leaves is checked once, here, not by every reader
                    marker.unlink(missing_ok=True)
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()

    @contextlib.contextmanager
    def _store_lock(self, deadline: float, timeout: float):
        """Server mode: replicas keep their lock files in their own homes, so the lock also lives on the
        server, as a collection only one writer can create (Chroma refuses a second of the same name). The
        holder refreshes a heartbeat in it; a lock whose holder died on this host, or whose heartbeat is
        older than _LOCK_STALE, is taken over (after `kill -9` another replica waits that long)."""
        import threading

        name = f"paperchat-{self.name}-lock"
        me = f"{_host_id()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        while True:
            try:
                col = self.client.create_collection(name, embedding_function=None,
                                                    metadata={"owner": me, "beat": time.time()})
                break
            except Exception as exc:  # noqa: BLE001 - Chroma's error types for "exists" vary by version
                if "already exists" not in str(exc):
                    raise
            holder = self._lock_meta(name)
            if holder is None:
                continue  # released meanwhile
            if _lock_is_stale(holder):
                with contextlib.suppress(Exception):
                    self.client.delete_collection(name)
                continue
            if time.monotonic() >= deadline:
                host, _, pid, _ = (str(holder.get("owner")).rsplit(":", 3) + ["?"] * 4)[:4]
                raise LibraryBusy(f"library {self.name!r} is busy: another ingest is writing to it "
                                  f"(waited {timeout:.0f} s; process {pid} on {host}); "
                                  f"try again when it has finished") from None
            time.sleep(0.5)
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(_LOCK_BEAT):
                with contextlib.suppress(Exception):
                    col.modify(metadata={"owner": me, "beat": time.time()})

        beater = threading.Thread(target=beat, daemon=True, name=f"paperchat-lock-{self.name}")
        beater.start()
        try:
            yield
        finally:
            stop.set()
            beater.join(timeout=5)
            held = self._lock_meta(name)
            if held is not None and held.get("owner") == me:
                with contextlib.suppress(Exception):
                    self.client.delete_collection(name)

    def _lock_meta(self, name: str) -> dict | None:
        try:
            return dict(self.client.get_collection(name).metadata or {})
        except Exception as exc:  # noqa: BLE001
            if "does not exist" in str(exc):
                return None
            raise

    def ingest(self, paths: Iterable[Path], fields: dict[str, str] | None = None,
               progress: bool | None = None, on_progress: Callable[[int], None] | None = None) -> IngestReport:
        """Add what is new, replace what changed, leave the rest; see IngestReport for the counts."""
        from tqdm import tqdm

        from .loaders import discover, estimate_records, load_file

        t0 = time.perf_counter()
        report = IngestReport()
        files, skipped = discover([Path(p) for p in paths])
        for r in skipped:
            report.rejections.append(r)
            report.rejected += 1
        if not files:
            report.seconds = time.perf_counter() - t0
            return report
        with self._write_lock():
            if not self._repair_store() and self._chunking != self._chunking_wanted() and self._papers.count():
                import logging

                logging.getLogger(__name__).warning(
                    "library %r was chunked at %s; re-chunking it at %s (PAPERCHAT_CHUNK__MAX_CHARS) first",
                    self.name, self._chunking, self._chunking_wanted())
                self._rebuild_vectors()
            self.refresh()
            was_dirty = self._generation.startswith("dirty")
            gen_dirty = f"dirty-{uuid.uuid4().hex}"
            changed = False
            show = None if progress is None else progress
            counts = [estimate_records(f) for f in files] if show is not False else []
            total = sum(counts) if counts and None not in counts else None  # gives the bar a rate and an ETA
            bar = tqdm(total=total, unit=" abstracts", disable=(None if show is None else not show), smoothing=0.05,
                       dynamic_ncols=True, desc="ingest", leave=False)
            try:
                if was_dirty:
                    self._set_generation(gen_dirty)
                    changed = True
                    self._sweep_orphans()
                for path in files:
                    seen: set[str] = set()
                    bad = good = 0
                    batch: list[Paper] = []
                    for item in load_file(path, fields):
                        if isinstance(item, Rejection):
                            report.rejections.append(item)
                            report.rejected += 1
                            bad += 1
                            continue
                        good += 1
                        seen.add(item.paper_id)
                        batch.append(item)
                        if len(batch) >= _BATCH:
                            if self._write_batch(batch, report, gen_dirty, changed):
                                changed = True
                            bar.update(len(batch))
                            if on_progress:
                                on_progress(bar.n)
                            batch = []
                    if batch:
                        if self._write_batch(batch, report, gen_dirty, changed):
                            changed = True
                        bar.update(len(batch))
                        if on_progress:
                            on_progress(bar.n)
                    if good and not bad:
                        # The file is the truth for its own papers: drop the ones it no longer holds.
                        gone = [pid for pid, m in self.catalogue.items() if m.get("source") == path.name and pid not in seen]
                        if gone:
                            if not changed:
                                self._set_generation(gen_dirty)
                                changed = True
                            self._delete_papers(gone)
                            report.removed += len(gone)
            finally:
                bar.close()
                if changed:
                    self._set_generation(uuid.uuid4().hex)
                    self.refresh()
        report.seconds = time.perf_counter() - t0
        return report

    def _write_batch(self, batch: list[Paper], report: IngestReport, gen_dirty: str, dirty: bool) -> bool:
        todo: dict[str, Paper] = {}
        moved: list[Paper] = []
        for p in batch:
            old = self.catalogue.get(p.paper_id)
            if old is None and p.paper_id not in todo:
                report.added += 1
                todo[p.paper_id] = p
            elif old is not None and old.get("hash") != p.content_hash:
                report.updated += 1
                todo[p.paper_id] = p
            elif p.paper_id in todo:
                todo[p.paper_id] = p  # a repeat inside one ingest: the last version wins
                report.unchanged += 1
            else:
                report.unchanged += 1
                if old.get("source") == p.source and old.get("position") != p.position:
                    moved.append(p)
        if not todo and not moved:
            return False
        if not dirty:
            self._set_generation(gen_dirty)
        count = getattr(self.embedder, "count_tokens", None)
        cs = self.settings.chunk
        chunks: list[Chunk] = []
        n_chunks: dict[str, int] = {}
        papers = list(todo.values())
        for p in papers:
            pc = chunk_paper(p, cs.max_chars, cs.max_tokens, count)
            n_chunks[p.paper_id] = len(pc)
            chunks.extend(pc)
        vecs = embed_with_cache(self.embedder, [c.text for c in chunks], self._cache)
        # Drop the chunks of the versions being replaced (an edit can leave fewer chunks than before).
        stale = [f"{pid}#{i}" for pid in todo if pid in self.catalogue
                 for i in range(int(self.catalogue[pid].get("n_chunks", 0)))]
        # An edited paper's record goes first: new chunks overwrite the old ones in place, so a crash
        # before the new record is written must leave the paper absent (re-added by the next run, its
        # chunks swept), never an old record over the new version's chunks.
        replaced = [pid for pid in todo if pid in self.catalogue]
        for s in range(0, len(replaced), _PAGE):
            self._papers.delete(ids=replaced[s : s + _PAGE])
        for s in range(0, len(stale), _PAGE):
            self._chunks.delete(ids=stale[s : s + _PAGE])
        for s in range(0, len(chunks), _PAGE):
            part = chunks[s : s + _PAGE]
            self._chunks.upsert(
                ids=[c.chunk_id for c in part],
                embeddings=vecs[s : s + _PAGE],
                documents=[c.text for c in part],
                metadatas=[{"paper_id": c.paper_id, "n": c.n, "venue": todo[c.paper_id].venue,
                            "year": todo[c.paper_id].year or 0} for c in part],
            )
        recs = papers + moved
        metas = [_paper_meta(p, n_chunks.get(p.paper_id, int(self.catalogue.get(p.paper_id, {}).get("n_chunks", 0))))
                 for p in recs]
        self._papers.upsert(ids=[p.paper_id for p in recs], embeddings=[[1.0]] * len(recs),
                            documents=[p.abstract for p in recs], metadatas=metas)
        # Copy-on-write: readers in other threads may be iterating the current catalogue.
        self.catalogue = {**self.catalogue, **{p.paper_id: m for p, m in zip(recs, metas)}}
        return True

    def _delete_papers(self, ids: list[str]) -> None:
        # Record first: once it is gone the paper is gone for every reader, whatever happens next.
        for s in range(0, len(ids), _PAGE):
            self._papers.delete(ids=ids[s : s + _PAGE])
        stale = [f"{pid}#{i}" for pid in ids for i in range(int(self.catalogue[pid].get("n_chunks", 0)))]
        for s in range(0, len(stale), _PAGE):
            self._chunks.delete(ids=stale[s : s + _PAGE])
        gone = set(ids)
        self.catalogue = {k: v for k, v in self.catalogue.items() if k not in gone}

    # -- repair -----------------------------------------------------------------------------
    # Embedded Chroma writes its HNSW files in place: `kill -9` at the wrong moment (about one kill in
    # 40 in the kill loop on 2 cores) can leave a collection it cannot load again, for every read ("Error
    # deserializing pickle file", "Failed to apply logs to the hnsw segment writer"). Both collections
    # are rebuilt from what survives: the paper records from Chroma's SQLite file (transactional), the
    # chunks from the records. A Chroma server is not affected.

    def _readable(self, col) -> bool:
        if self.settings.chroma_url:
            return True
        try:
            col.count()
            return True
        except Exception as exc:  # noqa: BLE001
            if type(exc).__name__ in ("InternalError", "StoreTorn"):
                return False
            raise

    def _store_readable(self) -> bool:
        return self._readable(self._papers) and self._readable(self._chunks)

    def _repair_after(self, exc: Exception) -> None:
        """A read failed: rebuild what Chroma cannot load, unless a writer is at work; else re-raise."""
        if self.settings.chroma_url or self._store_readable():
            raise exc
        try:
            with self._write_lock(timeout=0):
                self._repair_store()
        except LibraryBusy:
            raise LibraryError(f"library {self.name!r}: Chroma cannot load the store and an ingest is writing to "
                               f"it; try again when it has finished") from exc

    # -- checking the store ------------------------------------------------------------------
    # Embedded Chroma can crash the process loading HNSW files a killed process tore (rag.storecheck),
    # and any process may write them: a writer, and a reader applying Chroma's log on its first read. So
    # the files' fingerprints (sizes, mtimes) are kept in the library folder whenever a check passed, and
    # a process loads only files that match them; others are checked first (rag.hnswfiles, ~2 s at 400k
    # chunks, milliseconds at SciFact's size), and what fails is rebuilt without being loaded.

    def _vector_files(self) -> dict[str, tuple[str, Path, bool]]:
        """Collection id -> (name, HNSW folder, whether its vectors are normalised)."""
        from .storecheck import vector_dirs

        cols = {str(c.id): (c.name, c is self._chunks) for c in (self._papers, self._chunks)}
        try:
            dirs = vector_dirs(self.settings.home / "chroma", list(cols))
        except Exception:  # noqa: BLE001 - no SQLite file yet, or not this layout: nothing to check
            return {}
        return {cid: (cols[cid][0], d, cols[cid][1]) for cid, d in dirs.items()}

    def _fingerprints(self) -> dict:
        from .hnswfiles import fingerprint

        return {cid: fingerprint(d) for cid, (_, d, _) in self._vector_files().items()}

    def _vouched(self) -> dict | None:
        try:
            return json.loads((self.dir / _VOUCHED).read_text())
        except (OSError, ValueError):
            return None

    def _checked(self) -> tuple[dict, list[str]]:
        """The files' fingerprints, taken before checking them, and the collections whose files fail."""
        from .hnswfiles import fingerprint, problems

        def fails(d: Path, norm: bool) -> bool:
            try:
                return bool(problems(d, norm))
            except Exception:  # noqa: BLE001 - files that cannot even be read are not sound
                return True

        with getattr(self.client, "store_lock", None) or contextlib.nullcontext():  # no process mid-save
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

    def _vouch(self) -> None:
        """With the write lock held, as a writer finishes: record the files' fingerprints if they pass."""
        if self.settings.chroma_url or self._vouched() == self._fingerprints():
            return
        prints, bad = self._checked()
        if bad:  # not expected of a live writer; the next process to open the library rebuilds them
            import logging

            logging.getLogger(__name__).warning("library %r: the files Chroma left for %s do not pass the check",
                                                self.name, " and ".join(bad))
            return
        self._record(prints)

    def _check_store(self) -> None:
        """Embedded store: before this process loads Chroma's files, make sure a check has passed them (a
        writer died, or some process changed them since). A live writer vouches for its own when it ends."""
        if self.settings.chroma_url:
            return
        deadline = time.monotonic() + _SETTLE
        while True:
            if not (self.dir / _WRITING).exists() and self._vouched() == self._fingerprints():
                return
            try:
                with self._write_lock(timeout=0):
                    return  # taking the lock runs the check (_check_store_locked)
            except LibraryBusy:
                pass
            # A live writer is changing the files: load them when they read as whole, not mid-save.
            if not self._checked()[1] or time.monotonic() > deadline:
                return
            time.sleep(0.2)

    def _check_store_locked(self) -> None:
        """With the write lock held: check files that no check has passed, before anything here loads them.
        Files that fail are rebuilt (the records from SQLite, the chunks from the records), never loaded."""
        import logging

        from .storecheck import failing

        died = (self.dir / _WRITING).exists()
        if not died and self._vouched() == self._fingerprints():
            return
        prints, bad = self._checked()
        if not bad and died:
            # Sound bytes can still answer wrongly: a child loads them (safe now) and checks its answers.
            bad = failing(self.settings.home / "chroma", [self._papers.name, self._chunks.name])
            if not bad:
                prints, bad = self._checked()  # loading may have flushed Chroma's log into the files
        if bad:
            logging.getLogger(__name__).warning(
                "library %r: %s; Chroma cannot safely load %s; rebuilding", self.name,
                "the last ingest was killed mid-write" if died else "a process was killed writing its files",
                " and ".join(bad))
            if self._papers.name in bad:
                self._rebuild_records()
            self._rebuild_vectors()
            self._vouch()
        else:
            self._record(prints)
        (self.dir / _WRITING).unlink(missing_ok=True)

    def _repair_store(self) -> bool:
        """With the write lock held: rebuild the collections Chroma cannot load. True if it did."""
        if self.settings.chroma_url:
            return False
        records_ok = self._readable(self._papers)
        if not records_ok:
            self._rebuild_records()
        if records_ok and self._readable(self._chunks) and not self._current_generation().startswith(_REBUILD):
            return False  # (a rebuild stamp without a writer: a rebuild was killed half-way; do it again)
        self._rebuild_vectors()
        return True

    def _salvage_records(self) -> list[tuple[str, str, dict]]:
        """(paper_id, abstract, metadata) of every record, read from Chroma's SQLite metadata segment."""
        import sqlite3

        # Not read-only: after a kill, SQLite may have to recover the write-ahead log first.
        con = sqlite3.connect(self.settings.home / "chroma" / "chroma.sqlite3", timeout=30)
        try:
            seg = con.execute("SELECT id FROM segments WHERE collection = ? AND scope = 'METADATA'",
                              (str(self._papers.id),)).fetchone()
            rows = con.execute(
                "SELECT e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
                "FROM embeddings e JOIN embedding_metadata m ON m.id = e.id WHERE e.segment_id = ?",
                (seg[0] if seg else "",)).fetchall()
        finally:
            con.close()
        docs: dict[str, str] = {}
        metas: dict[str, dict] = {}
        for pid, key, sv, iv, fv, bv in rows:
            if key == "chroma:document":
                docs[pid] = sv or ""
            else:
                metas.setdefault(pid, {})[key] = (sv if sv is not None else iv if iv is not None else
                                                  fv if fv is not None else bool(bv) if bv is not None else None)
        return [(pid, docs.get(pid, ""), m) for pid, m in metas.items() if "hash" in m]

    def _rebuild_records(self) -> None:
        import logging

        recs = self._salvage_records()
        logging.getLogger(__name__).warning("library %r: Chroma cannot load the paper records; restoring %d of them "
                                            "from its SQLite file", self.name, len(recs))
        name = self._papers.name
        with contextlib.suppress(Exception):
            self.client.delete_collection(name)
        self._papers = self.client.get_or_create_collection(
            name, embedding_function=None, metadata={"embedder": self._model, "generation": f"dirty-{uuid.uuid4().hex}",
                                                     "chunking": self._chunking})
        for s in range(0, len(recs), _PAGE):
            part = recs[s : s + _PAGE]
            self._papers.upsert(ids=[r[0] for r in part], embeddings=[[1.0]] * len(part),
                                documents=[r[1] for r in part], metadatas=[r[2] for r in part])
        self.catalogue = {pid: m for pid, _, m in recs}

    def _rebuild_vectors(self) -> int:
        """Rebuild the chunk collection from the paper records (which hold the abstracts): chunks and
        vectors are derived data, and the embedding cache makes re-embedding cheap. Also after the records
        were restored, so that chunks and records agree whatever the crash left. Call with the write lock
        held. Returns the number of papers re-indexed."""
        import logging

        logging.getLogger(__name__).warning("library %r: rebuilding the chunk vector index from the %d paper records",
                                            self.name, self._papers.count())
        self._set_generation(f"{_REBUILD}{uuid.uuid4().hex}")
        name = self._chunks.name
        with contextlib.suppress(Exception):
            self.client.delete_collection(name)
        self._chunks = self.client.get_or_create_collection(
            name, embedding_function=None, configuration={"hnsw": {"space": "cosine", "ef_search": 200}})
        count = getattr(self.embedder, "count_tokens", None)
        cs = self.settings.chunk
        done = 0
        for got in self._read_all(self._papers, ["documents", "metadatas"]):
            papers = [_paper_from_meta(pid, m or {}, doc or "") for pid, doc, m in
                      zip(got["ids"], got["documents"], got["metadatas"])]
            metas = {pid: dict(m or {}) for pid, m in zip(got["ids"], got["metadatas"])}
            for s in range(0, len(papers), _BATCH):
                part = papers[s : s + _BATCH]
                chunks = [c for p in part for c in chunk_paper(p, cs.max_chars, cs.max_tokens, count)]
                vecs = embed_with_cache(self.embedder, [c.text for c in chunks], self._cache)
                self._chunks.upsert(ids=[c.chunk_id for c in chunks], embeddings=vecs,
                                    documents=[c.text for c in chunks],
                                    metadatas=[{"paper_id": c.paper_id, "n": c.n, "venue": metas[c.paper_id].get("venue", ""),
                                                "year": metas[c.paper_id].get("year") or 0} for c in chunks])
                n_of: dict[str, int] = {}
                for c in chunks:
                    n_of[c.paper_id] = n_of.get(c.paper_id, 0) + 1
                moved = [p.paper_id for p in part if int(metas[p.paper_id].get("n_chunks", 0)) != n_of.get(p.paper_id, 0)]
                if moved:  # chunking settings changed since: the records follow
                    self._papers.update(ids=moved, metadatas=[{**metas[i], "n_chunks": n_of.get(i, 0)} for i in moved])
                done += len(part)
        self._chunking = self._chunking_wanted()
        self._set_generation(uuid.uuid4().hex)
        self._generation = None
        self.refresh()
        return done

    def _sweep_orphans(self) -> None:
        """After a crash: drop chunks whose paper record was never written."""
        orphans = []
        for got in self._read_all(self._chunks, ["metadatas"]):
            for cid, m in zip(got["ids"], got["metadatas"]):
                pid = (m or {}).get("paper_id")
                if pid not in self.catalogue or int(cid.rsplit("#", 1)[1]) >= int(self.catalogue[pid].get("n_chunks", 0)):
                    orphans.append(cid)
        for s in range(0, len(orphans), _PAGE):
            self._chunks.delete(ids=orphans[s : s + _PAGE])

    def drop(self) -> None:
        """Delete the whole library (store collections and local caches)."""
        for col in (self._chunks, self._papers):
            with contextlib.suppress(Exception):
                self.client.delete_collection(col.name)
        shutil.rmtree(self.dir, ignore_errors=True)
