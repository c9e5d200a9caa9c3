"""Locks: one writer per library (a lock file; on a Chroma server also a lock there), one call at a time in embedded Chroma.

- `library_lock`: one writer per library on this machine (flock on `write.lock` in the library folder).
  A second ingest waits up to PAPERCHAT_LOCK_TIMEOUT, then gives up with LibraryBusy.
- `server_lock`: replicas sharing a Chroma server keep their lock files in their own homes, so a writer
  also holds a lock on the server, with a heartbeat; a dead holder's lock is taken over.
- `store_lock`: embedded Chroma is not safe for several processes at once (rag.library.store): every call on it
  holds this lock, exclusive across processes and threads. A call waits for it at most STORE_WAIT, then
  gives up in one line naming the process that holds it (StoreStuck): no command waits forever behind a
  process stuck inside Chroma.

Lock paths always derive from the library or store folder, never from the working directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from rag.errors import LibraryBusy, StoreStuck

LOCK_BEAT = 5.0  # seconds between heartbeats of a server-side write lock
LOCK_STALE = 60.0  # a server-side lock without a heartbeat for this long belongs to a dead writer
# Seconds a Chroma call waits for the store lock. One call holds it for milliseconds to seconds; the longest
# hold is the child's check of a store a writer died in (rag.library.store.childcheck, at most 600 s).
STORE_WAIT = 900.0


def host_id() -> str:
    """This host and PID namespace: a PID is only meaningful within both (containers share hostnames)."""
    try:
        ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        ns = 0
    return f"{socket.gethostname()}:{ns}"


def lock_is_stale(meta: dict) -> bool:
    """Whether a server-side lock's holder is gone: dead on this host, or silent for LOCK_STALE seconds."""
    parts = str(meta.get("owner", "")).rsplit(":", 2)  # host:pidns:pid:random
    host, pid = (parts[0], parts[1]) if len(parts) == 3 else ("", "")
    if host == host_id() and pid.isdigit() and int(pid) != os.getpid():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True  # its writer died on this host (kill -9, power cut of a container...)
        except PermissionError:
            pass
    try:
        return time.time() - float(meta.get("beat") or 0) > LOCK_STALE
    except (TypeError, ValueError):
        return True


def _busy(name: str, timeout: float, who: str = "") -> LibraryBusy:
    return LibraryBusy(f"library {name!r} is busy: another ingest is writing to it "
                       f"(waited {timeout:.0f} s{who}); try again when it has finished")


def _flock_by(fh, deadline: float, pause: float, most: float) -> bool:
    """An exclusive flock on fh taken before `deadline` (time.monotonic), polled since a blocking flock cannot
    time out: waits `pause`, doubled up to `most`, between tries. False when the deadline passed first."""
    while True:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, most)


@contextlib.contextmanager
def library_lock(folder: Path, name: str, timeout: float) -> Iterator[float]:
    """One writer per library folder; yields the deadline (time.monotonic) the wait was given."""
    fh = open(folder / "write.lock", "w")
    deadline = time.monotonic() + timeout
    if not _flock_by(fh, deadline, pause=0.2, most=0.2):
        fh.close()
        raise _busy(name, timeout)
    try:
        yield deadline
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


@contextlib.contextmanager
def server_lock(client, name: str, deadline: float, timeout: float) -> Iterator[None]:
    """Server mode: the lock lives on the server, as a collection only one writer can create (Chroma
    refuses a second of the same name). The holder refreshes a heartbeat in it; a lock whose holder died
    on this host, or whose heartbeat is older than LOCK_STALE, is taken over (after `kill -9` another
    replica waits that long)."""
    col_name = f"paperchat-{name}-lock"
    me = f"{host_id()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    while True:
        try:
            col = client.create_collection(col_name, embedding_function=None, metadata={"owner": me, "beat": time.time()})
            break
        except Exception as exc:  # noqa: BLE001 - Chroma's error types for "exists" vary by version
            if "already exists" not in str(exc):
                raise
        holder = _lock_meta(client, col_name)
        if holder is None:
            continue  # released meanwhile
        if lock_is_stale(holder):
            with contextlib.suppress(Exception):
                client.delete_collection(col_name)
            continue
        if time.monotonic() >= deadline:
            host, _, pid, _ = (str(holder.get("owner")).rsplit(":", 3) + ["?"] * 4)[:4]
            raise _busy(name, timeout, f"; process {pid} on {host}") from None
        time.sleep(0.5)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(LOCK_BEAT):
            with contextlib.suppress(Exception):
                col.modify(metadata={"owner": me, "beat": time.time()})

    beater = threading.Thread(target=beat, daemon=True, name=f"paperchat-lock-{name}")
    beater.start()
    try:
        yield
    finally:
        stop.set()
        beater.join(timeout=5)
        held = _lock_meta(client, col_name)
        if held is not None and held.get("owner") == me:
            with contextlib.suppress(Exception):
                client.delete_collection(col_name)


def _lock_meta(client, col_name: str) -> dict | None:
    try:
        return dict(client.get_collection(col_name).metadata or {})
    except Exception as exc:  # noqa: BLE001
        if "does not exist" in str(exc):
            return None
        raise


class StoreLock:
    """Exclusive across processes (flock on a file beside the store) and threads; re-entrant within a
    thread. One per store per process (see store_lock)."""

    def __init__(self, path: Path):
        self._path = path
        self._lock = threading.RLock()
        self._depth = 0
        self._fh = None

    def __enter__(self) -> "StoreLock":
        if not self._lock.acquire(timeout=STORE_WAIT):
            raise self._stuck(None)
        if self._depth == 0:
            fh = open(self._path, "a")
            try:
                self._wait(fh)
            except BaseException:
                fh.close()
                self._lock.release()
                raise
            self._fh = fh
        self._depth += 1
        return self

    def _wait(self, fh) -> None:
        """flock, waiting at most STORE_WAIT (polled: a blocking flock cannot time out)."""
        if not _flock_by(fh, time.monotonic() + STORE_WAIT, pause=0.001, most=0.02):
            raise self._stuck(_flock_holder(fh))

    def _stuck(self, pid: int | None) -> StoreStuck:
        who = f"process {pid}" + (f" (`{_command_of(pid)}`)" if _command_of(pid) else "") if pid else "another thread"
        return StoreStuck(f"the Chroma store in {self._path.parent / 'chroma'} has been held for {STORE_WAIT:.0f} s by {who}, which "
                          f"seems stuck inside Chroma: stop it{f' (kill {pid})' if pid else ''} and run the command again")

    def __exit__(self, *exc) -> None:
        self._depth -= 1
        if self._depth == 0:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
        self._lock.release()


def _flock_holder(fh) -> int | None:
    """The process holding an flock on the open file, from /proc/locks (Linux); None if unknown."""
    try:
        st = os.fstat(fh.fileno())
        dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
        with open("/proc/locks") as f:
            for line in f:
                parts = line.split()
                if "->" not in line and len(parts) > 5 and parts[1] == "FLOCK" and parts[5] == dev:
                    return int(parts[4])
    except (OSError, ValueError):
        pass
    return None


def _command_of(pid: int | None) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()[:80]
    except OSError:
        return ""


_LOCKS: dict[Path, StoreLock] = {}
_LOCKS_GUARD = threading.Lock()


def store_lock(home: Path) -> StoreLock:
    """The one StoreLock of this process for the embedded store under `home`."""
    path = (home / "chroma.lock").resolve()
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(path, StoreLock(path))
