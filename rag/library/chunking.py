"""Cut abstracts into sentence windows that fit the embedder's token window, title on each."""

from __future__ import annotations

from collections.abc import Callable

from rag.loaders._io import MAX_TITLE_CHARS
from rag.records import Chunk, Paper
from rag.reading.sentences import split_sentences


def chunk_prefix(paper: Paper) -> str:
    # The title gives every window the paper's topic (a measured lift on SciFact, see docs/quality.md).
    # At most MAX_TITLE_CHARS of it, whatever a record stored before titles were capped holds.
    return f"{paper.title[:MAX_TITLE_CHARS]}. " if paper.title and not paper.title_derived else ""


def _windows(sentences: list[str], fits: Callable[[list[str]], bool]) -> list[list[str]]:
    """Greedy windows of whole sentences; consecutive windows share one sentence of context."""
    windows: list[list[str]] = []
    i = 0
    while i < len(sentences):
        win = [sentences[i]]
        j = i + 1
        while j < len(sentences) and fits(win + [sentences[j]]):
            win.append(sentences[j])
            j += 1
        windows.append(win)
        if j >= len(sentences):
            break
        i = j - 1 if len(win) > 1 else j  # one sentence overlap, but always move on
    return windows


def chunk_paper(paper: Paper, max_chars: int = 800, max_tokens: int = 256,
                count_tokens: Callable[[list[str]], list[int]] | None = None) -> list[Chunk]:
    prefix = chunk_prefix(paper)
    sentences = split_sentences(paper.abstract) or [paper.abstract.strip()]
    # Reserve room for the [CLS]/[SEP] tokens and the title.
    budget = max_tokens - 4

    def fits(win: list[str]) -> bool:
        text = prefix + " ".join(win)
        if len(text) > max_chars:
            return False
        if count_tokens is None:
            return True
        return count_tokens([text])[0] <= budget

    whole = prefix + " ".join(sentences)
    if fits(sentences):
        groups = [sentences]
    else:
        groups = _windows(sentences, fits)
    chunks = []
    for n, win in enumerate(groups):
        text = prefix + " ".join(win) if groups[0] is not sentences else whole
        chunks.append(Chunk(chunk_id=f"{paper.paper_id}#{n}", paper_id=paper.paper_id, text=text, n=n))
    return chunks
