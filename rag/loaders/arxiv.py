"""The arXiv metadata snapshot (Kaggle's arxiv-metadata-oai-snapshot.json: JSON Lines with id, title,
abstract, authors, authors_parsed, categories, update_date, doi), read by the JSON Lines reader."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rag.records import Paper
from rag.loaders.bibtex import detex
from rag.loaders.common import abstract_too_long, clean_text, parse_year, split_authors

_MARKERS = ("categories", "update_date", "authors_parsed", "versions")
_ID = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$")


def looks_like(record: Mapping[str, Any]) -> bool:
    """An arXiv snapshot record: an arXiv-shaped id, an abstract and the snapshot's own fields."""
    rid = record.get("id")
    return (
        isinstance(rid, str) and bool(_ID.match(rid.strip())) and "abstract" in record
        and sum(k in record for k in _MARKERS) >= 2
    )


def to_paper(record: Mapping[str, Any], source: str, position: int) -> Paper | str:
    abstract = clean_text(record.get("abstract"))
    if not abstract:
        return "empty abstract"
    if too_long := abstract_too_long(abstract):
        return too_long
    arxiv_id = re.sub(r"v\d+$", "", str(record["id"]).strip())
    parsed = record.get("authors_parsed")
    # Names come TeX-escaped ("Bal\\'azs"); titles keep their LaTeX, as abstracts do.
    authors = [detex(a) for a in split_authors(parsed if isinstance(parsed, list) and parsed else record.get("authors"))]
    return Paper(
        paper_id=f"arXiv:{arxiv_id}",
        abstract=abstract,
        title=clean_text(record.get("title")),
        authors=authors,
        year=parse_year(record.get("update_date")),
        venue="arXiv",
        url=f"https://arxiv.org/abs/{arxiv_id}",
        source=source,
        position=position,
    )
