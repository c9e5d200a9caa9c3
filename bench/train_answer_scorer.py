"""Train the answer-sentence scorer (rag/reading/answer_scorer.py) and report how it ranks each test split.

    .venv/bin/python bench/train_answer_scorer.py              # choose on train, report test, write the weights
    .venv/bin/python bench/train_answer_scorer.py --vectors pooled   # the same on one-pass vectors: answer_scorer.pooled.npz
    .venv/bin/python bench/train_answer_scorer.py --no-save    # only report
    .venv/bin/python bench/train_answer_scorer.py --json

Data (../shared/data, never copied): mlqa questions with their marked answer sentences (train / test splits),
PubMedQA PQA-L (the question's abstract = CONTEXTS then LONG_ANSWER; the LONG_ANSWER sentences answer it;
questions 1-500 train, 501-1000 test, as bench/pubmedqa_answers.py halves them) and SciFact claims with
rationale sentences (claims_train train, claims_dev test; every cited abstract with rationales). Sentences
are split by paperchat's splitter (SciFact's come split). Sentence and question vectors are the offline
MiniLM's (each alone; `--vectors pooled`: each abstract read in one pass per chunk
with its title, each sentence's tokens pooled, as one-pass ingest stores them; questions alone), cached under /tmp/paperchat-answer-scorer (PAPERCHAT_ANSWER_CACHE) so reruns take seconds.

Choices (the regularisation C, the weight of mlqa rows against the biomedical ones, and whether `partial`
sentences train as negatives or are left out) are made by 5-fold cross-validation over the mlqa train
questions (PubMedQA and SciFact train rows always in the fold's training data); test is read once.
Reported per test split, inside each question's own abstract: MRR of the first answer sentence and top-1
hit, for MiniLM cosine, today's extractive ranking (rag.reading.grades.relevance plus the role bonus) and
the scorer. Needs scikit-learn (dev extra); the shipped model runs in numpy. Fixed seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import pooled_vectors, title_prefix  # noqa: E402
from rag.reading import answer_scorer as sc  # noqa: E402
from rag.reading.grades import OVERLAP_WEIGHT, content_stems  # noqa: E402
from rag.reading.questions import preferred_roles  # noqa: E402
from rag.reading.roles import classify_vectors  # noqa: E402
from rag.reading.vector_kind import POOLED, STANDALONE, weights_for  # noqa: E402
from rag.reading.sentences import split_sentences  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")
CACHE = Path(os.environ.get("PAPERCHAT_ANSWER_CACHE", "/tmp/paperchat-answer-scorer"))
SEED = 0
# The grid is what a 2-core machine under load could afford; wider runs (C 0.03-1, partial as negatives,
# mlqa alone) scored lower or the same on mlqa train CV (docs/quality.md, "Answers: the answer-sentence scorer").
C_GRID = (0.1,)
# A logistic regression, or a network with one hidden layer of this many units (numpy inference either way).
MODELS = ("lr",)
HIDDEN, MLP_ALPHA = 32, 1.0
MLQA_WEIGHT = (20.0,)
PARTIAL = ("dropped",)
# Other abstracts read as all-negative per question (closest first): mlqa's own, and fewer of the larger sets.
NEGATIVES = {"mlqa": 3, "pubmedqa": 1, "scifact": 1}
# ... each of their sentences weighing this share of an own-abstract sentence: at 1.0 the absolute cosine
# took over and the seed sentence restating the question outscored the one answering it (0.856 vs 0.845).
NEGATIVE_WEIGHT = 0.3
ROLE_BONUS = 0.3  # today's extractive ranking (rag.tasks.extractive before this scorer)


def norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def marks(sentences: list[str], marked: list[str]) -> list[bool]:
    """A sentence counts when it contains, or is contained in, a marked sentence (mlqa's scoring rule)."""
    ms = [norm(m) for m in marked if norm(m)]
    return [any(m in norm(s) or (norm(s) and norm(s) in m) for m in ms) for s in sentences]


def mlqa() -> dict[str, list[dict]]:
    lib, titles = {}, {}
    with open(DATA / "mlqa" / "library.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            lib[r["id"]] = r["abstract"]
            titles[r["id"]] = r.get("title", "")
    out: dict[str, list[dict]] = {"train": [], "test": []}
    with open(DATA / "mlqa" / "questions.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            sents = split_sentences(lib[q["id"]])
            ans, part = marks(sents, q["answer_sentences"]), marks(sents, q.get("partial", []))
            out[q["split"]].append({"q": q["q"], "type": q["type"], "sentences": sents, "prefix": title_prefix(titles[q["id"]]),
                                    "label": [1 if a else (2 if p else 0) for a, p in zip(ans, part)]})
    return out


def pubmedqa() -> dict[str, list[dict]]:
    d = json.loads((DATA / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    out: dict[str, list[dict]] = {"train": [], "test": []}
    for i, r in enumerate(d.values()):
        ctx = [s for c in r["CONTEXTS"] for s in split_sentences(c)]
        ans = split_sentences(r["LONG_ANSWER"])
        out["train" if i < 500 else "test"].append(
            {"q": r["QUESTION"], "type": "pubmedqa", "sentences": ctx + ans, "label": [0] * len(ctx) + [1] * len(ans)})
    return out


def scifact() -> dict[str, list[dict]]:
    docs, titles = {}, {}
    with open(DATA / "scifact" / "corpus_sentences.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            docs[str(r["doc_id"])] = [s.strip() for s in r["abstract"]]
            titles[str(r["doc_id"])] = r.get("title", "")
    out: dict[str, list[dict]] = {}
    for split, name in (("train", "claims_train"), ("test", "claims_dev")):
        out[split] = []
        with open(DATA / "scifact" / f"{name}.jsonl", encoding="utf-8") as f:
            for line in f:
                c = json.loads(line)
                for doc, ev in c.get("evidence", {}).items():
                    if doc not in docs:
                        continue
                    idx = {i for e in ev for i in e["sentences"]}
                    sents = docs[doc]
                    out[split].append({"q": c["claim"], "type": "scifact", "sentences": sents, "prefix": title_prefix(titles[doc]),
                                       "label": [int(i in idx) for i in range(len(sents))]})
    return out


def pooled(items: list[dict]) -> dict[str, np.ndarray]:
    """`--vectors train_answer_scorer:pooled`: sentences as one-pass ingest stores them (embed_all)."""
    return embed_all(items, "pooled")


def embed_all(items: list[dict], kind: str = "standalone") -> dict[str, np.ndarray]:
    """Text -> unit MiniLM vector: questions embedded alone; sentences alone (`standalone`) or, as one-pass
    ingest stores them (PAPERCHAT_CHUNK__ONE_PASS), pooled inside their abstract's chunk pass (`pooled`,
    bench/_common.pooled_vectors)."""
    vec = embed_alone(items)
    if kind == "pooled":
        vec.update(pooled_vectors([(it.get("prefix", ""), it["sentences"]) for it in items], CACHE, "answers"))
    return vec


def embed_alone(items: list[dict]) -> dict[str, np.ndarray]:
    texts = sorted({t for it in items for t in [it["q"], *it["sentences"]]})
    key = hashlib.sha1("\x1e".join(texts).encode()).hexdigest()[:12]
    path = CACHE / f"vectors-{key}.npy"
    if path.exists():
        flat = np.load(path)
    else:
        from rag.embedders import MiniLMEmbeddings

        t = time.time()
        flat = np.asarray(MiniLMEmbeddings().embed_array(texts), dtype=np.float32)
        flat /= np.clip(np.linalg.norm(flat, axis=1, keepdims=True), 1e-12, None)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, flat)
        print(f"embedded {len(texts)} texts in {time.time() - t:.0f} s", file=sys.stderr)
    return dict(zip(texts, flat))


def domain_direction(ml: list[dict], bio: list[dict], vec: dict[str, np.ndarray]) -> np.ndarray:
    """Unit vector from the mean ML abstract to the mean biomedical one (train abstracts' sentence means),
    followed by the two means' positions on it (what the scorer maps to 0 and 1)."""
    mean = lambda items: np.mean([np.mean([vec[s] for s in it["sentences"]], axis=0) for it in items], axis=0)  # noqa: E731
    d = mean(bio) - mean(ml)
    d = d / np.linalg.norm(d)
    return np.concatenate([d, [mean(ml) @ d, mean(bio) @ d]]).astype(np.float32)


def prepare(items: list[dict], vec: dict[str, np.ndarray], domain: np.ndarray, kind: str = STANDALONE) -> None:
    """Each item's features, roles (from the role weights for `kind` vectors) and today's scores (in place)."""
    for it in items:
        sv = np.stack([vec[s] for s in it["sentences"]])
        qv = vec[it["q"]]
        it["roles"] = classify_vectors(sv, it["sentences"], kind)
        it["x"] = sc.features(it["q"], it["sentences"], sv, qv, it["roles"], domain=domain)
        it["cos"] = sv @ qv
        wanted = preferred_roles(it["q"])
        q = content_stems(it["q"])
        rel = it["cos"] + OVERLAP_WEIGHT * np.array([len(q & content_stems(x)) / len(q) if q else 0.0
                                                     for x in it["sentences"]])
        it["today"] = rel + np.array([ROLE_BONUS if r in wanted else 0.0 for r in it["roles"]])


def add_negatives(items: list[dict], vec: dict[str, np.ndarray], domain: np.ndarray, k: int,
                  kind: str = STANDALONE) -> None:
    """Each item's question read against the k other abstracts of its set and split whose best sentence is
    closest to it (as retrieval would offer them), every sentence a negative: the probability must also say
    when an abstract does not answer at all, not only which of its sentences answers best (in place)."""
    mats = [np.stack([vec[s] for s in it["sentences"]]) for it in items]
    owner = np.concatenate([[i] * len(m) for i, m in enumerate(mats)])
    flat = np.vstack(mats)
    for i, it in enumerate(items):
        best = np.full(len(items), -2.0)
        np.maximum.at(best, owner, flat @ vec[it["q"]])
        best[i] = -2.0
        xs = []
        for j in np.argsort(-best)[:k]:
            o = items[int(j)]
            if norm(" ".join(o["sentences"])) == norm(" ".join(it["sentences"])):
                continue
            roles = o.get("roles") or classify_vectors(mats[int(j)], o["sentences"], kind)
            xs.append(sc.features(it["q"], o["sentences"], mats[int(j)], vec[it["q"]], roles, domain=domain))
        it["x_neg"] = np.vstack(xs) if xs else np.zeros((0, len(sc.NAMES)), dtype=np.float32)


def ranking(items: list[dict], scores: list[np.ndarray]) -> dict:
    """MRR of the first answer sentence inside each item's abstract, and top-1 hit (ties: text order)."""
    rr, top = [], []
    for it, s in zip(items, scores):
        order = sorted(range(len(s)), key=lambda i: (-float(s[i]), i))
        ranks = [k for k, i in enumerate(order) if it["label"][i] == 1]
        if not ranks:
            continue
        rr.append(1.0 / (1 + ranks[0]))
        top.append(ranks[0] == 0)
    return {"mrr": round(float(np.mean(rr)), 4), "top1": round(float(np.mean(top)), 4), "questions": len(rr)}


def stack(items: list[dict], partial: str, weight: float = 1.0):
    xs, ys, ws = [], [], []
    for it in items:
        lab = np.array(it["label"])
        keep = lab != 2 if partial == "dropped" else np.ones(len(lab), bool)
        neg = it.get("x_neg", np.zeros((0, it["x"].shape[1]), dtype=np.float32))
        xs.append(np.vstack([it["x"][keep], neg]))
        ys.append(np.concatenate([(lab[keep] == 1).astype(int), np.zeros(len(neg), dtype=int)]))
        ws.append(np.concatenate([np.full(int(keep.sum()), weight), np.full(len(neg), weight * NEGATIVE_WEIGHT)]))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


def fit(train: list[tuple[list[dict], float]], c: float, partial: str, domain: np.ndarray,
        kind: str = "lr") -> sc.AnswerScorer:
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    parts = [stack(items, partial, w) for items, w in train if items]
    x = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    w = np.concatenate([p[2] for p in parts])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    if kind == "mlp":
        net = MLPClassifier(hidden_layer_sizes=(HIDDEN,), alpha=MLP_ALPHA, max_iter=200, random_state=SEED)
        net.fit((x - mean) / scale, y, sample_weight=w / w.mean())
        (w1, w2), (b1, b2) = net.coefs_, net.intercepts_
        return sc.AnswerScorer(w2[:, 0], b2[0], mean, scale, domain, w1=w1, b1=b1)
    lr = LogisticRegression(C=c, max_iter=5000, random_state=SEED)
    lr.fit((x - mean) / scale, y, sample_weight=w / w.mean())
    return sc.AnswerScorer(lr.coef_[0], lr.intercept_[0], mean, scale, domain)


def previous(items: list[dict], path: Path | None) -> list[np.ndarray] | None:
    """Scores of the scorer shipped before (an npz of an earlier commit), its columns picked by name: what
    this run's scorer is measured beside."""
    if path is None or not path.exists():
        return None
    with np.load(path) as z:
        names = [str(n) for n in z["names"]]
        if not set(names) <= set(sc.NAMES):
            return None
        cols = [sc.NAMES.index(n) for n in names]
        coef, b, mean, scale = z["coef"], float(z["intercept"]), z["mean"], z["scale"]
        w1 = (z["w1"].astype(np.float32), z["b1"]) if "w1" in z.files else None
    out = []
    for it in items:
        h = (it["x"][:, cols] - mean) / scale
        if w1 is not None:
            h = np.maximum(h @ w1[0] + w1[1], 0.0)
        out.append(1.0 / (1.0 + np.exp(-(h @ coef + b))))
    return out


def predict(m: sc.AnswerScorer, items: list[dict]) -> list[np.ndarray]:
    return [m.predict(it["x"]) for it in items]


def cross_validated(ml: list[dict], others: list[dict], c: float, w: float, partial: str,
                    kind: str = "lr", domain: np.ndarray | None = None) -> tuple[dict, list, list]:
    """Out-of-fold scores of the mlqa train questions (5 folds; the other sets always train), and the
    fold models with the questions each did not see."""
    rng = np.random.RandomState(SEED)
    fold = rng.permutation(len(ml)) % 5
    oof: list = [None] * len(ml)
    models = []
    for k in range(5):
        tr = [it for it, f in zip(ml, fold) if f != k]
        m = fit([(tr, w), (others, 1.0)], c, partial, np.zeros(1) if domain is None else domain, kind)
        models.append((m, [ml[i]["q"] for i in np.flatnonzero(fold == k)]))
        for i in np.flatnonzero(fold == k):
            oof[i] = m.predict(ml[i]["x"])
    return ranking(ml, oof), oof, models


def save_folds(models: list, kind: str, saved: bool) -> Path:
    """The fold models, for bench/tune_answer_pick.py --folds: each mlqa train question scored by the model
    that did not see it, so thresholds are chosen on honest probabilities. One folder per kind of vectors
    (folds/, folds-pooled/), and a --no-save run's apart (…-no-save/): each folder holds the folds of the
    weights last written for its kind."""
    d = CACHE / ("folds" + ("" if kind == STANDALONE else f"-{kind}") + ("" if saved else "-no-save"))
    d.mkdir(parents=True, exist_ok=True)
    for k, (m, qs) in enumerate(models):
        m.save(d / f"{k}.npz")
        (d / f"{k}.json").write_text(json.dumps(qs), encoding="utf-8")
    return d


def precision_at(items: list[dict], scores: list[np.ndarray], t: float) -> tuple[float, int]:
    """Share of sentences scoring >= t that are marked answers or partial ones (inside the own abstract)."""
    good = tot = 0
    for it, s in zip(items, scores):
        for lab, p in zip(it["label"], s):
            if p >= t:
                tot += 1
                good += lab in (1, 2)
    return (good / tot if tot else 1.0), tot


def vectors_from(spec: str | None):
    """The function giving each text its unit sentence vector: MiniLM on the text itself (embed_all) by
    default, or `module:function` taking the items and returning {text: vector} (e.g. vectors pooled from
    the chunk pass), so the scorer can be retrained on the vectors it will be given at ask time."""
    if not spec:
        return embed_all
    if spec == POOLED:
        return pooled
    import importlib

    mod, _, fn = spec.partition(":")
    return getattr(importlib.import_module(mod), fn)


def main(argv: list[str] | None = None, vectors=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--vectors", help="`pooled` (as one-pass ingest stores sentences: writes answer_scorer.pooled.npz) "
                    "or module:function giving {text: unit vector} for the items (default: MiniLM, each alone)")
    ap.add_argument("--before", type=Path,
                    help="the scorer to report beside the new one (default: the weights shipped now for this kind)")
    args = ap.parse_args(argv)
    kind = POOLED if args.vectors in (POOLED, "train_answer_scorer:pooled") else STANDALONE
    out_file = sc.WEIGHTS.with_name("answer_scorer.pooled.npz") if kind == POOLED else sc.WEIGHTS
    args.before = args.before or weights_for(sc.WEIGHTS, kind)
    if not (DATA / "mlqa" / "questions.jsonl").exists():
        print(f"skipped: mlqa not found under {DATA}", file=sys.stderr)
        return 0
    before_file = CACHE / "before.npz"
    if args.before.exists():  # read now: saving overwrites the shipped file
        CACHE.mkdir(parents=True, exist_ok=True)
        before_file.write_bytes(args.before.read_bytes())
    sets = {"mlqa": mlqa(), "pubmedqa": pubmedqa(), "scifact": scifact()}
    every = [it for s in sets.values() for part in s.values() for it in part]
    vec = (vectors or vectors_from(args.vectors))(every)
    t = time.time()
    domain = domain_direction(sets["mlqa"]["train"], sets["pubmedqa"]["train"] + sets["scifact"]["train"], vec)
    prepare(every, vec, domain, kind)
    for name, s in sets.items():
        for split in ("train", "test"):
            add_negatives(s[split], vec, domain, NEGATIVES[name], kind)
    print(f"features of {sum(len(it['sentences']) for it in every)} sentences in {time.time() - t:.0f} s",
          file=sys.stderr)
    ml, others = sets["mlqa"]["train"], sets["pubmedqa"]["train"] + sets["scifact"]["train"]
    grid = []
    for model in MODELS:  # (not `kind`: that is the vectors' kind, which names the folds' folder below)
        for partial in PARTIAL:
            for c in C_GRID:
                for w in MLQA_WEIGHT:
                    r, oof, folds = cross_validated(ml, others, c, w, partial, model, domain)
                    grid.append({"model": model, "C": c, "mlqa_weight": w, "partial": partial, **r, "oof": oof,
                                 "folds": folds})
                    print(f"{model:<4} partial {partial:<8} C={c:<5} mlqa x{w:<4} mlqa train (5-fold) MRR "
                          f"{r['mrr']:.4f} top-1 {r['top1']:.4f}", file=sys.stderr)
    best = max(grid, key=lambda g: (g["mrr"] + g["top1"], g["model"] == "lr", -g["C"]))
    m = fit([(ml, best["mlqa_weight"]), (others, 1.0)], best["C"], best["partial"], domain, best["model"])
    res: dict = {"grid": [{k: v for k, v in g.items() if k not in ("oof", "folds")} for g in grid],
                 "test": {}, "train_cv": {"folds": str(save_folds(best["folds"], kind, not args.no_save))}}
    oof = best.pop("oof")
    best.pop("folds")
    res["chosen"] = best
    res["train_cv"]["precision_by_threshold"] = {
        f"{t:.2f}": round(precision_at(ml, oof, t)[0], 3) for t in np.arange(0.2, 0.95, 0.05)}
    for name, s in sets.items():
        items = s["test"]
        row = {"cosine": ranking(items, [it["cos"] for it in items]),
               "today": ranking(items, [it["today"] for it in items]),
               "scorer": ranking(items, predict(m, items))}
        old = previous(items, before_file if before_file.exists() else None)
        if old is not None:
            row["before"] = ranking(items, old)
        if name == "mlqa":
            types = sorted({it["type"] for it in items})
            of = lambda ty: [i for i, it in enumerate(items) if it["type"] == ty]  # noqa: E731
            row["by_type"] = {ty: {"scorer": ranking([items[i] for i in of(ty)], predict(m, [items[i] for i in of(ty)])),
                                   "before": ranking([items[i] for i in of(ty)], [old[i] for i in of(ty)]) if old else None}
                              for ty in types}
        res["test"][name] = row
    if not args.no_save:
        m.save(out_file)
        shipped = sc.AnswerScorer.load(out_file)
        res["test_shipped_mlqa"] = ranking(sets["mlqa"]["test"], predict(shipped, sets["mlqa"]["test"]))
        res["weights_bytes"] = out_file.stat().st_size
        res["weights"] = out_file.name
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"chosen by 5-fold CV on mlqa train: {best['model']} C={best['C']} mlqa weight x{best['mlqa_weight']} "
          f"partial {best['partial']} (CV MRR {best['mrr']:.4f}, top-1 {best['top1']:.4f})")
    print("in-abstract ranking, test splits (MRR of the first answer sentence / top-1 is an answer):")
    fmt = lambda r: f"{r['mrr']:.3f}/{r['top1']:.3f}" if r else "  -  "  # noqa: E731
    for name, row in res["test"].items():
        print(f"  {name:<9} ({row['scorer']['questions']} q)  cosine {fmt(row['cosine'])}  relevance+roles "
              f"{fmt(row['today'])}  before {fmt(row.get('before'))}  scorer {fmt(row['scorer'])}")
    for ty, r in res["test"]["mlqa"]["by_type"].items():
        print(f"    mlqa {ty:<13} ({r['scorer']['questions']:>2} q) before {fmt(r['before'])}  scorer {fmt(r['scorer'])}")
    print("mlqa train (out-of-fold): share of sentences >= t that are answer or partial:",
          res["train_cv"]["precision_by_threshold"])
    if "weights_bytes" in res:
        print(f"shipped weights {res['weights']}: {res['weights_bytes']} bytes; mlqa test from the saved file "
              f"{fmt(res['test_shipped_mlqa'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
