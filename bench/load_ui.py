"""Load on the UI (issue 8, item 6): N concurrent gradio_client sessions ask the seed questions in
extractive mode; under load every one must be answered with the papers one session alone gets for the same
question (none mixed up with another session's, none dropped). Prints p50/p95 latency under load next to one
session alone, measured in one run, and how many of the solo answers cite their question's paper (the bar of
tests/test_ask_seeds.py, 0.85: that is answer quality, which load must not change, not a load failure).

    .venv/bin/python bench/load_ui.py                     # 20 sessions x 3 questions, real MiniLM embedder
    .venv/bin/python bench/load_ui.py --sessions 40 --rounds 5
    .venv/bin/python bench/load_ui.py --url http://127.0.0.1:7860   # an already running `paperchat serve`

Without --url it starts `paperchat serve --seed` on a free loopback port with a fresh PAPERCHAT_HOME
(the seeds indexed on first start), and stops it at the end. Exit status 1 if any question under load failed
or cited other papers than alone, or if fewer solo answers cite their question's paper than the tests require.
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
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

sys.path.insert(0, str(C.ROOT / "tests"))
from procs import free_port, stop_group  # noqa: E402
from seed_questions import QUESTIONS  # noqa: E402


def start_server(home: Path, embedder: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERCHAT_", "OPENAI_"))}
    env.update(PAPERCHAT_HOME=str(home), PAPERCHAT_EMBEDDER=embedder, PAPERCHAT_LLM="extractive",
               ANONYMIZED_TELEMETRY="False", GRADIO_ANALYTICS_ENABLED="False")
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "serve", "--seed", "--port", str(port)], cwd=C.ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"paperchat serve exited: {proc.stdout.read()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/config", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    raise SystemExit("paperchat serve did not come up in 300 s")


def stop_server(proc: subprocess.Popen) -> None:
    stop_group(proc, timeout=15)


SOLO_BAR = 0.85  # tests/test_ask_seeds.py: the share of seed questions whose answer cites their paper


def cited(out: dict) -> list[tuple[str, int]]:
    return [(c["source"], c["position"]) for c in out.get("citations") or []]


def ask_one(client, question: str, want: tuple[str, int] | list[tuple[str, int]],
            answers: dict | None = None) -> tuple[float, str | None]:
    """(seconds, None if answered as wanted, else what went wrong). want: the (file prefix, position) of the
    question's paper, which the answer must cite; or the exact citations one session alone got for it.
    answers, when given, keeps the answer's citations by question."""
    t = time.perf_counter()
    try:
        out = client.predict(question, "ask", api_name="/query")
    except Exception as exc:  # noqa: BLE001 - counted as a failure
        return time.perf_counter() - t, f"error: {exc!r}"[:300]
    dt = time.perf_counter() - t
    if out.get("question") not in (None, question):
        return dt, f"answer to another question: {out.get('question')!r}"
    cites = out.get("citations") or []
    if out.get("abstained") or not cites:
        return dt, "abstained / no citation"
    if answers is not None:
        answers[question] = cited(out)
    if isinstance(want, list):
        if cited(out) != want:
            return dt, f"cites {[(s[:3], p) for s, p in cited(out)]}, alone {[(s[:3], p) for s, p in want]}"
        return dt, None
    prefix, position = want
    if not any(c["source"].startswith(prefix) and c["position"] == position for c in cites):
        return dt, f"cites {[(c['source'][:3], c['position']) for c in cites]}, wanted {want}"
    return dt, None


def run_sessions(url: str, sessions: int, rounds: int, alone: dict) -> tuple[list[float], list[str], float]:
    from gradio_client import Client

    clients = [Client(url, verbose=False) for _ in range(sessions)]  # one session each
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(sessions)

    def session(i: int) -> None:
        start.wait()
        for r in range(rounds):
            q, prefix, pos = QUESTIONS[(i + r * 7) % len(QUESTIONS)]
            dt, err = ask_one(clients[i], q, alone.get(q) or (prefix, pos))
            with lock:
                lat.append(dt)
                if err:
                    errors.append(f"session {i} round {r}: {err}")

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for c in clients:
        close = getattr(c, "close", None)
        if close:
            close()
    return lat, errors, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="questions per session")
    ap.add_argument("--url", help="an already running paperchat UI (default: start one)")
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "fake"])
    args = ap.parse_args()
    started = time.time()
    m = C.print_header(f"UI load: {args.sessions} concurrent gradio_client sessions, extractive mode")

    proc = home = None
    url = args.url
    if url is None:
        home = Path(tempfile.mkdtemp(prefix="paperchat-load-"))
        t = time.perf_counter()
        proc, url = start_server(home, args.embedder)
        print(f"started paperchat serve --seed at {url} in {time.perf_counter() - t:.1f} s")
    try:
        from gradio_client import Client

        # One session alone first (after a warm-up question), the same questions: the baseline.
        solo = Client(url, verbose=False)
        ask_one(solo, QUESTIONS[0][0], QUESTIONS[0][1:])
        solo_lat, solo_err, alone = [], [], {}
        for q, prefix, pos in QUESTIONS:
            dt, err = ask_one(solo, q, (prefix, pos), alone)
            solo_lat.append(dt)
            if err:
                solo_err.append(f"{q[:60]}: {err}")
        lat, errors, wall = run_sessions(url, args.sessions, args.rounds, alone)
    finally:
        if proc is not None:
            stop_server(proc)
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)

    n = args.sessions * args.rounds
    figures = {
        "sessions": args.sessions, "rounds": args.rounds, "requests": n, "embedder": args.embedder,
        "answered_as_alone": n - len(errors), "failures": errors[:20],
        "solo": {"requests": len(solo_lat), "p50_ms": round(C.pct(solo_lat, 50) * 1000),
                 "p95_ms": round(C.pct(solo_lat, 95) * 1000), "cite_their_paper": len(solo_lat) - len(solo_err),
                 "failures": solo_err},
        "concurrent": {"p50_ms": round(C.pct(lat, 50) * 1000), "p95_ms": round(C.pct(lat, 95) * 1000),
                       "max_ms": round(max(lat) * 1000), "wall_s": round(wall, 1),
                       "questions_per_s": round(n / wall, 2)},
    }
    figures["p50_ratio_concurrent_vs_solo"] = round(figures["concurrent"]["p50_ms"] / max(1, figures["solo"]["p50_ms"]), 1)
    print(f"one session alone:  {len(solo_lat)} questions, p50 {figures['solo']['p50_ms']} ms, "
          f"p95 {figures['solo']['p95_ms']} ms; {len(solo_lat) - len(solo_err)} cite their question's paper "
          f"(tests/test_ask_seeds.py requires {SOLO_BAR:.0%})")
    for e in solo_err:
        print("  " + e)
    print(f"{args.sessions} sessions at once: {n} questions in {wall:.1f} s ({n / wall:.2f}/s), "
          f"p50 {figures['concurrent']['p50_ms']} ms, p95 {figures['concurrent']['p95_ms']} ms, "
          f"max {figures['concurrent']['max_ms']} ms ({figures['p50_ratio_concurrent_vs_solo']}x the solo p50)")
    print(f"answered under load with the papers one session alone got: {n - len(errors)} of {n}")
    for e in errors[:10]:
        print("  " + e)
    C.write_results("load_ui", figures, m, started)
    return 1 if errors or len(solo_lat) - len(solo_err) < SOLO_BAR * len(solo_lat) else 0


if __name__ == "__main__":
    sys.exit(main())
