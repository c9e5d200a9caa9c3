"""Theme names of summaries, before and after: every name printed, the share that fits its papers, the share a lint passes.

Same library and topics as bench/summarise_topics.py (its 20 broad topics and 20 narrow ones, its
library of 1,000 keyword-carrying paperlists papers under --home; built there on first run, reused
here), plus the six seed topics on a library of the four seed files. Both sides run in one
invocation: "before" is the code of --before-rev (default: main's commit this branch started from),
exported with `git archive` and run in a subprocess; "after" is this checkout.

    nice -n 10 .venv/bin/python bench/theme_names.py            # --home /tmp/paperchat-topics-names

Two proxies, neither a judgement of a name (the names are printed for that):
  fit   the name's content words (stemmed, stop words ignored; an acronym matches its expansion, i.e.
        words whose initials spell it) all occur in the title or abstract of at least half of the
        theme's cited papers;
  lint  2-6 words; not ending in an adjective, verb or preposition; not only generic words; no acronym
        repeating a phrase of the same name; not a duplicate of another theme's name in the summary
        (acronyms spelled out); not the topic itself.
A summary of one theme is named by its topic on purpose; those are left out of both shares.
Topics are split in two halves (even and odd positions of the list): the namer was tuned on the first
("tune") only; the second ("report") is the figure to quote.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PAPERLISTS, ROOT, merge_base, print_header, write_results  # noqa: E402
from _common import before_side as before_side_of  # noqa: E402
from summarise_topics import TOPICS, build_corpus, narrow_topics, open_library  # noqa: E402

SEED_TOPICS = ("optimal transport", "reinforcement learning from human feedback", "diffusion models",
               "Mamba and selective state space models", "graph neural networks", "attention")
_STOP = set("""a an and the of for in on with without to from by via as at or into over under beyond
towards toward its their our this that these those is are be using based""".split())
_GENERIC = set("""model models network networks data learning algorithm algorithms method methods approach
approaches framework frameworks system systems deep neural language large task tasks performance
results analysis training success rate labeled labelled unlabeled quality state-of-the-art art zero-shot few-shot
problem problems application applications study research""".split())
_PREP = set("""of for in on with without to from by via as at or into over under beyond towards toward
and between across among against through""".split())
_ADJ_END = ("al", "ic", "ive", "ous", "able", "ible", "ful", "less", "ed", "ly", "ary")
_NOUN_OK = set("""signal interval potential proposal retrieval trial tutorial goal metric logic topic heuristic
objective derivative alternative incentive primitive archive speed seed need embed boundary summary
library dictionary vocabulary adversary anomaly family assembly supply table variable robotics dynamics
physics graphics""".split())
_ADJ_PIECE = set("""based driven aware free invariant specific shot level wise agnostic guided efficient
like scale grained order time step modal dimensional supervised art end""".split())
_VERB_END = set("""operates operate requires require enables enable improves improve achieves achieve shows
show provides provide yields yield leads lead outperforms outperform remains remain""".split())


# -- the two proxies

def _stem(words: list[str]) -> list[str]:
    import Stemmer

    global _STEMMER
    _STEMMER = _STEMMER or Stemmer.Stemmer("english")
    return _STEMMER.stemWords([w.lower() for w in words])


_STEMMER = None


def _words(text: str) -> list[str]:
    return [p for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", text) for p in w.split("-") if p]


def _is_acronym(w: str) -> bool:
    core = w[:-1] if w.endswith("s") else w
    return sum(c.isupper() for c in core) >= 2 and len(core) <= 6


def _spells(acr: str, words: list[str]) -> bool:
    """Some run of the words has the acronym's letters as its initials (GAN: generative adversarial network)."""
    letters = (acr[:-1] if acr.endswith("s") else acr).lower()
    initials = "".join(w[0].lower() for w in words if w)
    return letters in initials


def paper_holds(name: str, text: str) -> bool:
    """Every content word of the name occurs (stemmed) in the text; an acronym occurs or its expansion does."""
    words = _words(text)
    stems = set(_stem(words))
    lower = {w.lower() for w in words}
    for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", name):
        if _is_acronym(w):
            core = (w[:-1] if w.endswith("s") else w).lower()
            if core in lower or core + "s" in lower or _spells(w, [x for x in words if x.lower() not in _STOP]):
                continue
            return False
        for piece in w.split("-"):
            if piece and piece.lower() not in _STOP and _stem([piece])[0] not in stems:
                return False
    return True


def fits(name: str, texts: list[str]) -> bool:
    return bool(texts) and sum(paper_holds(name, t) for t in texts) * 2 >= len(texts)


def _key(name: str) -> frozenset[str]:
    return frozenset(_stem([w for w in _words(name) if w.lower() not in _STOP]))


def _same(a: str, b: str) -> bool:
    """One name twice: the same stemmed words, or an acronym of one spelling the other's words."""
    if _key(a) == _key(b):
        return True
    for x, y in ((a, b), (b, a)):
        acrs = [w for w in x.split() if _is_acronym(w)]
        rest = [w for w in x.split() if not _is_acronym(w) and w.lower() not in _STOP]
        if acrs and all(_spells(w, _words(y)) for w in acrs) and _key(" ".join(rest)) <= _key(y):
            return True
    return False


