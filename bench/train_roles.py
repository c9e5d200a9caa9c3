"""Train the sentence-role classifier (rag/reading/roles.py) on CSAbstruct and report its test accuracy.

    .venv/bin/python bench/train_roles.py                       # tune on dev, report test, write rag/reading/roles.npz
    .venv/bin/python bench/train_roles.py --vectors pooled      # the same on one-pass vectors: roles.pooled.npz
    .venv/bin/python bench/train_roles.py --no-save             # only report
    .venv/bin/python bench/train_roles.py --json

Data: ../shared/data/csabstruct/{train,dev,test}.jsonl (2,189 computer-science abstracts, every sentence
labelled background / objective / method / result / other). Sentence vectors are the offline MiniLM's
(each sentence alone, the default; `--vectors pooled`: each abstract run through the chunk pass, each
sentence's tokens pooled and read out, rag.embedders.readout), cached under /tmp/paperchat-roles
(PAPERCHAT_ROLES_CACHE) so reruns take seconds. roles.npz serves two-pass libraries and roles.pooled.npz
one-pass ones (rag.reading.vector_kind): the GRUs trained on sentences alone lose 0.018 of test accuracy on
read-out vectors, where the logistic passes lost 0.007 (docs/quality.md, "Sentence roles").

Two models are fitted on train, and the one with the higher dev accuracy is written:
- `gru` (rag.reading.role_sequence): five bidirectional GRUs over the abstract's sentences (vector,
  position, hashed words), seeds 0-4, each stopped at its best dev epoch of 12, probabilities averaged.
  Training needs PyTorch, which no extra installs: `pip install torch==2.13.0` (the CPU build), ideally in a
  venv of its own beside .venv's packages; without it this model is skipped, with a message.
- `lr` (rag.reading.roles.RoleModel): two logistic passes, choices made on dev (the two passes' C, the weight of
  the transitions in the Viterbi pass).
Test is read once, for each model's chosen setting. Needs scikit-learn (dev extra); the shipped model is used
with numpy only. Fixed seeds: the same data gives the same weights (PyTorch on the CPU, one thread).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import _roles_gru  # noqa: E402
from rag.reading.roles import (ROLES, WEIGHTS, RoleModel, _log_softmax, context, features, lexical,  # noqa: E402
                               load_weights)
from rag.reading.vector_kind import POOLED, weights_for  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "csabstruct"
if not DATA.exists():
    DATA = Path("/work/shared/data/csabstruct")
CACHE = Path(os.environ.get("PAPERCHAT_ROLES_CACHE", "/tmp/paperchat-roles"))
SEED = 0
C1 = (0.1,)  # first pass (sentence features); 0.3 and 1.0 scored lower on dev without the second pass
C2 = (0.1, 1.0)  # second pass (neighbours' first-pass probabilities)
WEIGHTS_GRID = (0.0, 0.5, 1.0)  # Viterbi transitions on top


def load(split: str) -> list[dict]:
    with open(DATA / f"{split}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def vectors(split: str, rows: list[dict], kind: str = "pooled") -> list[np.ndarray]:
    """Per abstract, its sentences' MiniLM vectors (cached by the sentences' hash): `pooled` reads each abstract
    in one pass per chunk (no title; rag.reading.windows, as ingest does), `standalone` each sentence alone."""
    sents = [s for r in rows for s in r["sentences"]]
    key = hashlib.sha1("\x1e".join(sents).encode()).hexdigest()[:12]
    if kind != "standalone":  # pooled vectors are read out by the shipped read-out: another read-out, other vectors
        from rag.embedders.readout import readout_id

        key = f"{key}-{readout_id()}"
    path = CACHE / (f"csabstruct-{split}-{key}.npy" if kind == "standalone" else f"csabstruct-{split}-{key}-{kind}.npy")
    if path.exists():
        flat = np.load(path)
    else:
        from rag.embedders import MiniLMEmbeddings
        from rag.reading.windows import sentence_vectors

        t = time.time()
        emb = MiniLMEmbeddings()
        flat = (emb.embed_array(sents) if kind == "standalone"
                else np.vstack(sentence_vectors(emb, [("", r["sentences"]) for r in rows])))
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, flat)
        print(f"embedded {len(sents)} {split} sentences in {time.time() - t:.0f} s", file=sys.stderr)
    out, i = [], 0
    for r in rows:
        out.append(flat[i : i + len(r["sentences"])])
        i += len(r["sentences"])
    return out


def design(rows: list[dict], vecs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """First-pass features of every sentence (as RoleModel.first_pass builds them), labels, abstract lengths."""
    import scipy.sparse as sp

    x = sp.vstack([sp.csr_matrix(np.hstack([features(v), lexical(r["sentences"])])) for r, v in zip(rows, vecs)]).tocsr()
    y = np.array([ROLES.index(lab) for r in rows for lab in r["labels"]])
    return x, y, [len(r["labels"]) for r in rows]


def transitions(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log start, transition and prior probabilities of roles (add-one smoothed)."""
    k = len(ROLES)
    start, trans, prior = np.ones(k), np.ones((k, k)), np.ones(k)
    for r in rows:
        ys = [ROLES.index(lab) for lab in r["labels"]]
        start[ys[0]] += 1
        for a, b in zip(ys, ys[1:]):
            trans[a, b] += 1
        for y in ys:
            prior[y] += 1
    return (np.log(start / start.sum()), np.log(trans / trans.sum(axis=1, keepdims=True)), np.log(prior / prior.sum()))


