"""A read-only home, read: a private copy of one library's embedded store, made once per version of it.

Embedded Chroma cannot open a store read-only: its bindings open the SQLite file for writing ("attempt to
write a readonly database" even for a count), and a first read applies Chroma's log and saves the index
files. So when PAPERCHAT_HOME cannot be written (a lab's shared library on a read-only mount, or a folder
owned by someone else), a reader copies what one library needs to a private folder under the temporary
directory and reads that:

- the SQLite file through SQLite's backup API on a read-only connection (a consistent copy even while the
  library's owner writes to it elsewhere); its journal taken along only where that cannot be done;
- that library's two HNSW folders and its library folder (catalogue caches, `vouched.json`); other
  libraries' index files stay behind;
- the copy is named by the source files' sizes and times, so later commands reuse it until the library
  changes; the guard (rag.library.store.guard) checks it like any store before anything loads it.

Nothing here writes under the home. Writers (ingest, remove, serve, eval, fetch) are refused by the CLI.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from rag.errors import LibraryError

_MARGIN = 64 << 20  # bytes left free beside a copy (what a first read adds to it: Chroma's log applied, caches)
_STALE = 24 * 3600.0  # seconds after which an unused copy of an older version is deleted


def writable(home: Path) -> bool:
    """Whether this process can write what a reader of the embedded store writes: the lock beside the store,
    the store's folder and its SQLite file. A home that does not exist yet is writable if it can be made."""
    if not home.exists():
        parent = next((p for p in home.parents if p.exists()), None)
        return parent is not None and os.access(parent, os.W_OK)
    need = [home, home / "chroma", home / "chroma" / "chroma.sqlite3", home / "chroma.lock"]
    return all(os.access(p, os.W_OK) for p in need if p.exists())


def _library_files(store: Path, library: str) -> list[Path]:
    """The HNSW folders of the library's two collections, read from the store's SQLite file without writing."""
    names = [f"paperchat-{library}-papers", f"paperchat-{library}-chunks"]
    try:
        con = sqlite3.connect(f"file:{store / 'chroma.sqlite3'}?mode=ro", uri=True, timeout=30)
        try:
            rows = con.execute("SELECT s.id FROM segments s JOIN collections c ON c.id = s.collection "
                               "WHERE s.scope = 'VECTOR' AND c.name IN (?, ?)", names).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return [d for d in store.iterdir() if d.is_dir()]  # cannot tell which: take every index folder
    return [store / r[0] for r in rows if (store / r[0]).is_dir()]


def _files_under(paths: list[Path]) -> list[Path]:
    out = []
    for p in paths:
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out.extend(f for f in sorted(p.rglob("*")) if f.is_file())
    return out


def _copy_sqlite(src: Path, dst: Path) -> None:
    try:
        source = sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=30)
        try:
            target = sqlite3.connect(dst)
            with target:
                source.backup(target)
            target.close()
        finally:
            source.close()
    except sqlite3.Error:
        # No read transaction to be had (a journal a dead writer left, which a read-only folder cannot
        # roll back): copy the file and its journal as they are; opening the copy recovers it.
        dst.unlink(missing_ok=True)
        for suffix in ("", "-journal", "-wal"):
            if Path(f"{src}{suffix}").exists():
                shutil.copy2(f"{src}{suffix}", f"{dst}{suffix}")


def private_copy(home: Path, library: str) -> tuple[Path, str]:
    """A writable home holding a copy of `library` of the read-only `home`, and the one-line note that says so.
    LibraryError (one line) when there is no store to copy or no room for the copy."""
    store = home / "chroma"
    if not (store / "chroma.sqlite3").is_file():
        raise LibraryError(f"PAPERCHAT_HOME {home} cannot be written and holds no library store to read "
                           f"(no {store / 'chroma.sqlite3'})")
    lib_dir = home / "libraries" / library
    sources = [store / "chroma.sqlite3", *_library_files(store, library), lib_dir]
    files = [f for f in _files_under(sources) if f.name != "write.lock"]
    stamp = [(str(f.relative_to(home)), f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    size = sum(s for _, s, _ in stamp)
    key = hashlib.sha1(f"{home.resolve()}\n{library}".encode()).hexdigest()[:12]
    version = hashlib.sha1(json.dumps(stamp).encode()).hexdigest()[:12]
    root = Path(tempfile.gettempdir()) / f"paperchat-readonly-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    copy = root / f"{key}-{version}"
    shown = f"library {library!r} of the read-only PAPERCHAT_HOME {home}"
    if (copy / "done").exists():
        os.utime(copy / "done")
        return copy, f"reading the private copy of {shown} made earlier ({copy})"
    free = shutil.disk_usage(root).free
    if free < size + _MARGIN:
        raise LibraryError(f"PAPERCHAT_HOME {home} cannot be written, and a private copy of library {library!r} to "
                           f"read ({size / 1e6:.0f} MB) does not fit in {root} ({free / 1e6:.0f} MB free): set TMPDIR "
                           "to a folder with room, or serve the library with `chroma run` and PAPERCHAT_CHROMA_URL")
    _forget_old(root, key)
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=root))
    try:
        (tmp / "chroma").mkdir()
        _copy_sqlite(store / "chroma.sqlite3", tmp / "chroma" / "chroma.sqlite3")
        for f in files:
            if f.parent != store:
                (tmp / f.relative_to(home)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, tmp / f.relative_to(home))
        (tmp / "done").write_text(json.dumps({"home": str(home), "library": library}))
        try:
            tmp.rename(copy)
        except OSError:  # another reader made the same copy meanwhile: read theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return copy, (f"reading a private copy of {shown} ({size / 1e6:.1f} MB, copied in "
                  f"{time.monotonic() - started:.1f} s to {copy}; reused until the library changes)")


def _forget_old(root: Path, key: str) -> None:
    """Copies of older versions of this library that no command used for a day."""
    for d in root.glob(f"{key}-*"):
        try:
            if time.time() - (d / "done").stat().st_mtime > _STALE:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass
