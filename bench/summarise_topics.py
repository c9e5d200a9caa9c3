"""Summaries on a public topic set: the share of the papers a summary cites that are on the topic.

The topic set is built from the paperlists papers that carry author keywords (7,881 of 87,691): a topic
is a keyword many papers share; a paper is on the topic when one of its keywords (the part after the
last ':' of "machine learning: ml: federated learning") contains the topic phrase or an alias of it, or
its title does. The library is those papers (at most --n, default 1,000: up to --per-topic (40) papers of
each topic, then other keyword papers), ingested with the real embedder under --home.

Both sides run in one invocation on the same library: "before" is the code of --before-rev (default
main's commit this branch started from), exported with `git archive` to a temporary folder and run in
a subprocess; "after" is this checkout. Printed side by side per topic and pooled.

    .venv/bin/python bench/summarise_topics.py                      # builds the library on first run
    .venv/bin/python bench/summarise_topics.py --before-rev 4498b20

Author keywords are incomplete (a paper on the topic may not carry it), so the shares are a lower
bound for both sides alike; the difference between the sides is the figure. Two more figures say how
far that bound is from the truth: the share under a loose yardstick (the abstract may name the topic),
and the ceiling of the strict share (a summary citing 15 papers on a topic 5 papers carry reaches 33 %).
Recall is the other side: of the library's strict-gold papers on a topic, the share the summary cites,
counted against at most SUMMARY_CAP of them (a summary cites 15 papers at most), so precision bought by
dropping on-topic papers shows.

The 40 narrow topics are split: the odd-indexed ones (narrow_topics' order) are the tuning half that
rag.tasks.topicality's constants were chosen on, the even-indexed ones are the report half, never tuned on.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PAPERLISTS, ROOT, merge_base, print_header, write_results  # noqa: E402
from _common import before_side as before_side_of  # noqa: E402

LIBRARY = "topics"
SUMMARY_CAP = 15  # rag.tasks.themes.MAX_PAPERS: recall is counted against at most this many papers
# topic -> keyword phrases that mark a paper as on it (matched inside a keyword's last part, or the title)
TOPICS: dict[str, tuple[str, ...]] = {
    "imitation learning": ("imitation learning", "learning from demonstration", "behavior cloning",
                           "behaviour cloning"),
    "federated learning": ("federated",),
    "graph neural networks": ("graph neural network", "gnn"),
    "generative adversarial networks": ("generative adversarial", "gan", "gans"),
    "diffusion models": ("diffusion model", "denoising diffusion", "score-based generative"),
    "in-context learning": ("in-context learning",),
    "machine translation": ("machine translation",),
    "active learning": ("active learning",),
    "meta-learning": ("meta-learning", "meta learning"),
    "offline reinforcement learning": ("offline reinforcement learning", "offline rl"),
    "sim-to-real transfer": ("sim-to-real", "sim2real"),
    "anomaly detection": ("anomaly", "outlier detection"),
    "fairness in machine learning": ("fairness",),
    "computational social choice": ("computational social choice", "voting"),
    "semi-supervised learning": ("semi-supervised", "semi supervised"),
    "dexterous manipulation": ("dexterous",),
    "autonomous driving": ("autonomous driving", "self-driving"),
    "recurrent neural networks": ("recurrent neural network", "rnn", "lstm"),
    "knowledge graph completion": ("knowledge graph",),
    "3D Gaussian splatting": ("gaussian splatting", "3dgs"),
}


# Keywords too general to be a research area a summary is asked about
_GENERAL = {"deep learning", "machine learning", "applications", "general", "theory", "evaluation", "benchmark",
            "other", "others", "optimization", "neural networks", "representation learning", "computer vision",
            "natural language processing", "reinforcement learning", "large language models", "large language model",
            "robotics", "classification", "explainability", "interpretability", "robustness", "efficiency"}


def narrow_topics(corpus: Path, low: int = 3, high: int = 8, limit: int = 20) -> dict[str, tuple[str, ...]]:
    """Areas the library barely covers: author keywords (two words or more) that low..high of its papers carry."""
    from collections import Counter

    counts: Counter = Counter()
    for line in open(corpus, encoding="utf-8"):
        r = json.loads(line)
        counts.update(set(_leaves(r.get("keywords") or "")))
    keep = [k for k, c in counts.items() if low <= c <= high and len(k.split()) >= 2 and k not in _GENERAL
            and k not in TOPICS and k.replace("-", " ").replace(" ", "").isalpha() and len(k) <= 40]
    keep.sort(key=lambda k: (-counts[k], k))
    out: dict[str, tuple[str, ...]] = {}
    for k in keep:  # not a broad topic again, nor a plural or spelling of one taken
        if any(_matches(a, k) or _matches(k, a) for aliases in TOPICS.values() for a in aliases) or "applications" in k:
            continue
        if any(_matches(k.rstrip("s"), o) or _matches(o.rstrip("s"), k) or k.split()[-1] == o.split()[-1] and
               k.split()[0][:5] == o.split()[0][:5] for o in out):
            continue
        out[k] = (k,)
    return dict(list(out.items())[:limit])


def _leaves(kw: str) -> list[str]:
    parts = kw if isinstance(kw, list) else kw.replace(",", ";").split(";")
    return [p.split(":")[-1].strip().lower() for p in parts if p.strip()]


def _matches(phrase: str, text: str) -> bool:
    """The phrase's words, stemmed, in a row in the text's: "point clouds" matches "point-cloud", "robot
    manipulation" matches "Robotic Manipulation" (an exact-string match missed both)."""
    return f" {_stemmed(phrase)} " in f" {_stemmed(text)} "


