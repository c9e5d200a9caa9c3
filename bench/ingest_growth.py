"""Ingest as the library grows (issue 34, item 2: "no slowdown as the library grows"): one `Library.ingest`
of the first N paperlists abstracts into a fresh library with the real model, its rate over each segment of
1,000 abstracts beside the raw embedder's rate on the chunks of the first and of the last segment (the two
raw runs bracket the ingest, so a host that slows down meanwhile shows as a gap between them), and the
process's peak RSS.

The full 87,691 abstracts take about 2.5 h of both cores; this bench is the same measurement at a size a
session can spare, and the rate per segment says whether the last thousand cost more than the first.

    .venv/bin/python bench/ingest_growth.py --n 10000
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def raw_rate(embedder, chunks, n_papers: int) -> float:
    texts = [c.text for c in chunks]
    t = time.perf_counter()
    embedder.embed_array(texts)
    return n_papers / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10000, help="paperlists abstracts ingested")
    ap.add_argument("--segment", type=int, default=1000, help="abstracts per reported segment")
    ap.add_argument("--name", default="ingest_growth")
    args = ap.parse_args()
    m = C.print_header("ingest as the library grows: rate per segment vs the raw embedder")
    started = time.time()
    from rag.embedders.minilm import MiniLMEmbeddings
    from rag.library.library import Library
    from rag.settings import Settings

    folder = Path(tempfile.mkdtemp(prefix="bench-ingest-growth-"))
    try:
        corpus = C.write_corpus("paperlists", args.n, folder / "paperlists.jsonl")
        papers = C.load_papers(corpus)
        seg = args.segment
        first, last = papers[:seg], papers[-seg:]
        probe = MiniLMEmbeddings()
        settings = Settings(home=folder / "home", library="growth", embedder="minilm")
        raw_first = raw_rate(probe, C.make_chunks(first, settings, probe), len(first))
        print(f"raw embedder, chunks of the first {len(first)} abstracts: {raw_first:.2f} abstracts/s")

        marks: list[tuple[int, float]] = [(0, time.perf_counter())]
        shown = [0, marks[0][1]]

        def on_progress(n: int) -> None:
            # printed as it goes, so a run stopped early (the full 87k takes hours) still says its rates
            marks.append((n, time.perf_counter()))
            if n >= shown[0] + seg:
                t = marks[-1][1]
                print(f"  {n:,d} abstracts, {(n - shown[0]) / (t - shown[1]):.2f} abstracts/s in the last "
                      f"{n - shown[0]:,d}, {t - marks[0][1]:.0f} s in", flush=True)
                shown[:] = [n, t]

        lib = Library(settings)
        t0 = time.perf_counter()
        report = lib.ingest([corpus], progress=False, on_progress=on_progress)
        total = time.perf_counter() - t0
        rss = C.rss_mb()
        raw_last = raw_rate(probe, C.make_chunks(last, settings, probe), len(last))
        print(f"raw embedder, chunks of the last {len(last)} abstracts: {raw_last:.2f} abstracts/s")
        raw = (raw_first + raw_last) / 2

        rows, done, t_prev, n_prev = [], seg, marks[0][1], 0
        for n, t in marks[1:]:
            if n >= done or n == marks[-1][0]:
                rows.append({"abstracts": n, "rate": round((n - n_prev) / (t - t_prev), 2)})
                n_prev, t_prev, done = n, t, (n // seg + 1) * seg
        print(f"\ningest of {report.added} abstracts: {total:.1f} s, {report.added / total:.2f} abstracts/s "
              f"({report.added / total / raw:.2f}x the raw embedder's {raw:.2f}); peak RSS {rss['peak_rss_mb']:.0f} MB")
        print("\nlibrary size   abstracts/s in the segment   vs raw")
        for r in rows:
            print(f"{r['abstracts']:12,d}   {r['rate']:26.2f}   {r['rate'] / raw:.2f}x")
        half = len(rows) // 2
        early = sum(r["rate"] for r in rows[:half]) / max(half, 1)
        late = sum(r["rate"] for r in rows[half:]) / max(len(rows) - half, 1)
        print(f"\nsecond half vs first half of the segments: {late / early:.2f}x the rate")
        C.write_results(args.name, {"n": report.added, "seconds": round(total, 1),
                                    "abstracts_per_s": round(report.added / total, 2),
                                    "raw_first": round(raw_first, 2), "raw_last": round(raw_last, 2),
                                    "ratio_to_raw": round(report.added / total / raw, 3),
                                    "late_vs_early": round(late / early, 3), "segments": rows, **rss}, m, started)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