def _lr(c: float):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=3000, random_state=SEED)


def _log_proba(lr, x: np.ndarray) -> np.ndarray:
    return lr.predict_log_proba(x)


def stacked(lp: np.ndarray, lengths: list[int]) -> np.ndarray:
    out, i = [], 0
    for n in lengths:
        out.append(context(lp[i : i + n]))
        i += n
    return np.vstack(out)


def first_passes(x: np.ndarray, y: np.ndarray, lengths: list[int], c1: float):
    """The first-pass model on all of train, and its out-of-fold log-probabilities (5 folds of whole
    abstracts), which the second pass learns from (in-sample ones would be over-confident)."""
    from sklearn.model_selection import GroupKFold

    groups = np.concatenate([[i] * n for i, n in enumerate(lengths)])
    oof = np.zeros((len(y), len(ROLES)))
    for a, b in GroupKFold(5).split(x, y, groups):
        oof[b] = _log_proba(_lr(c1).fit(x[a], y[a]), x[b])
    return _lr(c1).fit(x, y), oof


def predict(m: RoleModel, x: np.ndarray, lengths: list[int]) -> np.ndarray:
    lp1 = _log_softmax(np.asarray(x @ m.coef1.T) + m.intercept1)
    out, i = [], 0
    for n in lengths:
        out.append(m.decode(m.second_pass(lp1[i : i + n])))
        i += n
    return np.concatenate(out)


def predict_rows(m, rows: list[dict], vecs: list[np.ndarray]) -> np.ndarray:
    """Any role model's predictions (its own features, as the library reads them), every abstract in turn."""
    return np.array([ROLES.index(r) for row, v in zip(rows, vecs) for r in m.predict(v, row["sentences"])])


def scores(y: np.ndarray, p: np.ndarray) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    per = f1_score(y, p, labels=range(len(ROLES)), average=None, zero_division=0)
    return {"accuracy": round(float(accuracy_score(y, p)), 4),
            "macro_f1": round(float(f1_score(y, p, average="macro")), 4),
            "f1": {r: round(float(f), 4) for r, f in zip(ROLES, per)}}


def choose(grid: list[dict], n_dev: int) -> dict:
    """The best setting on dev, but the Viterbi pass only when it beats the best setting without it by more
    than one standard error of dev accuracy (sqrt(p(1-p)/n), ~0.010 on CSAbstruct dev's 2,000 sentences): the
    second pass already reads the neighbours' roles, and a gain inside dev's noise is not one. (Pooled vectors:
    transitions x0.5 led by 0.0035 on dev, inside its noise.)"""
    plain = max((g for g in grid if g["trans_weight"] == 0), key=lambda g: (g["dev"], -g["C1"], -g["C2"]))
    best = max(grid, key=lambda g: (g["dev"], -g["trans_weight"]))
    se = float(np.sqrt(plain["dev"] * (1 - plain["dev"]) / max(n_dev, 1)))
    return best if best["dev"] > plain["dev"] + se else plain