@lru_cache(maxsize=200_000)
def _stemmed(text: str) -> str:
    import re

    import Stemmer

    global _STEMMER
    _STEMMER = _STEMMER or Stemmer.Stemmer("english")
    # and a plural acronym ("rnns", "gans") as its singular, which the stemmer leaves alone
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                    for w in _STEMMER.stemWords(re.findall(r"[a-z0-9]+", text.lower())))


_STEMMER = None


def on_topic(record: dict, aliases: tuple[str, ...], abstract: bool = False) -> bool:
    """Strict: a keyword or the title names the topic. With abstract=True (the loose yardstick) the abstract
    may name it instead: author keywords miss many papers on a narrow topic (9 of the library's papers
    carry "novel view synthesis", 25 name it)."""
    texts = _leaves(record.get("keywords") or "") + [(record.get("title") or "").lower()]
    if abstract:
        texts.append((record.get("abstract") or "").lower())
    return any(_matches(a, t) for a in aliases for t in texts)


def build_corpus(dest: Path, n: int, per_topic: int) -> dict[str, set[str]]:
    """The library's records as JSON Lines at dest (taken in turn from each topic's papers, up to per_topic
    each, then other keyword papers up to n); returns topic -> ids of every keyword paper on it (of the
    whole file, so a library built with other settings is judged the same way)."""
    with gzip.open(PAPERLISTS, "rt", encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if r.get("keywords") and r.get("abstract")]
    gold = {t: {r["id"] for r in records if on_topic(r, a)} for t, a in TOPICS.items()}
    by_id = {r["id"]: r for r in records}
    chosen: dict[str, dict] = {}
    lists = [[i for i in (r["id"] for r in records) if i in gold[t]][:per_topic] for t in TOPICS]
    for row in range(per_topic):  # round robin, so a partial ingest still covers every topic
        for ids in lists:
            if row < len(ids):
                chosen.setdefault(ids[row], by_id[ids[row]])
    for r in records:
        if len(chosen) >= n:
            break
        chosen.setdefault(r["id"], r)
    picked = list(chosen.values())[:n]
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "w", encoding="utf-8") as out:
        for r in picked:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return gold


def open_library(home: Path, corpus: Path | None = None):
    from rag.library.library import Library
    from rag.settings import Settings

    settings = Settings(home=home, library=LIBRARY, embedder="minilm")
    lib = Library(settings)
    if corpus is not None:
        n = sum(1 for _ in open(corpus, encoding="utf-8"))
        if len(lib) < n:
            print(f"ingesting {n} abstracts into {home} (first run only; ~20 abstracts/s)", flush=True)
            print(lib.ingest([corpus], progress=False).summary(), flush=True)
    return lib, settings


def run_side(home: Path, topics: list[str]) -> dict[str, dict]:
    """summarise() every topic with the code on sys.path: cited ids, themes, related ids, seconds."""
    from rag.tasks.summarise import summarise

    lib, settings = open_library(home)
    out = {}
    for topic in topics:
        t0 = time.perf_counter()
        res = summarise(topic, lib, settings=settings)
        out[topic] = {"cited": [c.paper.paper_id for c in res.citations],
                      "themes": [t.title for t in res.themes],
                      "related": [h.paper.paper_id for h in getattr(res, "related", []) or []],
                      "abstained": res.abstained, "seconds": round(time.perf_counter() - t0, 2)}
    return out


def before_side(rev: str, home: Path, topics: list[str]) -> dict[str, dict]:
    """run_side with the rag/ of `rev`, in its own process."""
    return before_side_of(rev, "summarise_topics", f"run_side(Path({str(home)!r}), {topics!r})")


