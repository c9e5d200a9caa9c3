"""Cold start of `paperchat search`, `ask` and `summarise`: wall time of a fresh process, median of 5
(issue 6 item 4e; issue 34 item 4: each within 1.5 s on the seeds on a quiet machine).

On the seeds library (built once under /tmp/bench-home, library `seeds`), side by side in one run, the
code of this tree ("after") and of --before-rev ("before", from git archive; '' for none), interleaved:

  python -c pass             the interpreter alone (the floor)
  import rag.cli             what the entry point imports before it knows the command
  paperchat search QUERY     each command, end to end (python -m rag.cli, the same for both codes)
  paperchat ask QUESTION
  paperchat summarise TOPIC

then where a search process spends its time (import, settings, Library(), loading the catalogue and
BM25 index, loading the ONNX model, the query itself; median of 3 fresh processes), and the top
offenders of `python -X importtime` for the same command, by package.

    .venv/bin/python bench/cold_start.py
    .venv/bin/python bench/cold_start.py --runs 9 --query "sparse attention for long context"
    .venv/bin/python bench/cold_start.py --library NAME --home DIR      # another library
    .venv/bin/python bench/cold_start.py --before-rev ''                # this tree only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

DEFAULT_QUERY = "approximation error bounds for transformers"
DEFAULT_QUESTION = "what limits the approximation power of transformers?"
DEFAULT_TOPIC = "state space models"
GOAL_S = 1.5

# A fresh process that times the phases of `paperchat search` the way cli.cmd_search runs them.
PHASES = r"""
import json, os, sys, time
t0 = time.perf_counter(); marks = {}
def mark(name):
    global t0
    t = time.perf_counter(); marks[name] = t - t0; t0 = t
