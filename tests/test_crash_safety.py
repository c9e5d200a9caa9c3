"""Crash safety: `kill -9` an ingest at random moments; the library must always open, answer and agree
with itself (catalogue, vectors, lexical index), and a final run must finish it with nothing lost or
duplicated (issue 8, item 1; issue 6, item 1 "resumable").

The kill loop runs `python -m rag.cli ingest` as a real subprocess with the fake embedder, so the
time goes into the write path (Chroma, the catalogue, the caches) rather than into a model.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag.library.collections import chunk_text

ROOT = Path(__file__).resolve().parent.parent

N_PAPERS = 3000
KILLS = 20
SEED = 20260401
MAX_DELAY = 6.0  # seconds; a full ingest of N_PAPERS took 5-20 s on 2 cores (startup ~2-4 s of it)
GROW = 1000  # papers appended to the file whenever the kills have let an ingest finish it

_SYLL = ["ka", "lo", "mi", "ne", "tu", "ra", "ve", "so", "di", "pa", "gu", "fe", "zo", "bi", "cha", "th", "or",
         "an", "el", "ix", "qu", "wy", "jo", "ha"]


def write_corpus(path: Path, n: int, seed: int = 7, id_prefix: str = "syn", edit: int = 0,
                 start: int = 0) -> dict[str, list[str]]:
    """Papers `start`..`n`-1 of a synthetic corpus, each with its own made-up vocabulary (so a search for a
    paper's words finds it); `start` > 0 appends to the file. Paper i is the same whatever `start`.
    Returns {paper_id: its vocabulary}. `edit` > 0 gives every abstract one more sentence (an edited
    version of the same papers, same ids)."""
    vocab_of: dict[str, list[str]] = {}
    with open(path, "a" if start else "w", encoding="utf-8") as f:
        for i in range(start, n):
            rng = random.Random(f"{seed}-{id_prefix}-{i}")

            def word() -> str:
                return "".join(rng.choice(_SYLL) for _ in range(rng.randint(3, 4)))

            pid = f"{id_prefix}-{i:05d}"
            vocab = [word() for _ in range(12)]
            vocab_of[pid] = vocab
            common = ["the", "model", "we", "propose", "method", "results", "data", "show"]
            sents = [" ".join(rng.choice(vocab + common) for _ in range(rng.randint(10, 25))).capitalize() + "."
                     for _ in range(rng.randint(4, 9))]
            if edit:
                sents.append(f"Revision {edit} adds {vocab[0]} {vocab[1]} experiments.")
            f.write(json.dumps({"id": pid, "title": f"Paper {i} on {vocab[0]} {vocab[1]}", "abstract": " ".join(sents),
                                "venue": "SYN", "year": 2020 + i % 5, "x_vocab": vocab}) + "\n")
    return vocab_of


def corpus_vocab(path: Path) -> dict[str, list[str]]:
    """{paper_id: vocabulary} of a corpus written by write_corpus."""
    with open(path, encoding="utf-8") as f:
        return {r["id"]: r["x_vocab"] for r in map(json.loads, f)}


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERCHAT_") and k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(PAPERCHAT_HOME=str(home), PAPERCHAT_EMBEDDER="fake", ANONYMIZED_TELEMETRY="False",
               PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""))
    env.update(extra)
    return env


def start_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rag.cli", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def hard_kill(proc: subprocess.Popen) -> bool:
    """SIGKILL the process (and its group) if it is still running; True if it was killed."""
    if proc.poll() is not None:
        proc.communicate()
        return False
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    return True


CHECK = r"""
import json, random, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_crash_safety import check_consistent, corpus_vocab
from rag.library.library import Library
from rag.settings import Settings
lib = Library(Settings(home=Path(sys.argv[1]), embedder="fake"))
counts = check_consistent(lib, corpus_vocab(Path(sys.argv[3])), random.Random(int(sys.argv[4])))
print(json.dumps(counts))
"""

def check_in_child(home: Path, corpus: Path, seed: int) -> dict:
    """check_consistent in a separate process, as a fresh reader would open the library: a crash inside
    Chroma must not take the test process with it. Adds `repaired`: that reader rebuilt a collection."""
    counts, err = read_in_child(home, corpus, seed)
    return {**counts, "repaired": "rebuilding the chunk vector" in err}


def read_in_child(home: Path, corpus: Path, seed: int, what: str = "") -> tuple[dict, str]:
    """check_consistent in a fresh process: its counts and what it logged (stderr)."""
    p = subprocess.run([sys.executable, "-c", CHECK, str(home), str(Path(__file__).parent), str(corpus), str(seed)],
                       cwd=ROOT, env=cli_env(home), capture_output=True, text=True, timeout=300)
    if p.returncode < 0:
        pytest.fail(f"a fresh reader crashed (signal {-p.returncode}) {what}:\n{p.stderr[-3000:]}")
    assert p.returncode == 0, f"a fresh reader failed (exit {p.returncode}) {what}:\n{p.stderr[-3000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[str, str]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return out, err


def open_library(settings):
    """A fresh in-process view of the library (no Chroma client cached from an earlier look)."""
    from rag.library.library import Library

    return Library(settings)


def close_library(lib) -> None:
    close = getattr(lib.client, "close", None)
    if close is not None:
        close()


def check_consistent(lib, vocab_of: dict[str, list[str]], rng: random.Random, exact_store: bool = False) -> dict:
    """What a reader sees agrees with itself. Returns a few counts for the test's log.

    - the catalogue (paper records) holds only known ids;
    - every catalogue paper has all its `n_chunks` chunks in Chroma, and is in the lexical index (by its
      chunks or as a whole paper);
    - the lexical index holds nothing else (orphan chunks of a crashed write are invisible);
    - searches answer, and every hit is a catalogue paper; the dense side finds stored chunks;
    - with `exact_store`, Chroma holds no orphan chunk either (after a completed ingest).
    Counts include `damaged`: the vector index could not be loaded and the first search rebuilt it.
    """
    from rag.library.retrieval import search

    lib.refresh()
    cat = dict(lib.catalogue)
    assert set(cat) <= set(vocab_of), "catalogue holds ids that were never ingested"
    want = {f"{pid}#{i}" for pid, m in cat.items() for i in range(int(m["n_chunks"]))}
    want_l = sorted(want)
    assert all(int(m["n_chunks"]) >= 1 for m in cat.values())
    # Embedded Chroma can be left unable to load its vector index by a kill at the wrong moment (it
    # writes its HNSW files in place); the first reader rebuilds it from the paper records.
    damaged = not lib.store.readable()

    # Searches answer, with catalogue papers only; a paper's own words find it. (First, as a reader would.)
    if cat:
        known = sorted(pid for pid in cat if vocab_of.get(pid))
        for pid in rng.sample(known, min(3, len(known))):
            q = " ".join(vocab_of[pid][2:6])
            hits = search(lib, q, k=5)
            assert hits, f"no hit for a query on {pid}"
            assert all(h.paper.paper_id in cat for h in hits)
            assert pid in [h.paper.paper_id for h in hits], f"{pid} not found by its own words"
    # A query on a paper that is not (yet) in the catalogue returns only catalogue papers.
    absent = sorted(pid for pid in set(vocab_of) - set(cat) if vocab_of[pid])
    if absent:
        pid = rng.choice(absent)
        hits = search(lib, " ".join(vocab_of[pid][2:6]), k=5)
        assert all(h.paper.paper_id in cat for h in hits), "a paper without a catalogue record reached a reader"
    assert lib.catalogue == cat
    if damaged and not cat:
        return {"papers": 0, "chunks": 0, "stored": None, "damaged": True}  # the next ingest rebuilds it
    assert lib.store.readable()

    present: set[str] = set()
    for s in range(0, len(want_l), 5000):
        present |= set(lib.collections.chunks.get(ids=want_l[s:s + 5000], include=[])["ids"])
    assert present == want, f"{len(want - present)} catalogue chunks missing from Chroma"

    # The lexical index holds chunks (pid#n) or whole papers (pid), depending on how retrieval is tuned;
    # either way exactly those of the catalogue.
    lex = lib.lexical.ids
    assert len(lex) == len(set(lex)), "duplicate ids in the lexical index"
    per_chunk = bool(lex) and all(re.fullmatch(r".+#\d+", x) for x in lex)
    expect = want if per_chunk else set(cat)
    assert set(lex) == expect, (f"lexical index disagrees with the catalogue: {len(expect - set(lex))} missing, "
                                f"{len(set(lex) - expect)} extra")

    stored = lib.collections.chunks.count()
    if exact_store:
        assert stored == len(want), f"{stored - len(want)} orphan chunks left in Chroma after a completed ingest"

    if want_l:
        # The vector index (not just the metadata store) holds catalogue chunks: each finds itself, all but one
        # of 20. HNSW search is approximate: in a library one uninterrupted ingest wrote, 2 of 11,319 chunks of
        # this corpus have a sibling chunk as their nearest hit (a CI run failed on one, "syn-00286#1").
        sample = rng.sample(want_l, min(20, len(want_l)))
        got = lib.collections.chunks.get(ids=sample, include=["embeddings"])
        assert sorted(got["ids"]) == sorted(sample), "catalogue chunks without a vector"
        res = lib.collections.chunks.query(query_embeddings=[list(map(float, e)) for e in got["embeddings"]], n_results=1,
                                include=[])
        misses = [(cid, top[0] if top else None) for cid, top in zip(got["ids"], res["ids"]) if not top or top[0] != cid]
        assert len(misses) <= 1, f"dense index does not find stored chunks (chunk, its nearest hit): {misses}"
    return {"papers": len(cat), "chunks": len(want), "stored": stored, "damaged": damaged}


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_kill_9_at_random_moments_never_leaves_an_inconsistent_library(tmp_path):
    from rag.settings import Settings

    corpus = tmp_path / "corpus.jsonl"
    n = N_PAPERS
    vocab_of = write_corpus(corpus, n)
    home = tmp_path / "home"
    env = cli_env(home)
    settings = Settings(home=home, embedder="fake")
    rng = random.Random(SEED)
    log = []
    t_start = time.monotonic()
    for i in range(KILLS):
        delay = rng.uniform(0.3, MAX_DELAY)
        proc = start_cli(["ingest", str(corpus)], env)
        time.sleep(delay)
        killed = hard_kill(proc)
        if not killed:
            assert proc.returncode == 0, proc.stderr
        counts = check_in_child(home, corpus, rng.randrange(1 << 30))
        log.append((i, round(delay, 2), killed, counts))
        if counts["papers"] == n:
            # On a fast machine the file may be done before the kills are: the file grows, so that every
            # run has something to write (an ingest of a grown file adds the new records).
            vocab_of |= write_corpus(corpus, n + GROW, start=n)
            n += GROW
    print("\nkill loop (i, delay s, killed, counts):")
    for row in log:
        print("  ", row)
    assert sum(1 for r in log if r[2]) >= KILLS * 3 // 4, "most runs finished before the kill"

    # The final run finishes the job: every paper exactly once, no stale or orphan chunk.
    t0 = time.monotonic()
    proc = start_cli(["ingest", "--json", str(corpus)], env)
    out, err = finish(proc)
    report = json.loads(out)
    assert report["papers"] == n
    assert report["added"] + report["unchanged"] == n and report["updated"] == 0, report
    print(f"final run: {report} in {time.monotonic() - t0:.1f} s; whole test {time.monotonic() - t_start:.1f} s")

    check_in_child(home, corpus, 1)
    lib = open_library(settings)
    try:
        counts = check_consistent(lib, vocab_of, rng, exact_store=True)
        assert counts["papers"] == n
        assert sorted(lib.catalogue) == sorted(vocab_of)
        assert counts["stored"] == sum(int(m["n_chunks"]) for m in lib.catalogue.values())
        assert len(lib.papers()) == n
    finally:
        close_library(lib)

    # And a re-run adds nothing.
    proc = start_cli(["ingest", "--json", str(corpus)], env)
    out, err = finish(proc)
    again = json.loads(out)
    assert (again["added"], again["updated"], again["unchanged"], again["papers"]) == (0, 0, n, n)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_kill_9_while_replacing_edited_abstracts(tmp_path):
    """Kills during an ingest that *replaces* papers (an edited file): old and new chunks are deleted and
    written before the record moves on. A reader must still see each paper whole."""
    from rag.settings import Settings

    n = 1000
    v1 = tmp_path / "v1"
    v2 = tmp_path / "v2"
    v1.mkdir()
    v2.mkdir()
    vocab_of = write_corpus(v1 / "corpus.jsonl", n)
    write_corpus(v2 / "corpus.jsonl", n, edit=1)  # same ids, same vocabularies, one sentence more
    home = tmp_path / "home"
    env = cli_env(home)
    settings = Settings(home=home, embedder="fake")
    # The file is edited in place (one path, one source): v1 and v2 are copied over it in turn. (Two files
    # at different paths that both still exist are two sources and never replace each other's records.)
    live = tmp_path / "live" / "corpus.jsonl"
    live.parent.mkdir()
    shutil.copyfile(v1 / "corpus.jsonl", live)
    proc = start_cli(["ingest", str(live)], env)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err

    rng = random.Random(SEED + 1)
    killed_runs = 0
    for i in range(8):
        # Back and forth between the versions, so that every run has papers to replace.
        shutil.copyfile((v2 if i % 2 == 0 else v1) / "corpus.jsonl", live)
        proc = start_cli(["ingest", str(live)], env)
        time.sleep(rng.uniform(0.5, 5.0))
        killed = hard_kill(proc)
        killed_runs += killed
        if not killed:
            assert proc.returncode == 0, proc.stderr
        check_in_child(home, v1 / "corpus.jsonl", rng.randrange(1 << 30))
        lib = open_library(settings)
        try:
            lib.refresh()
            # Each paper's chunks are those of the version its record describes.
            sample = rng.sample(sorted(lib.catalogue), min(300, len(lib.catalogue)))
            got = lib.collections.chunks.get(where={"paper_id": {"$in": sample}}, include=["documents", "metadatas"])
            texts: dict[str, list[str]] = {}
            for cid, doc, m in zip(got["ids"], got["documents"], got["metadatas"]):
                texts.setdefault(m["paper_id"], []).append(chunk_text(doc, m))
            for pid, docs in texts.items():
                full = " ".join(docs)
                edited = "Revision 1 adds" in full
                record = lib.get_papers([pid])[pid]
                assert ("Revision 1 adds" in record.abstract) == edited, f"{pid}: record and chunks from different versions"
        finally:
            close_library(lib)
    shutil.copyfile(v2 / "corpus.jsonl", live)
    proc = start_cli(["ingest", "--json", str(live)], env)
    finish(proc)
    check_in_child(home, v1 / "corpus.jsonl", 2)
    lib = open_library(settings)
    try:
        check_consistent(lib, vocab_of, rng, exact_store=True)
        papers = lib.get_papers(sorted(lib.catalogue))
        assert len(papers) == n and all("Revision 1 adds" in p.abstract for p in papers.values())
    finally:
        close_library(lib)
    print(f"\nedit kill loop: {killed_runs} of 8 runs killed")
    assert killed_runs >= 4


def _vector_segment_dir(home: Path, collection_id: str) -> Path | None:
    """Embedded Chroma's HNSW folder for a collection (its layout: chroma/<vector segment id>/)."""
    import sqlite3

    db = home / "chroma" / "chroma.sqlite3"
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT id FROM segments WHERE collection = ? AND scope = 'VECTOR'",
                          (collection_id,)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return home / "chroma" / row[0] if row else None


def _collection_id(home: Path, name: str) -> str:
    import sqlite3

    con = sqlite3.connect(home / "chroma" / "chroma.sqlite3")  # (not read-only: a killed writer's log may need recovery)
    try:
        return con.execute("SELECT id FROM collections WHERE name = ?", (name,)).fetchone()[0]
    finally:
        con.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("what", ["chunks", "papers", "killed-rebuild"])
def test_a_collection_chroma_cannot_load_is_rebuilt(tmp_path, what):
    """What `kill -9` at the wrong moment did in the kill loop (about one kill in 40 on 2 cores): embedded
    Chroma had written its HNSW files in place and could not load them again ("Error deserializing
    pickle file", "Failed to apply logs to the hnsw segment writer"), on every read, for good. Here the
    damage is made on purpose, to the chunk collection or to the paper records' collection; the first
    reader (or ingest) rebuilds it and answers: records from Chroma's SQLite file, chunks from records."""
    from rag.settings import Settings

    n = 1100  # Chroma first saves an HNSW index at 1000 entries: the papers collection needs that many
    corpus = tmp_path / "corpus.jsonl"
    vocab = write_corpus(corpus, n, seed=41)
    settings = Settings(home=tmp_path / "home", embedder="fake")

    def damage() -> None:
        lib = open_library(settings)
        if what == "killed-rebuild":  # a rebuild of the chunks killed half-way: its stamp, half the chunks
            lib.records.set_generation("dirty-rebuild-killed")
            ids = lib.collections.chunks.get(include=[])["ids"]
            lib.collections.chunks.delete(ids=ids[: len(ids) // 2])
            close_library(lib)
            return
        seg = _vector_segment_dir(settings.home, str((lib.collections.chunks if what == "chunks" else lib.collections.papers).id))
        close_library(lib)
        if seg is None or not (seg / "index_metadata.pickle").exists():
            pytest.skip("this chromadb version lays out its vector index differently")
        meta = seg / "index_metadata.pickle"
        meta.write_bytes(meta.read_bytes()[: meta.stat().st_size // 2])  # a torn write

    for how in ("search", "ingest"):
        proc = start_cli(["ingest", str(corpus)], cli_env(settings.home))
        _, err = proc.communicate(timeout=200)
        assert proc.returncode == 0, err
        damage()
        if how == "search":
            proc = start_cli(["search", " ".join(vocab["syn-00123"][2:6]), "--json"], cli_env(settings.home))
            out, err = proc.communicate(timeout=200)
            assert proc.returncode == 0, err
            assert json.loads(out)[0]["paper_id"] == "syn-00123"
        else:
            proc = start_cli(["ingest", "--json", str(corpus)], cli_env(settings.home))
            out, err = proc.communicate(timeout=200)
            assert proc.returncode == 0, err
            assert json.loads(out)["unchanged"] == n
        assert f"rebuilding the chunk vector index from the {n} paper records" in err, err
        if what == "papers":
            assert f"restoring {n} of them" in err, err
        lib = open_library(settings)
        try:
            counts = check_consistent(lib, vocab, random.Random(9), exact_store=True)
            assert counts["papers"] == n and not counts["damaged"]
            assert len(lib.get_papers(sorted(lib.catalogue))) == n
        finally:
            close_library(lib)


# Ways to tear a saved HNSW index; with this chromadb, loading the result crashes the process (SIGSEGV)
# for most of them, depending on what the index held when its writer died. Found by tearing each file of
# saved indexes in several ways.
TEARS = {
    "header-half": ("header.bin", lambda b: b[: len(b) // 2]),
    "links-zeroed": ("link_lists.bin", lambda b: b[: len(b) // 3] + b"\0" * (len(b) // 3) + b[2 * len(b) // 3:]),
    "data-garbage": ("data_level0.bin", lambda b: bytes((i * 7 + 13) % 256 for i in range(len(b)))),
    "data-ones": ("data_level0.bin", lambda b: b"\xff" * len(b)),
    "header-empty": ("header.bin", lambda b: b""),
}


def tear_until_it_crashes(store: Path, name: str, seg: Path) -> str:
    """Tear the collection's index so that an unguarded process loading it crashes (or, failing that,
    errors). Returns what was done, e.g. "header-half: crash (signal 11)"."""
    erring = None
    for tear, (fname, how) in TEARS.items():
        f = seg / fname
        if not f.exists():
            continue
        original = f.read_bytes()
        f.write_bytes(how(original))
        p = subprocess.run([sys.executable, "-m", "rag.library.store.childcheck", str(store), name], cwd=ROOT, capture_output=True,
                           text=True, timeout=300, env=cli_env(store.parent))
        if p.returncode < 0:
            return f"{tear}: crash (signal {-p.returncode})"
        if p.returncode > 0 and erring is None:
            erring = tear
        f.write_bytes(original)
    if erring is None:
        pytest.skip("no tear made this chromadb fail to load the index")
    fname, how = TEARS[erring]
    (seg / fname).write_bytes(how((seg / fname).read_bytes()))
    return f"{erring}: error"


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("collection", ["chunks", "papers"])
def test_files_a_killed_writer_tore_do_not_crash_the_next_reader_or_writer(tmp_path, collection):
    """An ingest is killed; its HNSW files are left torn so that loading them crashes Chroma (and with
    it the process). The next reader and the next ingest must not crash: the writer's marker tells them
    to load the store in a child process first, and what the child cannot load is rebuilt."""
    from rag.settings import Settings
    from rag.library.store.childcheck import failing

    n = 1100  # Chroma first saves an HNSW index at 1000 entries: the papers collection needs that many
    corpus = tmp_path / "corpus.jsonl"
    vocab = write_corpus(corpus, n, seed=43)
    home = tmp_path / "home"
    settings = Settings(home=home, embedder="fake")
    proc = start_cli(["ingest", str(corpus)], cli_env(home))
    finish(proc)
    more = tmp_path / "more.jsonl"
    vocab_more = write_corpus(more, 4000, seed=44, id_prefix="more")
    done = []
    for how in ("search", "ingest"):
        proc = start_cli(["ingest", str(more)], cli_env(home))
        deadline = time.monotonic() + 120
        while not (settings.library_dir / "writing").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # mid-write
        killed = hard_kill(proc)
        if not killed:
            pytest.skip("the ingest finished before the kill; nothing to tear")
        assert (settings.library_dir / "writing").exists(), "a killed writer leaves its marker"
        # (Found from Chroma's SQLite file: opening the library here would take the marker's check.)
        name = f"paperchat-default-{collection}"
        seg = _vector_segment_dir(home, _collection_id(home, name))
        if seg is None:
            pytest.skip("this chromadb version lays out its vector index differently")
        done.append(tear_until_it_crashes(home / "chroma", name, seg))

        if how == "search":
            proc = start_cli(["search", " ".join(vocab["syn-00321"][2:6]), "--json"], cli_env(home))
            out, err = proc.communicate(timeout=200)
            assert proc.returncode == 0, f"exit {proc.returncode}: {err[-2000:]}"
            assert json.loads(out)[0]["paper_id"] == "syn-00321"
        else:
            proc = start_cli(["ingest", "--json", str(corpus)], cli_env(home))
            out, err = proc.communicate(timeout=200)
            assert proc.returncode == 0, f"exit {proc.returncode}: {err[-2000:]}"
            assert json.loads(out)["unchanged"] == n
        assert "killed mid-write; Chroma cannot safely load" in err, err
        assert not (settings.library_dir / "writing").exists()
        assert failing(home / "chroma", [name]) == []
        lib = open_library(settings)
        try:
            counts = check_consistent(lib, vocab | vocab_more, random.Random(5), exact_store=True)
            assert counts["papers"] >= n and not counts["damaged"]
            assert set(vocab) <= set(lib.catalogue), "papers of the completed ingest were lost"
        finally:
            close_library(lib)
    print(f"\ntorn {collection} index: {done}")


def _torn_record(b: bytes) -> bytes:
    """link_lists.bin with one record's size torn (chroma-core/chroma#7510): hnswlib loads it without a word,
    reads every later record out of step, and each flush after that seeks further past the end of the file
    (a CI run left a 2.2 TB sparse link_lists.bin this way, and the next reader crashed)."""
    pos = 0
    while pos + 4 <= len(b):
        k = int.from_bytes(b[pos : pos + 4], "little")
        if k:
            return b[:pos] + (k * 1000).to_bytes(4, "little") + b[pos + 4 :]
        pos += 4
    pytest.skip("no element above layer 0 to tear")


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("tear", ["links-torn-record", "header-half"])
def test_files_torn_with_no_writer_marker_are_checked_before_anything_loads_them(tmp_path, tear):
    """Any process can write Chroma's HNSW files (a reader applies Chroma's log on its first read), so torn
    files need not come with a dead writer's marker. The next process must notice by itself that the files
    are not the ones last checked, check their bytes before loading them, rebuild, and answer."""
    from rag.library.store.hnswfiles import problems
    from rag.settings import Settings

    n = 1100  # Chroma first saves an HNSW index at 1000 entries: the papers collection needs that many
    corpus = tmp_path / "corpus.jsonl"
    vocab = write_corpus(corpus, n, seed=45)
    home = tmp_path / "home"
    settings = Settings(home=home, embedder="fake")
    finish(start_cli(["ingest", str(corpus)], cli_env(home)))
    segs = {c: _vector_segment_dir(home, _collection_id(home, f"paperchat-default-{c}")) for c in ("chunks", "papers")}
    if None in segs.values() or not (segs["chunks"] / "link_lists.bin").exists():
        pytest.skip("this chromadb version lays out its vector index differently")
    # A clean ingest leaves files that pass the check, and readers then load them without checking again.
    assert problems(segs["chunks"], True) == [] and problems(segs["papers"]) == []
    query = " ".join(vocab["syn-00777"][2:6])
    _, err = finish(start_cli(["search", query, "--json"], cli_env(home)))
    assert "rebuilding" not in err, err

    f = segs["chunks"] / TEARS[tear][0] if tear in TEARS else segs["chunks"] / "link_lists.bin"
    f.write_bytes((TEARS[tear][1] if tear in TEARS else _torn_record)(f.read_bytes()))
    assert not (settings.library_dir / "writing").exists()

    out, err = finish(start_cli(["search", query, "--json"], cli_env(home)))
    assert json.loads(out)[0]["paper_id"] == "syn-00777"
    assert "Chroma cannot safely load paperchat-default-chunks; rebuilding" in err, err
    more = tmp_path / "more.jsonl"
    vocab_more = write_corpus(more, 300, seed=46, id_prefix="more")
    finish(start_cli(["ingest", str(more)], cli_env(home)))
    seg = _vector_segment_dir(home, _collection_id(home, "paperchat-default-chunks"))
    assert problems(seg, True) == []
    assert (seg / "link_lists.bin").stat().st_size < 1 << 20, "the torn link list kept growing"
    lib = open_library(settings)
    try:
        counts = check_consistent(lib, vocab | vocab_more, random.Random(6), exact_store=True)
        assert counts["papers"] == n + 300 and not counts["damaged"]
    finally:
        close_library(lib)


def build_saved(tmp_path_factory, n: int) -> Path:
    """A library of n papers ingested whole, its home (the corpus beside it, corpus.jsonl)."""
    home = tmp_path_factory.mktemp("saved") / "home"
    corpus = home.parent / "corpus.jsonl"
    write_corpus(corpus, n, seed=47)
    finish(start_cli(["ingest", str(corpus)], cli_env(home)))
    return home


@pytest.fixture(scope="module")
def saved_index(tmp_path_factory) -> Path:
    return build_saved(tmp_path_factory, 1100)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_files_the_check_passes_never_crash_chroma(saved_index, tmp_path_factory):
    """Property: whatever a torn write does to a saved index (any file, any place, cut short, zeroed,
    overwritten with garbage), either the byte check flags it or Chroma loads it in a fresh process without
    crashing and every sampled vector finds itself. The check is what stands between Chroma and a SIGSEGV."""
    import shutil

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from rag.library.store.hnswfiles import FILES, problems

    names = {c: f"paperchat-default-{c}" for c in ("chunks", "papers")}
    segs = {c: _vector_segment_dir(saved_index, _collection_id(saved_index, names[c])) for c in names}
    if None in segs.values() or not (segs["chunks"] / "link_lists.bin").exists():
        pytest.skip("this chromadb version lays out its vector index differently")
    seen = {"flagged": 0, "loaded": 0}

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(coll=st.sampled_from(["chunks", "papers"]), fname=st.sampled_from(FILES), how=st.sampled_from(
        ["cut", "zeros", "garbage", "ones"]), where=st.floats(0, 1), length=st.sampled_from([1, 4, 68, 4096, 1 << 30]),
           noise=st.binary(min_size=64, max_size=64))
    def tear_and_load(coll, fname, how, where, length, noise):
        work = tmp_path_factory.mktemp("torn") / "home"
        shutil.copytree(saved_index, work)
        seg = work / "chroma" / segs[coll].name
        f = seg / fname
        b = f.read_bytes()
        at = int(where * len(b))
        end = min(len(b), at + length)
        fill = {"zeros": b"\0", "ones": b"\xff", "garbage": noise}.get(how, b"")
        f.write_bytes(b[:at] if how == "cut" else b[:at] + (fill * ((end - at) // len(fill) + 1))[: end - at] + b[end:])
        if problems(seg, coll == "chunks"):
            seen["flagged"] += 1
        else:
            p = subprocess.run([sys.executable, "-m", "rag.library.store.childcheck", str(work / "chroma"), names[coll]], cwd=ROOT,
                               capture_output=True, text=True, timeout=300, env=cli_env(work))
            assert p.returncode == 0, f"passed the check, yet Chroma {'crashed' if p.returncode < 0 else 'failed'}: " \
                                      f"{coll} {fname} {how} at {at} ({p.stdout.strip()[-300:]})"
            seen["loaded"] += 1
        shutil.rmtree(work.parent, ignore_errors=True)

    tear_and_load()
    print(f"\ntorn copies: {seen}")
    assert seen["flagged"] >= 5


# header.bin's fields, as hnswlib persists them (rag.library.store.hnswfiles._HEADER), and their byte ranges.
HEADER_FIELDS = ("version", "offset_level0", "capacity", "count", "size_per_element", "label_offset", "offset_data",
                 "maxlevel", "entry_point", "max_m", "max_m0", "m", "mult", "ef_construction")


def header_tears(raw: bytes) -> dict[tuple[str, str], bytes]:
    """Torn copies of a header.bin, by (field, how): each field zeroed, all ones, garbled, and one off its value
    (1e-6 off, NaN, infinity and negative for the level multiplier); then tears of the bytes (field "bytes":
    cut short, one byte long, ranges zeroed or garbled)."""
    from rag.library.store.hnswfiles import _HEADER

    codes, spans, at = _HEADER.format.lstrip("<"), {}, 0
    for name, code in zip(HEADER_FIELDS, codes):
        spans[name] = (at, at + struct.calcsize("<" + code), code)
        at = spans[name][1]
    values = dict(zip(HEADER_FIELDS, _HEADER.unpack(raw)))
    tears = {}
    for name, (a, b, code) in spans.items():
        tears[name, "zeros"] = raw[:a] + b"\0" * (b - a) + raw[b:]
        tears[name, "ones"] = raw[:a] + b"\xff" * (b - a) + raw[b:]
        tears[name, "garbled"] = raw[:a] + bytes(x ^ 0x5A for x in raw[a:b]) + raw[b:]
        if code == "d":
            shifted = {"1e-6": values[name] * (1 + 1e-6), "nan": math.nan, "inf": math.inf, "negative": -values[name]}
        else:
            limit = 1 << (8 * (b - a))
            shifted = {"+1": (values[name] + 1) % limit, "-1": (values[name] - 1) % limit}
        for how, v in shifted.items():
            packed = struct.pack("<" + code, v) if code == "d" else v.to_bytes(b - a, "little")
            tears[name, how] = raw[:a] + packed + raw[b:]
    garbage = bytes((i * 37 + 11) % 256 for i in range(len(raw)))
    cuts = {"cut to 0": b"", "cut to 50": raw[:50], "cut to 99": raw[:99], "one byte long": raw + b"\0",
            "40-60 zeroed": raw[:40] + b"\0" * 20 + raw[60:], "60-100 garbled": raw[:60] + garbage[60:],
            "all garbled": garbage}
    # (a field that already holds the value, such as offset_level0's zeros, is no tear)
    return {k: v for k, v in tears.items() if v != raw} | {("bytes", how): torn for how, torn in cuts.items()}


@pytest.fixture(scope="module", params=[1100, 2300])
def saved_library(request, tmp_path_factory) -> Path:
    """Libraries large enough that Chroma has saved both collections' HNSW files (it first saves at 1000
    entries): 1100 papers, and 2300 (saved: 2048 papers in a capacity of 2048, 6494 chunks in 8192)."""
    return build_saved(tmp_path_factory, request.param)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_every_torn_header_is_flagged_or_loads(saved_library, tmp_path_factory):
    """A writer killed while rewriting header.bin can leave any of its fields torn, and hnswlib trusts them all:
    a torn level multiplier made Chroma crash (SIGSEGV) on the next insert. For every field torn several ways,
    and for tears of the bytes, the byte check flags the file (a reader says it rebuilds, and answers) or a
    fresh reader loads it and answers: its searches find each paper by its words and each stored vector finds
    itself. Readers run in a child process, so a crash fails the test with its signal."""
    from rag.library.store.hnswfiles import problems

    home, corpus = saved_library, saved_library.parent / "corpus.jsonl"
    names = {c: f"paperchat-default-{c}" for c in ("chunks", "papers")}
    segs = {c: _vector_segment_dir(home, _collection_id(home, names[c])) for c in names}
    if None in segs.values() or not (segs["chunks"] / "header.bin").exists():
        pytest.skip("this chromadb version lays out its vector index differently")
    assert problems(segs["chunks"], True) == [] and problems(segs["papers"]) == []

    tears = {c: header_tears((segs[c] / "header.bin").read_bytes()) for c in segs}
    cases = [("chunks", *tear, torn) for tear, torn in tears["chunks"].items()]
    # the papers collection's header (its vectors are one number): tears of the bytes, and of its multiplier
    cases += [("papers", *tear, torn) for tear, torn in tears["papers"].items() if tear[0] in ("bytes", "mult")]
    seen: dict[str, list[str]] = {"flagged": [], "loaded": []}
    read: set[tuple[str, str]] = set()  # (collection, field) whose flagged tear a reader has opened
    for coll, field, how, torn in cases:
        tear = f"{field} {how}"
        work = tmp_path_factory.mktemp("torn-header") / "home"
        shutil.copytree(home, work)
        seg = work / "chroma" / segs[coll].name
        (seg / "header.bin").write_bytes(torn)
        found = problems(seg, coll == "chunks")
        if field == "mult":
            assert found, f"{coll} {tear}: a torn level multiplier passed the check"
        if found and (coll, field) in read:
            seen["flagged"].append(f"{coll} {tear}")  # (the guard's answer to a finding does not depend on which)
        else:
            counts, err = read_in_child(work, corpus, 3, what=f"on {coll} header.bin torn {tear}")
            assert counts["papers"] == len(corpus_vocab(corpus)) and not counts["damaged"], (coll, tear, counts)
            if found:
                assert f"Chroma cannot safely load {names[coll]}; rebuilding" in err, (coll, tear, found, err[-2000:])
                read.add((coll, field))
            seen["flagged" if found else "loaded"].append(f"{coll} {tear}")
        shutil.rmtree(work.parent, ignore_errors=True)
    print(f"\n{len(cases)} torn headers ({len(read)} flagged ones opened by a reader): "
          f"{len(seen['flagged'])} flagged, loaded unflagged: {seen['loaded']}")
    assert len(seen["flagged"]) >= len(cases) // 2


class _Vectors:
    """A collection whose nearest-vector query misses the given number of stored vectors (the rest find
    themselves at distance 0), as childcheck reads one."""

    def __init__(self, n: int, misses: int):
        self.n, self.misses = n, misses

    def count(self) -> int:
        return self.n

    def get(self, limit: int, offset: int, include: list[str]) -> dict:
        ids = [f"c{offset + i}" for i in range(limit)]
        return {"ids": ids, "embeddings": [[float(offset + i)] for i in range(limit)]}

    def query(self, query_embeddings: list, n_results: int, include: list[str]) -> dict:
        return {"distances": [[0.3] if i < self.misses else [0.0] for i in range(len(query_embeddings))]}


@pytest.mark.parametrize("misses, sound", [(0, True), (1, True), (2, False), (12, False)])
def test_the_child_check_allows_hnsw_one_miss_but_not_a_torn_index(misses, sound):
    # A sound index of the kill-9 test's corpus had 2 chunks of 11,319 whose nearest hit was a sibling (HNSW is
    # approximate); a CI run failed on one. One miss of 24 passes; two or more is what a torn index looks like.
    from rag.library.store.childcheck import _check

    assert _check(_Vectors(5000, misses)) is sound
