"""Memory of `paperchat ingest` as the corpus grows (issue 6, item 1: "memory flat"), embedded store vs
a Chroma server, side by side in one run.

Ingests the first N paperlists abstracts (default 20,000) with the fake embedder, so that the time and
the memory go into the pipeline and the store rather than into the model, and samples the resident
memory (RSS) of the ingest process every second; in server mode also that of the `chroma run` process.
What grows in the embedded run and not in the client of the server run is Chroma's own index.

    .venv/bin/python bench/ingest_memory.py
    .venv/bin/python bench/ingest_memory.py --papers 5000
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

sys.path.insert(0, str(C.ROOT / "tests"))
from procs import stop_group  # noqa: E402


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return None


class Sampler(threading.Thread):
    """RSS of some processes once a second until stopped: [(seconds since start, MB per process)]."""

    def __init__(self, pids: dict[str, int]):
        super().__init__(daemon=True)
        self.pids, self.rows, self.stop = pids, [], threading.Event()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.stop.wait(1.0):
            self.rows.append((time.monotonic() - t0, {k: rss_mb(p) for k, p in self.pids.items()}))


def ingest(corpus: Path, home: Path, url: str | None, server_pid: int | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERCHAT_", "OPENAI_"))}
    env.update(PAPERCHAT_HOME=str(home), PAPERCHAT_EMBEDDER="fake", ANONYMIZED_TELEMETRY="False")
    if url:
        env["PAPERCHAT_CHROMA_URL"] = url
    t = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "ingest", str(corpus)], cwd=C.ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = {"paperchat": proc.pid} | ({"chroma server": server_pid} if server_pid else {})
    s = Sampler(pids)
    s.start()
    out, err = proc.communicate()
    s.stop.set()
    s.join()
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed: {err[-2000:]}")
    return {"seconds": time.monotonic() - t, "samples": s.rows, "report": out.strip()}


def summarise(rows: list, who: str) -> dict:
    """RSS at 10 % of the run (after start-up), at 90 % (before the final index build), and the peak."""
    xs = [(t, m[who]) for t, m in rows if m.get(who)]
    if len(xs) < 3:
        return {}
    at = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))][1]  # noqa: E731
    return {"at_10pct_mb": round(at(0.1)), "at_90pct_mb": round(at(0.9)), "peak_mb": round(max(m for _, m in xs))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=20000)
    args = ap.parse_args()
    if not C.PAPERLISTS.exists():
        raise SystemExit(f"needs {C.PAPERLISTS} (the shared data folder); not found")
    started = time.time()
    m = C.print_header("ingest memory as the corpus grows: embedded store vs Chroma server")
    work = Path(tempfile.mkdtemp(prefix="paperchat-mem-"))
    corpus = C.write_corpus("paperlists", args.papers, work / "part.jsonl")
    print(f"corpus: the first {args.papers} paperlists abstracts, fake embedder; RSS sampled every second")
    runs = {}
    try:
        runs["embedded"] = ingest(corpus, work / "home-embedded", None, None)
        server, url = C.start_chroma_server(work / "server")
        try:
            runs["server"] = ingest(corpus, work / "home-client", url, server.pid)
        finally:
            stop_group(server)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    figures = {"papers": args.papers, "embedder": "fake"}
    print(f"\n{'process':<34}{'at 10 %':>9}{'at 90 %':>9}{'peak':>8}  MB   (ingest seconds)")
    for name, who in (("embedded", "paperchat"), ("server", "paperchat"), ("server", "chroma server")):
        s = summarise(runs[name]["samples"], who)
        label = f"{who} ({name} store)" if who == "paperchat" else "chroma run (the server)"
        print(f"{label:<34}{s['at_10pct_mb']:>9}{s['at_90pct_mb']:>9}{s['peak_mb']:>8}      ({runs[name]['seconds']:.0f} s)")
        figures[f"{name}:{who}"] = s | {"seconds": round(runs[name]["seconds"], 1)}
    e, c = figures["embedded:paperchat"], figures["server:paperchat"]
    per = lambda s: 1024 * (s["at_90pct_mb"] - s["at_10pct_mb"]) / (0.8 * args.papers)  # noqa: E731
    print(f"\ngrowth between 10 % and 90 % of the run: embedded {per(e):.1f} KB per paper, the server's client "
          f"{per(c):.1f} KB per paper (its catalogue); the rest is Chroma's index, in the server process when there is one")
    figures["growth_kb_per_paper"] = {"embedded": round(per(e), 2), "server_client": round(per(c), 2)}
    C.write_results("ingest_memory", figures, m, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
