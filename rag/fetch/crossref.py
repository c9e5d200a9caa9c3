"""Crossref (api.crossref.org/works/DOI): the fall-back for a DOI OpenAlex does not know. Its abstracts
are JATS (tags removed by rag.loaders.common.clean_text, a leading 'Abstract' heading dropped)."""

from __future__ import annotations

import re

from rag.fetch.http import Polite
from rag.fetch.records import Fetched, Skipped, drop_heading, split_doi
from rag.loaders.common import clean_text

_HEADING = re.compile(r"^\s*<jats:title>\s*(?:abstract|summary)\s*</jats:title>", re.IGNORECASE)


def by_doi(client: Polite, doi: str) -> Fetched | Skipped | None:
    params = {"mailto": client.settings.email} if client.settings.email else {}
    r = client.get(f"{client.settings.crossref_url}/works/{doi}", params, ok_missing=True)
    return parse(r.json().get("message")) if r is not None else None


def _first(v) -> str:
    return clean_text(next((x for x in v if isinstance(x, str)), "")) if isinstance(v, list) else clean_text(v)


def parse(m) -> Fetched | Skipped:
    if not isinstance(m, dict) or not isinstance(m.get("DOI"), str):
        return Skipped(service="crossref", reason="malformed", detail="not a work")
    doi, arxiv_id = split_doi(m["DOI"])
    title = _first(m.get("title"))
    abstract = drop_heading(clean_text(_HEADING.sub("", str(m.get("abstract") or ""))))
    if not abstract:
        return Skipped(service="crossref", service_id=m["DOI"], title=title, reason="no abstract")
    parts = ((m.get("issued") or {}).get("date-parts") or [[None]])[0]
    authors = [" ".join(x for x in (a.get("given"), a.get("family")) if x) or a.get("name", "")
               for a in m.get("author") or [] if isinstance(a, dict)]
    return Fetched(
        service="crossref", service_id=m["DOI"], title=title, abstract=abstract,
        authors=[clean_text(a) for a in authors if a], year=parts[0] if parts and isinstance(parts[0], int) else None,
        venue=_first(m.get("container-title")), doi=doi, arxiv_id=arxiv_id,
        url=clean_text(m.get("URL")) or f"https://doi.org/{m['DOI']}",
        keywords=[clean_text(s) for s in m.get("subject") or [] if isinstance(s, str)],
    )
