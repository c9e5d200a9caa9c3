"""How many papers the Library tab's search lists per query on the seeds (rag.library.retrieval.library_search), against
the fixed 50 it listed before: `.venv/bin/python bench/library_search.py [HOME]` (HOME keeps the seeds library
between runs; default a temporary folder). Uses the offline MiniLM embedder."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.library.library import Library  # noqa: E402
from rag.library.retrieval import library_search, search  # noqa: E402
from rag.settings import Settings  # noqa: E402

QUERIES = ["manifold-constrained hyper-connections", "needle in a haystack long context", "optimal transport",
           "large language models", "diffusion models", "k-means seeding", "quokka census", "recipes for banana bread"]


def main() -> None:
    home = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="paperchat-libsearch-"))
    lib = Library(Settings(home=home, embedder="minilm"))
    if len(lib) == 0:
        print(lib.ingest([ROOT / "seeds"], progress=False).summary())
    print(f"{'query':40} {'before':>6} {'after':>5}  best")
    for q in QUERIES:
        m = library_search(lib, q)
        before = len(search(lib, q, 50))
        print(f"{q:40} {before:6} {len(m.hits):5}  {m.hits[0].paper.title[:60] if m.hits else '-'}")


if __name__ == "__main__":
    main()
