"""Concurrency: two ingests into one library serialise on its write lock (or the second gives up with one
clear "library ... is busy" line), and searches keep answering while an ingest runs, both from another
process (embedded Chroma opened twice on one path) and in the UI's shape (one process: a writer thread
and reader threads over one Chroma client). Issue 8, item 2.
"""

from __future__ import annotations

import fcntl
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import SEEDS
from test_crash_safety import check_consistent, cli_env, close_library, open_library, start_cli, write_corpus

pytestmark = pytest.mark.slow


def lock_is_held(lock: Path) -> bool:
    """True if another process holds the library's write lock (we take it for an instant if it is free)."""
    if not lock.exists():
        return False
    with open(lock) as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False


def wait_for(cond, timeout: float, what: str, proc=None) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process ended before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.timeout(240)
def test_processes_opening_a_new_store_at_once_all_start(tmp_path):
    """Chroma creates its schema on first open; two processes doing that at once raced ("table collections
    already exists", "database is locked") before paperchat made them take turns."""
    for i in range(4):
        home = tmp_path / f"home{i}"
        procs = [start_cli(["stats", "--json"], cli_env(home)) for _ in range(3)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err[-2000:]
            assert json.loads(out)["papers"] == 0


@pytest.mark.timeout(240)
def test_two_ingests_at_once_serialise_and_both_land(tmp_path):
    """Two different files at once into a fresh library, then the same file twice at once."""
    from rag.settings import Settings

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    vocab = write_corpus(a, 500, seed=1, id_prefix="a")
    vocab |= write_corpus(b, 500, seed=2, id_prefix="b")
    home = tmp_path / "home"
    env = cli_env(home, PAPERCHAT_LOCK_TIMEOUT="180")
    procs = [start_cli(["ingest", "--json", str(f)], env) for f in (a, b)]
    outs = [p.communicate(timeout=200) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    reports = [json.loads(out) for out, _ in outs]
    assert [r["added"] for r in reports] == [500, 500]
    assert sorted(r["papers"] for r in reports) == [500, 1000]  # the second to get the lock saw the first's papers

    settings = Settings(home=home, embedder="fake")
    lib = open_library(settings)
    try:
        assert check_consistent(lib, vocab, random.Random(1), exact_store=True)["papers"] == 1000
    finally:
        close_library(lib)

    # The same file twice at once: one adds, the other finds everything already there.
    c = tmp_path / "c.jsonl"
    vocab |= write_corpus(c, 400, seed=3, id_prefix="c")
    procs = [start_cli(["ingest", "--json", str(c)], env) for _ in range(2)]
    outs = [p.communicate(timeout=200) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    reports = sorted((json.loads(out) for out, _ in outs), key=lambda r: -r["added"])
    assert [(r["added"], r["unchanged"], r["papers"]) for r in reports] == [(400, 0, 1400), (0, 400, 1400)]
    lib = open_library(settings)
    try:
        assert check_consistent(lib, vocab, random.Random(2), exact_store=True)["papers"] == 1400
    finally:
        close_library(lib)


@pytest.mark.timeout(240)
def test_second_ingest_gives_up_with_a_clear_library_busy_line(tmp_path):
    from rag.settings import Settings

    big, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    vocab = write_corpus(big, 1500, seed=4, id_prefix="big")
    write_corpus(small, 50, seed=5, id_prefix="small")
    home = tmp_path / "home"
    first = start_cli(["ingest", str(big)], cli_env(home))
    wait_for(lambda: lock_is_held(home / "libraries" / "default" / "write.lock"), 90, "the first ingest to take the lock",
             first)
    t0 = time.monotonic()
    second = start_cli(["ingest", str(small)], cli_env(home, PAPERCHAT_LOCK_TIMEOUT="1"))
    out, err = second.communicate(timeout=120)
    waited = time.monotonic() - t0
    assert second.returncode == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("paperchat: library 'default' is busy"), err
    assert "try again" in lines[0]
    assert first.poll() is None, "the first ingest should still be running (make its corpus larger)"

    out, err = first.communicate(timeout=200)
    assert first.returncode == 0, err
    assert "added 1500" in out
    lib = open_library(Settings(home=home, embedder="fake"))
    try:
        counts = check_consistent(lib, vocab, random.Random(3), exact_store=True)
        assert counts["papers"] == 1500 and not any(pid.startswith("small") for pid in lib.catalogue)
    finally:
        close_library(lib)
    print(f"\nbusy line after {waited:.1f} s: {lines[0]}")


READER = r"""
import json, sys, time
from pathlib import Path
from rag.settings import Settings
from rag.library.library import Library
from rag.library.retrieval import Filters, search

home, stop, queries, after = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4])
lib = Library(Settings(home=home, embedder="fake"))
stats = {"searches": 0, "errors": [], "empty": 0, "foreign": 0, "sizes": [], "latencies": []}
end = None
i = 0
while end is None or time.monotonic() < end:
    if end is None and stop.exists():
        end = time.monotonic() + 1.0  # a few more searches after the writer has finished
    q = queries[i % len(queries)]
    i += 1
    t = time.perf_counter()
    try:
        # Every other search filtered: the filtered path is the one a stale embedded view breaks.
        f = [None, Filters(year_from=2021), Filters(venue="ICML")][i % 3]
        hits = search(lib, q, k=5, filters=f)
        stats["foreign"] += sum(h.paper.paper_id not in lib.catalogue for h in hits)
        stats["empty"] += not hits
        stats["sizes"].append(len(lib.catalogue))
    except Exception as exc:
        stats["errors"].append(repr(exc)[:300])
    stats["latencies"].append(time.perf_counter() - t)
    stats["searches"] += 1
    time.sleep(0.05)
# After the ingest: this long-open reader finds the new papers, by their words and by their vectors.
stats["after"] = [[(h.paper.paper_id, h.dense) for h in search(lib, q, k=1)][0] for q in after]
stats["after_filtered"] = [search(lib, q, k=1, filters=Filters(venue="SYN"))[0].paper.paper_id for q in after]
print(json.dumps(stats))
"""

SEED_QUERIES = ["manifold constrained hyper connections", "diffusion language model", "reinforcement learning reward",
                "attention sparse long context", "graph neural network"]


def _seed_library(home: Path) -> None:
    proc = start_cli(["ingest", str(SEEDS)], cli_env(home))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


@pytest.mark.timeout(240)
def test_searches_in_another_process_keep_answering_during_an_ingest(tmp_path):
    """Embedded Chroma: a second, long-open process reading the same PersistentClient path while the first
    writes. Chroma keeps a per-process vector index that never re-reads another process's writes
    (chroma-core/chroma#3792): without the library's catch-up, the reader's filtered searches fail with
    "Error finding id" and its dense side never sees the new papers."""
    home = tmp_path / "home"
    _seed_library(home)
    corpus = tmp_path / "corpus.jsonl"
    vocab = write_corpus(corpus, 1500, seed=6)
    probes = ["syn-00007", "syn-00777", "syn-01499"]
    env = cli_env(home)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(home), str(tmp_path / "stop"), json.dumps(SEED_QUERIES),
         json.dumps([" ".join(vocab[p][2:6]) for p in probes])], cwd=str(Path(__file__).parent.parent),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)  # let the reader open the library and answer a few before the writer starts
    writer = start_cli(["ingest", str(corpus)], env)
    w_out, w_err = writer.communicate(timeout=200)
    (tmp_path / "stop").touch()
    r_out, r_err = reader.communicate(timeout=200)
    assert writer.returncode == 0, w_err
    assert reader.returncode == 0, r_err
    stats = json.loads(r_out)
    lat = sorted(stats["latencies"])
    print(f"\nreader: {stats['searches']} searches, catalogue sizes seen {sorted(set(stats['sizes']))}, "
          f"p50 {lat[len(lat) // 2] * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms; writer: {w_out.strip()}")
    assert not stats["errors"], stats["errors"][:3]
    assert stats["searches"] >= 5 and stats["empty"] == 0 and stats["foreign"] == 0
    # The reader notices the finished ingest without being reopened.
    assert stats["sizes"][-1] == 1576 and "added 1500" in w_out
    # ...and finds the new papers on the dense side too (embedded Chroma needs the view reloaded for that).
    assert [pid for pid, _ in stats["after"]] == probes and all(d > 0 for _, d in stats["after"]), stats["after"]
    assert stats["after_filtered"] == probes


@pytest.mark.timeout(240)
def test_ui_shape_ingest_thread_while_reader_threads_search(tmp_path):
    """One process, as the UI runs it: a writer Library sharing the reader's Chroma client ingests in a
    thread; two threads search through the reader Library meanwhile."""
    from rag.library.library import Library
    from rag.library.retrieval import search
    from rag.settings import Settings

    settings = Settings(home=tmp_path / "home", embedder="fake")
    reader = Library(settings)
    reader.ingest([SEEDS], progress=False)
    corpus = tmp_path / "corpus.jsonl"
    vocab = write_corpus(corpus, 3000, seed=8)
    writer = Library(settings, embedder=reader.embedder, client=reader.client)

    done = threading.Event()
    result: dict = {}

    def ingest() -> None:
        try:
            result["report"] = writer.ingest([corpus], progress=False)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            result["error"] = exc
        finally:
            done.set()

    errors: list[str] = []
    counts = {"searches": 0, "empty": 0, "foreign": 0}
    lock = threading.Lock()

    def searching(seed: int) -> None:
        rng = random.Random(seed)
        while not done.is_set():
            q = rng.choice(SEED_QUERIES)
            try:
                hits = search(reader, q, k=5)
                with lock:
                    counts["searches"] += 1
                    counts["empty"] += not hits
                    counts["foreign"] += sum(h.paper.paper_id not in reader.catalogue for h in hits)
            except Exception as exc:  # noqa: BLE001
                errors.append(repr(exc)[:300])
            time.sleep(0.02)

    threads = [threading.Thread(target=ingest)] + [threading.Thread(target=searching, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=200)
    assert "error" not in result, result.get("error")
    assert result["report"].added == 3000
    assert not errors, errors[:3]
    # Enough searches overlapped the ingest to mean something (how many depends on the machine's speed).
    assert counts["searches"] >= 5 and counts["empty"] == 0 and counts["foreign"] == 0, counts
    assert len(reader) == 3076  # the reader sees the finished ingest
    seeds = {pid: [] for pid in reader.catalogue if pid not in vocab}
    check_consistent(reader, vocab | seeds, random.Random(4), exact_store=True)
    print(f"\n{counts['searches']} searches during the ingest, none failed")


def test_the_warm_up_thread_imports_none_of_paperchat_while_the_command_does(tmp_path):
    """A cold `search` loads the ONNX model on a thread while it imports the library. The thread used to
    import rag.embedders itself, racing the command's own import of it: about one cold `search` in 30
    died with "cannot import name 'MINILM_ID' from partially initialized module" (a CI run met it). The
    thread may load the model; every paperchat module it needs is imported before it starts."""
    script = r"""
import argparse, sys, threading
from rag.cli.common import warm_embedder
warm_embedder(argparse.Namespace(cmd="search", library=None))
before = {m for m in sys.modules if m == "rag" or m.startswith("rag.")}
for t in threading.enumerate():
    if t.name == "paperchat-warm-embedder":
        t.join()
after = {m for m in sys.modules if m == "rag" or m.startswith("rag.")}
print(sorted(after - before))
"""
    env = {**cli_env(tmp_path / "home"), "PAPERCHAT_EMBEDDER": "minilm"}
    p = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "[]", f"the warm-up thread imported {p.stdout.strip()} beside the command"