import rag.cli
mark("import rag.cli")
from rag.library.retrieval import Filters, search
from rag.library.library import Library
mark("import rag.library.retrieval + rag.library.library")
import rag.embedders
mark("import rag.embedders (langchain_core)")
import chromadb
mark("import chromadb")
from rag.settings import Settings
s = Settings()
mark("settings")
lib = Library(s)
mark("Library(): Chroma client + collections")
lib.refresh()
mark("refresh: catalogue + BM25 index (bm25s, scipy)")
lib.embedder.embed_array(["x"])
mark("load ONNX model (+1 tiny embed)")
hits = search(lib, sys.argv[1], 10, Filters())
mark("the search itself")
print(json.dumps(marks))
"""

# Each alone in a fresh process (python -c "import X"), minus the bare interpreter: what each would save.
ISOLATED = ["numpy", "pydantic", "langchain_core.embeddings", "chromadb", "bm25s", "scipy.sparse", "onnxruntime",
            "tokenizers", "Stemmer"]

HEAVY = ["gradio", "openai", "langchain_openai", "langchain_core", "langchain", "pandas", "torch", "transformers",
         "httpx", "fastapi", "uvicorn", "opentelemetry", "scipy", "sklearn", "matplotlib", "pydantic", "chromadb",
         "onnxruntime", "tokenizers", "bm25s", "numpy", "tqdm", "Stemmer", "grpc", "kubernetes"]


def run(cmd, env, cwd: Path = C.ROOT) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=cwd)
    return time.perf_counter() - t, out


def codes_root(name: str, codes: list[tuple[str, Path]]) -> Path:
    return next((code for label, code in codes if f"({label})" in name), C.ROOT)


def importtime(cmd_args: list[str], env) -> tuple[list[dict], dict[str, float], float]:
    code = ("import sys; sys.argv = ['paperchat'] + sys.argv[1:]; from rag.cli import main; "
            "sys.exit(main())")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *cmd_args], env=env,
                         capture_output=True, text=True, cwd=C.ROOT)
    rows = []
    for line in out.stderr.splitlines():
        mm = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if mm:
            rows.append({"self_ms": int(mm.group(1)) / 1000, "cum_ms": int(mm.group(2)) / 1000,
                         "depth": len(mm.group(3)) // 2, "module": mm.group(4)})
    by_pkg: dict[str, float] = defaultdict(float)
    for r in rows:
        by_pkg[r["module"].split(".")[0]] += r["self_ms"]
    total = sum(r["self_ms"] for r in rows)
    return rows, dict(by_pkg), total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--query", default=DEFAULT_QUERY)
    ap.add_argument("--question", default=DEFAULT_QUESTION)
    ap.add_argument("--topic", default=DEFAULT_TOPIC)
    ap.add_argument("--before-rev", default="main", help="the code measured as 'before' ('' for none)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--library", default="seeds")
    ap.add_argument("--home", type=Path, default=C.BENCH_HOME)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--name", default="cold_start", help="results file name under bench/results/ (docs/performance.md "
                                                        "cites cold_start.json's near-quiet run)")
    args = ap.parse_args()

    started = time.time()
    m = C.print_header("cold start of `paperchat search`, `ask`, `summarise`; before and after")
    if args.library == "seeds":
        C.ensure_library("seeds", [C.ROOT / "seeds"], home=args.home)
    env = {**os.environ, "PAPERCHAT_HOME": str(args.home), "PAPERCHAT_LIBRARY": args.library,
           "ANONYMIZED_TELEMETRY": "False", "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", "")}
    tasks = {"search": ["search", args.query], "ask": ["ask", args.question], "summarise": ["summarise", args.topic]}
    codes = [("after", C.ROOT)] + ([("before", C.checkout(args.before_rev, "cold-start-before-"))] if args.before_rev else [])
    cmds: dict[str, tuple[list[str], dict]] = {"python -c pass": ([sys.executable, "-c", "pass"], env)}
    for label, code in codes:
        cenv = {**env, "PYTHONPATH": str(code)}
        cmds[f"import rag.cli ({label})"] = ([sys.executable, "-c", "import rag.cli"], cenv)
        for t, a in tasks.items():
            cmds[f"paperchat {t} ({label})"] = ([sys.executable, "-m", "rag.cli", *a], cenv)
    first, runs = {}, defaultdict(list)
    for name, (cmd, cenv) in cmds.items():  # one untimed-for-the-median run each: fills the OS file cache
        first[name], out = run(cmd, cenv, codes_root(name, codes))
        if out.returncode != 0:
            raise SystemExit(f"{name} failed ({out.returncode}): {out.stderr[-2000:]}")
    for _ in range(args.runs):  # interleaved, so every command sees the same load
        for name, (cmd, cenv) in cmds.items():
            runs[name].append(run(cmd, cenv, codes_root(name, codes))[0])
    print(f"library {args.library!r} under {args.home}; {args.runs} runs each after one warm-up run")
    print(f"{'command':<34}{'median s':>9}{'min s':>8}{'max s':>8}{'first s':>9}")
    for name in cmds:
        xs = runs[name]
        print(f"{name:<34}{C.median(xs):>9.2f}{min(xs):>8.2f}{max(xs):>8.2f}{first[name]:>9.2f}")
    medians = {t: {label: C.median(runs[f"paperchat {t} ({label})"]) for label, _ in codes} for t in tasks}
    print()
    for t, got in medians.items():
        ratio = f"before/after {got['before'] / got['after']:.2f}x; " if "before" in got else ""
        print(f"cold start of `paperchat {t}`: {ratio}median {got['after']:.2f} s after"
              + (f", {got['before']:.2f} s before" if "before" in got else "")
              + f" (goal <= {GOAL_S} s on a quiet machine: {'met' if got['after'] <= GOAL_S else 'NOT met'} here)")
    med = medians["search"]["after"]

    phase_runs = defaultdict(list)
    for _ in range(3):
        _, out = run([sys.executable, "-c", PHASES, args.query], env)
        if out.returncode != 0:
            raise SystemExit(f"phase run failed: {out.stderr[-2000:]}")
        for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items():
            phase_runs[k].append(v)
    phases = {k: C.median(v) for k, v in phase_runs.items()}
    print("\nwhere a fresh search process spends its time (median of 3; interpreter start-up not included):")
    tot = sum(phases.values())
    for k, v in phases.items():
        print(f"  {k:<42}{v:7.2f} s {100 * v / tot:6.1f} %")

    iso = defaultdict(list)
    for _ in range(3):
        base = run([sys.executable, "-c", "pass"], env)[0]
        for mod in ISOLATED:
            iso[mod].append(run([sys.executable, "-c", f"import {mod}"], env)[0] - base)
    iso_med = {k: C.median(v) for k, v in iso.items()}
    print("\neach import alone in a fresh process, minus the bare interpreter (median of 3; they overlap):")
    for k, v in sorted(iso_med.items(), key=lambda kv: -kv[1]):
        print(f"  {k:<30}{v:7.2f} s")

    rows, by_pkg, total_ms = importtime(["ask", args.question], env)
    top_level = sorted([r for r in rows if r["depth"] == 0], key=lambda r: -r["cum_ms"])[: args.top]
    print(f"\npython -X importtime, `paperchat ask` (all imports: {total_ms / 1000:.2f} s, inflated by the tracing):")
    print("  top-level imports by cumulative time:")
    for r in top_level:
        print(f"    {r['cum_ms']:8.0f} ms  {r['module']}")
    print("  by package (self time summed over its modules):")
    pk = sorted(by_pkg.items(), key=lambda kv: -kv[1])[: args.top]
    for p, v in pk:
        print(f"    {v:8.0f} ms  {p}")
    present = [h for h in HEAVY if h in by_pkg]
    print(f"  heavy packages an ask imports: {', '.join(present)}")

    figures = {
        "library": args.library, "query": args.query, "runs": args.runs,
        "cold_start_median_seconds": {t: {k: round(v, 3) for k, v in got.items()} for t, got in medians.items()},
        "seconds": {k: {"median": round(C.median(v), 3), "min": round(min(v), 3), "max": round(max(v), 3),
                        "all": [round(x, 3) for x in v], "first": round(first[k], 3)} for k, v in runs.items()},
        "search_median_seconds": round(med, 3), "goal_seconds": GOAL_S,
        "phases_seconds": {k: round(v, 3) for k, v in phases.items()},
        "import_alone_seconds": {k: round(v, 3) for k, v in iso_med.items()},
        "importtime_total_ms": round(total_ms, 1),
        "importtime_top_level_ms": {r["module"]: round(r["cum_ms"], 1) for r in top_level},
        "importtime_by_package_ms": {p: round(v, 1) for p, v in pk},
        "heavy_packages_imported": present,
    }
    C.write_results(args.name, figures, m, started)
    for _, code in codes[1:]:
        import shutil

        shutil.rmtree(code, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
