"""Which sentence a derived title is built from: the rule (rag.loaders.titles.derive_title: the sentence that
introduces a named method, else the first) against the answer scorer's pick (rag.reading.answer_scorer, a
question asking for the paper's contribution), scored against the authors' own titles.

On a fixed sample of ../shared/data/mlqa/library.jsonl (abstracts with their real titles; the seed lists have
none), each abstract gets a title both ways: the rule's, and first_sentence_title of the scorer's most probable
sentence (for abstracts that introduce a method by name the rule's "Name: what it does" is kept both ways, so
the comparison is over the abstracts where the rule falls back to the first sentence). Printed side by side:
the mean MiniLM cosine of each title to the authors' title, and how often each is the closer. Choose on the
first half of the sample, report the second.

    .venv/bin/python bench/title_sentence.py [--n 400]      (skips when ../shared/data/mlqa is absent)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

import numpy as np

from _common import DATA, print_header, write_results

MLQA = DATA / "mlqa"
QUESTIONS = ("What does this paper propose?", "What is the main contribution of this paper?")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400, help="abstracts sampled (seed 0)")
    args = ap.parse_args()
    if not (MLQA / "library.jsonl").exists():
        print(f"skipped: {MLQA} is absent (see ../shared/data/README.md)")
        return 0
    started = time.time()
    m = print_header("derived titles: the rule's sentence against the answer scorer's, scored by the authors' titles")
    from rag.embedders import MiniLMEmbeddings
    from rag.loaders.titles import _introduction, derive_title, first_sentence_title
    from rag.reading.answer_scorer import probabilities
    from rag.reading.roles import classify_many
    from rag.reading.sentences import split_sentences

    recs = [json.loads(x) for x in (MLQA / "library.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    recs = [r for r in recs if r.get("title") and r.get("abstract")]
    random.Random(0).shuffle(recs)
    recs = recs[: args.n]
    emb = MiniLMEmbeddings()
    abstracts = [split_sentences(r["abstract"]) or [r["abstract"]] for r in recs]
    roles = classify_many(abstracts, emb)
    rule = [derive_title(r["abstract"]) for r in recs]
    fallback = [not _introduction(r["abstract"][:6000])[0] for r in recs]
    by_q = {}
    for q in QUESTIONS:
        probs = probabilities(q, abstracts, emb, roles)
        by_q[q] = [t if not fb else first_sentence_title(ss[int(np.argmax(p))])
                   for t, fb, ss, p in zip(rule, fallback, abstracts, probs)]
    truth = emb.embed_array([r["title"] for r in recs])

    def cos(titles: list[str]) -> np.ndarray:
        v = emb.embed_array([t or "-" for t in titles])
        return np.sum(v * truth, axis=1)

    base = cos(rule)
    half = len(recs) // 2
    idx = {"choose (first half)": [i for i in range(half) if fallback[i]],
           "report (second half)": [i for i in range(half, len(recs)) if fallback[i]]}
    figures: dict = {"abstracts": len(recs), "first_sentence_fallback": int(sum(fallback)), "by_question": {}}
    print(f"{len(recs)} abstracts, {sum(fallback)} with no method introduced by name (the rule's first sentence)\n")
    print(f"{'question':48} {'part':22} {'rule cos':>9} {'scorer cos':>11} {'scorer closer':>14} {'rule closer':>12}")
    for q in QUESTIONS:
        alt = cos(by_q[q])
        figures["by_question"][q] = {}
        for part, ii in idx.items():
            a, b = base[ii], alt[ii]
            row = {"n": len(ii), "rule": round(float(a.mean()), 4), "scorer": round(float(b.mean()), 4),
                   "scorer_closer": int(np.sum(b > a + 1e-6)), "rule_closer": int(np.sum(a > b + 1e-6))}
            figures["by_question"][q][part] = row
            print(f"{q:48} {part:22} {row['rule']:9.3f} {row['scorer']:11.3f} {row['scorer_closer']:>14} "
                  f"{row['rule_closer']:>12}")
    examples = [(recs[i]["title"], rule[i], by_q[QUESTIONS[0]][i]) for i in idx["report (second half)"][:5]]
    print("\nauthors' title | rule | scorer's sentence")
    for e in examples:
        print(" | ".join(e))
    figures["examples"] = examples
    write_results("title_sentence", figures, m, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
