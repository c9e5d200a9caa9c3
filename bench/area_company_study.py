"""The paper–area scorer's second stage, company: is a paper like the area's most probable other papers? Which
reading of "like", chosen on the mlqa train areas, each left out of its own fit in turn.

Per area, the papers summarise() reads (bench/area_heads_study.area_rows: features, ids, unit paper vectors).
The first stage is the shipped one (rag/tasks/area_scorer.npz's weights); on top of its logit one standardised
column, fit with a bias (bench/train_area_scorer.fit with the first stage as offset), the cut-off chosen on
the fitted areas (bench/train_area_scorer.choose), then decided as rag.tasks.area_scorer.on_topic decides
(bench/area_scorer_study.pick). The column: the paper's cosine to the 3, 5 or 10 most probable other papers
(by the first stage), their maximum or mean. Reported: mlqa train (left out), our judged areas with a setting
(bench/areas/natural_names.jsonl), mlqa test once, and beside each the summaries holding a paper judged off.

    nice -n 10 .venv/bin/python bench/area_company_study.py --home H --library mlqa-minilm [--rows R.pkl]

(H: the eval home of `paperchat eval summaries --mlqa ../shared/data/mlqa`, e.g. its evals/mlqa-<hash>.)
Nothing is written to rag/.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import train_area_scorer as T  # noqa: E402
from area_heads_study import first_stage as base, first_stage_cut, load_rows  # noqa: E402
from area_scorer_study import pick  # noqa: E402


def first_stage(row: dict) -> np.ndarray:
    from rag.tasks.area_scorer import logits

    return logits(row["x"], base())


def column(row: dict, top: int, how: str) -> np.ndarray:
    """The paper's cosine to the `top` most probable others, their max or mean (rag.tasks.area_scorer.company
    is the mean)."""
    from rag.tasks.area_scorer import company

    p = 1 / (1 + np.exp(-first_stage(row)))
    if how == "mean":
        return company(p, row["vecs"], top)
    cos, order = row["vecs"] @ row["vecs"].T, np.argsort(-p, kind="stable")
    return np.array([cos[i, [j for j in order if j != i][:top]].max() for i in range(len(p))])


def scorer(data: dict, by: dict, fit_on: list[str], col: dict):
    """(probabilities of an area, cut-off) with the column fit on `fit_on` (standardised over them)."""
    pool = np.concatenate([col[u] for u in fit_on])
    mean, std = pool.mean(), pool.std()
    y = np.concatenate([[T.label(by[u], i) for i in data[u]["ids"]] for u in fit_on])
    w, b = T.fit(np.concatenate([(col[u] - mean) / std for u in fit_on])[:, None], y,
                 offset=np.concatenate([first_stage(data[u]) for u in fit_on]))
    prob = lambda t: 1 / (1 + np.exp(-(first_stage(data[t]) + w[0] * (col[t] - mean) / std + b)))  # noqa: E731
    ps = {u: prob(u) for u in fit_on}
    cover = T.widest_margin(lambda c: T.score({u: pick(ps[u], data[u], c, ps[u], 0.7) for u in fit_on}, by))
    return prob, cover, float(w[0])


def report(data: dict, by: dict, areas: list[str], of) -> str:
    picked = {}
    for t in areas:
        prob, cover = of(t)[:2]
        p = prob(t)
        picked[t] = pick(p, data[t], cover, p, 0.7)
    s = T.score(picked, by)
    off = sum(any(i in by[t]["off"] for i in ids) for t, ids in picked.items())
    return f"{s['precision']:.3f} / {s['core_recall']:.3f} / {off}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("PAPERCHAT_HOME", "/tmp/h33")))
    ap.add_argument("--library", default="mlqa-minilm")
    ap.add_argument("--rows", type=Path, help="keep the rows here (pickle) and reuse them on a rerun")
    args = ap.parse_args()
    if not T.TOPICS.exists():
        print(f"skipped: {T.TOPICS} is absent")
        return
    train, test, judged = T.areas("train"), T.areas("test"), T.judged_areas()
    by = {a["topic"]: a for a in train + test + judged}
    data = load_rows(args.home, args.library, args.rows, train + test + judged)
    mlqa, extra, held = [a["topic"] for a in train], [a["topic"] for a in judged], [a["topic"] for a in test]
    print(f"{'second stage':32s} {'weight':>6s} {'cut':>5s} {'mlqa train, left out':>22s} {'judged':>22s} "
          f"{'mlqa test':>22s}\n{'':45s}{'precision / recall / summaries holding an off paper':>67s}")
    cut = first_stage_cut(data, by, mlqa)
    first = lambda t: ((lambda u: 1 / (1 + np.exp(-first_stage(data[u])))), cut)  # noqa: E731
    print(f"{'none (the first stage alone)':32s} {'':6s} {cut:5.2f} {report(data, by, mlqa, first):>22s} "
          f"{report(data, by, extra, first):>22s} {report(data, by, held, first):>22s}")
    for top in (3, 5, 10):
        for how in ("max", "mean"):
            col = {t: column(data[t], top, how) for t in data}
            on_all = scorer(data, by, mlqa, col)
            out = lambda t: scorer(data, by, [u for u in mlqa if u != t], col)  # noqa: E731
            print(f"{f'cosine to the {top} likeliest, {how}':32s} {on_all[2]:+6.2f} {on_all[1]:5.2f} "
                  f"{report(data, by, mlqa, out):>22s} {report(data, by, extra, lambda t: on_all):>22s} "
                  f"{report(data, by, held, lambda t: on_all):>22s}")


if __name__ == "__main__":
    main()
