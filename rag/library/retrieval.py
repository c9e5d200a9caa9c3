"""Hybrid retrieval: dense (Chroma) and BM25 chunk scores pooled per paper, fused, filtered.

This is the one retrieval path: search, ask, summarise, cite and eval all come through here.
"""

from __future__ import annotations

from pydantic import BaseModel, model_validator

from rag.errors import UserError
from rag.library.library import Library
from rag.records import Hit
from rag.settings import MAX_K


class Filters(BaseModel):
    """Venue and an inclusive year range; an author (as a person names one: "Hinton"), a Zotero collection
    (with its subcollections) and chosen papers (ids). A range given backwards (2030 to 2020) means the
    years between them, in the CLI, the UI and the library alike: what someone typing it wants, rather
    than nothing. All are evaluated on the catalogue's facets (rag.library.catalogue.Facets)."""

    venue: str | None = None
    year_from: int | None = None
    year_to: int | None = None
    author: str | None = None
    collection: str | None = None
    papers: list[str] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Filters:
        if self.year_from is not None and self.year_to is not None and self.year_from > self.year_to:
            self.year_from, self.year_to = self.year_to, self.year_from
        return self

    def chroma_where(self) -> dict | None:
        conds: list[dict] = []
        if self.venue:
            conds.append({"venue": self.venue})
        if self.year_from is not None:
            conds.append({"year": {"$gte": self.year_from}})
        if self.year_to is not None:
            conds.append({"year": {"$lte": self.year_to}})
        if not conds:
            return None
        return conds[0] if len(conds) == 1 else {"$and": conds}

    @property
    def scoped(self) -> bool:
        """Whether the filter names papers Chroma's metadata cannot select (author, collection, ids)."""
        return bool(self.author or self.collection or self.papers is not None)

    def describe(self) -> str:
        """The filter as a reader would say it ("venue ICLR, 2024–2026, author Hinton"); '' for none."""
        bits = []
        if self.venue:
            bits.append(f"venue {self.venue}")
        if self.year_from is not None or self.year_to is not None:
            a, b = self.year_from, self.year_to
            bits.append(f"{a}" if a == b else f"{a}–{b}" if a is not None and b is not None
                        else f"{a} on" if a is not None else f"up to {b}")
        if self.author:
            bits.append(f"author {self.author}")
        if self.collection:
            bits.append(f"collection {self.collection}")
        if self.papers is not None:
            bits.append(f"{len(self.papers)} chosen paper{'s' if len(self.papers) != 1 else ''}")
        return ", ".join(bits)

    def __bool__(self) -> bool:
        return bool(self.venue or self.year_from is not None or self.year_to is not None or self.scoped)


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UserError(f"k (how many results) must be a whole number of at least 1; got {k!r}")
    if k > MAX_K:
        raise UserError(f"k (how many results) must be at most {MAX_K}; got {k}")


def _pool(hits: list[tuple[str, str, float]]) -> dict[str, tuple[float, str]]:
    """Paper score = its best chunk's score; remember which chunk."""
    best: dict[str, tuple[float, str]] = {}
    for cid, pid, score in hits:
        if pid not in best or score > best[pid][0]:
            best[pid] = (score, cid)
    return best


