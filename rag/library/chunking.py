"""Cut abstracts into sentence windows that fit the embedder's token window, title on each.

The windows (rag.reading.windows) also say where each sentence sits in its chunk, so ingest reads every
sentence's vector out of its chunk's forward pass (rag.library.embcache.embed_windows).
"""

from __future__ import annotations

from collections.abc import Callable

from rag.loaders._io import MAX_TITLE_CHARS
from rag.records import Chunk, Paper
from rag.reading.sentences import split_sentences
from rag.reading.windows import Window, windows


def chunk_prefix(paper: Paper) -> str:
    # The title gives every window the paper's topic (a measured lift on SciFact, see docs/quality.md).
    # At most MAX_TITLE_CHARS of it, whatever a record stored before titles were capped holds.
    return f"{paper.title[:MAX_TITLE_CHARS]}. " if paper.title and not paper.title_derived else ""


def paper_sentences(paper: Paper) -> list[str]:
    """The sentences a paper's chunks are cut from (the whole abstract when it does not split)."""
    return split_sentences(paper.abstract) or [paper.abstract.strip()]


def chunk_windows(paper: Paper, max_chars: int = 800, max_tokens: int = 256,
                  count_tokens: Callable[[list[str]], list[int]] | None = None) -> list[Window]:
    return windows(chunk_prefix(paper), paper_sentences(paper), max_chars, max_tokens, count_tokens)


def chunks_of(paper: Paper, wins: list[Window]) -> list[Chunk]:
    return [Chunk(chunk_id=f"{paper.paper_id}#{n}", paper_id=paper.paper_id, text=w.text, n=n) for n, w in enumerate(wins)]


def chunk_paper(paper: Paper, max_chars: int = 800, max_tokens: int = 256,
                count_tokens: Callable[[list[str]], list[int]] | None = None) -> list[Chunk]:
    return chunks_of(paper, chunk_windows(paper, max_chars, max_tokens, count_tokens))
