"""Shared pieces of the benchmark scripts: the machine, the data, the reference library, the results file.

Not a benchmark itself. Every script prints the machine and the exact command that reproduces it, and
writes its figures to bench/results/NAME.json (docs/performance.md quotes those files).
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import resource
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

DATA = ROOT.parent / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")
PAPERLISTS = DATA / "paperlists.jsonl.gz"
SCIFACT = DATA / "scifact"
RESULTS = ROOT / "bench" / "results"
BENCH_HOME = Path(os.environ.get("PAPERCHAT_BENCH_HOME", "/tmp/bench-home"))  # reference libraries, reused


# -- machine and reproduction ---------------------------------------------------------------------

def machine() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor()
    ram_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for pkg in ("chromadb", "onnxruntime", "tokenizers", "bm25s", "numpy", "langchain-chroma"):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return {
        "nproc": usable, "cpu": cpu or "unknown", "ram_gb": ram_gb, "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}", "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "packages": versions,
    }


def command() -> str:
    """The command line that reproduces this run, from the project root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script_s = str(script.relative_to(ROOT))
    except ValueError:
        script_s = str(script)
    return " ".join([".venv/bin/python", shlex.quote(script_s), *map(shlex.quote, sys.argv[1:])])


def print_header(title: str) -> dict:
    m = machine()
    print(f"== {title}")
    print(f"machine: {m['nproc']} cores ({m['cpu']}), {m['ram_gb']} GB RAM, Python {m['python']}, {m['os']}")
    load = m["loadavg_at_start"]
    note = "  <- the machine is busy: figures are measured under load" if load[0] > 0.5 * m["nproc"] else ""
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}{note}")
    print(f"reproduce: {command()}   (from {ROOT})")
    print()
    return m


def write_results(name: str, figures: dict, m: dict, started: float) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    load_end = [round(x, 2) for x in os.getloadavg()]
    out = {
        "benchmark": name, "command": command(), "machine": m, "loadavg_at_end": load_end,
        "under_load": max(m["loadavg_at_start"][0], load_end[0]) > 0.5 * (m["nproc"] or 1),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": round(time.time() - started, 1),
        "figures": figures,
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    print(f"\nresults written to {path.relative_to(ROOT)}")
    return path


def checkout(rev: str, prefix: str = "paperchat-before-") -> Path:
    """The tree of `rev` (git archive) in a new temporary folder: the "before" side of a bench that runs
    both codes in one run. The caller removes it."""
    import subprocess
    import tempfile

    dest = Path(tempfile.mkdtemp(prefix=prefix))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def merge_base(rev: str | None) -> str:
    """The "before" revision: `rev` if given, else where this branch left main."""
    import subprocess

    return rev or subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], check=True,
                                 capture_output=True, text=True).stdout.strip()


def before_side(rev: str, module: str, call: str):
    """`module.call` (a call written as Python, e.g. "run_side(Path('/h'), ['rlhf'])") run by the rag/ of
    `rev` in its own process; its JSON result. The bench module itself is this checkout's; it must not
    import rag at its top, so that `rag` is the exported revision's (asserted)."""
    import shutil
    import subprocess

    tree = str(checkout(rev))
    try:
        # _common put this checkout on sys.path when the module imported it: take it off again
        code = (f"import sys, json; from pathlib import Path; sys.path.insert(0, {str(ROOT / 'bench')!r}); "
                f"import {module} as s; "
                f"sys.path[:] = [{tree!r}] + [p for p in sys.path if p not in ({str(ROOT)!r}, '')]; "
                f"import rag; assert rag.__file__.startswith({tree!r}), rag.__file__; "
                f"print(json.dumps(s.{call}))")
        proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": tree}, cwd=tree,
                              capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"the before side failed:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(tree, ignore_errors=True)


# -- small statistics ------------------------------------------------------------------------------

