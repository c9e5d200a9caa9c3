"""The embedded Chroma client, guarded: one call at a time across processes, never a stale index saved.

Embedded Chroma is not safe for several processes at once, and paperchat runs several (the UI, an
ingest, a CLI search). Every process that reads a collection first applies Chroma's log to its own
in-memory HNSW index and saves the index over the shared files (one search made 300,000 writes), and
it never re-reads files another process saved (chroma-core/chroma#3792). So two processes saving at
once, or one saving a stale index over another's newer one, tear the files (seen in a stress loop of
searches during ingests; rag.library.store.hnswfiles finds it). The embedded client is therefore wrapped:

- every Chroma call holds the store lock (rag.library.locks.store_lock: one call at a time across processes
  and threads; with the check below, about 0.17 ms per call);
- before a call, if another process has saved the index files since this process's last call, this
  process drops its in-memory index and loads theirs, after checking their bytes (StoreTorn if they
  fail: a process died saving them, and loading them could crash this one);
- after a call Chroma failed inside (InternalError: a full disk, a failed compaction, files it cannot
  load), this process's bindings are replaced before the next call. Chroma's own are left mid-transaction
  by such a failure: the next write in the same process waited forever on SQLite's lock (3 of 3 runs on a
  full 3 MB tmpfs, even after space returned; 0 of 4 with fresh bindings; issue 28, item 12).

A Chroma server needs none of this (rag.library.chroma makes its client without coming here).
"""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path

from rag.errors import StoreTorn
from rag.library.locks import StoreLock, store_lock
from rag.library.store.childcheck import vector_dirs
from rag.library.store.hnswfiles import problems

_STORES: dict[Path, "_Store"] = {}
_STORES_GUARD = threading.Lock()


def index_files(store: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every HNSW file in the store: what changes whenever any process saves an index."""
    out = {}
    with os.scandir(store) as top:
        for d in top:
            if d.is_dir():
                with os.scandir(d.path) as files:
                    for f in files:
                        st = f.stat()
                        out[f.path] = (st.st_size, st.st_mtime_ns)
    return out


def reload(server) -> None:
    """Fresh bindings for every handle on an embedded store: each collection loads its files anew on its
    next call (calls under way finish on the old). No-op for a server client."""
    if server is not None and hasattr(server, "bindings") and hasattr(server, "start"):
        server.start()


class _Store:
    """Per process and store: the lock, the index files as this process last left them, and the
    collections whose files a dead process left half-saved (never loaded until rebuilt)."""

    def __init__(self, path: Path, lock: StoreLock, server):
        self.path, self.lock, self.server = path, lock, server
        self.seen: dict[str, tuple[int, int]] = {}
        self.dirs: dict[str, Path] = {}  # collection id -> its HNSW folder
        self.torn: set[Path] = set()

    def before_load(self, collection_id: str) -> None:
        """With the lock held, before a call on a collection: take up what other processes saved."""
        now = index_files(self.path)
        if now != self.seen:
            changed = {Path(f).parent for f in set(now) ^ set(self.seen)}
            changed |= {Path(f).parent for f in now if now[f] != self.seen.get(f)}
            self.dirs = vector_dirs(self.path)
            live = set(self.dirs.values())
            self.torn = {d for d in self.torn | changed if d in live and (d not in changed or problems(d))}
            reload(self.server)  # each collection loads its files as they are now
            self.seen = now
        d = self.dirs.get(collection_id)
        if d is None:  # a collection created since
            self.dirs = vector_dirs(self.path)
            d = self.dirs.get(collection_id)
        if d in self.torn:
            raise StoreTorn(f"the vector index files in {d.name} were left half-saved by a process that died")

    def after_call(self) -> None:
        self.seen = index_files(self.path)


class Guarded:
    """A Chroma client or collection whose every method call holds the store lock; collections it
    returns are guarded too. Attributes (name, id, metadata) pass through. Calls on a collection (which
    may load its index) first take up what other processes saved; calls on the client do not load any."""

    def __init__(self, target, store: _Store, loads: bool):
        self._target = target
        self._store = store
        self._loads = loads
        self.store_lock = store.lock

    def __getattr__(self, name):
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def call(*args, **kwargs):
            store = self._store
            with store.lock:
                # A client call loads no index: what changed before it is left for the next collection
                # call to check, and only this call's own changes are taken as seen.
                ours = self._loads or index_files(store.path) == store.seen
                if self._loads:
                    store.before_load(str(self._target.id))
                try:
                    out = attr(*args, **kwargs)
                except Exception as exc:
                    if _chroma_failed(exc):
                        reload(store.server)  # (see the module's docstring: never call bindings a failure left)
                    raise
                finally:
                    if ours:
                        store.after_call()
            return Guarded(out, store, True) if _is_collection(out) else out

        return call

    def __repr__(self) -> str:
        return f"Guarded({self._target!r})"


def _chroma_failed(exc: Exception) -> bool:
    """An error from inside Chroma's bindings (not a caller's mistake such as a missing collection)."""
    return type(exc).__module__.startswith("chromadb") and type(exc).__name__ == "InternalError"


def _is_collection(obj) -> bool:
    from chromadb.api.models.Collection import Collection

    return isinstance(obj, Collection)


def embedded_client(home: Path):
    """A Chroma client on the store in `home`/chroma, every call of it guarded (see the module's docstring)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    path = home / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    lock = store_lock(home)
    # Opening runs Chroma's schema migrations, which race when two processes open a new store at once.
    with lock:
        client = chromadb.PersistentClient(path=str(path), settings=ChromaSettings(anonymized_telemetry=False))
        key = path.resolve()
        with _STORES_GUARD:
            store = _STORES.get(key)
            if store is None:
                # This process has loaded nothing yet: the files as they are now need no reload. (Whether
                # they are whole is the guard's check, made before a library first reads; rag.library.store.guard.)
                store = _STORES[key] = _Store(path, lock, None)
                store.after_call()
        store.server = getattr(client, "_server", None)  # (Chroma shares one system per path and process)
    return Guarded(client, store, False)
