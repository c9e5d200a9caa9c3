"""Cost of the scoping filters (issue 21) on the catalogue's facets, side by side with venue + year.

    .venv/bin/python bench/scope_filters.py            # all 87,691 paperlists records

The catalogue is built from the loader's records (paper_meta, as ingest stores them; no embedding), so
this measures the filter alone: Facets.mask for venue + year, then with an author, and chosen papers;
the first author filter after an ingest also builds the folded author text.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def timed(fn, n: int = 10) -> float:
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return C.median(ts) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=None, help="the first N records (default: all)")
    args = ap.parse_args()
    if not C.PAPERLISTS.exists():
        raise SystemExit(f"needs {C.PAPERLISTS} (the shared data folder); not found")
    from rag.catalogue import Facets, paper_meta
    from rag.loaders import load_file
    from rag.records import Paper

    started = time.time()
    m = C.print_header("scoping filters on the facets: venue + year, author, chosen papers")
    cat = {}
    for p in load_file(C.PAPERLISTS):
        if isinstance(p, Paper):
            cat[p.paper_id] = paper_meta(p, 1)
            if args.papers and len(cat) >= args.papers:
                break
    ids = list(cat)
    f = Facets(cat, ids)
    t = time.perf_counter()
    f.person_rows("Hinton")
    first = (time.perf_counter() - t) * 1000
    figures = {"papers": len(ids), "first_author_filter_ms": round(first, 1),
               "venue_year_p50_ms": round(timed(lambda: f.mask("ICLR", 2020, 2024)), 3),
               "papers_200_p50_ms": round(timed(lambda: f.mask(None, None, None, papers=ids[:200])), 3)}
    print(f"{len(ids)} papers; first author filter (builds the folded author text): {first:.0f} ms")
    print(f"venue + year: p50 {figures['venue_year_p50_ms']} ms; 200 chosen papers: p50 {figures['papers_200_p50_ms']} ms")
    for who in ["Hinton", "G. Hinton", "Yoshua Bengio", "Sergey Levine", "Li"]:
        f._person_memo.clear()  # a new author each time, not the remembered one
        n = len(f.person_rows(who))

        def run(who=who):
            f._person_memo.clear()
            f.mask("ICLR", 2020, 2024, author=who)

        ms = timed(run, 5)
        figures[f"author {who}"] = {"papers": n, "venue_year_author_p50_ms": round(ms, 1)}
        print(f"venue + year + author {who!r} ({n} papers by them): p50 {ms:.1f} ms")
    C.write_results("scope_filters", figures, m, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
