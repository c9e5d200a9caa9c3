"""A content-hash cache of vectors, shared by every library under one home: no text is embedded twice.

Two kinds of vector live in it under keys of their own, so they never mix: a text embedded on its own
(chunks, questions, topics), and an abstract sentence read inside its chunk (`POOLED`: the mean of its
tokens' states in the chunk's forward pass, read out to stand in for the sentence alone,
rag.embedders.minilm.MiniLMEmbeddings.embed_chunks and rag.embedders.readout). Ingest
stores both from one pass per chunk; tasks read abstract sentences as the pooled kind (CachedEmbedder).
"""

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
    def key(text: str, kind: str = "") -> str:
        return hashlib.sha1(f"{kind}\0{text}".encode("utf-8") if kind else text.encode("utf-8")).hexdigest()

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


POOLED = "pooled"  # the cache key kind of a sentence's vector pooled inside its chunk's pass


def pooled_kind(chunking: str = "") -> str:
    """The key kind of pooled vectors from chunks cut under `chunking` (rag.library.ingest.chunking_of) and read
    out by the shipped read-out (rag.embedders.readout): a sentence read in other windows, or by another
    read-out, is another vector (one stored before the read-out is read again, lazily, by `prime`). Keyed by
    the sentence's text: a sentence that two abstracts share verbatim keeps the vector of the one read last."""
    from rag.embedders.readout import readout_id

    return f"{POOLED} {readout_id()} {chunking}".strip()


def one_pass(embedder, cache: EmbeddingCache | None, enabled: bool = True) -> bool:
    """Whether sentences are read inside their chunk's pass: asked for (PAPERCHAT_CHUNK__ONE_PASS), the
    embedder gives token states (the in-process MiniLM; the tests' fake and an endpoint do not) and there is
    a cache to keep them in."""
    return enabled and cache is not None and callable(getattr(embedder, "embed_chunks", None))


def embed_windows(embedder, windows: list, cache: EmbeddingCache, kind: str = POOLED) -> np.ndarray:
    """The chunk vectors of rag.library.chunking.Window`s, in order, and their sentences' pooled vectors kept
    in the cache: one forward pass per window whose chunk vector or any of whose sentences' is not known
    yet. A chunk vector already cached is kept as it is (never replaced by a recomputed one)."""
    ckeys = [cache.key(w.text) for w in windows]
    skeys = [[cache.key(t, kind) for t, _, _ in w.spans] for w in windows]
    known = cache.get_many(sorted(set(ckeys)))
    pooled = cache.get_many(sorted({k for ks in skeys for k in ks}))
    todo = list({ckeys[i]: i for i, w in enumerate(windows)
                 if ckeys[i] not in known or any(k not in pooled for k in skeys[i])}.values())
    if todo:
        vecs, per = embedder.embed_chunks([windows[i].text for i in todo],
                                          [[(a, b) for _, a, b in windows[i].spans] for i in todo])
        fresh = {ckeys[i]: v for i, v in zip(todo, vecs) if ckeys[i] not in known}
        sents = {k: v for i, rows in zip(todo, per) for k, v in zip(skeys[i], rows) if not np.isnan(v).any()}
        cache.put_many({**fresh, **sents})
        known.update(fresh)
    return np.stack([known[k] for k in ckeys]) if ckeys else np.zeros((0, cache.dimension), dtype=np.float32)


class CachedEmbedder:
    """An embedder seen through the cache: `embed_array` embeds only texts never seen before.

    Tasks use it for abstract sentences, so repeated answers and summaries embed nothing new. With one-pass
    vectors (one_pass), a text that is a sentence of an abstract read before (ingest, or `prime`) gets its
    pooled vector; any other text (a question, a topic) is embedded on its own. `windows(paper)` cuts a
    paper as ingest does (rag.library.chunking.chunk_windows), for `prime`."""

    def __init__(self, embedder, cache: EmbeddingCache | None, windows=None, kind: str = POOLED):
        self.embedder = embedder
        self.dimension = getattr(embedder, "dimension", 1)
        self.cache = cache
        self.windows, self.kind = windows, kind
        self.pooled = one_pass(embedder, cache) and windows is not None

    def prime(self, papers: list) -> None:
        """Make sure the papers' sentences have pooled vectors: a library ingested before they were stored
        gets them now from one chunk pass per paper still lacking any (its chunk vectors are not touched)."""
        if not self.pooled or not papers:
            return
        wins = {p.paper_id: self.windows(p) for p in papers}
        keys = {pid: [self.cache.key(t, self.kind) for w in ws for t, _, _ in w.spans] for pid, ws in wins.items()}
        have = self.cache.get_many(sorted({k for ks in keys.values() for k in ks}))
        lacking = [w for pid, ws in wins.items() if any(k not in have for k in keys[pid]) for w in ws]
        if lacking:
            embed_windows(self.embedder, lacking, self.cache, self.kind)

    def embed_array(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts = list(texts)
        found: dict[int, np.ndarray] = {}
        if self.pooled:
            keys = [self.cache.key(t, self.kind) for t in texts]
            got = self.cache.get_many(sorted(set(keys)))
            found = {i: got[k] for i, k in enumerate(keys) if k in got}
        rest = [i for i in range(len(texts)) if i not in found]
        v = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if rest:
            v[rest] = embed_with_cache(self.embedder, [texts[i] for i in rest], self.cache)
        for i, x in found.items():
            v[i] = x
        return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)

    __call__ = embed_array
