"""Records with named fields (JSON objects, CSV rows) to Papers: field aliases, `fields` overrides."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rag.errors import FieldsError
from rag.records import Paper
from rag.loaders.common import abstract_too_long, clean_text, make_paper_id, parse_year, split_authors, split_keywords
from rag.loaders.titles import derive_title

# Our field -> the names it goes by in the wild (matched case-insensitively), most specific first.
ALIASES: dict[str, tuple[str, ...]] = {
    "paper_id": ("paper_id", "id", "_id", "paperid", "doc_id", "docid", "corpus_id", "corpusid", "uid"),
    "title": ("title", "paper_title"),
    "abstract": ("abstract", "text", "summary", "abstract_text", "abstract note", "paperabstract"),
    "authors": ("authors", "author", "author_names", "creators"),
    "year": ("year", "publication_year", "publication year", "date", "publication_date", "pub_date", "published", "pubdate",
             "update_date"),
    "venue": ("venue", "journal", "booktitle", "conference", "journal_ref", "journal-ref", "container_title",
              "publication title"),
    "url": ("url", "link", "pdf_url", "landing_page_url"),
    "doi": ("doi",),
    # paperlists' "keywords" ("a;b;c"), a CSV's "Author Keywords" (Scopus, Web of Science) or "Manual Tags" (Zotero)
    "keywords": ("keywords", "keyword", "author_keywords", "author keywords", "manual tags", "tags"),
}
_SYNONYMS = {"id": "paper_id"}  # `fields={"id": ...}` means our paper_id


def check_fields(fields: Mapping[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for ours, theirs in (fields or {}).items():
        key = _SYNONYMS.get(ours.lower(), ours.lower())
        if key not in ALIASES:
            raise FieldsError(f"unknown field {ours!r} in fields; known: {', '.join(['id', *ALIASES])}")
        out[key] = theirs
    return out


def resolve(keys: Iterable[str], fields: Mapping[str, str]) -> dict[str, str | None]:
    """For each of our fields, the record key that holds it (or None). `fields` (already checked)
    overrides the aliases; a key claimed by an override is not also taken by an alias."""
    by_lower: dict[str, str] = {}
    for k in keys:
        by_lower.setdefault(str(k).strip().lower(), k)
    out: dict[str, str | None] = {}
    claimed = {v.strip().lower() for v in fields.values()}
    for ours, aliases in ALIASES.items():
        if ours in fields:
            out[ours] = by_lower.get(fields[ours].strip().lower())
        else:
            out[ours] = next((by_lower[a] for a in aliases if a in by_lower and a not in claimed), None)
    return out


def missing_abstract(keys: Iterable[str], fields: Mapping[str, str], what: str = "field") -> str:
    keys = [clean_text(k)[:60] for k in keys]  # one line, however odd the file's keys
    names = ", ".join(keys[:30]) + (f", ... ({len(keys)} in all)" if len(keys) > 30 else "") if keys else "none"
    if "abstract" in fields:
        return f"no {what} {fields['abstract']!r} (the abstract, per fields); {what}s: {names}"
    return f"no abstract {what} (looked for {', '.join(ALIASES['abstract'])}); {what}s: {names}"


def to_paper(record: Mapping[str, Any], cols: Mapping[str, str | None], source: str, position: int) -> Paper | str:
    """A Paper, or the one-line reason this record is not one."""
    get = lambda f: record.get(cols[f]) if cols.get(f) is not None else None  # noqa: E731
    raw = get("abstract")
    if isinstance(raw, (dict, bool)) or (isinstance(raw, list) and not all(isinstance(x, str) for x in raw)):
        return f"abstract is not text ({type(raw).__name__})"
    abstract = clean_text(raw)
    if not abstract:
        return "empty abstract"
    if too_long := abstract_too_long(abstract):
        return too_long
    url = clean_text(get("url"))
    own_id = get("paper_id")
    own_id = "" if isinstance(own_id, (dict, list, bool)) else own_id
    title = clean_text(get("title"))
    return Paper(
        paper_id=make_paper_id(abstract, doi=clean_text(get("doi")), own_id=own_id, url=url),
        abstract=abstract,
        title=title or derive_title(abstract),
        title_derived=not title,
        authors=split_authors(get("authors")),
        year=parse_year(get("year")),
        venue=clean_text(get("venue")),
        url=url,
        source=source,
        position=position,
        keywords=split_keywords(get("keywords")),
    )
