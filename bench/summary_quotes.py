"""Which sentence a summary quotes for a paper, against mlqa's marked answer sentences of its `topic` questions.

An mlqa `topic` question is a bare search-style phrase written for one paper, with the 1-3 sentences of that
abstract that answer it marked (../shared/data/mlqa/README.md): the sentence a summary on that topic should
quote for the paper. For each, the paper is read for the topic as a summary reads it (rag.tasks.topicality.read,
its vector for centrality) and the extractive summary's picker (rag.tasks.summary_writers._pick) quotes one
sentence, for a theme paragraph and for the overview; the share of quotes that are a marked answer sentence
(and answer or partial) is printed per weight of the answer scorer's probability (QUOTE_SCORER_WEIGHT: the
topic as the question) beside the rule alone (weight 0), on train (to choose) and test (to report), in one run; then, at the shipped
weight, the own-voice and definition rules (rag.reading.voice) on and off.

    .venv/bin/python bench/summary_quotes.py        (skips when ../shared/data/mlqa is absent)
"""

from __future__ import annotations

import json
import sys
import time

from _common import DATA, Memo, print_header, write_results

MLQA = DATA / "mlqa"
WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)


def _norm(s: str) -> str:
    return " ".join(s.split()).strip().lower()


def _shares(rows: list, W) -> dict:
    """Per place (theme paragraph, overview) and split, the share of quotes that are a marked answer
    (`answer`) and an answer or partial one (`answer_or_partial`), as the writers' picker stands now."""
    out = {}
    for place, kw in (("paragraph", {}), ("overview", {"contribution_only": True, "topical": 0.7})):
        for split in ("train", "test"):
            hit = both = n = 0
            for s, r, central, probs, answers, partial in rows:
                if s != split:
                    continue
                sent, _ = W._pick(r, central, set(), probs=probs, **kw)
                n += 1
                hit += _norm(sent) in answers
                both += _norm(sent) in partial
            out[f"{place} {split}"] = {"answer": round(hit / max(1, n), 4),
                                       "answer_or_partial": round(both / max(1, n), 4)}
    return out


def main() -> int:
    if not (MLQA / "questions.jsonl").exists():
        print(f"skipped: {MLQA} is absent (see ../shared/data/README.md)")
        return 0
    started = time.time()
    m = print_header("the sentence a summary quotes for a paper, against mlqa topic questions' answer sentences")
    from rag.embedders import MiniLMEmbeddings
    from rag.reading.answer_scorer import probabilities
    from rag.records import Hit, Paper
    from rag.tasks import summary_writers as W
    from rag.tasks.themes import paper_text, unit
    from rag.tasks.topicality import read

    qs = [json.loads(x) for x in (MLQA / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    qs = [q for q in qs if q["type"] == "topic"]
    wanted = {q["id"] for q in qs}
    papers = {}
    for line in (MLQA / "library.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["id"] in wanted:
            papers[d["id"]] = Paper(paper_id=d["id"], title=d.get("title") or "", abstract=d["abstract"])
    emb = Memo(MiniLMEmbeddings())
    rows = []
    for q in qs:
        p = papers[q["id"]]
        r = read(q["q"], [Hit(paper=p, score=0.0, text="")], emb)[0]
        r.vec = unit(emb([paper_text(p)])[0])
        central = W._central([r], emb)[0]
        probs = probabilities(q["q"], [r.sentences], emb, [r.roles])[0]
        answers = {_norm(s) for s in q["answer_sentences"]}
        partial = answers | {_norm(s) for s in q.get("partial", [])}
        rows.append((q["split"], r, central, probs, answers, partial))
    weight0 = W.QUOTE_SCORER_WEIGHT
    figures: dict = {"questions": {s: sum(1 for x in rows if x[0] == s) for s in ("train", "test")}, "by_weight": {}}
    print(f"mlqa topic questions: train {figures['questions']['train']}, test {figures['questions']['test']}; "
          "share of quoted sentences that are marked answers (answer or partial)\n")
    print(f"{'weight':>6} {'paragraph train':>18} {'paragraph test':>18} {'overview train':>18} {'overview test':>18}")
    for w in WEIGHTS:
        W.QUOTE_SCORER_WEIGHT = w
        out = _shares(rows, W)
        figures["by_weight"][str(w)] = out
        print(f"{w:>6.2f} " + " ".join(f"{out[k]['answer']:>9.3f} ({out[k]['answer_or_partial']:.3f})"
                                      for k in ("paragraph train", "paragraph test", "overview train", "overview test")))
    W.QUOTE_SCORER_WEIGHT = weight0
    # The own-voice and definition rules (rag.reading.voice) at the shipped weight, on and off, same rows: what
    # they still add beside the scorer (docs/design.md, "Hand-set rules").
    figures["voice_rules"] = {}
    voice = (W.own_voice, W.defines)
    for label, off in (("on", False), ("off", True)):
        if off:
            W.own_voice = W.defines = lambda s: False
        out = {k: v["answer"] for k, v in _shares(rows, W).items()}
        W.own_voice, W.defines = voice
        figures["voice_rules"][label] = out
        print(f"voice rules {label:>3}: " + "  ".join(f"{k} {v:.3f}" for k, v in out.items()))
    best = max(WEIGHTS, key=lambda w: (figures["by_weight"][str(w)]["paragraph train"]["answer"]
                                       + figures["by_weight"][str(w)]["overview train"]["answer"], -w))
    figures["shipped_weight"], figures["best_on_train"] = weight0, best
    print(f"\nbest on train (paragraph + overview answer share): {best}; shipped QUOTE_SCORER_WEIGHT = {weight0}")
    write_results("summary_quotes", figures, m, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
