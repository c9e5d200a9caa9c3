"""What every command shares: the settings and library the options name, the filters, JSON out, reference files."""

from __future__ import annotations

import json


def settings_of(args):
    from rag.settings import Settings

    s = Settings()
    if args.library:
        s = s.model_copy(update={"library": args.library})
    return s


def warm_embedder(args) -> None:
    """Load the query embedder's ONNX model on a thread while the command imports what it needs (Chroma,
    the readers): onnxruntime builds its session outside the GIL, so the two overlap (a cold `ask` on the
    seeds: bench/cold_start.py). Only for the in-process MiniLM, the one with a model to load; the
    library later gets the same instance (rag.embedders.make_embedder keeps one per process). Not a
    daemon: the process waits for the load (under a second) rather than exit in the middle of it."""
    import threading

    def load() -> None:
        try:
            s = settings_of(args)
            if s.embedder != "minilm":
                return
            from rag.embedders import make_embedder

            make_embedder(s).embed_array(["warm"])
        except Exception:  # noqa: BLE001 - the command itself will meet and report the same problem
            pass

    threading.Thread(target=load, name="paperchat-warm-embedder").start()


def library_of(args):
    from rag.library.library import Library

    return Library(settings_of(args))


def filters_of(args):
    from rag.library.retrieval import Filters

    papers = [p.strip() for p in args.papers.split(",") if p.strip()] if args.papers is not None else None
    return Filters(venue=args.venue, year_from=args.year_from, year_to=args.year_to, author=args.author or None,
                   collection=args.collection or None, papers=papers)


def checked_filters(args, library):
    """The command's filters; with text output, a filter no paper can pass says why on stderr first
    (rag.library.filter_check), before the command's own "nothing under these filters" (--json: unchanged)."""
    import sys

    from rag.library.filter_check import why_nothing_passes

    filters = filters_of(args)
    if not getattr(args, "json", False) and (why := why_nothing_passes(library, filters)):
        print(f"note: {why}", file=sys.stderr)
    return filters


def print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def write_references(args, citations) -> None:
    """--bibtex / --ris: the result's references as a reference manager imports them (rag.exports.bibliography)."""
    from rag.exports.bibliography import to_bibtex, to_ris

    if args.bibtex:
        args.bibtex.write_text(to_bibtex(citations) if citations else "% no references\n", encoding="utf-8")
    if args.ris:
        args.ris.write_text(to_ris(citations), encoding="utf-8")
