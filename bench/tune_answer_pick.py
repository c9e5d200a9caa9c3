"""Choose the extractive answer's thresholds on the answer scorer's probability on mlqa train, end to end.

    PAPERCHAT_HOME=<a home holding the mlqa library> .venv/bin/python bench/tune_answer_pick.py [--split train]

Each train question is retrieved and its candidates scored once (rag.tasks.ask's path); then a grid over
rag.tasks.extractive.pick's floor, answers_at, same-paper ratio and whether that second sentence must follow the lead, each scored as rag.evaluation.mlqa scores
an answer: hit (a quoted sentence covers a marked answer sentence), own-paper share of the quoted sentences,
and the share of quotes graded `answers` (probability >= answers_at) that quote an answer or partial
sentence of the question's paper. The library is opened as `paperchat eval answers` opens it (never ingested).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data" / "mlqa"
if not DATA.exists():
    DATA = Path("/work/shared/data/mlqa")


def main() -> int:
    from rag.evaluation.mlqa import covers, load_questions, quotes
    from rag.evaluation.workspace import open_eval_library
    from rag.library.retrieval import search
    from rag.reading.roles import roles_of
    from rag.settings import get_settings
    from rag.tasks.ask import covers as library_covers
    from rag.tasks.extractive import candidates, pick

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="train")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = get_settings()
    lib = open_eval_library(settings, "mlqa", DATA / "library.jsonl", progress=False)
    s = lib.settings
    per = []
    for q in load_questions(DATA, args.split):
        hits = search(lib, q.q, s.ask.sources)
        roles = roles_of([h.paper for h in hits], lib.text_embedder)
        per.append((q, hits, candidates(q.q, hits, lib.text_embedder, roles), library_covers(hits, s)))
    rows = []
    for floor, answers_at, ratio, after in [(f, a, r, x) for f in (0.02, 0.05, 0.1, 0.2) for a in (0.5, 0.6, 0.7, 0.8, 0.9)
                                            for r in (0.5, 0.7, 0.9, 1.01) for x in (False, True)]:
        if True:
            if True:
                hit = n = own = graded = right = 0
                for q, hits, cands, ok in per:
                    qs = pick(cands, s.ask.max_sentences, floor, answers_at, ratio, after) if ok else []
                    mine = [x for x in qs if hits[x.hit].paper.paper_id == q.id]
                    hit += any(covers(x.shown, m) for x in mine for m in q.answer_sentences)
                    n += len(qs)
                    own += len(mine)
                    for x in qs:
                        if x.score >= answers_at:
                            graded += 1
                            right += x in mine and any(quotes(x.sentence, m) for m in [*q.answer_sentences, *q.partial])
                k = len(per)
                rows.append({"floor": floor, "answers_at": answers_at, "same_ratio": ratio, "after_lead": after, "hit": round(hit / k, 3),
                             "own_paper_share": round(own / max(1, n), 3),
                             "answers_right": round(right / max(1, graded), 3), "answers_graded": graded})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'floor':>6} {'ans_at':>6} {'ratio':>6} {'after':>6} {'hit':>6} {'own':>6} {'right':>6} {'graded':>6}")
    for r in sorted(rows, key=lambda r: (-r["hit"], -r["answers_right"])):
        print(f"{r['floor']:6.2f} {r['answers_at']:6.2f} {r['same_ratio']:6.2f} {str(r['after_lead']):>6} {r['hit']:6.3f} "
              f"{r['own_paper_share']:6.3f} {r['answers_right']:6.3f} {r['answers_graded']:6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
