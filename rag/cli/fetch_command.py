"""`paperchat fetch`: the options turned into a query (rag.fetch), the summary lines, the exit status.
rag.fetch (and httpx) is imported only here, when the command runs, so other commands start as fast."""

from __future__ import annotations

import sys

from rag.cli.common import library_of, print_json, settings_of
from rag.errors import UserError


def query_of(args, settings):
    from rag.fetch.records import FetchQuery

    limit = args.limit or settings.fetch.limit
    if args.dois is not None:
        if args.service or args.query:
            raise UserError("fetch takes SERVICE QUERY or --dois FILE, not both")
        return FetchQuery(service="dois", query=str(args.dois.expanduser().resolve()), limit=limit)
    if not args.service:
        raise UserError("fetch needs a service (openalex, arxiv, s2, pubmed) and a query, or --dois FILE")
    return FetchQuery(service=args.service, query=args.query.strip(), since=args.since, until=args.until,
                      author=(args.author or "").strip(), limit=limit)


def cmd_fetch(args) -> int:
    from rag.fetch.records import NAMES
    from rag.fetch.run import dry_run, fetch

    settings = settings_of(args)
    q = query_of(args, settings)
    if args.dry_run:
        n = dry_run(q, settings)
        come = min(n, q.limit)
        if args.json:
            print_json({"source_id": q.source_id(), "matching": n, "would_fetch": come, "limit": q.limit})
        else:
            print(f"about {n:,} papers match on {NAMES[q.service]}; a fetch would bring {come:,} (--limit {q.limit:,}), "
                  "less those without an abstract")
        return 0
    report = fetch(q, settings, lambda: library_of(args), progress=None if not args.json else False)
    for r in report.ingest.get("rejections", []):
        print(f"rejected {r}", file=sys.stderr)
    for line in report.skipped:
        print(f"skipped {line}", file=sys.stderr)
    if args.json:
        print_json(report.model_dump())
    else:
        ing = report.ingest
        print(f"{report.summary()}\n"
              f"snapshot: {report.snapshot}\n"
              f"source {report.source_id!r}: added {ing.get('added', 0)}, updated {ing.get('updated', 0)}, "
              f"unchanged {ing.get('unchanged', 0)}, removed {ing.get('removed', 0)} — {report.papers} papers "
              f"in the library ({report.seconds:.1f} s)")
    return 1 if ing_rejected(report) else 0


def ing_rejected(report) -> bool:
    return bool(report.ingest.get("rejected"))
