"""Names with a setting ("optimizers for training deep networks"): would judged areas named that way, or
columns that read the name's head alone, teach the paper–area scorer which part of a name is the area?

Data: the mlqa areas (../shared/data/mlqa/topics.jsonl: 10 train, 10 test) and our 14 judged areas with a
setting over the same 3,000 papers (bench/areas/natural_names.jsonl; bench/areas/README.md says how they
were judged). Per area, the papers summarise() reads (retrieval at rag.tasks.themes.depth(15)) with
rag.tasks.area_scorer.features, and here also the head columns: the MiniLM cosine of the paper's best
contribution sentence, its authored title and its whole text to the name's head ("optimizers"), and the
paper's rank in the pool by its head cosine less its rank by the whole name's.

Scorers, side by side, each decided as rag.tasks.area_scorer.on_topic decides (cut-off, gate, CONFIDENT
bypass, at most 15 papers by MMR): the shipped weights as they ship; refit on the mlqa train areas alone;
refit with the judged areas' rows weighed 0.1, 0.25 or 1 against an mlqa row (the cut-off always chosen
on the mlqa train areas, bench/train_area_scorer.choose); the same with the head columns; and the shipped
weights plus one learned column, the head rank, fit on the names with a setting (the shipped logit held
fixed, so a bare name scores as it ships). Each is reported on the mlqa train areas and the judged areas,
each area left out of its own fit in turn, and on the mlqa test areas once (fit on all).

    nice -n 10 .venv/bin/python bench/area_heads_study.py --home H --library mlqa-minilm [--rows R.pkl]

(H: the eval home of `paperchat eval summaries --mlqa ../shared/data/mlqa`, e.g. its evals/mlqa-<hash>.)
Nothing is written to rag/.
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import train_area_scorer as T  # noqa: E402
from area_scorer_study import pick  # noqa: E402

HEAD = ("head_contrib_cos", "head_title_cos", "head_paper_cos", "head_rank")


def head_text(topic: str) -> str:
    """"optimizers for training deep networks" -> "optimizers"; a bare name is its own head."""
    from rag.tasks.area_scorer import split_name

    return split_name(topic)[0]


def head_columns(topic: str, readings, emb, x: np.ndarray) -> np.ndarray:
    from rag.tasks.area_scorer import FEATURES
    from rag.tasks.themes import paper_text

    head = head_text(topic)
    titles = [r.paper.title if r.paper.title and not r.paper.title_derived else "" for r in readings]
    v = emb.embed_array([head] + [paper_text(r.paper) for r in readings]
                        + [s for r in readings for s in r.sentences] + [t for t in titles if t])
    cos = v[1:] @ v[0]
    paper, cos = cos[: len(readings)], cos[len(readings):]
    out, i, j = [], 0, sum(len(r.sentences) for r in readings)
    for r, t in zip(readings, titles):
        s = cos[i : i + len(r.sentences)]
        i += len(r.sentences)
        c = max([float(s[k]) for k in r.contribution() if k < len(s)] or [0.0])
        out.append([c, float(cos[j]) if t else c, 0.0, 0.0])
        j += bool(t)
    h = np.asarray(out, dtype=np.float32)
    h[:, 2] = paper
    whole = x[:, FEATURES.index("paper_cos")]
    rank = lambda a: np.argsort(np.argsort(a, kind="stable"), kind="stable") / max(len(a), 1)  # noqa: E731
    h[:, 3] = rank(paper) - rank(whole) if head != topic else 0.0
    return h


def area_rows(lib, area: dict) -> dict:
    from rag.library.retrieval import search
    from rag.tasks.area_scorer import features
    from rag.tasks.themes import depth, paper_text
    from rag.tasks.topicality import read

    emb = lib.text_embedder
    readings = read(area["topic"], search(lib, area["topic"], depth(T.K)), emb)
    x = features(area["topic"], readings, emb)
    return {"x": x, "head": head_columns(area["topic"], readings, emb, x), "ids": [r.paper.paper_id for r in readings],
            "score": np.array([r.score for r in readings]),
            "vecs": emb.embed_array([paper_text(r.paper) for r in readings])}


def first_stage(m: dict | None = None) -> dict:
    """The shipped scorer's first stage (rag/tasks/area_scorer.npz without its company stage)."""
    from rag.tasks.area_scorer import model

    m = model() if m is None else m
    return {k: m[k] for k in ("mean", "std", "w", "b")}


def first_stage_cut(data: dict, by_topic: dict, mlqa: list[str]) -> float:
    """The first stage's cut-off, chosen on the mlqa train areas as bench/train_area_scorer.py chooses (0.46, as
    it shipped before the company stage)."""
    return T.choose({u: (data[u]["x"], data[u]["ids"]) for u in mlqa}, by_topic, first_stage())


def load_rows(home: Path, library: str, rows: Path | None, areas: list[dict]) -> dict:
    """area_rows of every area, kept in (and read back from) the pickle `rows` when given."""
    from rag.library.library import Library
    from rag.settings import Settings

    if rows and rows.exists():
        return pickle.loads(rows.read_bytes())
    lib = Library(Settings(home=home, library=library, embedder="minilm"))
    data = {a["topic"]: area_rows(lib, a) for a in areas}
    if rows:
        rows.write_bytes(pickle.dumps(data))
    return data


