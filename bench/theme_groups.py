"""Does a summary group its papers the way a survey of the area would? Its themes scored against judged
sub-areas (bench/areas/subareas.jsonl: every core paper of the 20 mlqa areas in one sub-area), and the
grouping rag.tasks.themes.cluster ships beside other groupings of the same cited papers.

A theme is scored on its papers that have a sub-area (core papers; related ones have none):
- held together: its judged papers (two or more) are mostly (more than half) of one sub-area;
- one sub-area: all of them are;
- pair precision: of two judged papers in one theme, how often they share a sub-area; beside it the same for
  any two judged papers the summary cites ("chance": what grouping at random would give);
- pair recall: of two cited papers of one sub-area, how often they are in one theme.

Groupings compared on each summary's cited papers (summarise() with this checkout's code): the shipped one
(average linkage on centred MiniLM paper vectors, 2..6 groups by silhouette from n/5 papers a group), the same
on vectors left uncentred, on the mean of the contribution sentences' vectors, on the titles', with more
groups (from n/4), with four groups, on TF-IDF vectors of the abstracts (IDF from the library), on 0.7 MiniLM
+ 0.3 TF-IDF distances, on a learned distance (one minus the probability that two papers share a sub-area: a
logistic regression over their centred paper, contribution, title and TF-IDF distances, fit on the train
areas' pairs), and random groups of the shipped sizes (mean of 50 draws). Train areas choose, test areas
report.

    .venv/bin/python bench/theme_groups.py --home H --library mlqa-minilm

(H: the eval home of `paperchat eval summaries --mlqa ../shared/data/mlqa`, e.g. its evals/mlqa-<hash>.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SUBAREAS = ROOT / "bench" / "areas" / "subareas.jsonl"
MLQA = ROOT.parent / "shared" / "data" / "mlqa"


def load(path: Path = SUBAREAS) -> dict[str, dict[str, str]]:
    """Per area, each judged paper's sub-area."""
    if not path.exists():
        return {}
    lines = map(json.loads, open(path, encoding="utf-8"))
    return {d["topic"]: {i: s["name"] for s in d["subareas"] for i in s["ids"]} for d in lines}


def counts(themes: list[list[str]], sub: dict[str, str]) -> Counter:
    """The tallies figures() turns into shares, for one summary's themes (lists of paper ids)."""
    c = Counter()
    for t in themes:
        labels = [sub[p] for p in t if p in sub]
        if len(labels) >= 2:
            top = Counter(labels).most_common(1)[0][1]
            c["themes"] += 1
            c["held"] += 2 * top > len(labels)
            c["one"] += top == len(labels)
        for a, b in itertools.combinations(labels, 2):
            c["pairs_in_theme"] += 1
            c["same_in_theme"] += a == b
    theme_of = {p: k for k, t in enumerate(themes) for p in t}
    for a, b in itertools.combinations([p for t in themes for p in t if p in sub], 2):
        c["pairs"] += 1
        if sub[a] == sub[b]:
            c["same"] += 1
            c["same_together"] += theme_of[a] == theme_of[b]
    return c


def figures(c: Counter) -> dict:
    share = lambda a, b: round(c[a] / c[b], 3) if c[b] else None  # noqa: E731
    return {"themes": c["themes"], "held_together": share("held", "themes"), "one_subarea": share("one", "themes"),
            "pair_precision": share("same_in_theme", "pairs_in_theme"), "chance": share("same", "pairs"),
            "pair_recall": share("same_together", "same")}


def score(themes_of: dict[str, list[list[str]]], subareas: dict[str, dict[str, str]]) -> dict:
    """figures() over every area that has sub-areas."""
    total = Counter()
    for topic, themes in themes_of.items():
        if topic in subareas:
            total.update(counts(themes, subareas[topic]))
    return figures(total)


# -- the study


def _vectors(lib, topic: str, ids: list[str]) -> dict[str, np.ndarray]:
    from rag.library.retrieval import search
    from rag.tasks.themes import depth, paper_text
    from rag.tasks.topicality import read

    emb = lib.text_embedder
    by_id = {r.paper.paper_id: r for r in read(topic, search(lib, topic, depth(15)), emb)}
    rs = [by_id[i] for i in ids]
    contrib = []
    for r in rs:
        e = emb.embed_array([r.sentences[i] for i in (r.contribution() or range(len(r.sentences)))]).mean(axis=0)
        contrib.append(e / np.linalg.norm(e))
    return {"paper": emb.embed_array([paper_text(r.paper) for r in rs]), "contrib": np.array(contrib),
            "title": emb.embed_array([r.paper.title or r.sentences[0] for r in rs])}


class TfIdf:
    """TF-IDF vectors of a few papers' content stems, IDF from the whole library."""

    def __init__(self, records: list[dict]):
        from rag.tasks.topicality import _content

        self.words = {r["id"]: _content(f"{r['title']}. {r['abstract']}")[0] for r in records}
        self.df = Counter(w for ws in self.words.values() for w in set(ws))
        self.n = len(records)

    def __call__(self, ids: list[str]) -> np.ndarray:
        rows = [{w: (1 + math.log(k)) * math.log(self.n / self.df[w]) for w, k in Counter(self.words[i]).items()}
                for i in ids]
        vocab = {w: j for j, w in enumerate(sorted({w for r in rows for w in r}))}
        m = np.zeros((len(ids), len(vocab)))
        for i, r in enumerate(rows):
            for w, v in r.items():
                m[i, vocab[w]] = v
        return m / np.linalg.norm(m, axis=1, keepdims=True)


