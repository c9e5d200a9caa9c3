"""Choose paperchat's retrieval settings on SciFact train; report test for the chosen configuration.

    PYTHONPATH=. .venv/bin/python bench/tune/scifact_tune.py [--quick]

Every choice below is made on the 809 train queries (nDCG@10). The 300 test queries are scored
only after all choices are fixed, for the fixed list of rows printed in the final table.

Embeddings come from rag.embedders.MiniLMEmbeddings through a persistent cache
(/tmp/scifact_emb/cache.sqlite, see embcache.py): each distinct text is embedded once across runs.
Chunks come from rag.library.chunking.chunk_paper (title prefixed on each chunk).

Scoring is exhaustive (every paper gets a BM25 and a dense score), so "candidate depth" is
simulated exactly: each side keeps only its top-`depth` papers before fusion.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import bm25s  # noqa: E402
import Stemmer  # noqa: E402

import scifact_data as D  # noqa: E402
from embcache import EmbeddingCache  # noqa: E402
from metrics import evaluate  # noqa: E402
from rag.library.chunking import chunk_prefix  # noqa: E402
from rag.embedders import MiniLMEmbeddings  # noqa: E402

CHUNK_SIZES = (500, 800, 1100)
T0 = time.time()


def log(msg: str) -> None:
    print(f"[{time.time() - T0:6.0f}s] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- data: papers as columns, queries as rows


class Bench:
    def __init__(self):
        self.papers = sorted(D.papers(), key=lambda p: p.paper_id)  # column order = tie-break order
        self.pids = np.array([p.paper_id for p in self.papers])
        self.pindex = {p: i for i, p in enumerate(self.pids)}
        qs = D.queries()
        self.qrels = {s: D.qrels(s) for s in ("train", "test")}
        self.qids = sorted(set(self.qrels["train"]) | set(self.qrels["test"]))
        self.qtext = [qs[q] for q in self.qids]
        self.rows = {s: np.array([i for i, q in enumerate(self.qids) if q in self.qrels[s]]) for s in self.qrels}
        missing = {d for s in self.qrels.values() for r in s.values() for d in r if d not in self.pindex}
        if missing:
            log(f"warning: {len(missing)} judged docs not in corpus")
        self.embedder = MiniLMEmbeddings()
        self.cache = EmbeddingCache(self.embedder)
        self._units: dict = {}
        self._qvec: dict = {}
        self._gain: dict = {}

    # Units: the texts a paper is represented by. owner[i] = column of unit i; units are contiguous per paper.
    def units(self, kind: str, title: bool = True):
        key = (kind, title)
        if key not in self._units:
            if kind == "whole":
                texts = [D.whole_text(p) for p in self.papers]
                owner = np.arange(len(self.papers))
            else:
                mc = int(kind.removeprefix("chunks"))
                cs = D.chunks(mc, self.embedder.count_tokens)
                by = {}
                for c in cs:
                    by.setdefault(c.paper_id, []).append(c.text)
                texts, owner = [], []
                for j, p in enumerate(self.papers):
                    texts += by[p.paper_id]
                    owner += [j] * len(by[p.paper_id])
                owner = np.array(owner)
            if not title:
                texts = [t.removeprefix(chunk_prefix(p)) for t, p in zip(texts, (self.papers[o] for o in owner))]
            self._units[key] = (texts, owner)
        return self._units[key]

    def qvecs(self, prefix: str = "") -> np.ndarray:
        if prefix not in self._qvec:
            self._qvec[prefix] = self.cache.embed([prefix + q for q in self.qtext])
        return self._qvec[prefix]

    # ---------------------------------------------------------------- evaluation

    def run(self, S: np.ndarray, split: str, k: int = 100) -> dict[str, list[str]]:
        """Ranked paper ids per query from a score matrix (rows: all queries, or only the split's);
        -inf = not retrieved."""
        rows = self.rows[split]
        M = S[rows] if S.shape[0] == len(self.qids) else S
        assert M.shape[0] == len(rows)
        top = np.argpartition(-M, k, axis=1)[:, :k]
        out = {}
        for r, m, cols in zip(rows, M, top):
            cols = cols[np.isfinite(m[cols])]
            order = np.lexsort((cols, -m[cols]))  # score desc, then column (= paper id) asc
            out[self.qids[r]] = list(self.pids[cols[order]])
        return out

    def fast_ndcg10(self, S: np.ndarray, split: str = "train") -> float:
        """Vectorised nDCG@10 for the search loops; same ranking rule as run() (score desc, then
        paper id), exact unless more than 20 papers tie at rank 10. Checked against metrics.py."""
        if split not in self._gain:
            rows = self.rows[split]
            G = np.zeros((len(rows), len(self.pids)), dtype=np.float32)
            idcg = np.zeros(len(rows))
            for i, r in enumerate(rows):
                rels = self.qrels[split][self.qids[r]]
                for d, g in rels.items():
                    if d in self.pindex and g > 0:
                        G[i, self.pindex[d]] = g
                ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:10]
                idcg[i] = sum(g / np.log2(j + 2) for j, g in enumerate(ideal))
            self._gain[split] = (G, idcg)
        G, idcg = self._gain[split]
        M = S[self.rows[split]] if S.shape[0] == len(self.qids) else S
        top = np.argpartition(-M, 30, axis=1)[:, :30]
        vals = np.take_along_axis(M, top, axis=1)
        order = np.lexsort((top, -vals), axis=1)[:, :10]
        cols = np.take_along_axis(top, order, axis=1)
        ok = np.isfinite(np.take_along_axis(vals, order, axis=1))
        gains = np.take_along_axis(G, cols, axis=1) * ok
        dcg = (gains / np.log2(np.arange(2, 12))).sum(axis=1)
        return float(np.mean(dcg / idcg))

    def score(self, S: np.ndarray, split: str) -> dict[str, float]:
        return evaluate(self.run(S, split), self.qrels[split])

    def ndcg(self, S: np.ndarray, split: str = "train") -> float:
        return self.score(S, split)["ndcg@10"]


def pool_max(U: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """(Q x units) -> (Q x papers): max over each paper's units (units contiguous per paper)."""
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    assert len(starts) == n
    return np.maximum.reduceat(U, starts, axis=1)


def pool_top2(U: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Sum of the two best units per paper (papers with one unit: that unit twice)."""
    first = pool_max(U, owner, n)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    # Remove one occurrence of the max per paper, then take the max again.
    V = U.copy()
    am = np.zeros_like(first, dtype=np.int64)
    for j, (s, e) in enumerate(zip(starts, np.r_[starts[1:], len(owner)])):
        am[:, j] = s + np.argmax(U[:, s:e], axis=1)
    V[np.arange(U.shape[0])[:, None], am] = -np.inf
    second = pool_max(V, owner, n)
    second = np.where(np.isfinite(second), second, first)
    return first + second


# ---------------------------------------------------------------- BM25


@dataclass(frozen=True)
class BM25Cfg:
    units: str = "whole"  # "whole" or "chunks<max_chars>" (paper score = max over its chunks)
    title: int = 1  # times the title is in the indexed text: 0, 1 (as embedded) or 2 (title boost)
    stopwords: bool = True
    stem: bool = True
    k1: float = 1.5
    b: float = 0.75

    def label(self) -> str:
        tok = ("stop" if self.stopwords else "nostop") + ("+stem" if self.stem else "")
        t = {0: ",notitle", 1: "", 2: ",title x2"}[self.title]
        return f"bm25[{self.units}{t},{tok},k1={self.k1},b={self.b}]"


_tok_cache: dict = {}


def _tokenize(texts, stopwords, stem):
    stemmer = Stemmer.Stemmer("english") if stem else None
    return bm25s.tokenize(texts, stopwords="en" if stopwords else None, stemmer=stemmer, show_progress=False)


def bm25_matrix(B: Bench, c: BM25Cfg) -> np.ndarray:
    texts, owner = B.units(c.units, c.title > 0)
    if c.title == 2:
        texts = [chunk_prefix(B.papers[o]) + t for t, o in zip(texts, owner)]
    key = (c.units, c.title, c.stopwords, c.stem)
    if key not in _tok_cache:
        _tok_cache[key] = (
            _tokenize(texts, c.stopwords, c.stem),
            bm25s.tokenize(B.qtext, stopwords="en" if c.stopwords else None,
                           stemmer=Stemmer.Stemmer("english") if c.stem else None,
                           return_ids=False, show_progress=False),
        )
    ctoks, qtoks = _tok_cache[key]
    r = bm25s.BM25(k1=c.k1, b=c.b)
    r.index(ctoks, show_progress=False)
    U = np.zeros((len(qtoks), len(texts)), dtype=np.float32)
    for i, q in enumerate(qtoks):
        ids = r.get_tokens_ids(q)
        if ids:
            U[i] = r.get_scores(ids)
    return U if c.units == "whole" else pool_max(U, owner, len(B.papers))


# ---------------------------------------------------------------- dense


@dataclass(frozen=True)
class DenseCfg:
    units: str = "whole"  # "whole" (title+abstract, truncated at 256 tokens) or "chunks<max_chars>"
    pooling: str = "max"  # max | max+whole | top2(+whole) | mean(max,whole)
    query_prefix: str = ""

    def label(self) -> str:
        u = "whole256" if self.units == "whole" else self.units
        pool = "" if self.units == "whole" else f",{self.pooling}"
        qp = f",qprefix={self.query_prefix!r}" if self.query_prefix else ""
        return f"dense[{u}{pool}{qp}]"


_unit_vecs: dict = {}


def unit_scores(B: Bench, units: str, prefix: str = "") -> tuple[np.ndarray, np.ndarray]:
    if units not in _unit_vecs:
        texts, owner = B.units(units)
        t = time.time()
        _unit_vecs[units] = B.cache.embed(texts, log=True)
        log(f"vectors for {units}: {len(texts)} ({time.time() - t:.0f}s)")
    texts, owner = B.units(units)
    return B.qvecs(prefix) @ _unit_vecs[units].T, owner


def dense_matrix(B: Bench, c: DenseCfg) -> np.ndarray:
    W, _ = unit_scores(B, "whole", c.query_prefix)
    if c.units == "whole":
        return W
    U, owner = unit_scores(B, c.units, c.query_prefix)
    n = len(B.papers)
    if c.pooling == "max":
        return pool_max(U, owner, n)
    if c.pooling == "max+whole":
        return np.maximum(pool_max(U, owner, n), W)
    if c.pooling == "mean(max,whole)":
        return 0.5 * (pool_max(U, owner, n) + W)
    if c.pooling == "top2+whole":
        # the whole-abstract vector counts as one more unit of the paper
        UW = np.concatenate([U, W], axis=1)
        ow = np.concatenate([owner, np.arange(n)])
        order = np.argsort(ow, kind="stable")
        return pool_top2(UW[:, order], ow[order], n)
    raise ValueError(c.pooling)


# ---------------------------------------------------------------- fusion


@dataclass(frozen=True)
class FuseCfg:
    method: str = "minmax"  # minmax | zscore | rrf
    w: float = 0.5  # weight of the dense side (rrf: 0.5 = plain RRF)
    rrf_k: int = 60
    depth: int = 100  # candidates kept from each side

    def label(self) -> str:
        p = f"k={self.rrf_k},w={self.w}" if self.method == "rrf" else f"w_dense={self.w}"
        return f"{self.method}({p},depth={self.depth})"


def _topmask(S: np.ndarray, depth: int) -> np.ndarray:
    if depth >= S.shape[1]:
        return np.ones_like(S, dtype=bool)
    idx = np.argpartition(-S, depth - 1, axis=1)[:, :depth]
    M = np.zeros_like(S, dtype=bool)
    np.put_along_axis(M, idx, True, axis=1)
    return M


def _normalise(S: np.ndarray, M: np.ndarray, method: str, rrf_k: int) -> np.ndarray:
    if method == "minmax":
        lo = np.where(M, S, np.inf).min(axis=1, keepdims=True)
        hi = np.where(M, S, -np.inf).max(axis=1, keepdims=True)
        N = (S - lo) / np.maximum(hi - lo, 1e-9)
        return np.where(M, N, 0.0)
    if method == "zscore":
        cnt = M.sum(axis=1, keepdims=True)
        mu = np.where(M, S, 0).sum(axis=1, keepdims=True) / cnt
        sd = np.sqrt(np.where(M, (S - mu) ** 2, 0).sum(axis=1, keepdims=True) / cnt)
        Z = (S - mu) / np.maximum(sd, 1e-9)
        zmin = np.where(M, Z, np.inf).min(axis=1, keepdims=True)
        return np.where(M, Z, zmin)  # not a candidate: as bad as the worst candidate
    if method == "rrf":
        ranks = np.empty(S.shape, dtype=np.int64)
        np.put_along_axis(ranks, np.argsort(-S, axis=1, kind="stable"), np.arange(1, S.shape[1] + 1)[None, :], axis=1)
        return np.where(M, 1.0 / (rrf_k + ranks), 0.0)
    raise ValueError(method)


_norm_cache: dict = {}


def _side(S: np.ndarray, method: str, depth: int, rrf_k: int):
    """(normalised scores, candidate mask) of one side; memoised per matrix object."""
    key = (id(S), method, depth, rrf_k if method == "rrf" else 0)
    if key not in _norm_cache:
        M = _topmask(S, depth)
        _norm_cache[key] = (S, _normalise(S, M, method, rrf_k).astype(np.float32), M)
    return _norm_cache[key][1:]


def fuse(Sb: np.ndarray, Sd: np.ndarray, c: FuseCfg) -> np.ndarray:
    Nb, Mb = _side(Sb, c.method, c.depth, c.rrf_k)
    Nd, Md = _side(Sd, c.method, c.depth, c.rrf_k)
    F = (1 - c.w) * Nb + c.w * Nd
    return np.where(Mb | Md, F, -np.inf)


# ---------------------------------------------------------------- search (train only)


def best(results: dict, n: int = 1):
    return sorted(results.items(), key=lambda kv: -kv[1])[:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller grids (for a smoke test)")
    ap.add_argument("--chunk-sizes", type=int, nargs="+", default=list(CHUNK_SIZES))
    args = ap.parse_args()
    sizes = tuple(args.chunk_sizes)
    B = Bench()
    log(f"{len(B.papers)} papers, train {len(B.rows['train'])} / test {len(B.rows['test'])} queries")
    trainlog: list[tuple[str, float]] = []

    def tr(label: str, S: np.ndarray) -> float:
        v = B.fast_ndcg10(S, "train")
        trainlog.append((label, v))
        log(f"train nDCG@10 {v:.4f}  {label}")
        return v

    # --- A. BM25 (coordinate search: tokenisation x title, then k1/b, then units)
    bres: dict[BM25Cfg, float] = {}
    bmat: dict[BM25Cfg, np.ndarray] = {}

    def bm(c: BM25Cfg) -> float:
        if c not in bres:
            bmat[c] = bm25_matrix(B, c)
            bres[c] = tr(c.label(), bmat[c])
        return bres[c]

    for stop, stem, title in itertools.product((True, False), (True, False), (1, 0, 2)):
        bm(BM25Cfg(stopwords=stop, stem=stem, title=title))
    b0 = best({c: v for c, v in bres.items()})[0][0]
    k1s = (0.9, 1.2, 1.5, 2.0) if args.quick else (0.6, 0.9, 1.2, 1.5, 2.0, 2.5)
    bs = (0.5, 0.75, 1.0) if args.quick else (0.4, 0.55, 0.7, 0.75, 0.85, 1.0)
    for k1, b in itertools.product(k1s, bs):
        bm(BM25Cfg(b0.units, b0.title, b0.stopwords, b0.stem, k1, b))
    b1 = best(bres)[0][0]
    for units in [f"chunks{m}" for m in sizes]:
        bm(BM25Cfg(units, b1.title, b1.stopwords, b1.stem, b1.k1, b1.b))
    b2 = best(bres)[0][0]
    if b2.units != "whole":  # k1/b again around the chosen units
        for k1, b in itertools.product(k1s, bs):
            bm(BM25Cfg(b2.units, b2.title, b2.stopwords, b2.stem, k1, b))
    bm_choice = best(bres)[0][0]
    bm_default = BM25Cfg()
    keep = {c for c, _ in best(bres, 6)} | {bm_default, bm_choice}
    for c in list(bmat):
        if c not in keep:
            del bmat[c]  # keep memory bounded; only these are re-checked in the fusion
    log(f"BM25 chosen on train: {bm_choice.label()} ({bres[bm_choice]:.4f})")

    # --- B. dense: units x pooling (+ a query-prefix check)
    dres: dict[DenseCfg, float] = {}
    dmat: dict[DenseCfg, np.ndarray] = {}

    def dn(c: DenseCfg) -> float:
        if c not in dres:
            dmat[c] = dense_matrix(B, c)
            dres[c] = tr(c.label(), dmat[c])
        return dres[c]

    dn(DenseCfg("whole"))
    dn(DenseCfg("whole", query_prefix="query: "))
    for m in sizes:
        for pool in ("max", "max+whole", "mean(max,whole)", "top2+whole"):
            dn(DenseCfg(f"chunks{m}", pool))
    dense_choice = best({c: v for c, v in dres.items() if not c.query_prefix})[0][0]
    log(f"dense alone, best on train: {dense_choice.label()} ({dres[dense_choice]:.4f})")

    # --- C. fusion: every dense config x fusion method/parameter x depth, BM25 fixed to its choice
    ws = np.round(np.arange(0.2, 0.81, 0.05), 2)
    fgrid = [FuseCfg("minmax", float(w), depth=d) for w in ws for d in (100, 1000)]
    fgrid += [FuseCfg("zscore", float(w), depth=d) for w in ws for d in (100, 1000)]
    fgrid += [FuseCfg("rrf", w, k, d) for k in (10, 30, 60, 100) for w in (0.4, 0.5, 0.6) for d in (100, 1000)]
    if args.quick:
        fgrid = fgrid[::3]
    fres: dict[tuple, float] = {}
    tr_rows = B.rows["train"]
    Sb = bmat[bm_choice][tr_rows]
    for dc in [c for c in dres if not c.query_prefix]:
        Sd = dmat[dc][tr_rows]
        for fc in fgrid:
            fres[(bm_choice, dc, fc)] = B.fast_ndcg10(fuse(Sb, Sd, fc), "train")
        _norm_cache.clear()
        (k, v), = best({k: v for k, v in fres.items() if k[1] == dc})
        log(f"train nDCG@10 {v:.4f}  best fusion with {dc.label()}: {k[2].label()}")
    (bc, dc, fc), v = best(fres)[0]
    # the BM25 side re-checked inside the fusion (its best alone need not be its best fused)
    Sd = dmat[dc][tr_rows]
    for c in [c for c, _ in best(bres, 6)] + [bm_default]:
        Sb = bmat[c][tr_rows]
        for f in [f for f in fgrid if f.method == fc.method and f.depth == fc.depth]:
            fres[(c, dc, f)] = B.fast_ndcg10(fuse(Sb, Sd, f), "train")
        _norm_cache.clear()
    (bc, dc, fc), v = best(fres)[0]
    assert abs(v - B.ndcg(fuse(bmat[bc], dmat[dc], fc), "train")) < 1e-9  # fast path == metrics.py
    log(f"CHOSEN on train ({v:.4f}): {bc.label()} + {dc.label()} + {fc.label()}")
    print("\n== Train nDCG@10, every configuration scored (in search order) ==")
    for label, x in trainlog:
        print(f"  {x:.4f}  {label}")
    print("\n== Train nDCG@10: best fusion per dense configuration (BM25 = its train choice) ==")
    for d_ in [c for c in dres if not c.query_prefix]:
        (k, x), = best({k: x for k, x in fres.items() if k[1] == d_ and k[0] == bm_choice})
        print(f"  {x:.4f}  {d_.label():<40} {k[2].label()}")
    print("\n== Train nDCG@10: best per fusion method and depth (chosen BM25 and dense) ==")
    for m, dep in itertools.product(("minmax", "zscore", "rrf"), (100, 1000)):
        (k, x), = best({k: x for k, x in fres.items()
                        if k[0] == bc and k[1] == dc and k[2].method == m and k[2].depth == dep} or
                       {k: x for k, x in fres.items() if k[1] == dc and k[2].method == m and k[2].depth == dep})
        print(f"  {x:.4f}  {k[2].label()}  (bm25 {k[0].label()})")
    print("\n== Top 15 fused configurations on train ==")
    for (b_, d_, f_), x in best(fres, 15):
        print(f"  {x:.4f}  {b_.label()} + {d_.label()} + {f_.label()}")

    # --- D. test, once, for the fixed rows
    rows = [
        ("BM25 default (whole, stop+stem, k1=1.5,b=.75)", bmat[bm_default]),
        (f"BM25 chosen: {bc.label()}", bmat[bc] if bc in bmat else bm25_matrix(B, bc)),
        ("dense whole256", dmat[DenseCfg("whole")]),
        (f"dense chosen for fusion: {dc.label()}", dmat[dc]),
        ("RRF k=60 (BM25 default + dense whole256, depth 100)",
         fuse(bmat[bm_default], dmat[DenseCfg("whole")], FuseCfg("rrf", 0.5, 60, 100))),
        ("pre-tuning defaults: BM25 default + dense chunks800 max, minmax w=0.5 depth 100",
         fuse(bmat[bm_default], dmat[DenseCfg("chunks800", "max")], FuseCfg("minmax", 0.5, depth=100))),
        (f"ablation: chosen dense + chosen fusion, BM25 default", fuse(bmat[bm_default], dmat[dc], fc)),
        (f"FUSED chosen: {fc.label()}", fuse(bmat[bc], dmat[dc], fc)),
    ]
    if dense_choice != dc:
        rows.insert(4, (f"dense best alone: {dense_choice.label()}", dmat[dense_choice]))
    print(f"\n{'config':<92} {'train nDCG@10':>13} {'test nDCG@10':>12} {'test R@100':>10} {'test MRR@10':>11}")
    for label, S in rows:
        t = B.score(S, "test")
        print(f"{label:<92} {B.ndcg(S, 'train'):>13.4f} {t['ndcg@10']:>12.4f} {t['recall@100']:>10.4f} {t['mrr@10']:>11.4f}")
    print(f"\nCHOSEN: {bc.label()} + {dc.label()} + {fc.label()}")
    print(f"wall time {time.time() - T0:.0f}s (embeddings from cache where present)")


if __name__ == "__main__":
    main()
