"""Sentence windows: an abstract cut into runs of whole sentences that fit the embedder's window, each
knowing where its sentences sit in its text, so one forward pass over a window gives the window's vector
and every sentence's (rag.embedders.minilm.MiniLMEmbeddings.embed_chunks). The library's chunks are these
windows (rag.library.chunking); the role classifier and the answer scorer are trained on sentence vectors
made this way (bench/train_roles.py, bench/train_answer_scorer.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rag.settings import ChunkSettings


@dataclass
class Window:
    """One chunk's text and the sentences whose vectors it serves: (sentence, start, end) in `text`.
    Consecutive windows share one sentence; its vector comes from the first window holding it."""

    text: str
    spans: list[tuple[str, int, int]]


def _groups(sentences: list[str], fits: Callable[[list[str]], bool]) -> list[tuple[int, int]]:
    """Greedy windows [i, j) of whole sentences; consecutive windows share one sentence of context."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(sentences):
        j = i + 1
        while j < len(sentences) and fits(sentences[i : j + 1]):
            j += 1
        out.append((i, j))
        if j >= len(sentences):
            break
        i = j - 1 if j - i > 1 else j  # one sentence overlap, but always move on
    return out


def windows(prefix: str, sentences: list[str], max_chars: int = 800, max_tokens: int = 256,
            count_tokens: Callable[[list[str]], list[int]] | None = None) -> list[Window]:
    """The chunk texts of one abstract (title `prefix`, its `sentences`) and each one's sentence spans."""
    budget = max_tokens - 4  # room for the [CLS]/[SEP] tokens and the title
    # The tokens of prefix + " ".join(window) are the prefix's and its sentences' tokens (the tokenizer splits
    # words at spaces and punctuation first), so each text is counted once, in one call, not every window
    # tried (each count below holds the two special tokens once).
    tokens = {s: n - 2 for s, n in zip([prefix, *sentences], count_tokens([prefix, *sentences]))} if count_tokens else {}

    def fits(win: list[str]) -> bool:
        if len(prefix) + sum(map(len, win)) + len(win) - 1 > max_chars:
            return False
        return count_tokens is None or 2 + tokens[prefix] + sum(tokens[s] for s in win) <= budget

    groups = [(0, len(sentences))] if fits(sentences) else _groups(sentences, fits)
    out, served = [], 0
    for i, j in groups:
        spans, at = [], len(prefix)
        for k in range(i, j):
            if k >= served:
                spans.append((sentences[k], at, at + len(sentences[k])))
            at += len(sentences[k]) + 1
        served = max(served, j)
        out.append(Window(prefix + " ".join(sentences[i:j]), spans))
    return out


def sentence_vectors(embedder, abstracts: list[tuple[str, list[str]]], chunk: ChunkSettings | None = None) -> list[np.ndarray]:
    """Per abstract (title prefix, sentences), its sentences' unit vectors read inside its chunks, as ingest
    makes them, from one pass per chunk (`embedder.embed_chunks`); a sentence past the window's end (none,
    when the windows are cut with token counts) gets its own vector."""
    chunk = chunk or ChunkSettings()
    count = getattr(embedder, "count_tokens", None)
    wins = [windows(prefix, ss, chunk.max_chars, chunk.max_tokens, count) for prefix, ss in abstracts]
    flat = [w for ws in wins for w in ws]
    _, per = embedder.embed_chunks([w.text for w in flat], [[(a, b) for _, a, b in w.spans] for w in flat])
    out, i = [], 0
    for ws in wins:
        rows = per[i : i + len(ws)]
        i += len(ws)
        v = np.vstack(rows) if rows else np.zeros((0, embedder.dimension), dtype=np.float32)
        if len(v) and np.isnan(v).any():
            gap = np.isnan(v).any(axis=1)
            texts = [t for w in ws for t, _, _ in w.spans]
            v[gap] = embedder.embed_array([t for t, g in zip(texts, gap) if g])
        out.append(v.astype(np.float32))
    return out
