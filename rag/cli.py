"""The `paperchat` command. Imports only what each command needs, so a search starts fast."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .errors import UserError


def _positive(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (how many results to show), got {k}")
    return k


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="paperchat", description="Ask questions of paper abstracts; every answer cited.")
    ap.add_argument("--library", help="library name (default: PAPERCHAT_LIBRARY or 'default')")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("ingest", help="add abstract lists (files or folders) to the library")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--map", action="append", default=[], metavar="OURS=THEIRS",
                   help="field mapping for JSON/CSV, e.g. --map abstract=summary (repeatable)")
    p.add_argument("--source", metavar="NAME",
                   help="name the file's source outright (one file): a file ingested under the same name later "
                        "replaces its records, wherever it lives")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("papers", help="list the catalogue")
    p.add_argument("--json", action="store_true")

    sub.add_parser("stats", help="counts per venue and year").add_argument("--json", action="store_true")

    p = sub.add_parser("remove", help="take papers, or a whole source (file), out of the library")
    p.add_argument("ids", nargs="*", metavar="PAPER_ID", help="paper ids as `papers --json` lists them")
    p.add_argument("--source", metavar="FILE",
                   help="every paper of this source (a file name, its path, or a source id from `sources`); papers "
                        "another source also holds stay")
    p.add_argument("--json", action="store_true")

    sub.add_parser("sources", help="the library's sources (files) with their paper counts").add_argument(
        "--json", action="store_true")

    def add_filters(p):
        p.add_argument("--venue")
        p.add_argument("--year-from", type=int)
        p.add_argument("--year-to", type=int)
        p.add_argument("--author", help='papers by this person ("Hinton" finds "Geoffrey E. Hinton")')
        p.add_argument("--collection", help="papers in this Zotero collection (its subcollections too)")
        p.add_argument("--papers", metavar="ID,...", help="only these papers (ids as `papers --json` lists them)")

    def add_exports(p):
        p.add_argument("--bibtex", type=Path, metavar="FILE", help="write the references as BibTeX")
        p.add_argument("--ris", type=Path, metavar="FILE", help="write the references as RIS (Zotero, EndNote, ...)")

    p = sub.add_parser("search", help="find papers")
    p.add_argument("query")
    p.add_argument("--k", type=_positive, default=10)
    add_filters(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("ask", help="a cited answer to a question")
    p.add_argument("question")
    add_filters(p)
    p.add_argument("--json", action="store_true")
    add_exports(p)

    p = sub.add_parser("summarise", aliases=["summarize"], help="themes of a research area, cited")
    p.add_argument("topic")
    add_filters(p)
    p.add_argument("--json", action="store_true")
    add_exports(p)

    p = sub.add_parser("compare", help="a literature table: each paper's problem, approach, finding and setting, cited")
    p.add_argument("topic", nargs="?", default="", help="the topic (optional with --papers)")
    add_filters(p)
    p.add_argument("--k", type=_positive, default=15, help="papers at most (default 15)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="rows and cells in full (sentence, role, score, paper id)")
    fmt.add_argument("--csv", action="store_true", help="the table as CSV")
    fmt.add_argument("--markdown", action="store_true", help="the table as Markdown")
    add_exports(p)  # the rows' references
    p.add_argument("--width", type=_positive, help="terminal table width (default: the terminal's, at most 100 "
                                                    "when not a terminal)")

    p = sub.add_parser("cite", help="abstracts that support or contradict a claim")
    p.add_argument("claim")
    add_filters(p)
    p.add_argument("--k", type=_positive, default=5)
    p.add_argument("--json", action="store_true")
    add_exports(p)

    p = sub.add_parser("serve", help="open the chat UI")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--seed", action="store_true", help="index the bundled seeds/ first if the library is empty")

    p = sub.add_parser("map", help="a map of the library: every paper placed by its vector, topics labelled")
    p.add_argument("--out", type=Path, metavar="FILE", help="write a self-contained HTML page (opens offline)")
    p.add_argument("--json", action="store_true", help="each paper's coordinates and topic")
    p.add_argument("--refit", action="store_true", help="compute the layout afresh instead of updating it")

    p = sub.add_parser("eval", help="measure retrieval quality")
    esub = p.add_subparsers(dest="what", required=True)
    e = esub.add_parser("retrieval", help="nDCG@10, Recall@100, MRR@10 on a BEIR-format folder")
    e.add_argument("--beir", type=Path, required=True)
    e.add_argument("--split", default="test")
    e.add_argument("--json", action="store_true")
    return ap


def _settings(args):
    from .settings import Settings

    s = Settings()
    if args.library:
        s = s.model_copy(update={"library": args.library})
    return s


def _library(args):
    from .library import Library

    return Library(_settings(args))


def _filters(args):
    from .retrieval import Filters

    papers = [p.strip() for p in args.papers.split(",") if p.strip()] if args.papers is not None else None
    return Filters(venue=args.venue, year_from=args.year_from, year_to=args.year_to, author=args.author or None,
                   collection=args.collection or None, papers=papers)


def _print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def cmd_ingest(args) -> int:
    fields = {}
    for m in args.map:
        if "=" not in m:
            raise UserError(f"--map takes OURS=THEIRS, e.g. abstract=summary; got {m!r}")
        k, v = m.split("=", 1)
        fields[k.strip()] = v.strip()
    lib = _library(args)
    report = lib.ingest(args.paths, fields or None, progress=None, source=args.source)
    for r in report.rejections:
        print(f"rejected {r}", file=sys.stderr)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        _print_json({**report.model_dump(exclude={"rejections"}), "rejections": [str(r) for r in report.rejections],
                     "papers": len(lib)})
    else:
        print(f"{report.summary()} — {len(lib)} papers in library {lib.name!r} ({report.seconds:.1f} s)")
    return 1 if report.rejected else 0


def cmd_papers(args) -> int:
    papers = _library(args).papers()
    if args.json:
        _print_json([p.catalogue_entry() for p in papers])
    else:
        for p in papers:
            mark = "*" if p.title_derived else ""
            print(f"{p.paper_id[:24]:24}  {p.venue or '-':6} {p.year or '-':4}  {p.title}{mark}  ({p.source}:{p.position})")
        print(f"{len(papers)} papers" + ("  (* title derived from the abstract)" if any(p.title_derived for p in papers) else ""))
    return 0


def cmd_stats(args) -> int:
    st = _library(args).stats()
    if args.json:
        _print_json(st)
    else:
        print(f"library {st['library']}: {st['papers']} papers, {st['chunks']} chunks ({st['embedder']}, {st['store']})")
        print(f"embedder: {st['embedder']}, {st['embedder_dimension']}-dim, {st['embedder_runs_on']}")
        print("venues: " + ", ".join(f"{k} {v}" for k, v in st["venues"].items()))
        print("years:  " + ", ".join(f"{k} {v}" for k, v in st["years"].items()))
    return 0


def cmd_remove(args) -> int:
    if bool(args.ids) == (args.source is not None):
        raise UserError("remove takes paper ids (`paperchat papers --json` lists them) or --source FILE, one of the two")
    lib = _library(args)
    r = lib.remove(args.ids) if args.ids else lib.remove_source(args.source)
    for pid in r.not_found:
        print(f"not found: {pid}", file=sys.stderr)
    if args.json:
        _print_json(r.model_dump(mode="json"))
    else:
        print(f"{r.summary()} — {r.papers} papers in library {lib.name!r} ({r.seconds:.1f} s)")
    return 1 if r.not_found else 0


def cmd_sources(args) -> int:
    sources = _library(args).sources()
    if args.json:
        _print_json([s.model_dump() for s in sources])
    else:
        for s in sources:
            shared = f", {s.shared} shared" if s.shared else ""
            print(f"{s.name}  ({s.papers} papers{shared})  id {s.source_id}" + (f"  {s.path}" if s.path else ""))
        print(f"{len(sources)} sources")
    return 0


def cmd_search(args) -> int:
    from .retrieval import search
    from .snippets import snippet

    hits = search(_library(args), args.query, args.k, _filters(args))
    if args.json:
        _print_json([h.as_json() for h in hits])
    else:
        if not hits:
            print("no papers found")
        for i, h in enumerate(hits, 1):
            p = h.paper
            print(f"{i:2}. [{h.score:.3f}] {p.title}{'*' if p.title_derived else ''} — {p.venue} {p.year or ''} ({p.source}:{p.position})")
            print(f"    {snippet(h.text, 200)}")
    return 0


def _write_references(args, citations) -> None:
    """--bibtex / --ris: the result's references as a reference manager imports them (rag.bibliography)."""
    from .bibliography import to_bibtex, to_ris

    if args.bibtex:
        args.bibtex.write_text(to_bibtex(citations) if citations else "% no references\n", encoding="utf-8")
    if args.ris:
        args.ris.write_text(to_ris(citations), encoding="utf-8")