def pct(values: list[float], q: float) -> float:
    """Percentile by linear interpolation (q in 0..100)."""
    if not values:
        return float("nan")
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def rss_mb() -> dict:
    """Current resident set (VmRSS) and the process's peak so far (ru_maxrss, KiB on Linux), in MB."""
    cur = None
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rss_mb": round(cur, 1) if cur is not None else None, "peak_rss_mb": round(peak, 1)}


# -- data ------------------------------------------------------------------------------------------

class Memo:
    """An embedder that embeds each distinct text once (the studies embed the same sentences for relevance, the
    role classifier and the answer scorer); `embedder` lets those see which model it is (MiniLM or not)."""

    def __init__(self, inner):
        self.embedder, self.memo = inner, {}

    def embed_array(self, texts: list[str]):
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            for t, v in zip(missing, self.embedder.embed_array(missing)):
                self.memo[t] = v
        return np.stack([self.memo[t] for t in texts])

    __call__ = embed_array


def add_corpus_args(ap, default_n: int = 1000) -> None:
    """--corpus and --n, as the ingest benches take them (see corpus_from_args)."""
    ap.add_argument("--corpus", choices=["paperlists", "scifact"], default="paperlists")
    ap.add_argument("--n", type=int, default=None,
                    help=f"first N abstracts of the corpus (default {default_n}; scifact: default all 5,183)")
    ap.set_defaults(default_n=default_n)


def corpus_from_args(args, folder: Path) -> Path:
    """The corpus the arguments of add_corpus_args name, written into `folder` (SciFact whole unless --n)."""
    n = args.n if args.n is not None else (None if args.corpus == "scifact" else args.default_n)
    return write_corpus(args.corpus, n, folder / f"{args.corpus}.jsonl")


def write_corpus(corpus: str, n: int | None, dest: Path) -> Path:
    """The first n records of a corpus (paperlists or scifact) as a JSON Lines file paperchat ingests
    as is; every benchmarked path reads its texts from this one file."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if corpus == "paperlists":
        src = gzip.open(PAPERLISTS, "rt", encoding="utf-8")
    elif corpus == "scifact":
        src = open(SCIFACT / "corpus.jsonl", encoding="utf-8")
    else:
        raise SystemExit(f"unknown corpus {corpus!r} (paperlists or scifact)")
    count = 0
    with src, open(dest, "w", encoding="utf-8") as out:
        for line in src:
            if not line.strip():
                continue
            out.write(line if line.endswith("\n") else line + "\n")
            count += 1
            if n is not None and count >= n:
                break
    return dest


def load_papers(path: Path):
    """The Papers paperchat's loader makes of a file (rejections dropped)."""
    from rag.loaders import load_file
    from rag.records import Paper

    return [p for p in load_file(path) if isinstance(p, Paper)]


def make_chunks(papers, settings, embedder):
    """Exactly the chunks paperchat's ingest makes of these papers."""
    from rag.library.chunking import chunk_paper

    cs = settings.chunk
    count = getattr(embedder, "count_tokens", None)
    return [c for p in papers for c in chunk_paper(p, cs.max_chars, cs.max_tokens, count)]


def scifact_queries(split: str = "test") -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    import csv

    texts = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            texts[str(d["_id"])] = d["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(SCIFACT / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t")
        next(rows)
        for qid, did, score in rows:
            qrels.setdefault(str(qid), {})[str(did)] = int(score)
    return {q: texts[q] for q in qrels if q in texts}, qrels


# -- the reference libraries under BENCH_HOME -----------------------------------------------------

