"""Every benchmark of bench/README.md in sequence with its defaults (what `make bench` runs), then one summary.

    .venv/bin/python bench/run_all.py                 # all of them (the first run also builds the SciFact
                                                      # reference library under /tmp/bench-home: +7-10 min)
    .venv/bin/python bench/run_all.py --only latency cold_start
    .venv/bin/python bench/run_all.py --keep-going    # carry on past a failing script

Each script prints its own figures, machine and reproduce command, and writes bench/results/NAME.json;
this runner adds nothing but the order and a summary of those files.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

# Quick ones first, so a broken set-up shows early.
SCRIPTS = ["cold_start", "reingest", "ingest_throughput", "ingest_memory", "latency", "load_ui"]


def summary() -> list[str]:
    lines = []

    def load(name):
        p = C.RESULTS / f"{name}.json"
        return json.loads(p.read_text())["figures"] if p.exists() else None

    if f := load("ingest_throughput"):
        r = f["ratios"]
        lines.append(f"a. ingest ({f['corpus']}, {f['abstracts']} abstracts): " + ", ".join(
            f"{k} {v:.0f}/s" for k, v in f["abstracts_per_s"].items()) + "; " + ", ".join(
            f"{k} {v:.2f}x (goal {f['goals'][k]})" for k, v in r.items()))
    if f := load("reingest"):
        s = f["speedup"]
        lines.append(f"b. re-ingest ({f['abstracts']} abstracts): first {f['first_seconds']:.1f} s, again "
                     f"{f['reingest_seconds']:.2f} s = {s['reingest']:.0f}x (goal 50x); CLI {f['reingest_cli_median']} s "
                     f"= {s['reingest_cli']}x; second library {s['second_library']:.1f}x")
    if f := load("ingest_memory"):
        g = f["growth_kb_per_paper"]
        lines.append(f"1. ingest memory ({f['papers']} abstracts): grows {g['embedded']:.1f} KB per paper with the embedded "
                     f"store, {g['server_client']:.1f} KB per paper in the client of a Chroma server")
    for name in sorted(p.stem for p in C.RESULTS.glob("latency*.json")):
        if f := load(name):
            lines.append(f"c/d. latency {f['library']} ({f['papers']} papers): p50 {f['latency_ms']['p50']:.1f} ms, "
                         f"p95 {f['latency_ms']['p95']:.1f} ms, largest part {f['largest_part']}; peak RSS {f['peak_rss_mb']:.0f} MB")
    if f := load("cold_start"):
        lines.append(f"e. cold start `paperchat search`: median {f['search_median_seconds']:.2f} s (goal 2 s)")
    if f := load("load_ui"):
        c = f["concurrent"]
        lines.append(f"UI load: {f['sessions']} sessions x {f['rounds']} questions, {f.get('answered_as_alone', f.get('answered_right'))} of "
                     f"{f['requests']} answered with the papers one session alone got; p50 {c['p50_ms']} ms, p95 {c['p95_ms']} ms "
                     f"({f['p50_ratio_concurrent_vs_solo']}x one session alone)")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", choices=SCRIPTS)
    ap.add_argument("--keep-going", action="store_true")
    args = ap.parse_args()
    failed = []
    t0 = time.time()
    for name in args.only or SCRIPTS:
        print(f"\n{'=' * 100}\n$ {sys.executable} bench/{name}.py\n", flush=True)
        t = time.time()
        rc = subprocess.call([sys.executable, str(C.ROOT / "bench" / f"{name}.py")], cwd=C.ROOT)
        print(f"[{name}: exit {rc}, {time.time() - t:.0f} s]", flush=True)
        if rc != 0:
            failed.append(name)
            if not args.keep_going:
                break
    print(f"\n{'=' * 100}\nsummary ({time.time() - t0:.0f} s; figures from bench/results/*.json)")
    for line in summary():
        print("  " + line)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
