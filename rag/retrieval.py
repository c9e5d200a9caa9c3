"""Hybrid retrieval: dense (Chroma) and BM25 chunk scores pooled per paper, fused, filtered.

This is the one retrieval path: search, ask, summarise, cite and eval all come through here.
"""

from __future__ import annotations

from pydantic import BaseModel

from .library import Library
from .records import Hit


class Filters(BaseModel):
    venue: str | None = None
    year_from: int | None = None
    year_to: int | None = None

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

    def admits(self, meta: dict) -> bool:
        if self.venue and (meta.get("venue") or "").lower() != self.venue.lower():
            return False
        year = meta.get("year") or 0
        if self.year_from is not None and year < self.year_from:
            return False
        if self.year_to is not None and year > self.year_to:
            return False
        return True

    def __bool__(self) -> bool:
        return bool(self.venue or self.year_from is not None or self.year_to is not None)


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


def search(library: Library, query: str, k: int = 10, filters: Filters | None = None) -> list[Hit]:
    """The k best papers for the query, one hit each, best first."""
    filters = filters or Filters()
    rs = library.settings.retrieval
    library.refresh()
    if not query.strip() or not library.catalogue:
        return []
    n = max(rs.candidates, k)
    # Resolve the venue to the stored spelling so the store's exact-match filter works case-blind.
    if filters.venue:
        spelled = {(m.get("venue") or "").lower(): m.get("venue") for m in library.catalogue.values()}
        filters = filters.model_copy(update={"venue": spelled.get(filters.venue.lower(), filters.venue)})
    dense_rows = library.dense(library.embed_query(query), n, filters.chroma_where())
    texts = {cid: doc for cid, _, _, doc in dense_rows}
    dense = _pool([(cid, pid, s) for cid, pid, s, _ in dense_rows])
    lex_rows = []
    for cid, s in library.lexical.search(query, n * (4 if filters else 1)):
        pid = cid.rsplit("#", 1)[0]
        meta = library.catalogue.get(pid)
        if meta is not None and filters.admits(meta):
            lex_rows.append((cid, pid, s))
    lexical = _pool(lex_rows)
    fused = fuse({p: s for p, (s, _) in dense.items()}, {p: s for p, (s, _) in lexical.items()}, library)
    top = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    best_chunk = {}
    for pid, _ in top:
        cands = [x for x in (dense.get(pid), lexical.get(pid)) if x]
        # The chunk shown is the dense side's best where it has one: it is the closer paraphrase.
        best_chunk[pid] = cands[0][1]
    missing = [c for c in best_chunk.values() if c not in texts]
    texts.update(library.chunk_texts(missing))
    papers = library.get_papers([pid for pid, _ in top])
    hits = []
    for pid, score in top:
        if pid not in papers:
            continue
        hits.append(Hit(paper=papers[pid], score=score, text=_strip_prefix(texts.get(best_chunk[pid], ""), papers[pid]),
                        dense=dense.get(pid, (0.0, ""))[0], lexical=lexical.get(pid, (0.0, ""))[0]))
    return hits


def fuse(dense: dict[str, float], lexical: dict[str, float], library: Library) -> dict[str, float]:
    rs = library.settings.retrieval
    if rs.fusion == "rrf":
        out: dict[str, float] = {}
        for side in (dense, lexical):
            for rank, pid in enumerate(sorted(side, key=lambda p: -side[p])):
                out[pid] = out.get(pid, 0.0) + 1.0 / (rs.rrf_k + rank + 1)
        return out
    # Min-max over each side's candidates, then a weighted sum (weight chosen on SciFact train).
    dn, lx = _minmax(dense), _minmax(lexical)
    w = rs.dense_weight
    return {p: w * dn.get(p, 0.0) + (1 - w) * lx.get(p, 0.0) for p in set(dn) | set(lx)}


def _strip_prefix(text: str, paper) -> str:
    from .chunking import chunk_prefix

    pre = chunk_prefix(paper)
    return text[len(pre):] if pre and text.startswith(pre) else text