def ensure_library(name: str, paths: list[Path], home: Path = BENCH_HOME, expected: int | None = None,
                   progress: bool = True):
    """Open library `name` under `home`, ingesting `paths` first if it holds fewer than `expected` papers
    (or none): the SciFact one takes 7-10 min on 2 cores, once. An interrupted build carries on.

    The library does not record the chunk settings it was built with, and a re-ingest of unchanged papers
    does not re-chunk them; so the settings are noted beside it, and a library built with other chunk
    settings is dropped and rebuilt (the embedding cache keeps whatever vectors still apply)."""
    import shutil

    from rag.library.library import Library
    from rag.settings import Settings

    settings = Settings(home=home, library=name)
    lib = Library(settings)
    stamp = settings.library_dir / ".bench-chunk-settings.json"
    want = settings.chunk.model_dump()
    have = json.loads(stamp.read_text()) if stamp.exists() else None
    if len(lib) and have != want:
        print(f"library {name!r} under {home} was built with chunk settings {have or 'unknown'}, not {want}: "
              f"rebuilding it", flush=True)
        lib.drop()
        lib = Library(settings)
    if len(lib) and lib.lexical.ids and not any(i in lib.catalogue for i in lib.lexical.ids[:50]):
        # A lexical cache written by an older paperchat (e.g. chunk ids where papers are now expected).
        print(f"library {name!r}: its cached BM25 index does not match this paperchat's; rebuilding the caches",
              flush=True)
        for d in settings.library_dir.glob("cache-*"):
            shutil.rmtree(d, ignore_errors=True)
        lib = Library(settings)
    if len(lib) == 0 or (expected is not None and len(lib) < expected):
        print(f"building the reference library {name!r} under {home} (once; reused afterwards) ...", flush=True)
        t = time.perf_counter()
        report = lib.ingest(paths, progress=progress)
        print(f"  {report.summary()} in {time.perf_counter() - t:.0f} s", flush=True)
    settings.library_dir.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(want))
    return lib


# -- sentence vectors for the training scripts ---------------------------------------------------------

def title_prefix(title: str) -> str:
    """The title prefix ingest puts on each chunk of a paper with this (given, not derived) title."""
    from rag.loaders._io import MAX_TITLE_CHARS

    return f"{title[:MAX_TITLE_CHARS]}. " if title else ""


def pooled_vectors(abstracts: list[tuple[str, list[str]]], cache: Path, name: str) -> dict[str, "object"]:
    """Sentence text -> its MiniLM vector pooled inside its chunk's forward pass (rag.reading.windows), as
    ingest stores it, for abstracts given as (title prefix, sentences); cached in `cache` by their hash.
    A sentence in two abstracts keeps the last one's, as the library's cache does."""
    import hashlib

    import numpy as np

    abstracts = list(dict.fromkeys((p, tuple(ss)) for p, ss in abstracts if ss))
    key = hashlib.sha1("\x1d".join(p + "\x1e" + "\x1e".join(ss) for p, ss in abstracts).encode()).hexdigest()[:12]
    from rag.embedders.readout import readout_id

    path = cache / f"{name}-pooled-{readout_id()}-{key}.npy"  # vectors of another read-out are other vectors
    if path.exists():
        flat = np.load(path)
    else:
        from rag.embedders import MiniLMEmbeddings
        from rag.reading.windows import sentence_vectors

        t = time.time()
        flat = np.vstack(sentence_vectors(MiniLMEmbeddings(), [(p, list(ss)) for p, ss in abstracts]))
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, flat)
        print(f"read {len(abstracts)} abstracts in one pass per chunk in {time.time() - t:.0f} s", file=sys.stderr)
    return dict(zip([s for _, ss in abstracts for s in ss], flat))


def start_chroma_server(path: Path):
    """`chroma run` storing in `path` on a free loopback port, once it answers its heartbeat: (process, url).
    Stopped again (and SystemExit raised) when it does not answer within 60 s."""
    import shutil
    import subprocess
    import urllib.request

    sys.path.insert(0, str(ROOT / "tests"))
    from procs import free_port, stop_group

    port = free_port()
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    proc = subprocess.Popen([exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2).close()
            return proc, url
        except OSError:
            if time.monotonic() > deadline:
                stop_group(proc)
                raise SystemExit("chroma run did not start in 60 s") from None
            time.sleep(0.3)
