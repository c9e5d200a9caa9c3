"""Which kind of sentence vector an embedder gives, and the weights trained on that kind.

A library ingested in one pass (PAPERCHAT_CHUNK__ONE_PASS) reads each abstract sentence's vector pooled
inside its chunk's forward pass (rag.library.embcache.CachedEmbedder with `pooled`, the cache key kind
`pooled`); a library ingested in two passes, or the model itself, embeds each sentence alone. The two
kinds differ enough (a pooled vector carries its neighbours' topic) that each learned model over sentence
vectors ships one weights file per kind: NAME.npz for sentences embedded alone, NAME.pooled.npz for pooled
ones (bench/train_pooled.py regenerates all of the latter). So a library keeps the weights its stored
vectors were read with, whichever way it was ingested.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Kind = Literal["standalone", "pooled"]
STANDALONE: Kind = "standalone"
POOLED: Kind = "pooled"


def vector_kind(embedder) -> Kind:
    """`pooled` when the embedder (or one it wraps) serves abstract sentences pooled in their chunk's pass."""
    for _ in range(4):
        if getattr(embedder, "pooled", False) is True:
            return POOLED
        embedder = getattr(embedder, "embedder", None)
        if embedder is None:
            break
    return STANDALONE


def weights_for(path: Path, kind: str) -> Path:
    """The weights file trained on `kind` vectors beside `path` (NAME.pooled.npz for pooled ones), or `path`
    itself when no such file ships."""
    if kind == POOLED:
        pooled = path.with_name(path.name.removesuffix(".npz") + ".pooled.npz")
        if pooled.exists():
            return pooled
    return path
