"""Do extractive answers quote the sentences that answer? PubMedQA PQA-L, 1,000 questions.

    .venv/bin/python bench/pubmedqa_answers.py                 # report half (questions 501-1000)
    .venv/bin/python bench/pubmedqa_answers.py --tune          # grid on the tune half (questions 1-500)
    .venv/bin/python bench/pubmedqa_answers.py --half all --json

The library is the 1,000 abstracts (CONTEXTS + LONG_ANSWER joined, in that order; paper_id = PubMed id),
ingested once into library `pubmedqa` under --home (default /tmp/paperchat-pubmedqa). Each question is
asked through `rag.tasks.ask.ask` (extractive) and scored by the yardstick `paperchat eval answers` uses
(rag/evaluation/mlqa.py, loaded from this checkout whatever --root is): an answer is a hit when one of its
sentences, citing the question's own abstract, quotes (or covers 80 % of the words of) one of its
LONG_ANSWER sentences (the conclusion, which answers the question); `hit_any_paper` drops the "citing its
own abstract" part (the mlqa README's rule). Also reported: how often it abstains, and the share of quoted
sentences taken from other abstracts (every question here has exactly one abstract about it, so those are
padding). `paperchat eval answers --pubmedqa ori_pqal.json` runs the same questions from the command line.

It runs against whatever `rag` is importable from --root (default: this checkout), so the same script
measures another worktree's code ("before"): `--root /work/main`.

Tuning (--tune) reads candidates once per question and scores a grid of rag.tasks.extractive.pick settings
(floor, answers_at, the same-paper ratio) on questions 1-500 only; the report half is never used for choices.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
DATA = HERE.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"
if not DATA.exists():
    DATA = Path("/work/shared/data/pubmedqa/ori_pqal.json")
T0 = time.time()


def log(msg: str) -> None:
    print(f"[{time.time() - T0:6.0f}s] {msg}", file=sys.stderr, flush=True)


def load() -> list[dict]:
    d = json.loads(DATA.read_text(encoding="utf-8"))
    return [{"id": pid, "question": r["QUESTION"], "contexts": r["CONTEXTS"], "long_answer": r["LONG_ANSWER"]}
            for pid, r in d.items()]


def library(home: Path, items: list[dict]):
    from rag.library.library import Library
    from rag.settings import Settings

    settings = Settings(home=home, library="pubmedqa", embedder="minilm")
    lib = Library(settings)
    if len(lib) < len(items):
        src = home / "pubmedqa.jsonl"
        home.mkdir(parents=True, exist_ok=True)
        with open(src, "w", encoding="utf-8") as f:
            for it in items:
                f.write(json.dumps({"id": it["id"], "abstract": " ".join(it["contexts"] + [it["long_answer"]])}) + "\n")
        log(f"ingesting {len(items)} abstracts into {home} (first run only)")
        log(lib.ingest([src], progress=False).summary())
    return lib, settings


@lru_cache(maxsize=1)
def yardstick():
    """rag/evaluation/mlqa.py of this checkout (the one scoring `paperchat eval answers` uses), loaded by
    path so a --root without it (an older revision) is scored the same way."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("paperchat_yardstick", HERE / "rag" / "evaluation" / "mlqa.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def question_of(item: dict):
    from rag.reading.sentences import split_sentences

    return yardstick().EvalQuestion(id=item["id"], q=item["question"], type="pqal",
                                    answer_sentences=split_sentences(item["long_answer"]))


def is_answer(sentence: str, question) -> bool:
    return any(yardstick().covers(sentence, m) for m in question.answer_sentences)


def quoted(ans) -> list[tuple[str, str]]:
    """(paper id, sentence) of every sentence the extractive answer quotes (its citations' evidence)."""
    out = []
    for c in ans.citations:
        for e in [c.evidence, *getattr(c, "more_evidence", [])]:
            if e:
                out.append((c.paper.paper_id, e))
    return out


def evaluate(lib, settings, items: list[dict]) -> dict:
    from rag.tasks.ask import ask

    ys = yardstick()
    scores = []
    n_quotes = other_quotes = 0
    for i, it in enumerate(items):
        t0 = time.perf_counter()
        ans = ask(it["question"], lib, settings=settings)
        scores.append(ys.score_answer(question_of(it), ans.as_json(), time.perf_counter() - t0))
        q = quoted(ans)
        n_quotes += len(q)
        other_quotes += sum(pid != it["id"] for pid, _ in q)
        if (i + 1) % 100 == 0:
            log(f"  {i + 1}/{len(items)}")
    n = len(items)
    f = ys.answer_figures(scores)
    return {"questions": n, "hit": f["hit_cites_own"], "hit_any_paper": f["hit"], "cites_own": f["cites_own"],
            "abstained": f["abstained"], "own_paper_share": f["own_paper_share"], "answers_right": f["answers_right"],
            "p50_seconds": f["p50_seconds"], "p95_seconds": f["p95_seconds"],
            "quotes_per_answer": n_quotes / n, "quotes_from_other_abstracts": other_quotes / max(1, n_quotes)}


