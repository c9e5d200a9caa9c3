"""A deterministic hashing embedder for tests: keeps lexical similarity, needs no model."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from langchain_core.embeddings import Embeddings

from rag.embedders.identity import EmbedderIdentity

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbeddings(Embeddings):
    """A deterministic stand-in for tests: hashed bag of words (and word pairs), L2-normalised.

    Unlike a random fake it keeps lexical similarity, so tests can assert that the right paper is found.
    """

    model_id = "hashing-fake"
    dimension = 256
    max_tokens = 256
    runs_on = "in process (hashing, no model)"

    def identity(self, recorded_dimension: int | None = None) -> EmbedderIdentity:
        return EmbedderIdentity(model=self.model_id, dimension=self.dimension)

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dimension, dtype=np.float32)
        words = _WORD.findall(text.lower())
        for tok in words + [a + "_" + b for a, b in zip(words, words[1:])]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
            v[h % self.dimension] += 1.0 if (h >> 32) & 1 else -1.0
        n = np.linalg.norm(v)
        if n == 0:
            v[0] = 1.0
            n = 1.0
        return v / n

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [int(len(t.split()) * 1.3) + 2 for t in texts]

    def embed_array(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vec(t) for t in texts])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text).tolist()