class Study:
    def __init__(self, data: dict, by_topic: dict, mlqa: list[str]):
        self.data, self.by, self.mlqa = data, by_topic, set(mlqa)

    def cols(self, t: str, head: bool) -> np.ndarray:
        return np.hstack([self.data[t]["x"], self.data[t]["head"]]) if head else self.data[t]["x"]

    def refit(self, fit_on: list[str], head: bool, judged_weight: float):
        fit_on = [u for u in fit_on if u in self.mlqa or judged_weight > 0]
        x = np.concatenate([self.cols(u, head) for u in fit_on])
        y = np.concatenate([[T.label(self.by[u], i) for i in self.data[u]["ids"]] for u in fit_on])
        s = np.concatenate([np.full(len(self.data[u]["ids"]), 1.0 if u in self.mlqa else judged_weight) for u in fit_on])
        mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
        w, b = T.fit((x - mean) / std, y, s=s)
        cover = T.choose({u: (self.cols(u, head), self.data[u]["ids"]) for u in fit_on if u in self.mlqa},
                         self.by, {"w": w, "b": b, "mean": mean, "std": std})
        return lambda t: (1 / (1 + np.exp(-(((self.cols(t, head) - mean) / std) @ w + b))), cover)

    def shipped_logit(self, t: str) -> np.ndarray:
        m = first_stage()
        return ((self.data[t]["x"] - m["mean"]) / m["std"]) @ m["w"] + float(m["b"])

    def head_rank(self, fit_on: list[str]):
        """The shipped logit plus a learned multiple of head_rank, fit on the names with a setting."""
        cut = first_stage_cut(self.data, self.by, sorted(self.mlqa))
        fit_on = [u for u in fit_on if head_text(u) != u]
        o = np.concatenate([self.shipped_logit(u) for u in fit_on])
        d = np.concatenate([self.data[u]["head"][:, 3] for u in fit_on])
        y = np.concatenate([[T.label(self.by[u], i) for i in self.data[u]["ids"]] for u in fit_on])
        ws = np.linspace(-3, 3, 121)
        nll = [np.sum(np.logaddexp(0, -(o + v * d)) * y + np.logaddexp(0, o + v * d) * (1 - y)) + 0.5 * v * v for v in ws]
        v = float(ws[int(np.argmin(nll))])
        return lambda t: (1 / (1 + np.exp(-(self.shipped_logit(t) + v * self.data[t]["head"][:, 3]))), cut)

    def score(self, held_out: list[str], scorer_of) -> dict:
        picked = {}
        for t in held_out:
            p, cover = scorer_of(t)(t)
            picked[t] = pick(p, self.data[t], cover, p, 0.7)
        return T.score(picked, self.by)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("PAPERCHAT_HOME", "/tmp/h33")))
    ap.add_argument("--library", default="mlqa-minilm")
    ap.add_argument("--rows", type=Path, help="keep the feature rows here (pickle) and reuse them on a rerun")
    args = ap.parse_args()
    if not T.TOPICS.exists():
        print(f"skipped: {T.TOPICS} is absent")
        return
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}; reproduce: "
          f".venv/bin/python bench/area_heads_study.py --home {args.home} --library {args.library}\n")
    train, test, judged = T.areas("train"), T.areas("test"), T.judged_areas()
    by_topic = {a["topic"]: a for a in train + test + judged}
    data = load_rows(args.home, args.library, args.rows, train + test + judged)
    mlqa, extra, held = [a["topic"] for a in train], [a["topic"] for a in judged], [a["topic"] for a in test]
    st = Study(data, by_topic, mlqa)
    every = mlqa + extra
    cut = first_stage_cut(data, by_topic, mlqa)
    shipped = lambda t: (lambda u: (1 / (1 + np.exp(-st.shipped_logit(u))), cut))  # noqa: E731
    rows = [("shipped first stage (mlqa train in sample)", shipped, shipped)]
    for head in (False, True):
        for wt in ((0.0, 0.1, 0.25, 1.0) if not head else (0.0, 0.25)):
            label = f"refit{' + head columns' if head else ''}, judged weigh {wt:g}"
            rows.append((label, lambda t, h=head, w=wt: st.refit([u for u in every if u != t], h, w),
                         lambda t, h=head, w=wt: st.refit(every, h, w)))
    rows.append(("shipped + head rank (fit on names with a setting)",
                 lambda t: st.head_rank([u for u in every if u != t]), lambda t: st.head_rank(every)))
    fmt = lambda s: f"{s['precision']:.3f} / {s['core_recall']:.3f} / {s['failures']}"  # noqa: E731
    print(f"{'scorer':52s} {'mlqa train, left out':>22s} {'judged, left out':>22s} {'mlqa test':>22s}")
    print(f"{'':52s} {'prec / recall / fail':>22s} {'prec / recall / fail':>22s} {'prec / recall / fail':>22s}")
    for label, out_of, on_all in rows:
        print(f"{label:52s} {fmt(st.score(mlqa, out_of)):>22s} {fmt(st.score(extra, out_of)):>22s} "
              f"{fmt(st.score(held, on_all)):>22s}")


if __name__ == "__main__":
    main()
