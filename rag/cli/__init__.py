"""The `paperchat` command: parse, run the command, turn what a user can cause into one line and an exit code.

Each command imports only what it needs, so a search starts fast. The commands live by what they do:
`library_commands` (ingest, papers, stats, remove, sources, map), `task_commands` (search, ask, summarise,
cite, compare), `eval_commands` (eval retrieval, answers, summaries); the parser in `parser`, what they share
in `common`. `serve` stays here: it is the one place the library imports the UI.
"""

from __future__ import annotations

import os
import sys

from rag.cli.common import settings_of
from rag.cli.eval_commands import cmd_eval
from rag.cli.library_commands import cmd_ingest, cmd_map, cmd_papers, cmd_remove, cmd_sources, cmd_stats
from rag.cli.parser import build_parser
from rag.cli.task_commands import cmd_ask, cmd_cite, cmd_compare, cmd_search, cmd_summarise


def cmd_serve(args) -> int:
    from ui.app import serve

    serve(settings_of(args), host=args.host, port=args.port, seed=args.seed)
    return 0


COMMANDS = {"ingest": cmd_ingest, "papers": cmd_papers, "stats": cmd_stats, "remove": cmd_remove,
            "sources": cmd_sources, "search": cmd_search, "ask": cmd_ask, "summarise": cmd_summarise,
            "summarize": cmd_summarise, "cite": cmd_cite, "compare": cmd_compare, "serve": cmd_serve,
            "eval": cmd_eval, "map": cmd_map}


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    args = build_parser().parse_args(argv)
    from rag.errors import user_message

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
