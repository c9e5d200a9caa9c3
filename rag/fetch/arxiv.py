"""arXiv (export.arxiv.org/api/query): its own query syntax (`cat:cs.LG AND ti:…`) passed through, paged by
`start`, parsed from Atom with the standard library. Titles and abstracts keep their LaTeX as written (the
UI renders `$…$`); categories become keywords; a journal DOI arXiv knows is kept beside the arXiv id."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from rag.fetch.http import Polite, ServiceFailed
from rag.fetch.records import FetchQuery, Fetched, Skipped, bare_arxiv, split_doi
from rag.loaders.common import clean_text

PER_PAGE = 100  # arXiv allows 2,000 a call but answers large pages slowly; 100 keeps each request short
NS = {"a": "http://www.w3.org/2005/Atom", "os": "http://a9.com/-/spec/opensearch/1.1/",
      "arxiv": "http://arxiv.org/schemas/atom"}
_FIELD = re.compile(r"\b(?:ti|au|abs|co|jr|cat|rn|id|all|submittedDate):", re.IGNORECASE)


def search_query(q: FetchQuery) -> str:
    """The query as arXiv reads it: the user's own syntax, or `all:` words, AND the years and the author."""
    text = q.query.strip()
    parts = [text if _FIELD.search(text) else " AND ".join(f"all:{w}" for w in text.split())] if text else []
    if q.since or q.until:
        parts.append(f"submittedDate:[{q.since or 1991}01010000 TO {q.until or 2999}12312359]")
    if q.author:
        parts.append(f'au:"{q.author}"')
    return " AND ".join(f"({p})" if " " in p and len(parts) > 1 and not p.startswith("submittedDate") else p
                        for p in parts)


def _feed(client: Polite, params: dict) -> ET.Element:
    r = client.get(client.settings.arxiv_url, params)
    try:
        return ET.fromstring(r.content)
    except ET.ParseError as exc:
        raise ServiceFailed(f"arXiv answered something that is not an Atom feed ({exc})") from None


def _total(feed: ET.Element) -> int:
    try:
        return int(feed.findtext("os:totalResults", "0", NS))
    except ValueError:
        return 0


def count(client: Polite, q: FetchQuery) -> int:
    return _total(_feed(client, {"search_query": search_query(q), "start": 0, "max_results": 1}))


def pages(client: Polite, q: FetchQuery, state: dict | None) -> Iterator[tuple[list, dict | None, int | None]]:
    start = int((state or {}).get("start", 0))
    while True:
        feed = _feed(client, {"search_query": search_query(q), "start": start, "max_results": PER_PAGE,
                              "sortBy": "submittedDate", "sortOrder": "descending"})
        entries = feed.findall("a:entry", NS)
        total = _total(feed)
        start += PER_PAGE
        more = bool(entries) and start < total
        yield [parse(e) for e in entries], ({"start": start} if more else None), total
        if not more:
            return


def by_ids(client: Polite, ids: list[str]) -> list[Fetched | Skipped]:
    feed = _feed(client, {"id_list": ",".join(ids), "start": 0, "max_results": len(ids)})
    return [parse(e) for e in feed.findall("a:entry", NS)]


def _text(e: ET.Element, path: str) -> str:
    node = e.find(path, NS)
    return clean_text("".join(node.itertext())) if node is not None else ""


def parse(e: ET.Element) -> Fetched | Skipped:
    raw_id = _text(e, "a:id")
    title = _text(e, "a:title")
    if "arxiv.org/abs/" not in raw_id:
        return Skipped(service="arxiv", service_id=raw_id[:60], title=title, reason="malformed",
                       detail="entry without an arXiv id")
    arxiv_id = bare_arxiv(raw_id)
    abstract = _text(e, "a:summary")
    if not abstract:
        return Skipped(service="arxiv", service_id=arxiv_id, title=title, reason="no abstract")
    doi, _ = split_doi(_text(e, "arxiv:doi"))
    published = _text(e, "a:published")
    return Fetched(
        service="arxiv", service_id=arxiv_id, title=title, abstract=abstract,
        authors=[n for a in e.findall("a:author", NS) if (n := _text(a, "a:name"))],
        year=int(published[:4]) if published[:4].isdigit() else None,
        venue=_text(e, "arxiv:journal_ref") or "arXiv", doi=doi, arxiv_id=arxiv_id,
        url=f"https://arxiv.org/abs/{arxiv_id}",
        keywords=list(dict.fromkeys(c.get("term", "") for c in e.findall("a:category", NS) if c.get("term"))),
    )
