"""One factory for the Chroma client: embedded on disk, or a Chroma server when a URL is set."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse


class StoreUnavailable(RuntimeError):
    pass


def make_client(home: Path, url: str | None = None):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if url:
        u = urlparse(url if "://" in url else f"http://{url}")
        try:
            client = chromadb.HttpClient(host=u.hostname or "127.0.0.1", port=u.port or 8000,
                                         ssl=u.scheme == "https", settings=chroma_settings)
            client.heartbeat()
        except Exception as exc:  # noqa: BLE001 - any failure here means the same thing to the user
            # Never show a password written into the URL.
            shown = u._replace(netloc=u.netloc.rpartition("@")[2]).geturl() if "@" in url else url
            raise StoreUnavailable(f"cannot reach the Chroma server at {shown} ({exc.__class__.__name__}); "
                                   f"is `chroma run` serving there? (PAPERCHAT_CHROMA_URL)") from exc
        return client
    import fcntl

    path = home / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    # Two processes opening a new store at once race in Chroma's schema migrations ("table collections
    # already exists"); opening is quick, so processes take turns.
    with open(home / "chroma.open.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)
