"""Summaries on the mlqa research areas, before and after in one run: precision (cited papers judged core or
related), core recall (core papers cited over min(core, max(cited, 10))) and 'no papers' failures, scored by
rag.evaluation.mlqa (../shared/data/mlqa/README.md's definitions).

"before" is the code of --before-rev (default: the merge-base with main), exported with `git archive` and
run in a subprocess on the same library (`before_side` in bench/_common.py); "after" is this checkout.

    .venv/bin/python bench/summarise_mlqa.py --home /tmp/h33 --library mlqa            # test areas
    .venv/bin/python bench/summarise_mlqa.py --home /tmp/h33 --library mlqa --split train
    .venv/bin/python bench/summarise_mlqa.py --home H --library mlqa-minilm --areas bench/areas/natural_names.jsonl --split judged
    .venv/bin/python bench/summarise_mlqa.py --home H --library mlqa-minilm --split train --names bench/areas/acronym_names.jsonl

--names FILE summarises the areas FILE names otherwise ({"name": "GANs", "area": "generative adversarial
networks"} per line), judged by the area's judgements, and only those areas: how a researcher who types the
acronym fares. --frame TEMPLATE asks each area framed as a request ("papers on {}", "recent advances in {}").
--ask TEMPLATE asks each area as a question in the chat's Ask mode ("Which papers study {}?"): the papers the
answer cites, judged as a summary's.

The library is ../shared/data/mlqa/library.jsonl ingested with the real embedder (`paperchat --library mlqa
ingest ...` under that PAPERCHAT_HOME).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import _common as C  # noqa: E402 - puts ROOT on sys.path
MLQA = ROOT.parent / "shared" / "data" / "mlqa"


def run_side(home: str, library: str, topics: list[str], ask: bool = False) -> dict[str, dict]:
    """summarise() every area with the code on sys.path: cited ids, abstained, theme titles, seconds; with
    ask, each topic (a question) asked of ask() instead, its cited papers scored as a summary's."""
    from rag.library.library import Library
    from rag.settings import Settings
    from rag.tasks.ask import ask as ask_
    from rag.tasks.summarise import summarise

    settings = Settings(home=Path(home), library=library, embedder="minilm")
    lib = Library(settings)
    out = {}
    for topic in topics:
        t0 = time.perf_counter()
        if ask:
            a = ask_(topic, lib, settings=settings)
            out[topic] = {"cited": list(dict.fromkeys(c.paper.paper_id for c in a.citations)),
                          "abstained": a.abstained, "themes": [], "related": [], "more": 0,
                          "seconds": round(time.perf_counter() - t0, 2)}
            continue
        res = summarise(topic, lib, settings=settings)
        out[topic] = {"cited": [c.paper.paper_id for c in res.citations], "abstained": res.abstained,
                      "themes": [[t.title, [c.paper.paper_id for c in t.citations]] for t in res.themes],
                      "related": [h.paper.paper_id for h in res.related], "more": getattr(res, "more", 0),
                      "seconds": round(time.perf_counter() - t0, 2)}
    return out


def before_side(rev: str, home: str, library: str, topics: list[str], ask: bool = False) -> dict[str, dict]:
    """run_side with the rag/ of `rev`, in its own process."""
    return C.before_side(rev, "summarise_mlqa", f"run_side({home!r}, {library!r}, {topics!r}, {ask!r})")


def figures(side: dict[str, dict], areas) -> tuple[dict, list]:
    from rag.evaluation.mlqa import score_summary, summary_figures

    scores = [score_summary(a, side[a.topic]["cited"], side[a.topic]["abstained"], side[a.topic]["seconds"])
              for a in areas]
    return summary_figures(scores), scores


