"""The chat's filters as the UI shows them (venue, years, author, collection dropdowns and the papers ticked
in the Library tab) and as rag/ reads them (Filters: the one place filtering happens)."""

from __future__ import annotations

import json
from typing import Any

from rag.library.library import Library
from rag.library.retrieval import Filters

from ui import markup
from ui.render import h

ANY_YEAR = "any"
ALL_VENUES = ""
ALL_COLLECTIONS = ""


def _year(v: Any) -> int | None:
    if v in (None, "", ANY_YEAR):
        return None
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def make_filters(venue: str | None = None, year_from: Any = None, year_to: Any = None, author: str | None = None,
                 collection: str | None = None, papers: list[str] | str | None = None) -> Filters:
    """The chat's filter widgets as one Filters (a backwards year range is ordered by Filters). `papers` is
    a list of ids or a comma-separated string (the API); empty means no restriction."""
    if isinstance(papers, str):
        papers = [p.strip() for p in papers.split(",") if p.strip()]
    return Filters(venue=(venue or None), year_from=_year(year_from), year_to=_year(year_to),
                   author=(author or "").strip() or None, collection=(collection or None),
                   papers=list(papers) if papers else None)


def collection_choices(catalogue: dict[str, dict]) -> list[tuple[str, str]]:
    """("All collections", "") and every Zotero collection path in the library with its paper count."""
    counts: dict[str, int] = {}
    for m in catalogue.values():
        try:
            paths = json.loads(m.get("collections") or "[]")
        except ValueError:
            continue
        for p in paths:
            counts[str(p)] = counts.get(str(p), 0) + 1
    return [("All collections", ALL_COLLECTIONS)] + [(f"{c} ({n})", c) for c, n in sorted(counts.items())]


def scope_html(ids: list[str], catalogue: dict[str, dict]) -> str:
    """The active "ask about these" scope as the chat shows it: how many papers, and their titles."""
    if not ids:
        return ""
    titles = [markup.plain(catalogue.get(i, {}).get("title", "") or i) for i in ids]
    shown = "; ".join(t if len(t) <= 60 else t[:57] + "…" for t in titles[:3])
    more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
    n = len(ids)
    return (f'<div class="pc-scope" title="{h(chr(10).join(titles))}"><span class="pc-label">Scope</span>'
            f"<span>questions go to <b>{n} ticked paper{'s' if n != 1 else ''}</b> only: {h(shown)}{h(more)}</span></div>")


def filter_choices(library: Library) -> tuple[list[tuple[str, str]], list[str]]:
    """(venue choices as (label, value), year choices) for the dropdowns, from what the library holds."""
    st = library.stats()
    venues = [("All venues", ALL_VENUES)] + [(f"{v} ({n})", v) for v, n in st["venues"].items() if v != "?"]
    years = [ANY_YEAR] + [y for y in sorted(st["years"]) if y != "?"]
    return venues, years
