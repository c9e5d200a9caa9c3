"""Which kind of sentence vector an embedder gives, and the weights trained on that kind.

A library ingested in one pass (PAPERCHAT_CHUNK__ONE_PASS) reads each abstract sentence's vector pooled
inside its chunk's forward pass (rag.library.embcache.CachedEmbedder with `pooled`, the cache key kind
`pooled`); a library ingested in two passes, or the model itself, embeds each sentence alone. A pooled
vector is read out to stand in for the sentence alone (rag.embedders.readout: held-out cosine to it 0.78
raw, 0.88 read out), close enough that one set of weights serves both kinds (docs/quality.md, "One pass per
chunk"). Each learned model still looks for NAME.pooled.npz beside NAME.npz for pooled vectors
(`weights_for`); none ships, so both kinds read NAME.npz.
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
