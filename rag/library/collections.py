"""One library's two Chroma collections (paper records, chunk vectors), its generation stamp, and paged reads.

- `paperchat-NAME-papers`: one record per paper (the abstract as its document, the rest as metadata);
  the collection's own metadata holds the library's generation stamp, the identity of the embedder it
  was built with (model, dimension, normalisation: rag.embedders.identity) and how its chunks were cut.
- `paperchat-NAME-chunks`: the chunk vectors; a chunk id `PAPER#n` names its paper. A chunk's text is its
  metadata's `text`, not a Chroma document: Chroma indexes every document for full-text search, which
  nothing here reads and which cost ingest about 2 s of CPU per 1,000 abstracts (bench/chroma_writes.py).
  Libraries written before hold it as the document; chunk_text reads either.

The generation changes with every write: "dirty-..." while a write is under way (or was killed),
REBUILD + "..." while the chunk collection is rebuilt, a fresh id once a write has finished.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

PAGE = 5000  # rows per Chroma read/write call (under its max batch size)
DIRTY = "dirty"  # the generation of a library while a write is under way (or was killed mid-way)
REBUILD = "dirty-rebuild-"  # the generation while the chunk collection is rebuilt (rag.library.ingest.Ingestor.recut)
_CHUNKS_CONFIG = {"hnsw": {"space": "cosine", "ef_search": 200}}


def chunk_metadata(chunk, venue: str, year: int | None) -> dict:
    """What a chunk stores beside its vector: its paper, its place in it, what filters read, and its text."""
    return {"paper_id": chunk.paper_id, "n": chunk.n, "venue": venue or "", "year": year or 0, "text": chunk.text}


def chunk_text(document: str | None, metadata: dict | None) -> str:
    return (metadata or {}).get("text") or document or ""


def in_pages(items: Sequence) -> Iterator[Sequence]:
    """`items` in slices Chroma accepts in one call."""
    for s in range(0, len(items), PAGE):
        yield items[s : s + PAGE]


def paged(col, include: list[str]) -> Iterator[dict]:
    """Everything in a collection, one Chroma `get` page at a time."""
    offset = 0
    while True:
        got = col.get(include=include, limit=PAGE, offset=offset)
        if not got["ids"]:
            return
        yield got
        offset += len(got["ids"])


class Collections:
    """The handles on a library's two collections, and its generation stamp. The handles are replaced
    when a collection is rebuilt (here, or by another Library object of this process)."""

    def __init__(self, client, name: str, chunking: str, sentences: str = "standalone"):
        self.client, self.name = client, name
        self.chunks = client.get_or_create_collection(
            f"paperchat-{name}-chunks", embedding_function=None, configuration=_CHUNKS_CONFIG)
        # The embedder's identity is recorded with the first write (an endpoint's dimension may take a request).
        self.papers = client.get_or_create_collection(
            f"paperchat-{name}-papers", embedding_function=None, metadata={"generation": "new", "chunking": chunking, "sentences": sentences})
        meta = self.papers.metadata or {}
        self.recorded: dict = dict(meta)  # what the library was built with (rag.embedders.resolve checks it)
        self.identity: dict = {}  # the embedder's identity as flat metadata, set by the Library once resolved
        # How the stored chunks were cut; an ingest under other chunk settings re-cuts them all.
        self.chunking: str = meta.get("chunking") or chunking
        # The rules its derived titles follow (rag.loaders.titles.TITLES_VERSION; 0: before versions; rag.library.retitle).
        self.titles: int = int(meta.get("titles") or 0)
        # How its abstract sentences' vectors are read (rag.reading.vector_kind): kept for the library's life, so a
        # change of PAPERCHAT_CHUNK__ONE_PASS never re-reads a built library. One without the key was built before
        # one-pass ingest was the default: each sentence embedded alone.
        built = meta.get("generation", "new") != "new"
        self.sentences: str = meta.get("sentences") or ("standalone" if built else sentences)

    @property
    def model(self) -> str:
        return self.identity.get("embedder", "")

    def generation(self) -> str:
        """The stamp as the store has it now (one Chroma call)."""
        col = self.client.get_collection(self.papers.name, embedding_function=None)
        if col.id != self.papers.id:  # another Library in this process rebuilt the store (a repair)
            self.papers = col
            self.chunks = self.client.get_collection(self.chunks.name, embedding_function=None)
        meta = col.metadata or {}
        self.chunking = meta.get("chunking") or self.chunking  # another process may have re-cut the chunks
        return meta.get("generation", "new")

    def stamp(self, gen: str) -> None:
        self.papers.modify(metadata={**self.identity, "generation": gen, "chunking": self.chunking, "titles": self.titles,
                                     "sentences": self.sentences})

    def view_key(self) -> tuple[int, str]:
        """This process's view of the store, for this library (one per Chroma system and name)."""
        return id(getattr(self.client, "_server", self.client)), self.name

    def new_chunks(self) -> None:
        """An empty chunk collection in place of the current one."""
        name = self.chunks.name
        with contextlib.suppress(Exception):
            self.client.delete_collection(name)
        self.chunks = self.client.get_or_create_collection(name, embedding_function=None,
                                                           configuration=_CHUNKS_CONFIG)

    def new_papers(self, gen: str) -> None:
        """An empty paper collection in place of the current one, stamped `gen`."""
        name = self.papers.name
        with contextlib.suppress(Exception):
            self.client.delete_collection(name)
        self.papers = self.client.get_or_create_collection(
            name, embedding_function=None,
            metadata={**self.identity, "generation": gen, "chunking": self.chunking, "titles": self.titles,
                      "sentences": self.sentences})

    def drop(self) -> None:
        for col in (self.chunks, self.papers):
            with contextlib.suppress(Exception):
                self.client.delete_collection(col.name)
