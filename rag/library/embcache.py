"""A content-hash cache of vectors, shared by every library under one home: no text is embedded twice."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np


class EmbeddingCache:
    def __init__(self, path: Path, dimension: int):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.dimension = dimension
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for s in range(0, len(keys), 500):
                part = keys[s : s + 500]
                rows = self._db.execute(
                    f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(part))})", part
                ).fetchall()
                for k, v in rows:
                    out[k] = np.frombuffer(v, dtype=np.float32)
        return out

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vec (key, v) VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )


def open_cache(folder: Path, identity) -> EmbeddingCache:
    """The cache of one embedder identity (model, dimension, normalisation): vectors of different
    identities never mix. A cache from before identities, named by the model alone, is kept in use."""
    path = folder / identity.cache_name
    legacy = folder / f"{identity.model}.sqlite"
    if not path.exists() and legacy.exists():
        path = legacy
    return EmbeddingCache(path, identity.dimension)


def embed_with_cache(embedder, texts: list[str], cache: EmbeddingCache | None) -> np.ndarray:
    """Vectors for texts in order, embedding only those the cache has never seen."""
    if cache is None:
        return embedder.embed_array(texts)
    keys = [cache.key(t) for t in texts]
    known = cache.get_many(sorted(set(keys)))
    missing = sorted({k: t for k, t in zip(keys, texts) if k not in known}.items())
    if missing:
        vecs = embedder.embed_array([t for _, t in missing])
        fresh = {k: v for (k, _), v in zip(missing, vecs)}
        cache.put_many(fresh)
        known.update(fresh)
    return np.stack([known[k] for k in keys]) if keys else np.zeros((0, cache.dimension), dtype=np.float32)


class CachedEmbedder:
    """An embedder seen through the cache: `embed_array` embeds only texts never seen before.

    Tasks use it for abstract sentences, so repeated answers and summaries embed nothing new."""

    def __init__(self, embedder, cache: EmbeddingCache | None):
        self.embedder = embedder
        self.dimension = getattr(embedder, "dimension", 1)
        self.cache = cache

    def embed_array(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        v = np.asarray(embed_with_cache(self.embedder, list(texts), self.cache), dtype=np.float32)
        return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)

    __call__ = embed_array
