"""The commands that keep a library: ingest, papers, stats, remove, sources, map."""

from __future__ import annotations

import sys

from rag.errors import UserError
from rag.cli.common import library_of, print_json


def cmd_ingest(args) -> int:
    fields = {}
    for m in args.map:
        if "=" not in m:
            raise UserError(f"--map takes OURS=THEIRS, e.g. abstract=summary; got {m!r}")
        k, v = m.split("=", 1)
        fields[k.strip()] = v.strip()
    lib = library_of(args)
    report = lib.ingest(args.paths, fields or None, progress=None, source=args.source)
    for r in report.rejections:
        print(f"rejected {r}", file=sys.stderr)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        print_json({**report.model_dump(exclude={"rejections"}), "rejections": [str(r) for r in report.rejections],
                    "papers": len(lib)})
    else:
        print(f"{report.summary()} — {len(lib)} papers in library {lib.name!r} ({report.seconds:.1f} s)")
    return 1 if report.rejected else 0


def cmd_papers(args) -> int:
    papers = library_of(args).papers()
    if args.json:
        print_json([p.catalogue_entry() for p in papers])
    else:
        for p in papers:
            mark = "*" if p.title_derived else ""
            print(f"{p.paper_id[:24]:24}  {p.venue or '-':6} {p.year or '-':4}  {p.title}{mark}  ({p.source}:{p.position})")
        print(f"{len(papers)} papers" + ("  (* title derived from the abstract)" if any(p.title_derived for p in papers) else ""))
    return 0


def cmd_stats(args) -> int:
    st = library_of(args).stats()
    if args.json:
        print_json(st)
    else:
        print(f"library {st['library']}: {st['papers']} papers, {st['chunks']} chunks ({st['embedder']}, {st['store']})")
        print(f"embedder: {st['embedder']}, {st['embedder_dimension']}-dim, {st['embedder_runs_on']}")
        print("venues: " + ", ".join(f"{k} {v}" for k, v in st["venues"].items()))
        print("years:  " + ", ".join(f"{k} {v}" for k, v in st["years"].items()))
    return 0


def cmd_remove(args) -> int:
    if bool(args.ids) == (args.source is not None):
        raise UserError("remove takes paper ids (`paperchat papers --json` lists them) or --source FILE, one of the two")
    lib = library_of(args)
    r = lib.remove(args.ids) if args.ids else lib.remove_source(args.source)
    for pid in r.not_found:
        print(f"not found: {pid}", file=sys.stderr)
    if args.json:
        print_json(r.model_dump(mode="json"))
    else:
        print(f"{r.summary()} — {r.papers} papers in library {lib.name!r} ({r.seconds:.1f} s)")
    return 1 if r.not_found else 0


def cmd_sources(args) -> int:
    sources = library_of(args).sources()
    if args.json:
        print_json([s.model_dump() for s in sources])
    else:
        for s in sources:
            shared = f", {s.shared} shared" if s.shared else ""
            print(f"{s.name}  ({s.papers} papers{shared})  id {s.source_id}" + (f"  {s.path}" if s.path else ""))
        print(f"{len(sources)} sources")
    return 0


def cmd_map(args) -> int:
    from rag.maps.cli import run_map

    return run_map(library_of(args), args.out, args.json, args.refit)
