"""Follow-ups with no words of their own ("What do they find?", "What did they propose?") against CSAbstruct's gold
sentence labels: does the quoted sentence carry the role the question asks for?

Each CSAbstruct test abstract (226, its own sentence split) stands for a paper the previous answer cited. Asked of
it, each follow-up below is answered two ways, side by side:

- scorer: as `ask` answered such a follow-up before: the answer scorer (rag.reading.answer_scorer) reads every
  sentence against the follow-up and the pick (rag.tasks.extractive.pick) quotes what clears the floor
  (settings.ask.floor), or nothing;
- column: as `ask` answers it now (rag.reading.questions.column_asked names what it asks; the sentence is the
  comparison table's cell for it, rag.tasks.compare_cells.column_cell, the paper read for itself).

Per follow-up: the share of abstracts answered, and of those answered the share whose (first) quoted sentence
carries a gold label the question asks for (finding: result; approach: method; proposal: objective or method;
problem: background or objective). ask also retried the scorer with the previous question appended; CSAbstruct
has no previous question, so that retry is not measured here (on the seeds it rated every sentence under 0.07
after "Compare RMNP and BAS", docs/quality.md).

    .venv/bin/python bench/follow_up_roles.py [--split dev]   (skips when ../shared/data/csabstruct is absent)
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter

from _common import DATA, Memo, print_header, write_results

GOLD = {"finding": {"result"}, "approach": {"method"}, "proposal": {"objective", "method"},
        "problem": {"background", "objective"}}
FOLLOW_UPS = ("What do they find?", "What are their main results?", "What did they propose?",
              "What is their contribution?", "How does it work?", "What problem do they address?")


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="test", choices=("dev", "test"), help="dev to choose, test to report")
    split = ap.parse_args().split
    path = DATA / "csabstruct" / f"{split}.jsonl"
    if not path.exists():
        print(f"skipped: {path} is absent (see ../shared/data/README.md)")
        return 0
    started = time.time()
    m = print_header(f"follow-ups with no words of their own against CSAbstruct {split} labels")
    from rag.embedders import MiniLMEmbeddings
    from rag.reading.answer_scorer import probabilities
    from rag.reading.grades import relevance
    from rag.reading.questions import column_asked
    from rag.reading.roles import classify_many
    from rag.records import Hit, Paper
    from rag.settings import Settings
    from rag.tasks.compare_cells import column_cell, column_probabilities
    from rag.tasks.extractive import Quote, pick
    from rag.tasks.topicality import Reading

    ask = Settings().ask
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    emb = Memo(MiniLMEmbeddings())
    abstracts = [r["sentences"] for r in rows]
    emb.embed_array([s for ss in abstracts for s in ss] + [" ".join(ss) for ss in abstracts])
    predicted = [list(x) for x in classify_many(abstracts, emb)]
    readings = [Reading(Hit(paper=Paper(paper_id=str(r["abstract_id"]), abstract=" ".join(ss)), score=0.0, text=""),
                        ss, roles, relevance(" ".join(ss), ss, emb))
                for r, ss, roles in zip(rows, abstracts, predicted)]
    column_probs = column_probabilities(readings, "", emb)
    figures: dict = {"split": split, "abstracts": len(rows), "follow_ups": {}}
    print(f"{len(rows)} abstracts; floor {ask.floor}\n")
    print(f"{'follow-up':32} {'asks':9} {'scorer: answered':>17} {'right':>7}   {'column: answered':>17} {'right':>7}")
    for q in FOLLOW_UPS:
        column = column_asked(q)
        counts = {"scorer": Counter(), "column": Counter()}
        scores = probabilities(q, abstracts, emb, predicted)
        for r, ss, roles, ps, reading, cp in zip(rows, abstracts, predicted, scores, readings, column_probs):
            gold = [g.lower() for g in r["labels"]]
            quotes = pick([Quote(0, j, s, float(p), roles[j]) for j, (s, p) in enumerate(zip(ss, ps))],
                          ask.max_sentences, ask.floor, ask.answers_at)
            if quotes:
                counts["scorer"]["answered"] += 1
                counts["scorer"]["right"] += gold[quotes[0].position] in GOLD[column]
            cell = column_cell(reading, column, cp)
            if cell.stated:
                counts["column"]["answered"] += 1
                counts["column"]["right"] += gold[cell.position] in GOLD[column]
        out = {}
        for way, c in counts.items():
            out[way] = {"answered": round(c["answered"] / len(rows), 4),
                        "right_of_answered": round(c["right"] / c["answered"], 4) if c["answered"] else None}
        figures["follow_ups"][q] = {"asks": column, **out}
        fmt = lambda d: (f"{d['answered']:>17.3f} {d['right_of_answered']:>7.3f}" if d["right_of_answered"] is not None
                         else f"{d['answered']:>17.3f} {'-':>7}")
        print(f"{q:32} {column:9} {fmt(out['scorer'])}   {fmt(out['column'])}")
    write_results("follow_up_roles" if split == "test" else f"follow_up_roles_{split}", figures, m, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
