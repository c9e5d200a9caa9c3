"""A persistent text -> vector cache so each distinct text is embedded once across experiments.

Keyed by sha256 of the exact text (plus the model id); stored in SQLite under /tmp/scifact_emb/.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

CACHE_DIR = Path("/tmp/scifact_emb")


def _key(model_id: str, text: str) -> str:
    return hashlib.sha256((model_id + "\x1f" + text).encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, embedder, path: Path | None = None):
        self.embedder = embedder
        self.model_id = embedder.model_id
        path = path or CACHE_DIR / "cache.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS emb (k TEXT PRIMARY KEY, v BLOB)")
        self.dim = embedder.dimension

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for s in range(0, len(keys), 900):
            part = keys[s : s + 900]
            q = f"SELECT k, v FROM emb WHERE k IN ({','.join('?' * len(part))})"
            for k, v in self.db.execute(q, part):
                found[k] = np.frombuffer(v, dtype=np.float32)
        return found

    def missing(self, texts: list[str]) -> list[str]:
        uniq = list(dict.fromkeys(texts))
        have = self._lookup([_key(self.model_id, t) for t in uniq])
        return [t for t in uniq if _key(self.model_id, t) not in have]

    def embed(self, texts: list[str], block: int = 512, log: bool = False) -> np.ndarray:
        """Vectors for texts in order; computes (and stores) only the ones not cached yet."""
        todo = sorted(self.missing(texts), key=len)
        t0 = time.time()
        for s in range(0, len(todo), block):
            part = todo[s : s + block]
            vecs = self.embedder.embed_array(part).astype(np.float32)
            self.db.executemany(
                "INSERT OR REPLACE INTO emb (k, v) VALUES (?, ?)",
                [(_key(self.model_id, t), v.tobytes()) for t, v in zip(part, vecs)],
            )
            self.db.commit()
            if log:
                done = s + len(part)
                print(f"  embedded {done}/{len(todo)} in {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
        keys = [_key(self.model_id, t) for t in texts]
        have = self._lookup(list(dict.fromkeys(keys)))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = have[k]
        return out
