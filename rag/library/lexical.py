"""BM25 over chunk texts (bm25s, English stop words, Snowball stemming), saved beside the store."""

from __future__ import annotations

import json
from pathlib import Path


def _bm25s():
    """bm25s, imported without numba and scipy: it imports each when installed (0.4 s and 0.3 s of a cold
    `ask`) only to offer backends we do not use (BM25's defaults, backend="numpy", csc_backend="numpy",
    are what we build and load with). numba is not a dependency of paperchat (the bench's umap-learn and
    pacmap install it beside); scipy is, for other readers, who import it themselves."""
    import sys

    if "bm25s" in sys.modules:
        import bm25s

        return bm25s
    hidden = [m for m in ("numba", "scipy") if m not in sys.modules]
    for m in hidden:
        sys.modules[m] = None  # type: ignore[assignment]  # `import m` raises ImportError
    try:
        import bm25s
    finally:
        for m in hidden:
            del sys.modules[m]
    return bm25s


def _stemmer():
    from rag.reading.stems import Stems  # Snowball after British -ise read as -ize, as every lexical comparison

    return Stems()


class LexicalIndex:
    def __init__(self, retriever=None, ids: list[str] | None = None):
        self._retriever = retriever
        self.ids: list[str] = ids or []
        self._stem = None

    @classmethod
    def build(cls, ids: list[str], texts: list[str], k1: float = 1.2, b: float = 0.75) -> "LexicalIndex":
        """An index over `texts`, answering with `ids` (paper ids: BM25 scores whole papers)."""
        bm25s = _bm25s()

        if not ids:
            return cls(None, [])
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(), show_progress=False)
        r = bm25s.BM25(k1=k1, b=b)
        r.index(tokens, show_progress=False)
        return cls(r, list(ids))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if self._retriever is not None:
            self._retriever.save(str(folder / "bm25"))
        (folder / "ids.json").write_text(json.dumps(self.ids))

    @classmethod
    def load(cls, folder: Path) -> "LexicalIndex":
        bm25s = _bm25s()

        ids = json.loads((folder / "ids.json").read_text())
        r = bm25s.BM25.load(str(folder / "bm25"), mmap=True) if ids else None
        return cls(r, ids)

    def search(self, query: str, n: int, mask=None) -> list[tuple[str, float]]:
        """Best documents for the query, (id, score) with score > 0, best first; `mask` (one 0/1 per
        document, in id order) restricts the search, e.g. to papers that pass a filter."""
        if self._retriever is None or not self.ids:
            return []
        bm25s = _bm25s()

        if self._stem is None:
            self._stem = _stemmer()
        q = bm25s.tokenize([query], stopwords="en", stemmer=self._stem, show_progress=False, return_ids=False)
        if not q or not q[0]:
            return []
        n = min(n, len(self.ids))
        docs, scores = self._retriever.retrieve(q, k=n, show_progress=False, n_threads=1, weight_mask=mask)
        out = [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]
        return out

    def __len__(self) -> int:
        return len(self.ids)

