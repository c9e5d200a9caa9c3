"""Re-ingest of an unchanged corpus vs the first ingest, side by side in one run (issue 6, item 4b).

In a fresh PAPERCHAT_HOME (temporary folder, empty embedding cache), on the same file:

  1. first ingest       library `first`, nothing known: every chunk embedded;
  2. re-ingest          the same file again into `first`, through a new Library object (as a second
                        `paperchat ingest` would): content hashes compared, nothing embedded;
     re-ingest (CLI)    the same as a `paperchat ingest FILE` subprocess, start-up included (median of 3);
  3. second library     library `second`, same home, same texts: every vector comes from the
                        content-hash embedding cache, so nothing is embedded either.

Goal: re-ingest >= 50x faster than the first ingest. The embedder is wrapped to count the texts it
is asked to embed in each phase (expected: all, 0, 0, 0).

    .venv/bin/python bench/reingest.py                       # first 1,000 abstracts of paperlists
    .venv/bin/python bench/reingest.py --n 5000              # larger
    .venv/bin/python bench/reingest.py --corpus scifact      # SciFact's 5,183
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


class CountingEmbedder:
    """The real embedder, counting the texts it embeds (same model id, so the same cache and library)."""

    def __init__(self, inner):
        self.inner = inner
        self.texts = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed_array(self, texts):
        self.texts += len(texts)
        return self.inner.embed_array(texts)

    def embed_documents(self, texts):
        return self.embed_array(list(texts)).tolist()

    def embed_query(self, text):
        return self.embed_array([text])[0].tolist()


def timed_ingest(settings, embedder, corpus_file: Path) -> dict:
    from rag.library.library import Library

    before = embedder.texts
    t = time.perf_counter()
    lib = Library(settings, embedder=embedder)
    t_open = time.perf_counter() - t
    rt = {"refresh": 0.0, "compare": 0.0}

    def wrap(name, fn):
        def f(*a, **k):
            s = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                rt[name] += time.perf_counter() - s
        return f

    lib.records.refresh = wrap("refresh", lib.records.refresh)
    lib.ingestor.plan = wrap("compare", lib.ingestor.plan)  # unchanged batches end at the plan
    report = lib.ingest([corpus_file], progress=False)
    total = time.perf_counter() - t
    return {"seconds": total, "open": t_open, "ingest": total - t_open, "refresh": rt["refresh"],
            "write_batches": rt["compare"], "embedded": embedder.texts - before, "report": report,
            "papers": len(lib)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    C.add_corpus_args(ap)
    ap.add_argument("--cli-runs", type=int, default=3, help="re-ingest subprocess runs (median reported); 0 to skip")
    args = ap.parse_args()

    started = time.time()
    m = C.print_header("re-ingest of an unchanged corpus vs first ingest")
    from rag.embedders import get_embedder
    from rag.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="paperchat-bench-reingest-"))
    try:
        corpus_file = C.corpus_from_args(args, work)
        home = work / "home"
        os.environ["PAPERCHAT_HOME"] = str(home)
        emb = CountingEmbedder(get_embedder("minilm"))
        emb.inner.embed_array(["warm up: load the ONNX session before any timing"])
        first_s = Settings(home=home, library="first")

        print("first ingest ...", flush=True)
        first = timed_ingest(first_s, emb, corpus_file)
        n_papers = first["papers"]
        print(f"  {first['report'].summary()}: {first['seconds']:.1f} s, {first['embedded']} texts embedded")

        print("re-ingest, unchanged ...", flush=True)
        again = timed_ingest(first_s, emb, corpus_file)
        print(f"  {again['report'].summary()}: {again['seconds']:.2f} s, {again['embedded']} texts embedded")

        cli = []
        if args.cli_runs:
            exe = Path(sys.executable).with_name("paperchat")
            cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "rag.cli"]
            env = {**os.environ, "PAPERCHAT_HOME": str(home), "PAPERCHAT_LIBRARY": "first"}
            for i in range(args.cli_runs):
                t = time.perf_counter()
                out = subprocess.run([*cmd, "ingest", str(corpus_file)], env=env, capture_output=True, text=True, cwd=C.ROOT)
                cli.append(time.perf_counter() - t)
                if out.returncode != 0:
                    raise SystemExit(f"paperchat ingest failed ({out.returncode}): {out.stderr[-2000:]}")
            print(f"  as `paperchat ingest FILE` subprocess: {', '.join(f'{x:.2f}' for x in cli)} s "
                  f"-> median {C.median(cli):.2f} s  ({out.stdout.strip()})")

        print("second library, same texts ...", flush=True)
        second = timed_ingest(Settings(home=home, library="second"), emb, corpus_file)
        print(f"  {second['report'].summary()}: {second['seconds']:.1f} s, {second['embedded']} texts embedded")

        r_again = first["seconds"] / again["seconds"]
        r_cli = first["seconds"] / C.median(cli) if cli else None
        r_second = first["seconds"] / second["seconds"]
        print()
        print(f"{'phase':<34}{'seconds':>9}{'abstracts/s':>13}{'embedded':>10}{'vs first':>10}")
        rows = [("first ingest", first["seconds"], first["embedded"], 1.0),
                ("re-ingest (in process)", again["seconds"], again["embedded"], r_again)]
        if cli:
            rows.append(("re-ingest (CLI, start-up incl.)", C.median(cli), None, r_cli))
        rows.append(("second library, same texts", second["seconds"], second["embedded"], r_second))
        for name, s, e, r in rows:
            print(f"{name:<34}{s:>9.2f}{n_papers / s:>13.1f}{'' if e is None else e:>10}{r:>9.1f}x")
        print()
        verdict = lambda r: "met" if r >= 50 else "NOT met"  # noqa: E731
        print(f"re-ingest speed-up {r_again:.0f}x in process (goal >= 50x: {verdict(r_again)})")
        if cli:
            print(f"                   {r_cli:.0f}x as a CLI run, process start-up included ({verdict(r_cli)}; "
                  f"the fixed start-up cost makes this ratio grow with the corpus)")
        print(f"re-ingest time: open library {again['open']:.2f} s, load caches {again['refresh']:.2f} s, "
              f"compare hashes {again['write_batches']:.2f} s, read + parse + hash the file "
              f"{again['ingest'] - again['refresh'] - again['write_batches']:.2f} s")
        print(f"second library {r_second:.1f}x faster than the first ingest (embedding cache across libraries)")

        figures = {
            "corpus": args.corpus, "abstracts": n_papers,
            "first_seconds": round(first["seconds"], 2), "reingest_seconds": round(again["seconds"], 3),
            "reingest_cli_seconds": [round(x, 3) for x in cli], "reingest_cli_median": round(C.median(cli), 3) if cli else None,
            "second_library_seconds": round(second["seconds"], 2),
            "embedded_texts": {"first": first["embedded"], "reingest": again["embedded"], "second_library": second["embedded"]},
            "reports": {"first": first["report"].summary(), "reingest": again["report"].summary(),
                        "second_library": second["report"].summary()},
            "speedup": {"reingest": round(r_again, 1), "reingest_cli": round(r_cli, 1) if r_cli else None,
                        "second_library": round(r_second, 2)},
            "reingest_breakdown_seconds": {"open": round(again["open"], 3), "load_caches": round(again["refresh"], 3),
                                           "compare": round(again["write_batches"], 3),
                                           "read_parse_hash": round(again["ingest"] - again["refresh"] - again["write_batches"], 3)},
            "goal": {"reingest_speedup": 50},
        }
        C.write_results("reingest", figures, m, started)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
