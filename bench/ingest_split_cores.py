"""Ingest vs the raw embedder when the embedder has its own hardware (issue 19, item 4), in one run:

The embedding service (bench/embedding_server.py, the same int8 MiniLM) runs on core 0 with one thread;
this process, and so paperchat's ingest (loading, chunking, Chroma writes, BM25), runs on core 1. That is
a lab's layout in miniature: the embedder on a GPU box or a TEI service, ingest on the machine with the
store. Three paths on the same abstracts, order rotated, best of --repeat:

  1. raw         the endpoint client alone (EndpointEmbeddings.embed_array) on every text ingest embeds:
                 the chunks and the sentences embedded for their roles; nothing else
  2. paperchat   `Library.ingest` of the same file through the same endpoint (embedding of batch i+1
                 overlaps the writes of batch i: rag.library.overlap)
  3. sequential  the same ingest with each batch written right after it is embedded (no overlap)

Goal: paperchat/raw >= 1.0 -- the store's work hidden behind the embedder. bench/ingest_throughput.py
measures the same on shared cores (in process), where the embedder keeps both cores busy and ingest's own
work has nowhere to hide.

    .venv/bin/python bench/ingest_split_cores.py --n 400 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from ingest_throughput import run_paperchat, start_endpoint  # noqa: E402

SERVICE_CORE, INGEST_CORE = 0, 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    C.add_corpus_args(ap, default_n=400)
    ap.add_argument("--repeat", type=int, default=2, help="measure each path this many times (order rotated); best is reported")
    ap.add_argument("--name", default="ingest_split_cores", help="results file name under bench/results/")
    args = ap.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        print("skipped: needs two cores (one for the embedding service, one for ingest)")
        return 0
    started = time.time()
    # The header first, so it reports the machine's cores, not the one this process is then held to.
    m = C.print_header("ingest through an embedding service on its own core vs that service's raw throughput")
    # Before any library starts a thread: every thread this process makes inherits the core.
    os.sched_setaffinity(0, {INGEST_CORE})
    from rag.embedders.endpoint import EndpointEmbeddings
    from rag.reading.sentences import split_sentences
    from rag.settings import Settings

    sys.path.insert(0, str(C.ROOT / "tests"))
    from procs import stop_group

    work = Path(tempfile.mkdtemp(prefix="paperchat-bench-split-"))
    server = None
    try:
        corpus_file = C.corpus_from_args(args, work)
        papers = C.load_papers(corpus_file)
        server, url = start_endpoint("minilm", ("--cpus", str(SERVICE_CORE), "--threads", "1"))
        # Served under the Hub name, as TEI would: rag.reading.roles accepts it, so role sentences go through it too.
        served = EndpointEmbeddings(url, "all-MiniLM-L6-v2", batch_size=32, concurrency=2)
        served.embed_array(["warm up: connect"])
        chunks = C.make_chunks(papers, Settings(home=work / "unused"), served)
        sentences = list(dict.fromkeys(s for p in papers for s in (split_sentences(p.abstract) or [p.abstract])))
        texts = [c.text for c in chunks] + sentences
        n = len(papers)
        print(f"corpus: {args.corpus}, {n} abstracts -> {len(chunks)} chunks + {len(sentences)} role sentences; "
              f"service on core {SERVICE_CORE} (1 thread), ingest on core {INGEST_CORE}")

        paths = ["raw", "paperchat", "sequential"]
        times: dict[str, list[float]] = defaultdict(list)
        for r in range(args.repeat):
            for p in paths[r % 3:] + paths[: r % 3]:
                print(f"  run {r + 1}/{args.repeat}: {p} ...", end=" ", flush=True)
                if p == "raw":
                    t = time.perf_counter()
                    served.embed_array(texts)
                    s = time.perf_counter() - t
                else:
                    res = run_paperchat(corpus_file, work, served, n, overlap=p == "paperchat")
                    shutil.rmtree(res["home"], ignore_errors=True)
                    s = res["seconds"]
                times[p].append(s)
                print(f"{s:.1f} s ({n / s:.2f} abstracts/s)", flush=True)

        best = {p: min(v) for p, v in times.items()}
        print(f"\n{'path':<14}{'seconds':>10}{'abstracts/s':>14}")
        for p in paths:
            print(f"{p:<14}{best[p]:>10.1f}{n / best[p]:>14.2f}")
        ratios = {"paperchat/raw": best["raw"] / best["paperchat"], "sequential/raw": best["raw"] / best["sequential"]}
        print()
        for k, v in ratios.items():
            goal = f"goal >= 1.0: {'met' if v >= 1.0 else 'NOT met'}" if k == "paperchat/raw" else "no goal: what the overlap buys"
            print(f"{k:<16} {v:5.3f}x   ({goal})")
        C.write_results(args.name, {
            "corpus": args.corpus, "abstracts": n, "chunks": len(chunks), "role_sentences": len(sentences),
            "repeat": args.repeat, "layout": {"service_core": SERVICE_CORE, "service_threads": 1, "ingest_core": INGEST_CORE},
            "seconds": {p: round(s, 2) for p, s in best.items()},
            "seconds_all": {p: [round(x, 2) for x in v] for p, v in times.items()},
            "ratios": {k: round(v, 3) for k, v in ratios.items()}, "goals": {"paperchat/raw": 1.0},
        }, m, started)
    finally:
        if server is not None:
            stop_group(server)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
