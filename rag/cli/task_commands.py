"""The commands that ask the library something: search, ask, summarise, cite, compare."""

from __future__ import annotations

import sys

from rag.cli.common import (checked_filters, filters_of, library_of, print_json, settings_of, warm_embedder,
                             write_references)


def cmd_search(args) -> int:
    warm_embedder(args)
    from rag.library.retrieval import search
    from rag.exports.terminal import readable
    from rag.reading.snippets import snippet

    hits = search(library_of(args), args.query, args.k, filters_of(args))
    if args.json:
        print_json([h.as_json() for h in hits])
    else:
        if not hits:
            print("no papers found")
        for i, h in enumerate(hits, 1):
            p = h.paper
            print(f"{i:2}. [{h.score:.3f}] {readable(p.title)}{'*' if p.title_derived else ''} — {p.venue} {p.year or ''} ({p.source}:{p.position})")
            print(f"    {snippet(readable(h.text), 200)}")
    return 0


def _render_answer(ans) -> None:
    from rag.exports.terminal import readable  # emphasis plain, TeX as Unicode; --json keeps the raw text

    print(readable(ans.answer))
    if ans.citations:
        print()
        for c in ans.citations:
            p = c.paper
            mark = "" if c.supported else "  (not supported by the abstract)"
            if c.grade:  # how well the evidence answers the question (rag.reading.grades)
                mark = f"  [{c.grade} {c.grade_score:.2f}{', ' + c.role if c.role else ''}]" + mark
            print(f"[{c.n}] {readable(p.title)}{'*' if p.title_derived else ''} — {p.venue} {p.year or ''} ({p.source}:{p.position}){mark}")
            if c.evidence:
                print(f"     “{readable(c.evidence)}”")
    if ans.abstained and ans.nearest:
        print("\nPapers outside the filter that answer:" if ans.coverage == "outside_filter" else "\nNearest papers:")
        for h in ans.nearest:
            print(f"  - {readable(h.paper.title)} — {h.paper.venue} {h.paper.year or ''} ({h.paper.source}:{h.paper.position})")
    for f in ans.flags:
        print(f"note: {f}", file=sys.stderr)


def _print_token(tok: str) -> None:
    sys.stdout.write(tok)
    sys.stdout.flush()


def cmd_ask(args) -> int:
    warm_embedder(args)
    from rag.tasks.ask import ask

    settings = settings_of(args)
    lib = library_of(args)
    # A model's draft is shown as it comes, on a terminal only; the checked answer follows it.
    stream = _print_token if not args.json and settings.llm != "extractive" and sys.stdout.isatty() else None
    ans = ask(args.question, lib, settings=settings, filters=checked_filters(args, lib), on_token=stream, k=args.k)
    write_references(args, ans.citations)
    if args.json:
        print_json(ans.as_json())
    else:
        if stream:
            print("\n")  # the streamed draft was shown; now the checked answer
        _render_answer(ans)
    return 0


def cmd_summarise(args) -> int:
    warm_embedder(args)
    from rag.tasks.summarise import summarise

    settings = settings_of(args)
    lib = library_of(args)
    res = summarise(args.topic, lib, settings=settings, filters=checked_filters(args, lib), k=args.k)
    write_references(args, res.citations)
    if args.latex:
        from rag.exports.latex import write_latex

        tex, bib = write_latex(res, args.latex)
        print(f"wrote {tex} and {bib}", file=sys.stderr)
    if args.json:
        print_json(res.as_json())
    else:
        print(res.render_text())
    return 0


def cmd_cite(args) -> int:
    from rag.tasks.cite import cite

    settings = settings_of(args)
    lib = library_of(args)
    res = cite(args.claim, lib, settings=settings, filters=checked_filters(args, lib), k=args.k)
    from rag.exports.documents import evidence_citations

    write_references(args, evidence_citations(res.evidence))
    if args.json:
        print_json(res.as_json())
    else:
        print(res.render_text())
    return 0


def cmd_compare(args) -> int:
    import shutil

    from rag.tasks.compare import compare
    from rag.tasks.compare_render import render_text, to_csv, to_markdown

    lib = library_of(args)
    table = compare(args.topic, lib, settings=settings_of(args), filters=checked_filters(args, lib), k=args.k)
    if not table.abstained:
        write_references(args, table.citations())
    if args.json:
        print_json(table.as_json())
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
