"""Can embedded Chroma load a library's collections? Asked without loading them in this process.

Embedded Chroma rewrites its HNSW files in place. A process killed at the wrong moment (`kill -9`, the
OOM killer, a power cut) can leave files that make the next process to load them crash with SIGSEGV
inside Chroma, on any read (count, get, query), where no try/except can catch it. Other torn files
load but answer wrongly, or poison every later flush. So before a process loads files that no check
has passed (rag.library.store.guard), they are read as bytes (rag.library.store.hnswfiles); after a writer
died, the collections are also loaded here, in a child: it counts, reads a few stored vectors and
checks they find themselves (all but one: HNSW is approximate). The parent rebuilds what fails either check.

    python -m rag.library.store.childcheck STORE_DIR COLLECTION [COLLECTION ...]

prints `ok NAME` for each collection that passed, in order; it stops at the first that failed.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

_SAMPLE = 24  # stored vectors sampled: each must find itself, but one
# HNSW search is approximate: in a library written by one uninterrupted ingest, 2 of 11,319 chunks of the
# crash tests' synthetic corpus are not their own nearest hit at ef_search 200 (a sibling chunk is). A torn
# index misses many of 24; a sound one misses two only about once in 100,000 checks.
_MISSES = 1


def vector_dirs(store: Path, collection_ids: list[str] | None = None) -> dict[str, Path]:
    """The HNSW folder of each collection's vector segment (embedded Chroma keeps it at STORE/<segment id>),
    of the given collections or of all. A deleted collection's folder may linger; it is not listed."""
    import sqlite3

    # Not read-only: after a kill, SQLite may have to recover the write-ahead log first.
    con = sqlite3.connect(store / "chroma.sqlite3", timeout=30)
    try:
        rows = con.execute("SELECT collection, id FROM segments WHERE scope = 'VECTOR'").fetchall()
    finally:
        con.close()
    return {cid: store / seg for cid, seg in rows if collection_ids is None or cid in collection_ids}


def failing(store: Path, names: list[str], timeout: float = 600.0) -> list[str]:
    """The collections of `names` that a fresh process cannot load or that do not find their own
    vectors. A crash stops the child: the collection it was on and those after it count as failing."""
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    try:
        p = subprocess.run([sys.executable, "-m", "rag.library.store.childcheck", str(store), *names], capture_output=True,
                           text=True, timeout=timeout, env=env, cwd=Path(__file__).resolve().parents[2])
        out = p.stdout
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    ok = {line[3:] for line in out.splitlines() if line.startswith("ok ")}
    return [n for n in names if n not in ok]


def _check(col) -> bool:
    n = col.count()
    if n == 0:
        return True
    rng = random.Random(n)
    got: dict[str, list[float]] = {}
    for _ in range(4):
        part = col.get(limit=_SAMPLE // 4, offset=rng.randrange(max(1, n - _SAMPLE // 4)), include=["embeddings"])
        got.update(zip(part["ids"], ([float(x) for x in e] for e in part["embeddings"])))
    if not got:
        return False
    res = col.query(query_embeddings=list(got.values()), n_results=1, include=["distances"])
    # A vector's nearest stored vector is itself (or an identical copy): distance ~0.
    return sum(1 for d in res["distances"] if not (d and d[0] < 1e-3)) <= _MISSES


def main(argv: list[str]) -> int:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    from rag.library.locks import store_lock

    store, names = argv[0], argv[1:]
    with store_lock(Path(store).parent):  # loading applies Chroma's log and saves the index: one process at a time
        return _check_all(chromadb.PersistentClient(path=store, settings=ChromaSettings(anonymized_telemetry=False)),
                          names)


def _check_all(client, names: list[str]) -> int:
    for name in names:
        try:
            col = client.get_collection(name)
        except Exception:  # noqa: BLE001 - a collection that does not exist yet cannot be torn
            print(f"ok {name}", flush=True)
            continue
        try:
            good = _check(col)
        except Exception as exc:  # noqa: BLE001
            print(f"failed {name}: {type(exc).__name__}: {exc}", flush=True)
            return 1
        if not good:
            print(f"failed {name}: stored vectors do not find themselves", flush=True)
            return 1
        print(f"ok {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
