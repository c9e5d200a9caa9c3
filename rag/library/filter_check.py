"""Why no paper of a library can pass a filter, in one sentence a reader can act on: an author filter on a library
whose records list no authors, a year range outside the library's years, a venue or collection it does not hold.

    why_nothing_passes(library, filters)   "" when some paper passes

Without it, a filter no paper can pass reads as "nothing that passes the filter answers this", as if the
question were the problem (issue 31). Evaluated on the catalogue's facets, as filtering itself is.
"""

from __future__ import annotations

import json

from rag.library.retrieval import Filters


def _lists_authors(meta: dict) -> bool:
    try:
        return bool(json.loads(meta.get("authors") or "[]"))
    except (TypeError, ValueError):
        return False


def why_nothing_passes(library, filters: Filters | None) -> str:
    if not filters or len(library) == 0:
        return ""
    facets = library.facets()
    f = filters
    if facets.mask(f.venue, f.year_from, f.year_to, author=f.author, collection=f.collection, papers=f.papers).any():
        return ""
    catalogue = library.catalogue
    alone = lambda **kw: facets.mask(**{"venue": None, "year_from": None, "year_to": None, **kw}).any()  # noqa: E731
    if f.author and not alone(author=f.author):
        if not any(_lists_authors(m) for m in catalogue.values()):
            return (f"No paper in this library lists its authors, so none can pass the author filter “{f.author}”: "
                    "clear it, or add records that name their authors (BibTeX, RIS, CSL JSON).")
        return f"No paper in this library has an author named “{f.author}”."
    if (f.year_from is not None or f.year_to is not None) and not alone(year_from=f.year_from, year_to=f.year_to):
        years = sorted({int(m.get("year") or 0) for m in catalogue.values()} - {0})
        wanted = Filters(year_from=f.year_from, year_to=f.year_to).describe()
        if not years:
            return f"No paper in this library gives its year, so none can pass the years {wanted}."
        held = f"{years[0]}" if years[0] == years[-1] else f"{years[0]}–{years[-1]}"
        return f"This library's papers are from {held}: none from {wanted}."
    if f.venue and not alone(venue=f.venue):
        return f"No paper in this library is from {f.venue}."
    if f.collection and not alone(collection=f.collection):
        return f"No paper in this library is in the collection “{f.collection}”."
    if f.papers is not None and not alone(papers=f.papers):
        return ""  # the search itself names the ids the library does not hold (rag.library.retrieval.search)
    return f"No paper in this library passes these filters together ({f.describe()}); each alone lets some through."
