"""What every command shares: the settings and library the options name, the filters, JSON out, reference files."""

from __future__ import annotations

import json


# Commands that only read a library: on a read-only PAPERCHAT_HOME they read a private copy of it.
READERS = {"papers", "stats", "sources", "search", "ask", "summarise", "summarize", "cite", "compare", "map"}


def settings_of(args):
    from rag.settings import Settings

    s = Settings()
    if args.library:
        s = s.model_copy(update={"library": args.library})
    if getattr(args, "home_read", None) is None:  # (settings_of runs more than once per command: copy and note once)
        args.home_read = _home_for(args.cmd, s)
    return s.model_copy(update={"home": args.home_read})


def _home_for(cmd: str, s):
    """The home the command works in: PAPERCHAT_HOME, or for a reader of a read-only one a private copy
    (with a one-line note on stderr); a writer on a read-only home is one line (rag.library.chroma)."""
    import sys

    from rag.errors import LibraryError
    from rag.library.chroma import home_writable, readable_home

    if cmd not in READERS:
        if not home_writable(s.home, s.chroma_url):
            raise LibraryError(f"PAPERCHAT_HOME {s.home} cannot be written, and `{cmd}` writes to it: make it "
                               "writable or point PAPERCHAT_HOME elsewhere (readers such as stats, search and ask "
                               "read a private copy of a read-only home)")
        return s.home
    home, note = readable_home(s.home, s.library, s.chroma_url)
    if note:
        print(f"note: {note}", file=sys.stderr)
    return home


def warm_embedder(args) -> None:
    """Load the query embedder's ONNX model on a thread while the command imports what it needs (Chroma,
    the readers): onnxruntime builds its session outside the GIL, so the two overlap (a cold `ask` on the
    seeds: bench/cold_start.py). Only for the in-process MiniLM, the one with a model to load; the
    library later gets the same instance (rag.embedders.make_embedder keeps one per process). Not a
    daemon: the process waits for the load (under a second) rather than exit in the middle of it."""
    import threading

    # Settings are read here, not on the thread: settings_of resolves the home once per command (a read-only
    # home's private copy and its note), and two threads resolving it at once made two.
    s = settings_of(args)
    if s.embedder != "minilm":
        return
    # paperchat's own modules are imported here, before the thread starts: the command imports the same
    # package (rag.embedders, through the library) at the same time, and two threads importing a package
    # whose submodules import it back can meet importlib's deadlock guard, which hands one of them a half-
    # initialised module ("cannot import name 'MINILM_ID'": about one cold `search` in 30 failed so).
    from rag.embedders import make_embedder

    def load() -> None:
        try:
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
