"""The no-LLM answerer: an answer made of the top abstracts' own most relevant sentences, each cited.

It adds no words of its own beyond the citation marks, so it cannot claim what the papers do not.
"""

from __future__ import annotations

import numpy as np

from .records import Hit
from .sentences import split_sentences


def rank_sentences(query: str, hits: list[Hit], embedder) -> list[list[tuple[float, str]]]:
    """Each hit's sentences with their cosine to the query, best first."""
    sents = [split_sentences(h.paper.abstract) or [h.paper.abstract] for h in hits]
    flat = [s for ss in sents for s in ss]
    if not flat:
        return [[] for _ in hits]
    vecs = embedder.embed_array([query] + flat)
    sims = vecs[1:] @ vecs[0]
    out, i = [], 0
    for ss in sents:
        scored = sorted(zip(sims[i : i + len(ss)].tolist(), ss), key=lambda x: -x[0])
        out.append(scored)
        i += len(ss)
    return out


def compose(query: str, hits: list[Hit], embedder, max_sentences: int = 4, min_sentences: int = 2) -> str:
    """An answer citing hits by their 1-based position in `hits`: [1] is hits[0]."""
    ranked = rank_sentences(query, hits, embedder)
    if not any(ranked):
        return ""
    top = max(r[0][0] for r in ranked if r)
    # One sentence per paper, papers in retrieval order, kept while close to the best sentence found.
    chosen: list[tuple[int, str]] = []
    for i, r in enumerate(ranked):
        if r and (r[0][0] >= 0.75 * top or len(chosen) < min_sentences and r[0][0] >= 0.5 * top):
            chosen.append((i, r[0][1]))
        if len(chosen) >= max_sentences:
            break
    # Too few papers close enough: take the lead paper's next best sentence as well.
    if len(chosen) < min_sentences and ranked[0] and len(ranked[0]) > 1:
        chosen.insert(1, (0, ranked[0][1][1]))
    return " ".join(f"{_no_end(s)} [{i + 1}]." for i, s in chosen)


def _no_end(sentence: str) -> str:
    s = sentence.rstrip()
    return s[:-1] if s and s[-1] in ".!?" else s


def central_sentences(texts: list[str], embedder, n: int = 1) -> list[str]:
    """The sentence(s) of a text closest to the text as a whole (used to summarise a paper)."""
    out = []
    for t in texts:
        ss = split_sentences(t) or [t]
        v = embedder.embed_array([t] + ss)
        sims = v[1:] @ v[0]
        idx = sorted(np.argsort(-sims)[:n].tolist())
        out.append(" ".join(ss[i] for i in idx))
    return out