def lint(name: str, others: list[str], topic: str) -> list[str]:
    """What a reader would object to in a theme name, [] when nothing."""
    bad = []
    words = name.split()
    if not 2 <= len(words) <= 6:
        bad.append("length")
    last = words[-1].lower() if words else ""
    piece = last.split("-")[-1]
    if last in _PREP or last in _VERB_END or (piece in _ADJ_PIECE and "-" in last) or \
            (piece.endswith(_ADJ_END) and piece not in _NOUN_OK and not _is_acronym(words[-1])):
        bad.append("ends in an adjective, verb or preposition")
    content = [w.lower() for w in words if w.lower() not in _STOP]
    if not content or all(w in _GENERIC or w.rstrip("s") in _GENERIC for w in content):
        bad.append("generic")
    parts = [p.strip() for p in re.split(r",| and ", name) if p.strip()]
    if any(_same(p, q) or (_key(p) and _key(p) <= _key(q)) for i, p in enumerate(parts) for q in parts[i + 1:]) \
            or any(_is_acronym(w) and _spells(w, _words(" ".join(x for x in words if x != w))) for w in words):
        bad.append("repeats itself")
    if any(_same(name, o) for o in others):
        bad.append("duplicate")
    if _same(name, topic) or _key(name) <= _key(topic):
        bad.append("the topic")
    return bad


# -- running both sides

def run_side(home: Path, topics: list[str], library: str = "topics") -> dict[str, list[dict]]:
    """summarise() every topic with the code on sys.path: per theme its title and its papers' text."""
    from rag.library.library import Library
    from rag.settings import Settings
    from rag.tasks.summarise import summarise

    settings = Settings(home=home, library=library, embedder="minilm")
    lib = Library(settings)
    out = {}
    for topic in topics:
        res = summarise(topic, lib, settings=settings)
        out[topic] = [{"title": t.title, "papers": [f"{c.paper.title}. {c.paper.abstract}" for c in t.citations]}
                      for t in res.themes]
    return out


def before_side(rev: str, home: Path, topics: list[str], library: str) -> dict[str, list[dict]]:
    """run_side with the rag/ of `rev`, in its own process (as bench/summarise_topics.py runs its before side)."""
    return before_side_of(rev, "theme_names", f"run_side(Path({str(home)!r}), {topics!r}, {library!r})")


def judge(side: dict[str, list[dict]], topics: list[str]) -> dict:
    names, fit, clean, single = 0, 0, 0, 0
    objections: dict[str, int] = {}
    for topic in topics:
        themes = side[topic]
        if len(themes) <= 1:
            single += 1
            continue
        for i, t in enumerate(themes):
            names += 1
            fit += fits(t["title"], t["papers"])
            bad = lint(t["title"], [o["title"] for j, o in enumerate(themes) if j != i], topic)
            clean += not bad
            for b in bad:
                objections[b] = objections.get(b, 0) + 1
    return {"names": names, "fit": round(fit / names, 3) if names else None,
            "lint": round(clean / names, 3) if names else None, "one_theme_summaries": single,
            "objections": objections}


def seeds_library(home: Path) -> None:
    from rag.library.library import Library
    from rag.settings import Settings

    lib = Library(Settings(home=home, library="seeds", embedder="minilm"))
    if len(lib) < 76:
        lib.ingest([ROOT / "seeds"], progress=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, default=Path("/tmp/paperchat-topics-names"))
    ap.add_argument("--seeds-home", type=Path, default=Path("/tmp/paperchat-seeds-names"))
    ap.add_argument("--before-rev", default="", help="git revision of the 'before' code (default: merge-base with main)")
    args = ap.parse_args()
    if not PAPERLISTS.exists():
        print(f"skipped: {PAPERLISTS} is absent (see ../shared/data/README.md)")
        return
    m = print_header("theme names of summaries: every name, the share that fits its papers, the share a lint passes")
    started = time.time()
    corpus = args.home / "topics.jsonl"
    build_corpus(corpus, 1000, 40)
    sys.path.insert(0, str(ROOT))
    open_library(args.home, corpus)  # ingests on first run only
    seeds_library(args.seeds_home)
    rev = merge_base(args.before_rev)
    topics = list(TOPICS) + list(narrow_topics(corpus))
    halves = {"tune": topics[0::2], "report": topics[1::2]}
    sides = {"before": before_side(rev, args.home, topics, "topics"), "after": run_side(args.home, topics)}
    seeds = {"before": before_side(rev, args.seeds_home, list(SEED_TOPICS), "seeds"),
             "after": run_side(args.seeds_home, list(SEED_TOPICS), "seeds")}
    figures: dict = {"before_rev": rev, "halves": halves, "names": {}, "seeds": {}}
    for label, group, got in (("tune", halves["tune"], sides), ("report", halves["report"], sides),
                              ("seeds", list(SEED_TOPICS), seeds)):
        print(f"== {label} topics")
        for t in group:
            for side in ("before", "after"):
                print(f"  {t[:30]:30s} {side:6s} | " + " / ".join(x["title"] for x in got[side][t]))
            figures["names"][t] = {s: [x["title"] for x in got[s][t]] for s in ("before", "after")}
        b, a = judge(got["before"], group), judge(got["after"], group)
        figures[label] = {"before": b, "after": a}
        for what in ("fit", "lint"):
            print(f"{label}: {what}: before {b[what]:.0%} of {b['names']} names, after {a[what]:.0%} of {a['names']}")
        print(f"{label}: objections before {b['objections']}, after {a['objections']}; one-theme summaries "
              f"(named by the topic, not counted): before {b['one_theme_summaries']}, after {a['one_theme_summaries']}\n")
    write_results("theme_names", figures, m, started)


if __name__ == "__main__":
    main()