def _render_answer(ans) -> None:
    print(ans.answer)
    if ans.citations:
        print()
        for c in ans.citations:
            p = c.paper
            mark = "" if c.supported else "  (not supported by the abstract)"
            if c.grade:  # how well the evidence answers the question (rag.grades)
                mark = f"  [{c.grade} {c.grade_score:.2f}{', ' + c.role if c.role else ''}]" + mark
            print(f"[{c.n}] {p.title}{'*' if p.title_derived else ''} — {p.venue} {p.year or ''} ({p.source}:{p.position}){mark}")
            if c.evidence:
                print(f"     “{c.evidence}”")
    if ans.abstained and ans.nearest:
        print("\nPapers outside the filter that answer:" if ans.coverage == "outside_filter" else "\nNearest papers:")
        for h in ans.nearest:
            print(f"  - {h.paper.title} — {h.paper.venue} {h.paper.year or ''} ({h.paper.source}:{h.paper.position})")
    for f in ans.flags:
        print(f"note: {f}", file=sys.stderr)


def cmd_ask(args) -> int:
    from .tasks.ask import ask

    settings = _settings(args)
    lib = _library(args)
    stream = None
    if not args.json and settings.llm != "extractive" and sys.stdout.isatty():
        def stream(tok: str) -> None:
            sys.stdout.write(tok)
            sys.stdout.flush()
    ans = ask(args.question, lib, settings=settings, filters=_filters(args), on_token=stream)
    _write_references(args, ans.citations)
    if args.json:
        _print_json(ans.as_json())
    else:
        if stream:
            print("\n")  # the streamed draft was shown; now the checked answer
        _render_answer(ans)
    return 0


