"""The chat's filters as the UI shows them (venue and year dropdowns) and as rag/ reads them (Filters)."""

from __future__ import annotations

from typing import Any

from rag.library import Library
from rag.retrieval import Filters

ANY_YEAR = "any"
ALL_VENUES = ""


def make_filters(venue: str | None, year_from: Any, year_to: Any) -> Filters:
    def year(v):
        if v in (None, "", ANY_YEAR):
            return None
        try:
            return int(float(v))
        except (TypeError, ValueError):
            return None

    return Filters(venue=(venue or None), year_from=year(year_from), year_to=year(year_to))  # orders the range


def filter_choices(library: Library) -> tuple[list[tuple[str, str]], list[str]]:
    """(venue choices as (label, value), year choices) for the dropdowns, from what the library holds."""
    st = library.stats()
    venues = [("All venues", ALL_VENUES)] + [(f"{v} ({n})", v) for v, n in st["venues"].items() if v != "?"]
    years = [ANY_YEAR] + [y for y in sorted(st["years"]) if y != "?"]
    return venues, years