def _minmax(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    return {k: ((v - lo) / span if span > 0 else 1.0) for k, v in scores.items()}


def search(library: Library, query: str, k: int = 10, filters: Filters | None = None,
           dense_weight: float | None = None) -> list[Hit]:
    """The k best papers for the query, one hit each, best first. `dense_weight`: the dense side's weight in the
    fusion for this search (default: the library's retrieval setting; ask passes its own, settings.ask)."""
    check_k(k)
    filters = filters or Filters()
    rs = library.settings.retrieval
    if dense_weight is not None and dense_weight != rs.dense_weight:
        rs = rs.model_copy(update={"dense_weight": dense_weight})
    library.refresh()  # once: the calls below keep this view (one generation for the whole search)
    catalogue, lexical_index = library.catalogue, library.lexical  # an ingest may swap them meanwhile
    if not query.strip() or not catalogue:
        return []
    n = max(rs.candidates, k)
    facets = library.facets() if filters else None
    # Resolve the venue to the stored spelling so the store's exact-match filter works case-blind.
    if filters.venue:
        filters = filters.model_copy(update={"venue": facets.spelled.get(filters.venue.lower(), filters.venue)})
    # Dense: nearest chunks, pooled to papers (a paper scores as its best chunk). One filter serves both
    # sides: the facets' mask (BM25, and the dense side's own filtering) and Chroma's `where` (its fallback).
    mask = facets.mask(filters.venue, filters.year_from, filters.year_to, author=filters.author,
                       collection=filters.collection, papers=filters.papers) if filters else None
    if filters.papers is not None and (unknown := [p for p in filters.papers if p not in catalogue]):
        raise UserError(f"no paper with id {', '.join(map(repr, unknown[:5]))} in this library "
                        f"(`paperchat papers --json` lists the ids)")
    share = float(mask.mean()) if mask is not None and len(mask) else None
    where = filters.chroma_where()
    if filters.scoped:  # Chroma's own filter (the fallback) by the chunks' paper ids
        where = {"paper_id": {"$in": facets.ids_of(mask)}} if share else {"paper_id": {"$in": ["\x00none"]}}
    dense_rows = library.dense(library.embed_query(query), n * rs.chunks_per_paper, where,
                               refresh=False, admitted=facets.admitted(mask) if filters else None, share=share,
                               min_papers=3)
    texts = {cid: doc for cid, _, _, doc in dense_rows if doc}
    pooled = _pool([(cid, pid, s) for cid, pid, s, _ in dense_rows])
    dense = dict(sorted(pooled.items(), key=lambda kv: -kv[1][0])[:n])
    # Lexical: BM25 over whole papers, restricted to the filter's papers when there is one.
    lexical = {pid: s for pid, s in lexical_index.search(query, n, mask) if pid in catalogue}
    fused = fuse({p: s for p, (s, _) in dense.items()}, lexical, rs, len(catalogue))
    top = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    papers = library.get_papers([pid for pid, _ in top], refresh=False)
    # The text shown is the paper's best dense chunk; a paper found by BM25 alone shows its first chunk.
    best_chunk = {pid: (dense[pid][1] if pid in dense else f"{pid}#0") for pid, _ in top}
    texts.update(library.chunk_texts([c for c in best_chunk.values() if c not in texts]))
    hits = []
    for pid, score in top:
        if pid not in papers:
            continue
        hits.append(Hit(paper=papers[pid], score=score, text=_strip_prefix(texts.get(best_chunk[pid], ""), papers[pid]),
                        dense=dense.get(pid, (0.0, ""))[0], lexical=lexical.get(pid, 0.0)))
    return hits


def _zscore(scores: dict[str, float], pad_to: int = 0) -> tuple[dict[str, float], float]:
    """Standardised scores, and the standardised value of a zero score. `pad_to` counts papers the side
    did not return as zero-score candidates (BM25 returns only papers sharing a term with the query)."""
    vals = list(scores.values())
    vals += [0.0] * max(0, pad_to - len(vals))
    if not vals:
        return {}, 0.0
    mu = sum(vals) / len(vals)
    sd = (sum((v - mu) ** 2 for v in vals) / len(vals)) ** 0.5
    if sd <= 1e-9:
        return {k: 0.0 for k in scores}, 0.0
    return {k: (v - mu) / sd for k, v in scores.items()}, (0.0 - mu) / sd


def fuse(dense: dict[str, float], lexical: dict[str, float], rs, n_docs: int = 0) -> dict[str, float]:
    """One score per candidate paper from the two sides' scores (method and weight in settings)."""
    pids = set(dense) | set(lexical)
    w = rs.dense_weight
    if rs.fusion == "rrf":
        out: dict[str, float] = {}
        for side, weight in ((dense, w), (lexical, 1 - w)):
            for rank, pid in enumerate(sorted(side, key=lambda p: -side[p])):
                out[pid] = out.get(pid, 0.0) + 2 * weight / (rs.rrf_k + rank + 1)
        return out
    if rs.fusion == "zscore":
        dn, _ = _zscore(dense)
        lx, l0 = _zscore(lexical, pad_to=min(rs.candidates, n_docs))
        d0 = min(dn.values(), default=0.0)  # a paper the dense side did not return: its weakest candidate
    else:
        dn, lx, d0, l0 = _minmax(dense), _minmax(lexical), 0.0, 0.0
    return {p: w * dn.get(p, d0) + (1 - w) * lx.get(p, l0) for p in pids}


def _strip_prefix(text: str, paper) -> str:
    from rag.library.chunking import chunk_prefix

    pre = chunk_prefix(paper)
    return text[len(pre):] if pre and text.startswith(pre) else text


# The Library tab's search lists the papers that stand out from the candidate pool, not a fixed 50: a fused
# score (z-scores, `fuse`) at least CUT_ABSOLUTE (a standard deviation above the candidates' mean) and at
# least CUT_RELATIVE of the best one's ("5.9 then 1.3" shows one paper). z-scores always find someone
# standing out, so a paper must also be near the query: its best chunk at MATCH_DENSE cosine, or at
# MATCH_DENSE_WITH_WORD when it shares a word with it (on the seeds "quokka census" then finds nothing,
# its best paper at 0.19 without a shared word; "needle in a haystack long context" keeps its three at
# 0.19-0.28 with words in common).
# And the best of them must stand out by CUT_BEST: the cut-off is relative to the candidates, so once a query's
# real matches are removed, what is left stands out from a pool of noise by its noise alone (on the seeds,
# "optimal transport" with its three papers removed listed 11 optimisation papers, the best at 1.50; before,
# the best of every bench/library_search.py query scored 2.7 or more).
CUT_ABSOLUTE = 1.0
CUT_RELATIVE = 0.4
CUT_BEST = 2.0
CUT_BEST_POOL = 10  # ...among this many candidates at least: in a pool of n no score exceeds sqrt(n - 1) (1.0 for 2)
MATCH_DENSE = 0.30
MATCH_DENSE_WITH_WORD = 0.15


class LibraryMatches(BaseModel):
    """The papers a library search lists: `hits` (best first) above the relevance cut-off, how many
    candidates fell below it, and the line that says so."""

    query: str
    hits: list[Hit]
    below: int = 0  # candidates retrieved but under the cut-off
    cutoff: float = 0.0  # the score a paper had to reach

    @property
    def note(self) -> str:
        q = f"“{self.query}”"
        if not self.hits:
            return f"No paper matches {q}."
        n = len(self.hits)
        weaker = f"; {self.below} weaker match{'es' if self.below != 1 else ''} not shown" if self.below else ""
        return f"{n} paper{'s' if n != 1 else ''} match{'es' if n == 1 else ''} {q}{weaker}"


def library_search(library: Library, query: str, filters: Filters | None = None, k: int = 50) -> LibraryMatches:
    """At most k papers for the query: near it, and above the relevance cut-off (the best of those always)."""
    found = search(library, query, k, filters)
    near = [h for h in found if h.dense >= MATCH_DENSE or (h.lexical > 0 and h.dense >= MATCH_DENSE_WITH_WORD)]
    if not near or library.settings.retrieval.fusion != "zscore":  # other fusions' scores have no common scale
        return LibraryMatches(query=query, hits=near, below=len(found) - len(near))
    if len(found) >= CUT_BEST_POOL and near[0].score < CUT_BEST:  # nothing stands out: none is a match
        return LibraryMatches(query=query, hits=[], below=len(found), cutoff=CUT_BEST)
    cut = max(CUT_ABSOLUTE, CUT_RELATIVE * near[0].score)
    kept = [h for i, h in enumerate(near) if i == 0 or h.score >= cut]
    return LibraryMatches(query=query, hits=kept, below=len(found) - len(kept), cutoff=round(cut, 4))