def speed(other: Path, kind: str, repeat: int = 3) -> int:
    """Seconds per abstract of the shipped role weights and of `other`, best of `repeat`, side by side."""
    rows = load("test")
    parts = list(zip(vectors("test", rows, kind), (r["sentences"] for r in rows)))
    took = {}
    for name, path in (("shipped", weights_for(WEIGHTS, kind)), ("other", other)):
        m = load_weights(path)
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            for b in range(0, len(parts), 64):
                m.predict_many(parts[b:b + 64])
            best = min(best, time.perf_counter() - t)
        took[name] = best / len(parts)
        print(f"{name:<8} {path.name}: {1000 * took[name]:.2f} ms per abstract ({len(parts)} abstracts, best of {repeat})")
    print(f"shipped / other: {took['shipped'] / took['other']:.2f}x")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--speed", type=Path, metavar="OTHER.npz",
                    help="no training: time the shipped weights against OTHER.npz (e.g. the logistic passes of an "
                         "earlier commit) classifying CSAbstruct test, as ingest calls them (64 abstracts a call)")
    ap.add_argument("--vectors", choices=("pooled", "standalone"), default="standalone",
                    help="each sentence alone (the shipped weights) or pooled inside its chunk's pass and read out")
    args = ap.parse_args()
    if not (DATA / "train.jsonl").exists():
        print(f"skipped: CSAbstruct not found at {DATA}", file=sys.stderr)
        return 0
    if args.speed:
        return speed(args.speed, args.vectors)
    np.random.seed(SEED)
    rows = {s: load(s) for s in ("train", "dev", "test")}
    vecs = {s: vectors(s, rows[s], args.vectors) for s in rows}
    mats = {s: design(rows[s], vecs[s]) for s in rows}
    xt, yt, lt = mats["train"]
    xd, yd, ld = mats["dev"]
    xs, ys, ls = mats["test"]
    start, trans, prior = transitions(rows["train"])
    grid, models = [], {}
    for c1 in C1:
        first, oof = first_passes(xt, yt, lt, c1)
        for c2 in C2:
            second = _lr(c2).fit(stacked(oof, lt), yt)
            for w in WEIGHTS_GRID:
                m = RoleModel(first.coef_, first.intercept_, second.coef_, second.intercept_, start, trans, prior, w,
                              args.vectors)
                models[(c1, c2, w)] = m
                grid.append({"C1": c1, "C2": c2, "trans_weight": w,
                             "dev": scores(yd, predict(m, xd, ld))["accuracy"],
                             "dev_first_pass": scores(yd, first.predict(xd))["accuracy"]})
    for g in grid:
        print(f"C1={g['C1']:<5} C2={g['C2']:<5} transitions x{g['trans_weight']:<4} dev accuracy {g['dev']:.4f}"
              f"  (first pass alone {g['dev_first_pass']:.4f})", file=sys.stderr)
    best = choose(grid, len(yd))
    lr_model = models[(best["C1"], best["C2"], best["trans_weight"])]
    res = {"lr": {"chosen": {"C1": best["C1"], "C2": best["C2"], "trans_weight": best["trans_weight"]},
                  "dev_accuracy": best["dev"], "test": scores(ys, predict(lr_model, xs, ls))},
           "test_sentences": int(len(ys)), "grid": grid}
    chosen, model_obj = "lr", lr_model
    if _roles_gru.available():
        gru, gru_dev = _roles_gru.train(rows, vecs, args.vectors, log=lambda m: print(m, file=sys.stderr))
        res["gru"] = {"dev_accuracy": round(gru_dev, 4),
                      "test": scores(ys, predict_rows(gru, rows["test"], vecs["test"]))}
        if gru_dev > best["dev"]:
            chosen, model_obj = "gru", gru
    else:
        print("PyTorch not installed: the GRU model is skipped (pip install torch==2.13.0, the CPU build)",
              file=sys.stderr)
    res["chosen"] = chosen
    res["test"] = res[chosen]["test"]
    if not args.no_save:
        out = WEIGHTS.with_name("roles.pooled.npz") if args.vectors == POOLED else WEIGHTS
        model_obj.save(out)
        # What ships is float16 and read by numpy: check the saved file scores the same.
        res["test_shipped"] = scores(ys, predict_rows(load_weights(out), rows["test"], vecs["test"]))
        res["weights_bytes"] = out.stat().st_size
        res["weights"] = str(out.relative_to(ROOT))
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for name in ("lr", "gru"):
            if name in res:
                t = res[name]["test"]
                print(f"{name:<4} dev accuracy {res[name]['dev_accuracy']:.4f}; CSAbstruct test "
                      f"({res['test_sentences']} sentences) accuracy {t['accuracy']:.4f}, "
                      f"macro-F1 {t['macro_f1']:.4f}; per role {t['f1']}")
        print(f"chosen on dev: {chosen}")
        if "test_shipped" in res:
            print(f"  shipped weights {res['weights']} ({res['weights_bytes']} bytes, float16): accuracy "
                  f"{res['test_shipped']['accuracy']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
