"""Why the paper–area scorer covers a paper or not: for a topic, every retrieved paper's probability
(rag.tasks.area_scorer), whether it is covered, and for the papers asked about each feature's share of the
logit (standardised value times weight), largest first, and the company stage's term.

    .venv/bin/python bench/area_explain.py "optimizers for training deep networks" --seeds 003:5 003:6
    .venv/bin/python bench/area_explain.py "optimal transport" --home H --library mlqa-minilm --papers ID ...

--seeds builds the bundled seeds once under --home (default /tmp/bench-area-explain) and names papers by
'file prefix:position' as tests/seed_questions.seed does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("topic")
    ap.add_argument("--home", type=Path, default=Path("/tmp/bench-area-explain"))
    ap.add_argument("--library", default="default")
    ap.add_argument("--seeds", nargs="*", help="seed papers to explain ('003:6'); builds the seeds library")
    ap.add_argument("--papers", nargs="*", default=[], help="paper ids to explain")
    ap.add_argument("--top", type=int, default=20, help="retrieved papers listed")
    args = ap.parse_args()
    from rag.library.library import Library
    from rag.library.retrieval import search
    from rag.settings import Settings
    from rag.tasks import area_scorer as A
    from rag.tasks.themes import depth
    from rag.tasks.topicality import read

    lib = Library(Settings(home=args.home, library=args.library, embedder="minilm"))
    where = {}
    if args.seeds is not None:
        if len(lib) < 76:
            lib.ingest([ROOT / "seeds"], progress=False)
        where = {p.paper_id: f"{p.source[:3]}:{p.position}" for p in lib.papers()}
    emb = lib.text_embedder
    readings = read(args.topic, search(lib, args.topic, depth(15)), emb)
    x = A.features(args.topic, readings, emb)
    keep, _ = A.on_topic(args.topic, readings, emb)
    p = np.array([r.probability for r in readings])
    kept = {id(r) for r in keep}
    m = A.model()
    cover, _ = A.cut_offs()
    print(f"{args.topic!r}: {len(readings)} retrieved, cut-off {cover:.2f}, CONFIDENT {A.CONFIDENT}")
    for i, r in enumerate(readings[: args.top]):
        name = where.get(r.paper.paper_id, r.paper.paper_id)
        print(f"{i:3d} {name:>10s} p={p[i]:.2f} {'covered' if id(r) in kept else '       '} {r.paper.title[:70]}")
    asked = set(args.papers) | {pid for pid, w in where.items() if w in set(args.seeds or [])}
    z = (x - m["mean"]) / m["std"] * m["w"]
    # the second stage's term (rag.tasks.area_scorer.company): the final logit less the first stage's
    second = np.log(np.clip(p, 1e-9, None) / np.clip(1 - p, 1e-9, None)) - (z.sum(axis=1) + float(m["b"]))
    for i, r in enumerate(readings):
        if r.paper.paper_id not in asked:
            continue
        print(f"\n{where.get(r.paper.paper_id, r.paper.paper_id)} (rank {i}): first stage's logit "
              f"{z[i].sum() + float(m['b']):+.2f}, company stage {second[i]:+.2f}, p {p[i]:.2f}")
        for j in np.argsort(-np.abs(z[i]))[:10]:
            print(f"   {A.FEATURES[j]:18s} value {x[i, j]:+.3f}  weight {m['w'][j]:+.2f}  share {z[i, j]:+.2f}")


if __name__ == "__main__":
    main()
