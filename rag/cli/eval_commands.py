"""`paperchat eval`: retrieval on a BEIR folder; answers and summaries on a labelled set (rag.evaluation)."""

from __future__ import annotations

from rag.cli.common import print_json, settings_of


def cmd_eval(args) -> int:
    if args.what in ("answers", "summaries"):
        from rag.evaluation.workspace import code_version

        # The hash that keys kept answers is read as the command starts, before a library build that can take
        # minutes: an edit made meanwhile must not key the answers of the code this process already loaded.
        code_version()
    return {"retrieval": eval_retrieval, "answers": eval_answers, "summaries": eval_summaries}[args.what](args)


def eval_retrieval(args) -> int:
    from rag.evaluation.retrieval import evaluate_beir

    res = evaluate_beir(args.beir, args.split, settings_of(args), progress=None)
    if args.json:
        print_json(res)
    else:
        print(f"nDCG@10 {res['ndcg@10']:.4f}  Recall@100 {res['recall@100']:.4f}  MRR@10 {res['mrr@10']:.4f}  "
              f"({res['queries']} queries, {res['seconds']:.1f} s)")
    return 0


def eval_answers(args) -> int:
    from rag.evaluation.answers import evaluate_answers

    res = evaluate_answers(settings_of(args), mlqa=args.mlqa, pubmedqa=args.pubmedqa, split=args.split,
                           limit=args.limit, fresh=args.fresh)
    if args.json:
        print_json(res)
        return 0
    print(_header(res, "questions"))
    cols = ("hit", "own_paper_share", "answers_right", "abstained", "p50_seconds", "p95_seconds")
    print(f"{'type':14} {'n':>4} {'hit':>6} {'own':>6} {'right':>6} {'abst':>6} {'p50 s':>7} {'p95 s':>7}")
    rows = [*res["by_type"].items(), ("overall", res["overall"])]
    for name, f in rows:
        print(f"{name:14} {f['questions']:4d} " + " ".join(_cell(f[c], 7 if 'seconds' in c else 6) for c in cols))
    print("hit: a sentence quotes (or restates, 80 % of its words) a marked answer sentence; own: cited sentences "
          "citing the question's paper; right: `answers`-graded citations quoting an answer or partial sentence "
          "of the right paper")
    print(_footer(res))
    return 0


def eval_summaries(args) -> int:
    from rag.evaluation.summaries import evaluate_summaries

    res = evaluate_summaries(settings_of(args), mlqa=args.mlqa, split=args.split, limit=args.limit, fresh=args.fresh,
                             topics_file=args.areas)
    if args.json:
        print_json(res)
        return 0
    print(_header(res, "areas"))
    if args.areas:
        print(f"areas judged in {res['areas_file']}")
    print(f"{'area':40} {'cited':>5} {'prec':>6} {'recall':>6}")
    for s in res["per_area"]:
        flag = "  EMPTY (a failure: it has core papers)" if s["failure"] else "  empty" if s["empty"] else ""
        print(f"{s['topic'][:40]:40} {s['cited']:5d} {_cell(s['precision'], 6)} {_cell(s['core_recall'], 6)}{flag}")
    f = res["overall"]
    print(f"precision {_cell(f['precision'], 0)} (pooled {_cell(f['pooled_precision'], 0)}), core recall "
          f"{_cell(f['core_recall'], 0)}, empty {f['empty']} of {f['areas']} ({f['failures']} failures), "
          f"p50 {_cell(f['p50_seconds'], 0)} s, p95 {_cell(f['p95_seconds'], 0)} s")
    print(_footer(res))
    return 0


def _cell(x, width: int) -> str:
    return f"{'-' if x is None else f'{x:.3f}':>{width}}"


def _header(res: dict, what: str) -> str:
    who = res["model"] + (f" via {res['model_url']}" if res.get("model_url") else "") if res["model"] else "extractive"
    lib = res["library"]
    return (f"{res['set']} {res['split']}: {res['reused'] + res['asked_now']} {what}, answerer {who}, library "
            f"{lib['name']!r} ({lib['papers']} papers), commit {res['commit'] or res['version'] or '?'} "
            f"(code {res['code']})")


def _footer(res: dict) -> str:
    return f"{res['asked_now']} asked now, {res['reused']} kept from before; answers in {res['run_file']} ({res['seconds']} s)"
