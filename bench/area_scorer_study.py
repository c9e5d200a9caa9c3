"""Would the answer-sentence scorer help the paper–area scorer (issue 33 item 1)? Leave-one-area-out on the
mlqa train areas, then fit on all train areas and report the test areas: today's features
(rag.tasks.area_scorer.FEATURES) against the same plus the answer scorer's reading of each paper with the
topic as the question (rag.reading.answer_scorer: its most probable sentence, the mean of its two best, its
best contribution sentence, and the first against the best candidate's); whether the head of a name with a
setting is named in the paper's contribution sentences (head_contrib); and, on today's features, the
covered papers ordered by a second regression (core against related and off) instead of the probability,
with rag.tasks.themes' MMR at its 0.7 and without it (1.0); and today's features without the records' own
keywords (their three columns zeroed, as they were before JSON Lines records kept keywords: the library must
be ingested by a version that reads them for the difference to show).

Each held-out area is scored as a summary reads it: the cut-off chosen on the other areas
(bench/train_area_scorer.choose), the gate and the CONFIDENT bypass of rag.tasks.area_scorer.on_topic, at
most 15 papers (MMR over the paper vectors, as rag.tasks.themes.select_papers); precision, core recall and failures by rag.evaluation.mlqa.

    nice -n 10 .venv/bin/python bench/area_scorer_study.py --home H --library mlqa-minilm

(H: the eval home of `paperchat eval summaries --mlqa ../shared/data/mlqa`, e.g. its evals/mlqa-<hash>.)
Nothing is written to rag/: the shipped weights stay bench/train_area_scorer.py's.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import train_area_scorer as T  # noqa: E402

EXTRA = ("ans_max", "ans_top2", "ans_contrib", "ans_gap", "head_contrib")
VARIANTS = {"today's features": (), "+ ans_max": (0,), "+ ans_top2": (1,), "+ ans_contrib": (2,),
            "+ ans_max, ans_gap": (0, 3), "+ all four": (0, 1, 2, 3), "+ head_contrib": (4,)}


def answer_features(topic: str, readings, emb) -> np.ndarray:
    from rag.reading.answer_scorer import probabilities

    probs = probabilities(topic, [r.sentences for r in readings], emb, [r.roles for r in readings])
    rows = []
    for r, p in zip(readings, probs):
        p = np.asarray(p) if len(p) else np.zeros(1)
        contrib = [i for i in r.contribution() if i < len(p)]
        rows.append([p.max(), np.sort(p)[-2:].mean(), p[contrib].max() if contrib else 0.0])
    x = np.asarray(rows, dtype=np.float32)
    return np.hstack([x, x[:, :1] - x[:, :1].max(), head_contrib(topic, readings)])


def head_contrib(topic: str, readings) -> np.ndarray:
    """Whether the head of a name with a setting ("convergence" of "convergence of stochastic gradient
    descent"; the whole phrase of a bare name) is named in the paper's own contribution sentences."""
    from rag.tasks.area_scorer import _holds, topic_forms
    from rag.tasks.topicality import _content

    heads = topic_forms(topic)[1]
    return np.array([[float(any(_holds(_content(r.sentences[i])[0], heads) for i in r.contribution()))]
                     for r in readings], dtype=np.float32).reshape(-1, 1)


def area_rows(lib, area: dict) -> dict:
    from rag.library.retrieval import search
    from rag.tasks.area_scorer import features
    from rag.tasks.themes import depth, paper_text
    from rag.tasks.topicality import read

    emb = lib.text_embedder
    readings = read(area["topic"], search(lib, area["topic"], depth(T.K)), emb)
    return {"x": features(area["topic"], readings, emb), "extra": answer_features(area["topic"], readings, emb),
            "ids": [r.paper.paper_id for r in readings], "score": np.array([r.score for r in readings]),
            "vecs": emb.embed_array([paper_text(r.paper) for r in readings])}


def pick(p: np.ndarray, row: dict, cover: float, rank: np.ndarray, lam: float) -> list[str]:
    """rag.tasks.area_scorer.on_topic's decision on given probabilities, then at most K of the covered papers
    by MMR on `rank` (rag.tasks.themes.select_papers)."""
    from rag.tasks.area_scorer import CONFIDENT, FEATURES
    from rag.tasks.topicality import ON_TOPIC

    head = row["x"][:, FEATURES.index("head_any")] > 0
    keep = [i for i in np.argsort(-p, kind="stable")
            if p[i] >= CONFIDENT or p[i] >= cover and (head[i] or row["score"][i] >= ON_TOPIC)]
    chosen, rest = [], list(keep)
    while rest and len(chosen) < T.K:
        red = (row["vecs"][rest] @ row["vecs"][chosen].T).max(axis=1) if chosen else np.zeros(len(rest))
        j = rest[int(np.argmax(lam * rank[rest] - (1 - lam) * red))]
        chosen.append(j)
        rest.remove(j)
    return [row["ids"][i] for i in chosen]


KEYWORDS = ("cover_keywords", "has_keywords", "whole_keywords")


def evaluate(data: dict, by_topic: dict, cols: tuple, held_out: list[str], fit_on_of, core: bool = False,
             lam: float = 0.7, zero: tuple = ()) -> dict:
    from rag.tasks.area_scorer import FEATURES

    def xs(t):
        x = data[t]["x"].copy()
        x[:, [FEATURES.index(f) for f in zero]] = 0.0
        return np.hstack([x, data[t]["extra"][:, list(cols)]]) if cols else x

    picked = {}
    for t in held_out:
        fit_on = fit_on_of(t)
        x = np.concatenate([xs(u) for u in fit_on])
        y = np.concatenate([[T.label(by_topic[u], i) for i in data[u]["ids"]] for u in fit_on])
        mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
        w, b = T.fit((x - mean) / std, y)
        cover = T.choose({u: (xs(u), data[u]["ids"]) for u in fit_on}, by_topic, {"w": w, "b": b, "mean": mean, "std": std})
        z = (xs(t) - mean) / std
        p = 1 / (1 + np.exp(-(z @ w + b)))
        rank = p
        if core:
            wc, bc = T.fit((x - mean) / std, (y == 1).astype(float))
            rank = 1 / (1 + np.exp(-(z @ wc + bc)))
        picked[t] = pick(p, data[t], cover, rank, lam)
    return T.score(picked, by_topic)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("PAPERCHAT_HOME", "/tmp/h33")))
    ap.add_argument("--library", default="mlqa")
    args = ap.parse_args()
    if not T.TOPICS.exists():
        print(f"skipped: {T.TOPICS} is absent")
        return
    from rag.library.library import Library
    from rag.settings import Settings

    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}; reproduce: "
          f".venv/bin/python bench/area_scorer_study.py --home {args.home} --library {args.library}\n")
    lib = Library(Settings(home=args.home, library=args.library, embedder="minilm"))
    train, test = T.areas("train"), T.areas("test")
    by_topic = {a["topic"]: a for a in train + test}
    data = {a["topic"]: area_rows(lib, a) for a in train + test}
    names = [a["topic"] for a in train]
    print(f"{'features':32s} {'train, leave one area out':>34s}   {'test (fit on all train)':>34s}")
    variants = [(label, cols, False, 0.7, ()) for label, cols in VARIANTS.items()]
    variants += [("ordered by probability, MMR 1.0", (), False, 1.0, ()), ("ordered by core, MMR 0.7", (), True, 0.7, ()),
                 ("ordered by core, MMR 1.0", (), True, 1.0, ()), ("without the records' keywords", (), False, 0.7, KEYWORDS)]
    for label, cols, core, lam, zero in variants:
        oof = evaluate(data, by_topic, cols, names, lambda t: [u for u in names if u != t], core, lam, zero)
        held = evaluate(data, by_topic, cols, [a["topic"] for a in test], lambda t: names, core, lam, zero)
        fmt = lambda s: f"prec {s['precision']:.3f} rec {s['core_recall']:.3f} fail {s['failures']}"  # noqa: E731
        print(f"{label:32s} {fmt(oof):>34s}   {fmt(held):>34s}")


if __name__ == "__main__":
    main()
