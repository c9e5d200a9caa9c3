"""Comparison-table cells against CSAbstruct's gold sentence labels: does a cell's sentence carry its column's role?

For each CSAbstruct test abstract (226, its own sentence split) the table's cell picker
(rag.tasks.compare_cells.pick_cells, as `paperchat compare --papers` runs it with no topic: a sentence's
relevance is its closeness to its own abstract, rag.reading.grades' score) fills Problem, Approach, Finding and
Setting from the roles our classifier (rag/reading/roles.py, MiniLM) gives the sentences. Per column it prints
the share of abstracts whose cell is filled and, of the filled cells, the share whose sentence carries
the column's true label (Problem: background or objective; Approach: method; Finding: result) -- side
by side with a position baseline (Problem = first sentence, Approach = the middle one, Finding = the
last) and with the same picker fed the gold labels (what a perfect role classifier would give: the
picker itself never borrows a role). Setting has no gold label: its cells' gold labels are listed.
"stands" is the share of filled cells whose shown text stands alone (rag.reading.standalone.standing leaves it
whole: no connective or anaphor leaning on a sentence the table does not show).

    .venv/bin/python bench/compare_roles.py          (skips when ../shared/data/csabstruct is absent)
    .venv/bin/python bench/compare_roles.py --tune   (on dev: the position lead of Problem and Finding)
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter

from _common import DATA, Memo, print_header, write_results

GOLD = {"problem": {"background", "objective"}, "approach": {"method"}, "finding": {"result"}}


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--tune", action="store_true", help="on dev: share right per position lead (Problem, Finding)")
    args = ap.parse_args()
    path = DATA / "csabstruct" / ("dev.jsonl" if args.tune else "test.jsonl")
    if not path.exists():
        print(f"skipped: {path} is absent (see ../shared/data/README.md)")
        return 0
    started = time.time()
    m = print_header("comparison cells against CSAbstruct test labels")
    from rag.embedders import MiniLMEmbeddings
    from rag.reading.grades import relevance
    from rag.records import Hit, Paper
    from rag.reading.roles import classify_many
    from rag.reading.standalone import standing
    from rag.tasks.compare_cells import pick_cells
    from rag.tasks.topicality import Reading

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    emb = Memo(MiniLMEmbeddings())
    t = time.time()
    emb.embed_array([s for r in rows for s in r["sentences"]] + [" ".join(r["sentences"]) for r in rows])
    print(f"embedded {sum(len(r['sentences']) for r in rows)} sentences and {len(rows)} abstracts "
          f"in {time.time() - t:.0f} s", file=sys.stderr)
    predicted = classify_many([r["sentences"] for r in rows], emb)
    if args.tune:
        return tune(rows, predicted, emb)
    from rag.tasks import compare_cells

    weight = dict(compare_cells.COLUMN_SCORER_WEIGHT)
    probs = column_probs(rows, predicted, emb)
    systems = {"ours (predicted roles)": {}, "rule alone (weight 0)": {}, "position baseline": {},
               "picker with gold roles": {}}
    counts = {s: {c: Counter() for c in ("problem", "approach", "finding", "setting")} for s in systems}
    setting_gold: Counter = Counter()
    for r, roles, pr in zip(rows, predicted, probs):
        sents, gold = r["sentences"], [g.lower() for g in r["labels"]]
        abstract = " ".join(sents)
        p = Paper(paper_id=str(r["abstract_id"]), abstract=abstract)
        rel = relevance(abstract, sents, emb)
        for name, rs, w in (("ours (predicted roles)", roles, weight),
                            ("rule alone (weight 0)", roles, dict.fromkeys(weight, 0.0)),
                            ("picker with gold roles", gold, weight)):
            compare_cells.COLUMN_SCORER_WEIGHT = w
            cells = pick_cells(Reading(Hit(paper=p, score=0.0, text=""), sents, list(rs), rel), pr)
            compare_cells.COLUMN_SCORER_WEIGHT = weight
            for col, cell in cells.items():
                counts[name][col]["abstracts"] += 1
                if not cell.stated:
                    continue
                counts[name][col]["filled"] += 1
                counts[name][col]["stands"] += standing(cell.text) == cell.text.strip()
                if col in GOLD:
                    counts[name][col]["right"] += gold[cell.position] in GOLD[col]
                elif name.startswith("ours"):
                    setting_gold[gold[cell.position]] += 1
        n = len(sents)
        for col, i in (("problem", 0), ("approach", n // 2), ("finding", n - 1)):
            c = counts["position baseline"][col]
            c["abstracts"] += 1
            c["filled"] += 1
            c["right"] += gold[i] in GOLD[col]
            c["stands"] += standing(sents[i]) == sents[i].strip()
    figures: dict = {"abstracts": len(rows), "sentences": sum(len(r["sentences"]) for r in rows), "systems": {}}
    print(f"{len(rows)} abstracts, {figures['sentences']} sentences\n")
    print(f"answer scorer's weight in the cells (COLUMN_SCORER_WEIGHT): {weight}")
    figures["column_scorer_weight"] = weight
    print(f"{'column':10} " + " ".join(f"{s:>42}" for s in systems))
    print(f"{'':10} " + " ".join(f"{'filled':>16} {'right of filled':>17} {'stands':>7}" for _ in systems))
    for col in ("problem", "approach", "finding"):
        cells = []
        for s in systems:
            c = counts[s][col]
            filled, right = c["filled"], c["right"]
            share = right / filled if filled else 0.0
            stands = c["stands"] / filled if filled else 0.0
            figures["systems"].setdefault(s, {})[col] = {"abstracts": c["abstracts"], "filled": filled, "right": right,
                                                         "share_right": round(share, 4),
                                                         "share_stands_alone": round(stands, 4)}
            cells.append(f"{filled:>7}/{c['abstracts']:<8} {share:>9.3f} ({right:>3}) {stands:>7.3f}")
        print(f"{col:10} " + " ".join(f"{x:>42}" for x in cells))
    c = counts["ours (predicted roles)"]["setting"]
    figures["setting"] = {"abstracts": c["abstracts"], "filled": c["filled"], "gold_labels": dict(setting_gold)}
    print(f"\nsetting (no gold label): filled {c['filled']}/{c['abstracts']}; the gold labels of its sentences: "
          + ", ".join(f"{k} {v}" for k, v in setting_gold.most_common()))
    write_results("compare_roles", figures, m, started)
    return 0


def column_probs(rows: list[dict], predicted: list, emb) -> list[dict]:
    """Per abstract, each role column's answer-scorer probabilities (the column as the question, no topic)."""
    from rag.reading.answer_scorer import probabilities
    from rag.tasks.compare_cells import ROLE_COLUMNS, column_question

    abstracts, roles = [r["sentences"] for r in rows], [list(x) for x in predicted]
    by_column = {c: probabilities(column_question(c), abstracts, emb, roles) for c in ROLE_COLUMNS}
    return [{c: by_column[c][i] for c in ROLE_COLUMNS} for i in range(len(rows))]


