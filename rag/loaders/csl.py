"""CSL-JSON items (Zotero's, citation.js's and Crossref's export: `type`, `title`, `abstract`, `author`
[{family, given}], `issued` {date-parts}, `container-title`, `DOI`, `URL`, `keyword`), read by the JSON
readers: a record is taken as CSL-JSON by its content, as arXiv snapshot records are (rag.loaders.arxiv).

Ids follow the other formats (DOI, an arXiv or OpenReview URL, else the abstract's hash), not the item's
`id`: a citation key or a Zotero URI, which would make the same paper a second paper when the library is
also exported as BibTeX or RIS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag.records import Paper, Rejection
from rag.loaders.common import clean_text, make_paper_id, parse_year, refused_whole, split_authors, split_keywords
from rag.loaders.titles import derive_title

_DATES = ("issued", "published-print", "published-online", "created")
_VENUES = ("container-title", "collection-title", "event-title", "event")


def looks_like(record: Mapping[str, Any]) -> bool:
    """A CSL-JSON item: a string `type` and a field only CSL has (a date object, `container-title`, or
    authors as name objects). A plain record with a `type` column is not taken for one."""
    if not isinstance(record.get("type"), str):
        return False
    if isinstance(record.get("issued"), dict) or "container-title" in record:
        return True
    author = record.get("author")
    return isinstance(author, list) and bool(author) and all(isinstance(a, dict) for a in author)


def _first(value: Any) -> Any:
    """Crossref's API gives titles and container titles as lists of one."""
    if isinstance(value, list):
        return next((v for v in value if isinstance(v, str) and v.strip()), "")
    return value


def _year(record: Mapping[str, Any]) -> int | None:
    for key in _DATES:
        d = record.get(key)
        if isinstance(d, dict):
            parts = d.get("date-parts")
            if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
                year = parse_year(parts[0][0] if not isinstance(parts[0][0], str) else parts[0][0].strip())
                if year:
                    return year
            for k in ("raw", "literal"):
                if year := parse_year(d.get(k)):
                    return year
        elif d is not None and (year := parse_year(d)):
            return year
    return parse_year(record.get("year"))


def _names(value: Any) -> list[str]:
    """"Given Family" for each name object ("literal" for institutions), in order."""
    if not isinstance(value, list):
        return split_authors(value)
    out = []
    for a in value:
        if isinstance(a, dict):
            name = a.get("literal") or " ".join(
                str(a[k]) for k in ("given", "non-dropping-particle", "family", "suffix") if isinstance(a.get(k), str)
            )
        else:
            name = a if isinstance(a, str) else ""
        if name := clean_text(name):
            out.append(name)
    return out


def to_paper(record: Mapping[str, Any], source: str, position: int) -> Paper | Rejection | str:
    """A Paper, or the one-line reason this item is not one (a Rejection, without its place, when the item
    was read whole and is refused for what it holds: rag.records.Rejection.read)."""
    raw = record.get("abstract")
    if raw is not None and not isinstance(raw, str):
        return f"abstract is not text ({type(raw).__name__})"
    abstract = clean_text(raw)
    url = clean_text(_first(record.get("URL") or record.get("url")))
    doi = clean_text(_first(record.get("DOI") or record.get("doi")))
    title = clean_text(_first(record.get("title")))
    named = f" {title[:80]!r}" if title else ""
    if refused := refused_whole(abstract, source, "", f"item{named} has no abstract", doi=doi, url=url):
        return refused
    venue = next((v for k in _VENUES if (v := clean_text(_first(record.get(k))))), "")
    return Paper(
        paper_id=make_paper_id(abstract, doi=doi, url=url),
        abstract=abstract,
        title=title or derive_title(abstract),
        title_derived=not title,
        authors=_names(record.get("author")),
        year=_year(record),
        venue=venue,
        url=url,
        source=source,
        position=position,
        keywords=split_keywords(record.get("keyword") or record.get("keywords")),
    )