def cmd_summarise(args) -> int:
    from .tasks.summarise import summarise

    settings = _settings(args)
    res = summarise(args.topic, _library(args), settings=settings, filters=_filters(args))
    _write_references(args, res.citations)
    if args.json:
        _print_json(res.as_json())
    else:
        print(res.render_text())
    return 0


def cmd_cite(args) -> int:
    from .tasks.cite import cite

    settings = _settings(args)
    res = cite(args.claim, _library(args), settings=settings, filters=_filters(args), k=args.k)
    from .exports import evidence_citations

    _write_references(args, evidence_citations(res.evidence))
    if args.json:
        _print_json(res.as_json())
    else:
        print(res.render_text())
    return 0


def cmd_compare(args) -> int:
    import shutil

    from .tasks.compare import compare
    from .tasks.compare_render import render_text, to_csv, to_markdown

    table = compare(args.topic, _library(args), settings=_settings(args), filters=_filters(args), k=args.k)
    if not table.abstained:
        _write_references(args, table.citations())
    if args.json:
        _print_json(table.as_json())
    elif args.csv and not table.abstained:
        sys.stdout.write(to_csv(table))
    elif args.markdown and not table.abstained:
        print(to_markdown(table))
    elif not table.abstained:
        width = args.width or (shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100)
        print(render_text(table, width))
    if table.abstained:  # one line saying why there is no table; the nearest papers are in --json
        print(f"paperchat: {table.message}", file=sys.stderr)
        return 1
    for f in table.flags:
        print(f"note: {f}", file=sys.stderr)
    return 0


def cmd_serve(args) -> int:
    from ui.app import serve

    serve(_settings(args), host=args.host, port=args.port, seed=args.seed)
    return 0


def cmd_map(args) -> int:
    from .maps.cli import run_map

    return run_map(_library(args), args.out, args.json, args.refit)


def cmd_eval(args) -> int:
    from .evaluation import evaluate_beir

    res = evaluate_beir(args.beir, args.split, _settings(args), progress=None)
    if args.json:
        _print_json(res)
    else:
        print(f"nDCG@10 {res['ndcg@10']:.4f}  Recall@100 {res['recall@100']:.4f}  MRR@10 {res['mrr@10']:.4f}  "
              f"({res['queries']} queries, {res['seconds']:.1f} s)")
    return 0


COMMANDS = {"ingest": cmd_ingest, "papers": cmd_papers, "stats": cmd_stats, "remove": cmd_remove,
            "sources": cmd_sources, "search": cmd_search, "ask": cmd_ask, "summarise": cmd_summarise,
            "summarize": cmd_summarise, "cite": cmd_cite, "compare": cmd_compare, "serve": cmd_serve,
            "eval": cmd_eval, "map": cmd_map}


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    args = _parser().parse_args(argv)
    from .errors import user_message

    try:
        return COMMANDS[args.cmd](args)
    except BrokenPipeError:
        # The reader went away (`paperchat papers | head`): stop quietly, as `yes | head` does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("paperchat: interrupted; what was written is kept and a re-run carries on", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - turn what a user can cause into one line
        msg = user_message(exc)
        if msg is None:
            raise
        print(f"paperchat: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
