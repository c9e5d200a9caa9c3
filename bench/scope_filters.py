"""Cost of the scoping filters (issue 21) on the catalogue's facets, side by side with venue + year.

    .venv/bin/python bench/scope_filters.py                          # all 87,691 paperlists records
    .venv/bin/python bench/scope_filters.py --before-rev 9170d15     # "before" = that commit's rag/

The catalogue is built from the loader's records (paper_meta, as ingest stores them; no embedding), so
this measures the filter alone: Facets.mask for venue + year, then with an author, and chosen papers;
the first author filter also builds what author matching reads (a folded text before issue 21's index,
the name index after; ingest now saves the index with the cached catalogue, so "reading the index saved"
is what the first author filter after an ingest costs). Both sides run in one invocation on the same
catalogue: "before" is the code of --before-rev (default: where this branch left main), exported with
`git archive` and run in a subprocess; "after" is this checkout. Each side also reports a digest of the papers each author query
matched, so the two can be seen to agree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

AUTHORS = ["Hinton", "G. Hinton", "Yoshua Bengio", "Sergey Levine", "Li", "Y. Li", "Wei Li", "Wang"]


def timed(fn, n: int = 10) -> float:
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return C.median(ts) * 1000


def run_side(catalogue_file: str) -> dict:
    """Every figure of one side, on the catalogue pickled in `catalogue_file` ({"cat": ..., "ids": ...})."""
    from rag.library.catalogue import Facets

    with open(catalogue_file, "rb") as f:
        got = pickle.load(f)
    cat, ids = got["cat"], got["ids"]
    f = Facets(cat, ids)
    t = time.perf_counter()
    f.person_rows("Hinton")
    out = {"first_author_filter_ms": round((time.perf_counter() - t) * 1000, 1), "first_from_saved_index_ms": "-",
           "venue_year_p50_ms": round(timed(lambda: f.mask("ICLR", 2020, 2024)), 3),
           "papers_200_p50_ms": round(timed(lambda: f.mask(None, None, None, papers=ids[:200])), 3), "authors": {}}
    if hasattr(f, "people"):  # since issue 21: the index is saved with the cached catalogue, and read back
        from rag.library.catalogue import _save_people

        saved = Path(catalogue_file).with_name("people.pkl")
        _save_people(f.people(), saved)
        g = Facets(cat, ids, saved)
        t = time.perf_counter()
        g.person_rows("Hinton")
        out["first_from_saved_index_ms"] = round((time.perf_counter() - t) * 1000, 1)
    for who in AUTHORS:
        f._person_memo.clear()  # a new author each time, not the remembered one
        rows = sorted(int(r) for r in f.person_rows(who))

        def run(who=who):
            f._person_memo.clear()
            f.mask("ICLR", 2020, 2024, author=who)

        out["authors"][who] = {"papers": len(rows), "digest": hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:12],
                               "venue_year_author_p50_ms": round(timed(run, 5), 2)}
    return out


def before_side(rev: str, catalogue_file: str) -> dict:
    """run_side with the rag/ of `rev`, in its own process."""
    return C.before_side(rev, "scope_filters", f"run_side({catalogue_file!r})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=None, help="the first N records (default: all)")
    ap.add_argument("--before-rev", default=None, help="the code to compare with (default: merge-base with main)")
    args = ap.parse_args()
    if not C.PAPERLISTS.exists():
        raise SystemExit(f"needs {C.PAPERLISTS} (the shared data folder); not found")
    from rag.library.catalogue import paper_meta
    from rag.loaders import load_file
    from rag.records import Paper

    rev = C.merge_base(args.before_rev)
    started = time.time()
    m = C.print_header("scoping filters on the facets: venue + year, author, chosen papers (before | after)")
    cat = {}
    for p in load_file(C.PAPERLISTS):
        if isinstance(p, Paper):
            cat[p.paper_id] = paper_meta(p, 1)
            if args.papers and len(cat) >= args.papers:
                break
    with tempfile.TemporaryDirectory(prefix="paperchat-scope-") as tmp:
        catalogue_file = str(Path(tmp) / "catalogue.pkl")
        with open(catalogue_file, "wb") as f:
            pickle.dump({"cat": cat, "ids": list(cat)}, f, protocol=pickle.HIGHEST_PROTOCOL)
        before = before_side(rev, catalogue_file)
        after = run_side(catalogue_file)
    print(f"{len(cat)} papers; before = {rev[:10]}, after = this checkout\n")
    print(f"{'':44} {'before':>10} {'after':>10}")
    for key, label in [("first_author_filter_ms", "first author filter (builds its index), ms"),
                       ("first_from_saved_index_ms", "... reading the index saved with the catalogue, ms"),
                       ("venue_year_p50_ms", "venue + year, p50 ms"), ("papers_200_p50_ms", "200 chosen papers, p50 ms")]:
        print(f"{label:44} {before[key]:>10} {after[key]:>10}")
    for who in AUTHORS:
        b, a = before["authors"][who], after["authors"][who]
        same = "same papers" if b["digest"] == a["digest"] else f"DIFFERENT papers ({b['papers']} before)"
        print(f"{'+ author ' + repr(who) + ', p50 ms':44} {b['venue_year_author_p50_ms']:>10} "
              f"{a['venue_year_author_p50_ms']:>10}   {a['papers']} papers by them, {same}")
    C.write_results("scope_filters", {"papers": len(cat), "before_rev": rev, "before": before, "after": after}, m,
                    started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
