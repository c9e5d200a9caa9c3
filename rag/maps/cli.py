"""`paperchat map`: the map as a page (--out), as JSON (--json), or as a list of its topics.

Exit status: 0 when there is a map; 3 when the library has fewer than two papers (nothing to map: a
message, and with --json an object with an empty `points` list and the `message`); 2 for user errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

NOTHING_TO_MAP = 3


def run_map(library, out: Path | None, as_json: bool, refit: bool) -> int:
    from rag.maps.build import TooFewPapers, library_map
    from rag.maps.page import write_page

    try:
        m = library_map(library, refit="now" if refit else "auto")
    except TooFewPapers as exc:
        if as_json:
            print(json.dumps({"library": library.name, "papers": len(library.catalogue), "topics": [], "points": [],
                              "message": str(exc)}, ensure_ascii=False, indent=2))
        print(f"paperchat: {exc}", file=sys.stderr)
        return NOTHING_TO_MAP
    if out is not None:
        write_page(out, m, library)
        print(f"map of {len(m.ids):,} papers in {sum(1 for t in m.topics if t.size)} topics written to {out}",
              file=sys.stderr if as_json else sys.stdout)
    if as_json:
        print(json.dumps(m.as_json(library.catalogue), ensure_ascii=False, indent=2))
    elif out is None:
        placed = int(m.placed.sum())
        print(f"map of library {m.library!r}: {len(m.ids):,} papers ({m.method}"
              + (f"; {placed} placed by their neighbours since the layout was computed" if placed else "") + ")")
        for i, t in enumerate((t for t in m.topics if t.size), 1):
            print(f"{i:3}. {t.name}  ({t.size} papers)")
        print("write the interactive page with: paperchat map --out map.html")
    return 0
