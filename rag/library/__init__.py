"""The library and its store: one Chroma collection of chunks, the lexical index and the paper catalogue.

The one place that writes. `Library` is imported lazily so that a module of this wing that needs no store
(sources, chunking, people) does not pay for Chroma's import.

    library.py    Library: open, ingest, remove, search's raw materials
    ingest.py     the ingest path (loaders -> chunks -> embeddings -> store), overlap.py its pipelining
    catalogue.py  paper records, facets, lexical and people indexes; collections.py the Chroma collections
    sources.py    which file a paper came from; removal.py removing a source's papers
    retrieval.py  dense + lexical search, fused, one hit per paper; retriever.py its LangChain face
    store/        the embedded-store guard (entered only from chroma.py)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag.library.library import Library

__all__ = ["Library"]


def __getattr__(name: str) -> Any:
    if name == "Library":
        from rag.library.library import Library

        return Library
    raise AttributeError(name)
