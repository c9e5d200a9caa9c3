"""Semantic Scholar (api.semanticscholar.org/graph/v1/paper/search/bulk): its bulk search, which takes the
service's boolean syntax (`+`, `|`, `-`, quotes), a year range, and pages by continuation token (up to
1,000 papers a call). An API key (PAPERCHAT_FETCH__S2_API_KEY) goes in `x-api-key`. Bulk search has no
author filter, so `--author` keeps the papers an author of which the name fits (rag.library.people)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rag.fetch.http import Polite
from rag.fetch.records import FetchQuery, Fetched, Skipped, bare_arxiv, split_doi
from rag.loaders.common import clean_text

FIELDS = "paperId,externalIds,url,title,abstract,venue,year,authors,journal,fieldsOfStudy,s2FieldsOfStudy"


def headers(settings) -> dict[str, str]:
    return {"x-api-key": settings.s2_api_key.get_secret_value()} if settings.s2_api_key else {}


def _params(q: FetchQuery) -> dict[str, str]:
    params = {"query": q.query}
    if q.since or q.until:
        params["year"] = f"{q.since or ''}-{q.until or ''}"
    return params


def count(client: Polite, q: FetchQuery) -> int:
    r = client.get(f"{client.settings.s2_url}/paper/search/bulk", {**_params(q), "fields": "paperId"})
    return int(r.json().get("total") or 0)


def pages(client: Polite, q: FetchQuery, state: dict | None) -> Iterator[tuple[list, dict | None, int | None]]:
    token = (state or {}).get("token")
    while True:
        params = {**_params(q), "fields": FIELDS, **({"token": token} if token else {})}
        body = client.get(f"{client.settings.s2_url}/paper/search/bulk", params).json()
        items = [parse(p) for p in body.get("data") or []]
        if q.author:
            items = [i for i in items if not isinstance(i, Fetched) or _by(i, q.author)]
        token = body.get("token")
        yield items, ({"token": token} if token else None), body.get("total")
        if not token:
            return


def _by(item: Fetched, author: str) -> bool:
    from rag.library.people import name_words, names_match

    want = name_words(author)
    return any(names_match(want, name_words(a)) for a in item.authors)


def parse(p: Any) -> Fetched | Skipped:
    if not isinstance(p, dict) or not isinstance(p.get("paperId"), str):
        # The batch and search endpoints answer `null` for an id they cannot resolve.
        return Skipped(service="s2", reason="malformed", detail=f"a {type(p).__name__} where a paper was expected")
    pid, title = p["paperId"], clean_text(p.get("title"))
    abstract = clean_text(p.get("abstract"))
    if not abstract:
        return Skipped(service="s2", service_id=pid, title=title, reason="no abstract")
    ext = p.get("externalIds") if isinstance(p.get("externalIds"), dict) else {}
    doi, arxiv_from_doi = split_doi(ext.get("DOI"))
    arxiv_id = bare_arxiv(ext["ArXiv"]) if ext.get("ArXiv") else arxiv_from_doi
    fields = [f for f in p.get("fieldsOfStudy") or [] if isinstance(f, str)]
    fields += [f.get("category") for f in p.get("s2FieldsOfStudy") or [] if isinstance(f, dict) and f.get("category")]
    journal = p.get("journal") if isinstance(p.get("journal"), dict) else {}
    return Fetched(
        service="s2", service_id=pid, title=title, abstract=abstract,
        authors=[clean_text(a.get("name")) for a in p.get("authors") or [] if isinstance(a, dict) and a.get("name")],
        year=p.get("year") if isinstance(p.get("year"), int) else None,
        venue=clean_text(p.get("venue") or journal.get("name")), doi=doi, arxiv_id=arxiv_id,
        pmid=str(ext.get("PubMed") or ""), url=clean_text(p.get("url")) or f"https://www.semanticscholar.org/paper/{pid}",
        keywords=list(dict.fromkeys(fields)),
    )
