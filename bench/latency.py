"""Retrieval latency p50/p95 and peak memory while serving (issue 6, items 4c and 4d).

Times `rag.library.retrieval.search` — the product path behind search, ask, summarise and cite — over ~200
queries, after one warm-up query (which loads the ONNX model and is reported on its own), and breaks each
query down with timers around the library calls it makes:

  embed       Library.embed_query (tokenise + MiniLM forward pass)
  dense       Library.dense (Chroma HNSW query for candidates x chunks_per_paper chunks, with ids,
              distances, metadatas and documents)
  lexical     LexicalIndex.search (bm25s over whole papers: tokenise + stem + score)
  fetch       Library.chunk_texts + Library.get_papers (Chroma gets for the k results)
  refresh     Library.refresh generation check (one Chroma collection lookup per search)
  fusion      the rest: pooling per paper, z-score fusion, filter masks, sorting, building hits

Peak RSS (ru_maxrss) is read after the library is loaded and again after the queries are served.

    .venv/bin/python bench/latency.py                                   # SciFact 5,183 (built once under /tmp/bench-home)
    .venv/bin/python bench/latency.py --library papers87k --home DIR    # an existing library, e.g. the 87k one
    .venv/bin/python bench/latency.py --queries 300 --no-probe

SciFact uses its test queries (nDCG@10 printed as a sanity check); any other library uses the titles of
random papers in it as queries. Goals (at 87k, 2 cores): p50 <= 50 ms, peak RSS <= 1.5 GB.

The probe (on by default, after the memory reading) times alternatives on the same queries to show what
the dense and lexical parts are made of: Chroma with fewer fields or fewer results, exact search with
numpy over the same vectors, a one-thread query embedder, and bm25s scoring with the tokenising apart.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

PARTS = ["embed", "dense", "lexical", "fetch", "refresh", "fusion"]


class Profiler:
    """Exclusive time per named call, nesting-aware (a refresh inside dense counts as refresh only)."""

    def __init__(self):
        self.stack: list[list] = []
        self.cur: dict[str, float] = defaultdict(float)

    def wrap(self, name, fn):
        def timed(*a, **k):
            frame = [name, 0.0]  # child time
            self.stack.append(frame)
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                el = time.perf_counter() - t
                self.stack.pop()
                self.cur[name] += el - frame[1]
                if self.stack:
                    self.stack[-1][1] += el
        return timed

    def take(self) -> dict[str, float]:
        out, self.cur = dict(self.cur), defaultdict(float)
        return out


def ndcg10(ranked: list[str], rel: dict[str, int]) -> float:
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def fmt_ms(x: float) -> str:
    return f"{1000 * x:8.1f}"


def probe(lib, queries: list[str], vectors, n_dense: int, n: int, k: int) -> dict:
    """Alternatives on the same queries (each timed over all of them; medians in ms). n_dense: the
    chunks the product asks Chroma for; n: the papers kept per side."""
    import numpy as np

    from rag.library.collections import paged

    out: dict[str, float] = {}

    def med(fn, items):
        ts = []
        for it in items:
            t = time.perf_counter()
            fn(it)
            ts.append(time.perf_counter() - t)
        return 1000 * C.median(ts)

    col = lib.collections.chunks
    total = n_chunks_of(lib)
    vl = [v.tolist() for v in vectors]
    full = ["metadatas", "distances", "documents"]
    for size in dict.fromkeys([min(n_dense, total), min(n, total), min(k, total)]):
        tag = " (product)" if size == min(n_dense, total) else ""
        out[f"chroma: ids+distances+metadatas+documents, n={size}{tag}"] = med(
            lambda v: col.query(query_embeddings=[v], n_results=size, include=full), vl)
        out[f"chroma: ids+distances+metadatas, n={size}"] = med(
            lambda v: col.query(query_embeddings=[v], n_results=size, include=["metadatas", "distances"]), vl)
        out[f"chroma: ids+distances, n={size}"] = med(
            lambda v: col.query(query_embeddings=[v], n_results=size, include=["distances"]), vl)
    out["chroma: get_collection (one generation check)"] = med(lambda _: lib.records.current_generation(), vl)
    nn = min(n_dense, total)

    # exact search over the same vectors in numpy (what an in-process matrix would cost)
    mats, ids = [], []
    t = time.perf_counter()
    for got in paged(col, ["embeddings"]):
        ids.extend(got["ids"])
        mats.append(np.asarray(got["embeddings"], dtype=np.float32))
    load_s = time.perf_counter() - t
    mat = np.concatenate(mats) if mats else np.zeros((0, 384), np.float32)
    del mats
    out[f"numpy exact: {len(ids)} x {mat.shape[1]} float32 matmul + top-{nn}"] = med(
        lambda v: np.argpartition(-(mat @ v), nn - 1)[:nn], [np.asarray(v, np.float32) for v in vectors])
    out["(numpy matrix: MB)"] = mat.nbytes / 1e6
    out["(numpy matrix: seconds to read from Chroma)"] = load_s
    del mat

    from rag.embedders import MiniLMEmbeddings

    one = MiniLMEmbeddings(threads=1)
    one.embed_array(["warm up"])
    t1, tn = [], []
    for q in queries:  # interleaved, so both see the same load
        t = time.perf_counter()
        one.embed_array([q])
        t1.append(time.perf_counter() - t)
        t = time.perf_counter()
        lib.embedder.embed_array([q])
        tn.append(time.perf_counter() - t)
    out["embed query, 1 intra-op thread"] = 1000 * C.median(t1)
    out["embed query, default threads (product)"] = 1000 * C.median(tn)
    del one

    import bm25s

    lx = lib.lexical
    stem = lx._stem
    toks = [bm25s.tokenize([q], stopwords="en", stemmer=stem, show_progress=False, return_ids=False) for q in queries]
    out["bm25s: tokenise + stem the query"] = med(
        lambda q: bm25s.tokenize([q], stopwords="en", stemmer=stem, show_progress=False, return_ids=False), queries)
    nl = min(n, len(lx))
    out[f"bm25s: retrieve k={nl} over {len(lx)} docs (scoring only)"] = med(
        lambda tk: lx._retriever.retrieve(tk, k=nl, show_progress=False, n_threads=1) if tk and tk[0] else None, toks)
    return out


def n_chunks_of(lib) -> int:
    n = getattr(lib, "n_chunks", None)
    return int(n) if n is not None else len(lib.lexical)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", help="an existing library (default: SciFact, built once under --home)")
    ap.add_argument("--home", type=Path, default=C.BENCH_HOME, help=f"its PAPERCHAT_HOME (default {C.BENCH_HOME})")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-probe", action="store_true", help="skip the alternatives")
    ap.add_argument("--name", help="results file name (default: latency for SciFact, latency_LIBRARY otherwise)")
    args = ap.parse_args()

    started = time.time()
    m = C.print_header("retrieval latency and peak RSS (rag.library.retrieval.search)")
    rss0 = C.rss_mb()
    t = time.perf_counter()
    from rag.library.library import Library
    from rag.library.retrieval import search
    from rag.settings import Settings
    t_import = time.perf_counter() - t

    rng = random.Random(args.seed)
    qrels = None
    if args.library is None:
        name = "scifact"
        lib = C.ensure_library(name, [C.SCIFACT / "corpus.jsonl"], home=args.home, expected=5183)
        qtexts, qrels = C.scifact_queries("test")
        qids = sorted(qtexts, key=int)
        qids = rng.sample(qids, min(args.queries, len(qids)))
        queries = [qtexts[q] for q in qids]
        del lib  # measure the open below from a fresh object, as a server start would
    else:
        name = args.library
        if not (args.home / "libraries" / name).exists() and not Settings().chroma_url:
            raise SystemExit(f"no library {name!r} under {args.home} (build it with: PAPERCHAT_HOME={args.home} "
                             f".venv/bin/paperchat --library {name} ingest FILE)")
    rss_imported = C.rss_mb()

    settings = Settings(home=args.home, library=name)
    t = time.perf_counter()
    lib = Library(settings)
    t_open = time.perf_counter() - t
    t = time.perf_counter()
    lib.refresh()
    t_refresh = time.perf_counter() - t
    n_papers, n_chunks = len(lib.catalogue), n_chunks_of(lib)
    if n_papers == 0:
        raise SystemExit(f"library {name!r} under {args.home} is empty")
    if args.library is not None:
        pids = sorted(lib.catalogue)
        pick = rng.sample(pids, min(args.queries, len(pids)))
        queries = [lib.catalogue[p].get("title") or "" for p in pick]
        queries = [q for q in queries if q.strip()]
    rss_loaded = C.rss_mb()

    t = time.perf_counter()
    search(lib, "warm-up query: loads the embedding model", args.k)
    t_first = time.perf_counter() - t
    rss_warm = C.rss_mb()

    prof = Profiler()
    lib.embed_query = prof.wrap("embed", lib.embed_query)
    lib.dense = prof.wrap("dense", lib.dense)
    lex_found = []
    lex_search = lib.lexical.search

    def lexical_search(*a, **kw):
        res = lex_search(*a, **kw)
        lex_found.append(sum(1 for i, _ in res if i in lib.catalogue))  # what search() keeps
        return res

    lib.lexical.search = prof.wrap("lexical", lexical_search)
    lib.chunk_texts = prof.wrap("fetch", lib.chunk_texts)
    lib.get_papers = prof.wrap("fetch", lib.get_papers)
    lib.refresh = prof.wrap("refresh", lib.refresh)

    totals: list[float] = []
    parts: dict[str, list[float]] = defaultdict(list)
    scores = []
    print(f"library {name!r}: {n_papers} papers, {n_chunks} chunks (home {args.home})")
    rs = settings.retrieval
    n_side = max(rs.candidates, args.k)
    n_dense = n_side * getattr(rs, "chunks_per_paper", 1)
    print(f"serving {len(queries)} queries, k={args.k}: {n_dense} nearest chunks from Chroma, {n_side} papers "
          f"per side, {rs.fusion} fusion ...", flush=True)
    for i, q in enumerate(queries):
        t = time.perf_counter()
        hits = search(lib, q, args.k)
        el = time.perf_counter() - t
        p = prof.take()
        totals.append(el)
        for part in PARTS[:-1]:
            parts[part].append(p.get(part, 0.0))
        parts["fusion"].append(el - sum(p.values()))
        if qrels is not None:
            scores.append(ndcg10([h.paper.paper_id for h in hits], qrels[qids[i]]))
    lex_main = list(lex_found)  # (the sanity line below is about the unfiltered queries)
    # The same queries with a filter a user would set: the library's largest venue, its later years.
    from rag.library.retrieval import Filters

    venues: dict[str, int] = defaultdict(int)
    years = []
    for meta in lib.catalogue.values():
        venues[meta.get("venue") or ""] += 1
        years.append(int(meta.get("year") or 0))
    top_venue = max(venues, key=venues.get)
    flt = Filters(venue=top_venue or None, year_from=sorted(years)[len(years) // 2])
    filtered = []
    for q in queries:
        t = time.perf_counter()
        search(lib, q, args.k, flt)
        filtered.append(time.perf_counter() - t)
        prof.take()
    rss_served = C.rss_mb()

    print()
    print(f"open: import {t_import:.2f} s, Library() {t_open:.2f} s, load catalogue + BM25 index {t_refresh:.2f} s; "
          f"first query (loads the model) {t_first:.2f} s")
    print()
    print(f"{'part':<10}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}{'share':>8}")
    mean_total = sum(totals) / len(totals)
    for part in PARTS:
        xs = parts[part]
        mean = sum(xs) / len(xs)
        print(f"{part:<10}{fmt_ms(C.pct(xs, 50))} {fmt_ms(C.pct(xs, 95))} {fmt_ms(mean)}{100 * mean / mean_total:7.1f}%")
    p50, p95 = C.pct(totals, 50), C.pct(totals, 95)
    print(f"{'total':<10}{fmt_ms(p50)} {fmt_ms(p95)} {fmt_ms(mean_total)}")
    dominant = max(PARTS, key=lambda x: sum(parts[x]))
    print(f"\nlatency p50 {1000 * p50:.1f} ms, p95 {1000 * p95:.1f} ms over {len(totals)} queries "
          f"({n_papers} papers); largest part: {dominant}")
    big = n_papers >= 50_000
    goal_note = (f"goal p50 <= 50 ms: {'met' if 1000 * p50 <= 50 else 'NOT met'}" if big
                 else "goal p50 <= 50 ms applies at 87k")
    print(f"filtered ({flt.model_dump(exclude_none=True)}): p50 {1000 * C.pct(filtered, 50):.1f} ms, "
          f"p95 {1000 * C.pct(filtered, 95):.1f} ms")
    print(goal_note)
    print(f"RSS: after imports {rss_imported['rss_mb']} MB, library loaded {rss_loaded['rss_mb']} MB, "
          f"model loaded {rss_warm['rss_mb']} MB, after serving {rss_served['rss_mb']} MB; "
          f"peak (ru_maxrss) {rss_served['peak_rss_mb']} MB"
          + (f" (goal <= 1536 MB: {'met' if rss_served['peak_rss_mb'] <= 1536 else 'NOT met'})" if big else ""))
    with_lex = sum(1 for x in lex_main if x)
    print(f"sanity: the lexical side found papers of this library for {with_lex} of {len(lex_main)} queries")
    if lex_main and with_lex < 0.5 * len(lex_main):
        print("WARNING: the BM25 side is mostly empty: a stale lexical cache? (figures are dense-only)")
    if scores:
        print(f"sanity: nDCG@10 on these {len(scores)} SciFact test queries = {sum(scores) / len(scores):.4f}")

    figures = {
        "library": name, "papers": n_papers, "chunks": n_chunks, "queries": len(totals), "k": args.k,
        "candidates": rs.candidates, "dense_chunks_requested": n_dense, "fusion": rs.fusion,
        "queries_with_lexical_hits": with_lex,
        "query_source": "SciFact test queries" if qrels is not None else "titles of random papers in the library",
        "latency_ms": {"p50": round(1000 * p50, 2), "p95": round(1000 * p95, 2), "mean": round(1000 * mean_total, 2),
                       "max": round(1000 * max(totals), 2)},
        "filtered": {"filters": flt.model_dump(exclude_none=True), "p50": round(1000 * C.pct(filtered, 50), 2),
                     "p95": round(1000 * C.pct(filtered, 95), 2)},
        "parts_ms": {part: {"p50": round(1000 * C.pct(parts[part], 50), 2), "p95": round(1000 * C.pct(parts[part], 95), 2),
                            "mean": round(1000 * sum(parts[part]) / len(parts[part]), 2)} for part in PARTS},
        "largest_part": dominant,
        "open_seconds": {"import": round(t_import, 3), "library": round(t_open, 3), "load_caches": round(t_refresh, 3),
                         "first_query": round(t_first, 3)},
        "rss_mb": {"start": rss0["rss_mb"], "imported": rss_imported["rss_mb"], "loaded": rss_loaded["rss_mb"],
                   "model_loaded": rss_warm["rss_mb"], "served": rss_served["rss_mb"]},
        "peak_rss_mb": rss_served["peak_rss_mb"],
        "ndcg@10": round(sum(scores) / len(scores), 4) if scores else None,
        "goals": {"p50_ms_at_87k": 50, "peak_rss_mb_at_87k": 1536},
    }

    if not args.no_probe:
        lib = Library(settings)  # unwrapped
        lib.refresh()
        sub = queries[: min(50, len(queries))]
        vecs = [lib.embed_query(q) for q in sub]
        print(f"\nprobe: alternatives on {len(sub)} of the same queries (median ms; run after the RSS reading)")
        pr = probe(lib, sub, vecs, n_dense, n_side, args.k)
        for key, v in pr.items():
            print(f"  {key:<62}{v:9.1f}")
        figures["probe_ms"] = {key: round(v, 2) for key, v in pr.items()}

    C.write_results(args.name or ("latency" if args.library is None else f"latency_{name}"), figures, m, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