def share(side: dict[str, dict], gold: dict[str, set[str]], loose: dict[str, set[str]] | None = None,
          in_lib: dict[str, set[str]] | None = None) -> dict:
    """Share of cited papers on the topic (strict gold), under the loose gold too, and the ceiling: the
    share a summary citing as many papers could reach if every strict-gold paper of the library were
    among them (a summary of 15 papers on a topic 5 papers carry can reach 33 % at best)."""
    per, on, on_loose, best, cited, wanted = {}, 0, 0, 0, 0, 0
    for topic, r in side.items():
        g = set(gold[topic])
        k = sum(1 for pid in r["cited"] if pid in g)
        kl = sum(1 for pid in r["cited"] if pid in (loose or gold)[topic])
        n = len(r["cited"])
        per[topic] = {"cited": n, "on_topic": k, "on_topic_loose": kl,
                      "share": round(k / n, 3) if n else None,
                      "related": len(r["related"]), "related_on_topic": sum(1 for p in r["related"] if p in g),
                      "themes": r["themes"]}
        on, on_loose, cited = on + k, on_loose + kl, cited + n
        best += min(n, len((in_lib or gold)[topic]))
        wanted += min(SUMMARY_CAP, len((in_lib or gold)[topic]))
    shares = [p["share"] for p in per.values() if p["share"] is not None]
    return {"topics": per, "pooled_share": round(on / cited, 3) if cited else None,
            "pooled_share_loose": round(on_loose / cited, 3) if cited else None,
            "ceiling": round(best / cited, 3) if cited else None,
            "macro_share": round(sum(shares) / len(shares), 3) if shares else None,
            "recall": round(on / wanted, 3) if wanted else None,
            "cited": cited, "on_topic": on, "on_topic_loose": on_loose, "wanted": wanted}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, default=Path("/tmp/paperchat-topics"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--per-topic", type=int, default=40)
    ap.add_argument("--before-rev", default="", help="git revision of the 'before' code (default: merge-base with main)")
    ap.add_argument("--narrow", type=int, default=40, help="how many narrow topics (odd-indexed: tuning half)")
    ap.add_argument("--ingest-only", action="store_true")
    args = ap.parse_args()
    if not PAPERLISTS.exists():
        print(f"skipped: {PAPERLISTS} is absent (see ../shared/data/README.md)")
        return
    m = print_header("summaries on a public topic set: share of cited papers on the topic")
    started = time.time()
    corpus = args.home / "topics.jsonl"
    gold = build_corpus(corpus, args.n, args.per_topic)
    sys.path.insert(0, str(ROOT))
    open_library(args.home, corpus)
    if args.ingest_only:
        return
    rev = merge_base(args.before_rev)
    lib, _ = open_library(args.home)
    ids = {p.paper_id for p in lib.papers()}
    narrow = narrow_topics(corpus, limit=args.narrow)
    with gzip.open(PAPERLISTS, "rt", encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if r.get("keywords") and r.get("abstract")]
    gold.update({t: {r["id"] for r in records if on_topic(r, a)} for t, a in narrow.items()})
    loose = {t: {r["id"] for r in records if on_topic(r, a, abstract=True)} for t, a in {**TOPICS, **narrow}.items()}
    in_lib = {t: g & ids for t, g in gold.items()}  # the papers a summary could cite
    topics = list(TOPICS) + list(narrow)
    before = before_side(rev, args.home, topics)
    after = run_side(args.home, topics)
    print(f"library: {len(ids)} papers; {len(TOPICS)} broad topics (a topic's keyword on 33-62 of its papers), "
          f"{len(narrow)} narrow ones (a keyword on 3-8)\n")
    figures = {"before_rev": rev, "n_papers": len(ids), "topics": {t: len(v) for t, v in in_lib.items()}}
    fmt = lambda x: f"{x['on_topic']}/{x['cited']} " + (f"{x['share']:.0%}" if x["share"] is not None else "-")  # noqa: E731
    names = list(narrow)
    groups = (("broad", list(TOPICS)), ("narrow tune", names[1::2]), ("narrow report", names[0::2]),
              ("narrow", names), ("all", topics))
    for label, group in groups:
        b = share({t: before[t] for t in group}, gold, loose, in_lib)
        a = share({t: after[t] for t in group}, gold, loose, in_lib)
        figures[label] = {"before": b, "after": a}
        if label in ("broad", "narrow tune", "narrow report"):
            print(f"{label + ' topics':34s} {'papers':>6s}  {'before':>14s}  {'after':>14s}  related(on topic)")
            for t in group:
                bt, at = b["topics"][t], a["topics"][t]
                print(f"{t[:34]:34s} {len(in_lib[t]):6d}  {fmt(bt):>14s}  {fmt(at):>14s}  {at['related']}({at['related_on_topic']})")
        print(f"{label}: share of cited papers on the topic, pooled: before {b['pooled_share']:.1%} "
              f"({b['on_topic']}/{b['cited']}), after {a['pooled_share']:.1%} ({a['on_topic']}/{a['cited']}); "
              f"mean per topic: before {b['macro_share']:.1%}, after {a['macro_share']:.1%}")
        print(f"{label}: loose (a keyword, the title or the abstract names the topic): before "
              f"{b['pooled_share_loose']:.1%} ({b['on_topic_loose']}/{b['cited']}), after {a['pooled_share_loose']:.1%} "
              f"({a['on_topic_loose']}/{a['cited']}); ceiling of the strict share at these sizes: before "
              f"{b['ceiling']:.1%}, after {a['ceiling']:.1%}")
        print(f"{label}: recall (strict-gold papers cited, of at most {SUMMARY_CAP} a topic): before {b['recall']:.1%} "
              f"({b['on_topic']}/{b['wanted']}), after {a['recall']:.1%} ({a['on_topic']}/{a['wanted']})\n")
    write_results("summarise_topics", figures, m, started)


if __name__ == "__main__":
    main()
