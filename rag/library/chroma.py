"""The Chroma client, embedded on disk or a Chroma server's, and what a library does differently on each.

The one door into rag.library.store (the embedded-store guard): `make_client` and `store_for` open it only
for an embedded store. On a server, the library's store jobs are ServerStore's, and trivial but one:
a writer also holds a lock on the server, shared by every replica.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

from rag.library.collections import Collections
from rag.errors import StoreUnavailable
from rag.library.locks import server_lock


def make_client(home: Path, url: str | None = None):
    """A client of the Chroma server at `url`, or else of the embedded store in `home`/chroma (guarded)."""
    if not url:
        from rag.library.store import embedded_client

        return embedded_client(home)
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    u = urlparse(url if "://" in url else f"http://{url}")
    try:
        client = chromadb.HttpClient(host=u.hostname or "127.0.0.1", port=u.port or 8000, ssl=u.scheme == "https",
                                     settings=ChromaSettings(anonymized_telemetry=False))
        client.heartbeat()
    except Exception as exc:  # noqa: BLE001 - any failure here means the same thing to the user
        # Never show a password written into the URL.
        shown = u._replace(netloc=u.netloc.rpartition("@")[2]).geturl() if "@" in url else url
        raise StoreUnavailable(f"cannot reach the Chroma server at {shown} ({exc.__class__.__name__}); "
                               f"is `chroma run` serving there? (PAPERCHAT_CHROMA_URL)") from exc
    return client


def readable_home(home: Path, library: str, url: str | None = None) -> tuple[Path, str | None]:
    """The home a reader opens: `home` itself, or, when the embedded store in it cannot be written (a shared
    read-only library), a private copy of `library` and a one-line note saying so (rag.library.store.snapshot)."""
    if url:
        return home, None
    from rag.library.store.snapshot import private_copy, writable

    return (home, None) if writable(home) else private_copy(home, library)


def home_writable(home: Path, url: str | None = None) -> bool:
    """Whether a writer can use this home's embedded store (always, on a Chroma server)."""
    if url:
        return True
    from rag.library.store.snapshot import writable

    return writable(home)


class ServerStore:
    """A library's store jobs on a Chroma server (the same methods as rag.library.store.EmbeddedStore). The
    server keeps one index for every client, so there is nothing to check, catch up with or repair."""

    def __init__(self, cols: Collections):
        self.cols = cols

    def saw(self, gen: str) -> None:
        pass

    def catch_up(self, gen: str) -> None:
        pass

    def check_before_load(self) -> None:
        pass

    @contextlib.contextmanager
    def writing(self, deadline: float, timeout: float) -> Iterator[None]:
        """Inside the library's write lock: replicas keep their lock files in their own homes, so the
        writer also takes the lock on the server (rag.library.locks.server_lock)."""
        with server_lock(self.cols.client, self.cols.name, deadline, timeout):
            yield

    def readable(self) -> bool:
        return True

    def repair_after(self, exc: Exception) -> None:
        raise exc

    def finish_rebuild(self) -> bool:
        return False

    def rebuild_if_unloadable(self) -> bool:
        return False


def store_for(chroma_url: str | None, home: Path, folder: Path, cols: Collections):
    """The store jobs of one library: the embedded-store guard, or ServerStore for a Chroma server."""
    if chroma_url:
        return ServerStore(cols)
    from rag.library.store import EmbeddedStore

    return EmbeddedStore(home, folder, cols)
