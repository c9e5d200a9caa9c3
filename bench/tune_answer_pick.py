"""Choose the extractive answer's thresholds on the answer scorer's probability on mlqa train, end to end.

    PAPERCHAT_HOME=<a home holding the mlqa library> .venv/bin/python bench/tune_answer_pick.py [--split train]
        [--folds /tmp/paperchat-answer-scorer/folds]   # honest train probabilities (out of fold)

Each train question is retrieved and its candidates scored once (rag.tasks.ask's path); then a grid over
rag.tasks.extractive.pick's floor, answers_at, same-paper ratio, whether that second sentence must follow the lead,
and whether a quote leaning throughout comes with the sentence before it (WITH_CONTEXT), how many more
sentences of the lead's paper may join it (SAME_PAPER_MORE), each scored as rag.evaluation.mlqa scores
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
    ap.add_argument("--folds", type=Path, default=None,
                    help="the fold models bench/train_answer_scorer.py saved (its cache's folds/): each train "
                         "question scored by the model that did not see it (default: the shipped model)")
    args = ap.parse_args()
    settings = get_settings()
    lib = open_eval_library(settings, "mlqa", DATA / "library.jsonl", progress=False)
    s = lib.settings
    from rag.reading import answer_scorer as sc

    fold_of = {}
    if args.folds:
        for f in sorted(args.folds.glob("*.npz")):
            m = sc.AnswerScorer.load(f)
            fold_of.update({q: m for q in json.loads(f.with_suffix(".json").read_text(encoding="utf-8"))})
    shipped = sc.model
    per = []
    for q in load_questions(DATA, args.split):
        hits = search(lib, q.q, s.ask.sources)
        roles = roles_of([h.paper for h in hits], lib.text_embedder)
        if args.folds:  # score_abstract reads the model through this name
            sc.model = (lambda m: lambda: m)(fold_of[q.q])
        per.append((q, hits, candidates(q.q, hits, lib.text_embedder, roles), library_covers(hits, s)))
    sc.model = shipped
    rows = []
    import rag.tasks.extractive as ex

    grid = [(f, a, r, x, c, m) for f in (0.05, 0.1, 0.2) for a in (0.7, 0.8, 0.85, 0.9, 0.95)
            for r in (0.3, 0.5, 0.7, 1.01) for x in (False, True) for c in (False, True) for m in (1, 2)]
    for floor, answers_at, ratio, after, context, more in grid:
        ex.WITH_CONTEXT, ex.SAME_PAPER_MORE = context, more
        hit = n = own = graded = right = 0
        for q, hits, cands, ok in per:
            for c in cands:
                c.text = ""
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
        rows.append({"floor": floor, "answers_at": answers_at, "same_ratio": ratio, "after_lead": after,
                     "with_context": context, "same_paper_more": more, "hit": round(hit / k, 3), "own_paper_share": round(own / max(1, n), 3),
                     "answers_right": round(right / max(1, graded), 3), "answers_graded": graded})
    # The choice: most hits among the settings whose `answers` grades are right at least 0.85 of the time
    # (ties: the higher floor -- what makes the answer say the library does not answer -- then more
    # own-paper share, then the higher answers_at).
    fit = [r for r in rows if r["answers_right"] >= 0.85] or rows
    best = max(fit, key=lambda r: (r["hit"], r["floor"], r["own_paper_share"], r["answers_at"]))
    if args.json:
        print(json.dumps({"chosen": best, "rows": rows}, indent=1))
        return 0
    print(f"{'floor':>6} {'ans_at':>6} {'ratio':>6} {'after':>6} {'ctx':>6} {'more':>4} {'hit':>6} {'own':>6} {'right':>6} {'graded':>6}")
    for r in sorted(rows, key=lambda r: (-r["hit"], -r["answers_right"]))[:40]:
        print(f"{r['floor']:6.2f} {r['answers_at']:6.2f} {r['same_ratio']:6.2f} {str(r['after_lead']):>6} "
              f"{str(r['with_context']):>6} {r['same_paper_more']:4d} {r['hit']:6.3f} {r['own_paper_share']:6.3f} {r['answers_right']:6.3f} "
              f"{r['answers_graded']:6d}")
    print("chosen (most hits with answers_right >= 0.85):", best)
    return 0


if __name__ == "__main__":
    sys.exit(main())
