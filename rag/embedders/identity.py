"""What a library's vectors are: the embedder's identity, recorded with the library and keying the cache."""

from __future__ import annotations

import re

from pydantic import BaseModel

from rag.errors import UserError

NORMALISATION = "l2"  # every vector paperchat stores is L2-normalised (cosine space; rag.hnswfiles checks it)


class EmbedderMismatch(UserError):
    """The embedder at hand would put vectors into a library built with another one."""


class EmbedderIdentity(BaseModel):
    """Model, dimension and normalisation: what decides whether two vectors can be compared.

    Not where the model runs (in process, CPU or GPU, or which URL serves it): a lab can move its
    embedding service, or move ingest to a GPU, without re-embedding anything."""

    model: str
    dimension: int
    normalisation: str = NORMALISATION

    @property
    def cache_name(self) -> str:
        """The embedding cache's file name: one cache per identity, shared by every library under a home."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", self.model).strip("_") or "model"
        return f"{slug}-{self.dimension}d-{self.normalisation}.sqlite"

    def as_metadata(self) -> dict:
        """Flat keys for the library's record in Chroma (which takes scalars only)."""
        return {"embedder": self.model, "embedder_dim": self.dimension, "embedder_norm": self.normalisation}

    def __str__(self) -> str:
        return f"{self.model} ({self.dimension}-dim, {self.normalisation})"


SETTING = "PAPERCHAT_EMBEDDER (or PAPERCHAT_EMBEDDINGS__MODEL)"


def resolve(library: str, embedder, recorded: dict) -> EmbedderIdentity:
    """The embedder's identity, refused if the library (whose Chroma metadata is `recorded`) was built
    with another. The model name is compared first, so a wrong service is refused without a request;
    a recorded dimension spares an endpoint the probe (its first real answer is checked instead)."""
    model = getattr(embedder, "model_id", type(embedder).__name__)
    built = recorded.get("embedder")
    if built and built != model:
        raise EmbedderMismatch(f"library {library!r} was built with embedder {built}, not {model}; "
                               f"use another PAPERCHAT_LIBRARY or set {SETTING} to match")
    fn = getattr(embedder, "identity", None)
    if fn is None:  # an embedder from outside paperchat (benches): its name and dimension
        have = EmbedderIdentity(model=model, dimension=int(getattr(embedder, "dimension", 0) or 0))
    else:
        have = fn(recorded.get("embedder_dim")) if built else fn()
    check_compatible(library, recorded, have, SETTING)
    return have


def check_compatible(library: str, recorded: dict, have: EmbedderIdentity, setting: str) -> None:
    """Refuse an embedder whose vectors cannot be compared with the library's. `recorded` is the library's
    metadata; libraries from before dimensions were recorded have the model name only."""
    model = recorded.get("embedder")
    if not model:
        return
    dim = recorded.get("embedder_dim")
    norm = recorded.get("embedder_norm") or NORMALISATION
    if model != have.model or (dim and int(dim) != have.dimension) or norm != have.normalisation:
        built = EmbedderIdentity(model=model, dimension=int(dim or 0) or have.dimension, normalisation=norm)
        raise EmbedderMismatch(
            f"library {library!r} was built with embedder {built if dim else model}, not {have}; "
            f"use another PAPERCHAT_LIBRARY or set {setting} to match")