def theme_figures(side: dict[str, dict], areas) -> dict:
    """Item 4 of issue 33: the share of theme names whose words occur in at least half of their papers
    (bench/theme_names.fits; one-theme summaries, named by their topic, left out) and the themes holding a
    paper judged off; and, where bench/areas/subareas.jsonl gives the area's sub-areas (topics.jsonl gives
    none), how the grouping holds them together (bench/theme_groups.figures)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from theme_groups import load, score
    from theme_names import fits

    text = {r["id"]: f"{r['title']}. {r['abstract']}" for r in map(json.loads, open(MLQA / "library.jsonl", encoding="utf-8"))}
    named = fit = themes = with_off = 0
    for a in areas:
        ts = side[a.topic]["themes"]
        for title, pids in ts:
            themes += 1
            with_off += any(p in a.off for p in pids)
            if len(ts) > 1:
                named += 1
                fit += fits(title, [text[p] for p in pids if p in text])
    groups = score({a.topic: [pids for _, pids in side[a.topic]["themes"]] for a in areas}, load())
    return {"themes": themes, "named": named, "name_fits": round(fit / named, 3) if named else None,
            "themes_with_off": with_off, "subareas": groups}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", default=os.environ.get("PAPERCHAT_HOME", "/tmp/h33"))
    ap.add_argument("--library", default="mlqa")
    ap.add_argument("--split", default="test")
    ap.add_argument("--areas", type=Path, help="areas judged over the same library in topics.jsonl's shape "
                                              "(default ../shared/data/mlqa/topics.jsonl)")
    ap.add_argument("--names", type=Path, help="JSONL of {name, area}: summarise each area under that name")
    ap.add_argument("--frame", help="ask each area as this request, {} standing for its name ('papers on {}')")
    ap.add_argument("--ask", help="ask each area as this question of `ask`, {} standing for its name ('Which "
                                   "papers study {}?'), its cited papers judged as a summary's")
    ap.add_argument("--before-rev", default="")
    ap.add_argument("--out", type=Path, help="write both sides' raw results as JSON here")
    args = ap.parse_args()
    if not (MLQA / "topics.jsonl").exists():
        print(f"skipped: {MLQA} is absent")
        return
    from rag.evaluation.mlqa import load_topics

    areas = load_topics(MLQA, args.split, args.areas)
    if args.names:  # the same judgements, asked under another name
        renamed = {d["area"]: d["name"] for d in map(json.loads, args.names.read_text().splitlines()) if d}
        areas = [a.model_copy(update={"topic": renamed[a.topic]}) for a in areas if a.topic in renamed]
    if args.frame or args.ask:
        areas = [a.model_copy(update={"topic": (args.frame or args.ask).format(a.topic)}) for a in areas]
    topics = [a.topic for a in areas]
    rev = C.merge_base(args.before_rev)
    before = before_side(rev, args.home, args.library, topics, bool(args.ask))
    after = run_side(args.home, args.library, topics, bool(args.ask))
    fb, sb = figures(before, areas)
    fa, sa = figures(after, areas)
    print(f"mlqa {args.split} areas ({len(areas)}), before = {rev[:7]}, after = this checkout; one run, "
          "machine under load (seconds are noisy)\n")
    print(f"{'area':46s} {'core':>4s}  {'before prec/rec/cited':>22s}  {'after prec/rec/cited':>22s}")
    fmt = lambda s: ("no papers" if s.empty else f"{s.precision:.2f}/{s.core_recall:.2f}/{s.cited}")  # noqa: E731
    for a, b, c in zip(areas, sb, sa):
        print(f"{a.topic[:46]:46s} {len(a.core):4d}  {fmt(b):>22s}  {fmt(c):>22s}")
    for k in ("precision", "pooled_precision", "core_recall", "failures", "empty", "cited_per_summary", "p50_seconds"):
        print(f"{k:18s} before {fb[k]!s:>8s}   after {fa[k]!s:>8s}")
    tb, ta = theme_figures(before, areas), theme_figures(after, areas)
    print(f"themes: names fitting >= half their papers: before {tb['name_fits']} of {tb['named']}, after "
          f"{ta['name_fits']} of {ta['named']}; themes holding a paper judged off: before {tb['themes_with_off']} "
          f"of {tb['themes']}, after {ta['themes_with_off']} of {ta['themes']}")
    gb, ga = tb["subareas"], ta["subareas"]
    if ga["themes"]:
        print(f"themes held together by a judged sub-area (more than half their judged papers in one; "
              f"bench/theme_groups.py): before {gb['held_together']} of {gb['themes']}, after {ga['held_together']} "
              f"of {ga['themes']}; two papers of a theme share a sub-area: before {gb['pair_precision']}, after "
              f"{ga['pair_precision']} (any two cited papers: {ga['chance']})")
    if args.out:
        args.out.write_text(json.dumps({"before": before, "after": after, "figures": {"before": fb, "after": fa}},
                                       indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
