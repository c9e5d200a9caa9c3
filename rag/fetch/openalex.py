"""OpenAlex (api.openalex.org/works): search with cursor paging, and single works by DOI for `--dois`.

Its abstracts come as an inverted index (word -> positions), rebuilt into text here; keywords and the
concepts it scores highly become the record's keywords.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rag.fetch.http import Polite
from rag.fetch.records import FetchQuery, Fetched, Skipped, bare_arxiv, drop_heading, split_doi
from rag.loaders.common import clean_text

PER_PAGE = 200  # OpenAlex's largest page
SELECT = ("id,doi,display_name,publication_year,abstract_inverted_index,authorships,primary_location,ids,"
          "keywords,concepts,locations")
CONCEPT_SCORE = 0.5  # concepts OpenAlex scores at least this high are kept as keywords


def _params(client: Polite, q: FetchQuery) -> dict[str, str | int]:
    s = client.settings
    filters = []
    if q.since or q.until:
        filters.append(f"publication_year:{q.since or ''}-{q.until or ''}")
    if q.author:
        filters.append(f"raw_author_name.search:{q.author}")
    params: dict[str, str | int] = {"search": q.query} if q.query else {}
    if filters:
        params["filter"] = ",".join(filters)
    if s.email:
        params["mailto"] = s.email
    if s.openalex_api_key:
        params["api_key"] = s.openalex_api_key.get_secret_value()
    return params


def count(client: Polite, q: FetchQuery) -> int:
    r = client.get(f"{client.settings.openalex_url}/works", {**_params(client, q), "per-page": 1, "select": "id"})
    return int(r.json().get("meta", {}).get("count") or 0)


def pages(client: Polite, q: FetchQuery, state: dict | None) -> Iterator[tuple[list, dict | None, int | None]]:
    """(items, state to resume from after them or None at the end, total) per page."""
    cursor = (state or {}).get("cursor", "*")
    while cursor:
        r = client.get(f"{client.settings.openalex_url}/works",
                       {**_params(client, q), "per-page": PER_PAGE, "cursor": cursor, "select": SELECT})
        body = r.json()
        results = body.get("results") or []
        cursor = (body.get("meta") or {}).get("next_cursor") if results else None
        yield [parse(w) for w in results], ({"cursor": cursor} if cursor else None), (body.get("meta") or {}).get("count")


def by_doi(client: Polite, doi: str) -> Fetched | Skipped | None:
    """One work by DOI (a single-work request, which OpenAlex does not count against the daily credits);
    None when OpenAlex does not know it."""
    params = {"mailto": client.settings.email} if client.settings.email else {}
    if client.settings.openalex_api_key:
        params["api_key"] = client.settings.openalex_api_key.get_secret_value()
    r = client.get(f"{client.settings.openalex_url}/works/https://doi.org/{doi}", params, ok_missing=True)
    return parse(r.json()) if r is not None else None


def abstract_text(index: Any) -> str | None:
    """The abstract from OpenAlex's inverted index; None when the index is not one (malformed)."""
    if index is None:
        return ""
    if not isinstance(index, dict):
        return None
    at: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(isinstance(p, int) and p >= 0 for p in positions):
            return None
        for p in positions:
            at[p] = word
    return " ".join(at[p] for p in sorted(at))


def parse(w: Any) -> Fetched | Skipped:
    if not isinstance(w, dict) or not isinstance(w.get("id"), str):
        return Skipped(service="openalex", reason="malformed", detail="not a work object")
    wid = w["id"].rsplit("/", 1)[-1]
    title = clean_text(w.get("display_name") or w.get("title"))
    text = abstract_text(w.get("abstract_inverted_index"))
    if text is None:
        return Skipped(service="openalex", service_id=wid, title=title, reason="malformed",
                       detail="abstract_inverted_index is not word -> positions")
    abstract = drop_heading(clean_text(text))
    if not abstract:
        return Skipped(service="openalex", service_id=wid, title=title, reason="no abstract")
    ids = w.get("ids") if isinstance(w.get("ids"), dict) else {}
    doi, arxiv_id = split_doi(w.get("doi") or ids.get("doi"))
    for loc in w.get("locations") or []:
        url = (loc or {}).get("landing_page_url") or ""
        if not arxiv_id and "arxiv.org/abs/" in url:
            arxiv_id = bare_arxiv(url)
    source = ((w.get("primary_location") or {}).get("source") or {})
    keywords = [clean_text(k.get("display_name")) for k in w.get("keywords") or [] if isinstance(k, dict)]
    keywords += [clean_text(c.get("display_name")) for c in w.get("concepts") or []
                 if isinstance(c, dict) and (c.get("score") or 0) >= CONCEPT_SCORE]
    url = f"https://doi.org/{doi}" if doi else (f"https://arxiv.org/abs/{arxiv_id}" if arxiv_id else w["id"])
    return Fetched(
        service="openalex", service_id=wid, title=title, abstract=abstract,
        authors=[clean_text((a.get("author") or {}).get("display_name")) for a in w.get("authorships") or []
                 if isinstance(a, dict) and (a.get("author") or {}).get("display_name")],
        year=w.get("publication_year") if isinstance(w.get("publication_year"), int) else None,
        venue=clean_text(source.get("display_name")), doi=doi, arxiv_id=arxiv_id,
        pmid=str(ids.get("pmid") or "").rstrip("/").rsplit("/", 1)[-1], url=url,
        keywords=list(dict.fromkeys(k for k in keywords if k)),
    )