def _groups(d: np.ndarray, lo_per: int = 5, fixed: int = 0) -> list[np.ndarray]:
    """rag.tasks.themes.cluster's cut on a distance matrix, with its range of group counts as parameters."""
    from rag.tasks.themes import MAX_THEMES, best_cut

    n = len(d)
    if n < 4:
        return [np.arange(n)]
    ks = [min(fixed, n // 2)] if fixed else range(max(2, math.ceil(n / lo_per)), max(2, min(MAX_THEMES, n // 2)) + 1)
    return best_cut(d, ks)


def _raw(v: np.ndarray) -> np.ndarray:
    d = np.clip(1.0 - v @ v.T, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    return (d + d.T) / 2


def groupings(tfidf: TfIdf) -> dict:
    from rag.tasks.themes import centred_distances as centred

    return {
        "shipped (rag.tasks.themes.cluster)": lambda a: _groups(centred(a["paper"])),
        "paper vectors, not centred": lambda a: _groups(_raw(a["paper"])),
        "contribution sentences' vectors": lambda a: _groups(centred(a["contrib"])),
        "title vectors": lambda a: _groups(centred(a["title"])),
        "more groups (from n/4 a group)": lambda a: _groups(centred(a["paper"]), lo_per=4),
        "four groups": lambda a: _groups(centred(a["paper"]), fixed=4),
        "TF-IDF of the abstracts, centred": lambda a: _groups(centred(tfidf(a["ids"]))),
        "0.7 MiniLM + 0.3 TF-IDF": lambda a: _groups(0.7 * centred(a["paper"]) + 0.3 * centred(tfidf(a["ids"]))),
    }


def _distances(a: dict, tfidf: TfIdf) -> np.ndarray:
    from rag.tasks.themes import centred_distances as centred

    return np.stack([centred(a["paper"]), centred(a["contrib"]), centred(a["title"]), centred(tfidf(a["ids"]))], -1)


def learned(areas: dict, subareas: dict, tfidf: TfIdf):
    """A grouping on one minus P(two papers share a sub-area), fit on every pair of judged papers in `areas`."""
    sys.path.insert(0, str(ROOT / "bench"))
    from train_area_scorer import fit

    x, y = [], []
    for topic, a in areas.items():
        d, sub = _distances(a, tfidf), subareas[topic]
        for i, j in itertools.combinations(range(len(a["ids"])), 2):
            if a["ids"][i] in sub and a["ids"][j] in sub:
                x.append(d[i, j])
                y.append(float(sub[a["ids"][i]] == sub[a["ids"][j]]))
    x, y = np.array(x), np.array(y)
    mean, std = x.mean(axis=0), x.std(axis=0)
    w, b = fit((x - mean) / std, y)

    def group(a: dict) -> list[np.ndarray]:
        p = 1 / (1 + np.exp(-(((_distances(a, tfidf) - mean) / std) @ w + b)))
        d = 1 - (p + p.T) / 2
        np.fill_diagonal(d, 0.0)
        return _groups(d)
    return group


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", default=os.environ.get("PAPERCHAT_HOME", "/tmp/h33"))
    ap.add_argument("--library", default="mlqa-minilm")
    args = ap.parse_args()
    if not (MLQA / "topics.jsonl").exists():
        print(f"skipped: {MLQA} is absent")
        return
    sys.path.insert(0, str(ROOT / "bench"))
    from summarise_mlqa import run_side

    from rag.library.library import Library
    from rag.settings import Settings
    from rag.tasks.themes import centred_distances

    subareas = load()
    split_of = {d["topic"]: d["split"] for d in map(json.loads, open(SUBAREAS, encoding="utf-8"))}
    lib = Library(Settings(home=Path(args.home), library=args.library, embedder="minilm"))
    side = run_side(args.home, args.library, list(split_of))
    areas = {}
    for topic, s in side.items():
        ids = [p for _, pids in s["themes"] for p in pids]
        areas[topic] = {"ids": ids, **_vectors(lib, topic, ids)}
        # the study's copy of the cut must give the themes summarise() gave
        shipped = sorted(sorted(ids.index(p) for p in pids) for _, pids in s["themes"])
        assert shipped == sorted(sorted(g.tolist()) for g in _groups(centred_distances(areas[topic]["paper"]))), topic
    tfidf = TfIdf(list(map(json.loads, open(MLQA / "library.jsonl", encoding="utf-8"))))
    rng = np.random.default_rng(0)
    print(f"{'grouping':36s} {'split':5s} {'themes':>6s} {'held':>6s} {'one':>6s} {'pairP':>6s} {'chance':>6s} {'pairR':>6s}")
    fit_on = learned({t: a for t, a in areas.items() if split_of[t] == "train"}, subareas, tfidf)
    rows = list(groupings(tfidf).items()) + [("learned distance (fit on train)", fit_on),
                                               ("random groups of the shipped sizes", None)]
    for split in ("train", "test"):
        for name, group in rows:
            total = Counter()
            for topic, a in areas.items():
                if split_of[topic] != split:
                    continue
                if group is None:  # the shipped theme sizes, papers dealt at random; mean of 50 draws
                    sizes = [len(t) for _, t in side[topic]["themes"]]
                    for _ in range(50):
                        perm, at, themes = rng.permutation(a["ids"]), 0, []
                        for n in sizes:
                            themes.append(list(perm[at: at + n]))
                            at += n
                        total.update({k: v / 50 for k, v in counts(themes, subareas[topic]).items()})
                else:
                    total.update(counts([[a["ids"][i] for i in g] for g in group(a)], subareas[topic]))
            f = figures(total)
            print(f"{name:36s} {split:5s} {f['themes']:6.1f} {f['held_together']:6.3f} {f['one_subarea']:6.3f} "
                  f"{f['pair_precision']:6.3f} {f['chance']:6.3f} {f['pair_recall']:6.3f}")


if __name__ == "__main__":
    main()