def tune(rows: list[dict], predicted: list, emb) -> int:
    """Share of filled Problem, Approach and Finding cells right on dev, per weight of the answer scorer's
    probability (COLUMN_SCORER_WEIGHT; the column as the question) beside the rule's score, and per position
    lead of Problem (its sentence is stated early, so its lead is negative). Each row gives every column the
    same weight; read it per column (each column's cells are picked apart from the others' but for the
    sentence an earlier column took)."""
    from rag.reading.grades import relevance
    from rag.records import Hit, Paper
    from rag.tasks import compare_cells
    from rag.tasks.topicality import Reading

    rels = [relevance(" ".join(r["sentences"]), r["sentences"], emb) for r in rows]
    probs = column_probs(rows, predicted, emb)
    cols = ("problem", "approach", "finding")
    print(f"{'weight':>6} {'lead':>6} " + " ".join(f"{c + ' right':>15}" for c in cols) + f" {'mean':>6}"
          f"   (dev, {len(rows)} abstracts)")
    lead0, weight0 = dict(compare_cells.POSITION_LEAD), compare_cells.COLUMN_SCORER_WEIGHT
    for weight in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0):
        for lead in (0.0, 0.2):
            compare_cells.COLUMN_SCORER_WEIGHT = dict.fromkeys(cols, weight)
            compare_cells.POSITION_LEAD = {"problem": -lead, "finding": 0.0}
            right, filled = Counter(), Counter()
            for r, roles, rel, pr in zip(rows, predicted, rels, probs):
                gold = [g.lower() for g in r["labels"]]
                p = Paper(paper_id=str(r["abstract_id"]), abstract=" ".join(r["sentences"]))
                cells = compare_cells.pick_cells(Reading(Hit(paper=p, score=0.0, text=""), r["sentences"], list(roles), rel),
                                                 pr)
                for col in cols:
                    if cells[col].stated:
                        filled[col] += 1
                        right[col] += gold[cells[col].position] in GOLD[col]
            shares = [right[c] / max(1, filled[c]) for c in cols]
            print(f"{weight:>6.2f} {lead:>6.2f} " + " ".join(f"{x:>15.3f}" for x in shares) + f" {sum(shares) / 3:>6.3f}")
    compare_cells.POSITION_LEAD, compare_cells.COLUMN_SCORER_WEIGHT = lead0, weight0
    return 0

if __name__ == "__main__":
    sys.exit(main())
