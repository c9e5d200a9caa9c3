"""Embedders behind one factory: the offline MiniLM (CPU or GPU), an OpenAI-compatible endpoint, a test fake.

Each is a LangChain ``Embeddings`` with `embed_array` (vectors in input order, L2-normalised),
`identity()` (what the library records), `count_tokens` and `runs_on` (what `stats` and the UI say).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.embedders.fake import HashingEmbeddings
from rag.embedders.identity import EmbedderIdentity, EmbedderMismatch, check_compatible, resolve
from rag.embedders.minilm import MINILM_ID, MiniLMEmbeddings

if TYPE_CHECKING:
    from rag.settings import Settings

__all__ = ["EmbedderIdentity", "EmbedderMismatch", "HashingEmbeddings", "MINILM_ID", "MiniLMEmbeddings",
           "check_compatible", "get_embedder", "make_embedder", "resolve"]

_shared: dict[tuple, object] = {}


def make_embedder(settings: Settings):
    """The embedder the settings ask for; one per process per configuration (an ONNX session or a
    connection pool is costly to make)."""
    es = settings.embeddings
    kind = settings.embedder
    if kind == "endpoint":
        key = es.api_key.get_secret_value() if es.api_key else None
        conf = (kind, es.url, es.model, key, es.batch_size, es.concurrency, es.retries, es.timeout, es.dimensions)
    elif kind == "minilm":
        conf = (kind, es.device)
    else:
        conf = (kind,)
    if conf not in _shared:
        if kind == "endpoint":
            from rag.embedders.endpoint import EndpointEmbeddings

            _shared[conf] = EndpointEmbeddings(es.url or "", es.model, key, es.batch_size, es.concurrency,
                                               es.retries, es.timeout, es.dimensions)
        elif kind == "minilm":
            _shared[conf] = MiniLMEmbeddings(device=es.device)
        elif kind == "fake":
            _shared[conf] = HashingEmbeddings()
        else:
            raise ValueError(f"unknown embedder {kind!r}")
    return _shared[conf]


def get_embedder(name: str = "minilm"):
    """The in-process embedders by name (benches and tests)."""
    if name not in ("minilm", "fake"):
        raise ValueError(f"unknown embedder {name!r}")
    from rag.settings import Settings

    return make_embedder(Settings(embedder=name))