def tune(lib, settings, items: list[dict]) -> dict:
    """Grid over pick()'s settings on candidates computed once per question."""
    from rag.tasks.extractive import candidates, pick
    from rag.library.retrieval import search
    from rag.reading.roles import roles_of
    from rag.tasks.ask import covers

    emb = lib.text_embedder
    per = []
    gold_scores = []
    for i, it in enumerate(items):
        hits = search(lib, it["question"], settings.ask.sources)
        roles = roles_of([h.paper for h in hits], emb)
        per.append((it, hits, roles, covers(hits, settings)))
        gold = question_of(it)
        for c in candidates(it["question"], hits, emb, roles):
            if hits[c.hit].paper.paper_id == it["id"] and is_answer(c.sentence, gold):
                gold_scores.append(c.score)
        if (i + 1) % 100 == 0:
            log(f"  candidates {i + 1}/{len(items)}")
    gold_scores.sort()
    pct = {p: round(gold_scores[int(p / 100 * (len(gold_scores) - 1))], 3) for p in (1, 5, 10, 25, 50)}
    rows = []
    golds = {it["id"]: question_of(it) for it, *_ in per}
    # pick() on the answer scorer's probabilities (rag.reading.answer_scorer): floor, answers_at, the ratio
    # at which a lead that does not answer takes its paper's next sentence
    cand = [(it, hits, candidates(it["question"], hits, emb, roles), ok) for it, hits, roles, ok in per]
    for floor in (0.05, 0.1, 0.2):
        for answers_at in (0.4, 0.5, 0.6):
            for ratio in (0.7, 0.8, 0.9):
                hit = abst = nq = other = 0
                for it, hits, cs, ok in cand:
                    qs = pick(cs, settings.ask.max_sentences, floor, answers_at, ratio) if ok else []
                    gold = golds[it["id"]]
                    abst += not qs
                    nq += len(qs)
                    other += sum(hits[q.hit].paper.paper_id != it["id"] for q in qs)
                    hit += any(hits[q.hit].paper.paper_id == it["id"] and is_answer(q.sentence, gold) for q in qs)
                n = len(cand)
                rows.append({"floor": floor, "answers_at": answers_at, "ratio": ratio,
                             "hit": hit / n, "abstained": abst / n, "quotes_per_answer": nq / n,
                             "quotes_from_other_abstracts": other / max(1, nq)})
    return {"questions": len(items), "gold_sentence_score_percentiles": pct, "grid": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("PAPERCHAT_HOME", "/tmp/paperchat-pubmedqa")))
    ap.add_argument("--root", type=Path, default=HERE, help="the checkout whose rag/ is measured")
    ap.add_argument("--half", choices=["tune", "report", "all"], default=None)
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not DATA.exists():
        print(f"skipped: PubMedQA not found at {DATA}", file=sys.stderr)
        return 0
    sys.path.insert(0, str(args.root.resolve()))
    items = load()
    half = args.half or ("tune" if args.tune else "report")
    part = {"tune": items[:500], "report": items[500:], "all": items}[half][: args.limit]
    lib, settings = library(args.home, items)
    log(f"{'tuning' if args.tune else 'asking'} {len(part)} questions ({half} half) with rag from {args.root}")
    res = tune(lib, settings, part) if args.tune else evaluate(lib, settings, part)
    res["half"] = half
    res["root"] = str(args.root)
    if args.json:
        print(json.dumps(res, indent=2))
    elif args.tune:
        print(f"relevance of the LONG_ANSWER sentences among the candidates, percentiles: "
              f"{res['gold_sentence_score_percentiles']}")
        print(f"{'floor':>6} {'answers':>8} {'ratio':>6} {'hit':>6} {'abst':>6} {'quotes':>7} {'other':>6}")
        for r in sorted(res["grid"], key=lambda r: -r["hit"])[:40]:
            print(f"{r['floor']:6.2f} {r['answers_at']:8.2f} {r['ratio']:6.2f} {r['hit']:6.3f} "
                  f"{r['abstained']:6.3f} {r['quotes_per_answer']:7.2f} {r['quotes_from_other_abstracts']:6.3f}")
    else:
        print(f"PubMedQA PQA-L, {half} half ({res['questions']} questions), rag from {args.root}:")
        print(f"  quotes (or restates) a LONG_ANSWER sentence, citing its abstract: {res['hit']:.3f}   "
              f"citing any paper: {res['hit_any_paper']:.3f}")
        print(f"  cites its abstract: {res['cites_own']:.3f}   abstains: {res['abstained']:.3f}   "
              f"sentences per answer: {res['quotes_per_answer']:.2f}   "
              f"of them from other abstracts: {res['quotes_from_other_abstracts']:.3f}")
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
