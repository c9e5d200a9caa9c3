"""Whether the library covers a topic at all: the former cosine rule against the paper–area scorer alone.

Summaries and tables used to ask a cosine rule first (one of the 10 best papers shares a word with the
topic and its best chunk reaches 0.36, or reaches 0.45 without one) and said "no papers on this topic"
without asking rag.tasks.area_scorer. Now the scorer alone decides. Three sets of topics, on two libraries:

- the seeds' uncovered areas (non-ML topics and ML areas the 76 seed papers hold no paper on): both should
  keep no paper;
- the seeds' covered areas named in one or two words, each with two or more seed papers on it: neither
  should abstain;
- the 34 judged mlqa area names (topics.jsonl and bench/areas/natural_names.jsonl) on the 3,000-paper
  library, when --home/--library name it: the rule's decision there.

    .venv/bin/python bench/topic_cover.py                                  # seeds, built under --seeds-home
    .venv/bin/python bench/topic_cover.py --home H --library mlqa-minilm   # and the mlqa areas

Prints, per topic, the rule's decision, its best cosines and what the scorer keeps.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import DATA  # noqa: E402

UNCOVERED = ["sourdough", "pasta", "football", "paracetamol dose", "protein folding", "protein design",
             "the stock market", "climate change", "robotics", "autonomous driving", "medical imaging",
             "speech recognition", "machine translation", "object detection", "image segmentation",
             "anomaly detection", "recommender systems", "quantum computing"]
COVERED = ["reasoning", "attention", "clustering", "diffusion", "transformers", "optimization",
           "federated learning", "language models", "scaling laws", "in-context learning", "optimal transport"]


def former_rule(hits) -> bool:
    """The rule as it stood (rag/tasks/summarise.py until this bench): COVER_DENSE 0.45, COVER_LEXICAL 0.36."""
    return any(h.dense >= 0.45 or (h.lexical > 0 and h.dense >= 0.36) for h in hits[:10])


def decide(lib, topics: list[str]) -> list[dict]:
    from rag.library.retrieval import search
    from rag.tasks.area_scorer import on_topic
    from rag.tasks.themes import depth
    from rag.tasks.topicality import read

    emb = lib.text_embedder
    out = []
    for t in topics:
        hits = search(lib, t, depth(15))
        keep, _ = on_topic(t, read(t, hits, emb), emb)
        out.append({"topic": t, "rule": former_rule(hits), "best": max((h.dense for h in hits[:10]), default=0.0),
                    "best_shared": max((h.dense for h in hits[:10] if h.lexical > 0), default=0.0),
                    "kept": [r.paper.title[:50] for r in keep]})
    return out


def show(title: str, rows: list[dict], want_papers: bool) -> None:
    print(f"\n{title}")
    for r in rows:
        print(f"  {r['topic']!r:30s} rule {'covers' if r['rule'] else 'no    '}  best {r['best']:.3f} "
              f"(shared word {r['best_shared']:.3f})  scorer keeps {len(r['kept'])}"
              + (f": {'; '.join(r['kept'][:3])}" if r["kept"] else ""))
    rule_wrong = sum(r["rule"] != want_papers for r in rows)
    scorer_wrong = sum(bool(r["kept"]) != want_papers for r in rows)
    both = sum((r["rule"] and bool(r["kept"])) != want_papers for r in rows)
    print(f"  wrong: the rule {rule_wrong} of {len(rows)}; the scorer alone {scorer_wrong}; "
          f"the rule then the scorer (as before) {both}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds-home", type=Path, default=Path("/tmp/bench-area-explain"))
    ap.add_argument("--home", type=Path, help="home of the mlqa library (bench/summarise_mlqa.py builds one)")
    ap.add_argument("--library", default="mlqa-minilm")
    args = ap.parse_args()
    from rag.library.library import Library
    from rag.settings import Settings

    seeds = Library(Settings(home=args.seeds_home, library="default", embedder="minilm"))
    if len(seeds) < 76:
        seeds.ingest([ROOT / "seeds"], progress=False)
    show("seeds, areas they do not hold (want: no paper)", decide(seeds, UNCOVERED), False)
    show("seeds, areas they hold two or more papers on (want: a summary)", decide(seeds, COVERED), True)
    if args.home:
        names = [json.loads(line)["topic"] for f in (DATA / "mlqa" / "topics.jsonl", ROOT / "bench" / "areas" /
                                                    "natural_names.jsonl") for line in f.open()]
        lib = Library(Settings(home=args.home, library=args.library, embedder="minilm"))
        rows = decide(lib, names)
        print(f"\nmlqa, the 34 judged areas: the rule says 'no papers' for {sum(not r['rule'] for r in rows)}; "
              f"the scorer keeps none for {sum(not r['kept'] for r in rows)}")


if __name__ == "__main__":
    main()
