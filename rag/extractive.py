"""The no-LLM answerer: an answer made of the top abstracts' own most relevant sentences, each cited.

It adds no words of its own beyond the citation marks, so it cannot claim what the papers do not.
"""

from __future__ import annotations

import re

import numpy as np

from .citations import quote
from .records import Hit, normalise_text
from .sentences import split_sentences


_STOP = frozenset("""a an the of in on for to and or with by from as at is are was were be been this that these those
it its we our they their what which who whom how why when where do does did can could should would may might
there here than then so such not no into over under about between via using use used show shows new""".split())


def content_stems(text: str) -> set[str]:
    import Stemmer

    global _stemmer
    try:
        stem = _stemmer
    except NameError:
        stem = _stemmer = Stemmer.Stemmer("english")
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1]
    return set(stem.stemWords(words))


def rank_sentences(query: str, hits: list[Hit], embedder) -> list[list[tuple[float, str]]]:
    """Each hit's sentences scored against the query, best first: cosine plus a share for the
    query's content words the sentence repeats (MiniLM alone under-rates rare names like 'SignSGD')."""
    sents = [split_sentences(h.paper.abstract) or [h.paper.abstract] for h in hits]
    flat = [s for ss in sents for s in ss]
    if not flat:
        return [[] for _ in hits]
    vecs = embedder.embed_array([query] + flat)
    sims = vecs[1:] @ vecs[0]
    q = content_stems(query)
    if q:
        overlap = np.array([len(q & content_stems(s)) / len(q) for s in flat], dtype=np.float32)
        sims = sims + 0.3 * overlap
    out, i = [], 0
    for ss in sents:
        scored = sorted(zip(sims[i : i + len(ss)].tolist(), ss), key=lambda x: -x[0])
        out.append(scored)
        i += len(ss)
    return out


def compose(query: str, hits: list[Hit], embedder, max_sentences: int = 4, min_sentences: int = 2,
            per_paper: int = 2) -> str:
    """An answer citing hits by their 1-based position in `hits`: [1] is hits[0].

    Sentences are picked greedily by similarity to the question, at most `per_paper` from one paper
    and with a small penalty for a paper already used (so distinct papers win ties), while they stay
    close to the best sentence; they are then read in retrieval order, each paper's in text order.
    """
    ranked = rank_sentences(query, hits, embedder)
    cands = [(score, i, s) for i, r in enumerate(ranked) for score, s in r]
    if not cands:
        return ""
    top = max(c[0] for c in cands)
    used: dict[int, int] = {}
    chosen: list[tuple[int, str]] = []
    said: set[str] = set()  # an abstract that repeats a sentence (or two papers sharing one) is quoted once
    # Best first, with a penalty for papers already quoted so that distinct papers win near-ties.
    pool = sorted(cands, key=lambda c: -c[0])
    while pool and len(chosen) < max_sentences:
        score, i, s = max(pool, key=lambda c: c[0] * (0.85 ** used.get(c[1], 0)))
        pool.remove((score, i, s))
        if used.get(i, 0) >= per_paper or normalise_text(s).lower() in said:
            continue
        adjusted = score * (0.85 ** used.get(i, 0))
        close = adjusted >= 0.7 * top
        # To reach the minimum length, quote the lead paper again rather than a weakly related one.
        filler = len(chosen) < min_sentences and chosen and i == chosen[0][0] and score >= 0.4 * top
        if not (close or filler or not chosen):
            if len(chosen) >= min_sentences:
                break
            continue
        used[i] = used.get(i, 0) + 1
        said.add(normalise_text(s).lower())
        chosen.append((i, s))
    position = {(i, s): k for i, h in enumerate(hits) for k, s in enumerate(split_sentences(h.paper.abstract))}
    chosen.sort(key=lambda x: (x[0], position.get(x, 0)))
    # Only the marks written here are citations: any the abstract held are neutralised (citations.quote).
    return " ".join(f"{_no_end(quote(s))} [{i + 1}]." for i, s in chosen)


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
