"""PubMed (NCBI E-utilities): `esearch` for the ids (PubMed's own syntax passed through: `[MeSH]`, `[au]`,
`[dp]`), then `efetch` for the records, 200 a call. Structured abstracts keep their section labels
("BACKGROUND: … METHODS: …"); MeSH headings and author keywords become keywords. NCBI asks for `tool`
and `email`, and allows 10 requests a second with an API key (PAPERCHAT_FETCH__NCBI_API_KEY), 3 without."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from rag.fetch.http import Polite, ServiceFailed
from rag.fetch.records import FetchQuery, Fetched, Skipped, split_doi
from rag.loaders.common import clean_text, parse_year

BATCH = 200  # ids per efetch (NCBI suggests at most 200 for GET)
MAX_IDS = 9999  # esearch hands out at most 9,999 ids of one search


def term(q: FetchQuery) -> str:
    parts = [f"({q.query})"] if q.query else []
    if q.author:
        parts.append(f"{q.author}[au]")
    if q.since or q.until:
        parts.append(f"{q.since or 1800}:{q.until or 3000}[dp]")
    return " AND ".join(parts) if len(parts) > 1 else (q.query or " AND ".join(parts))


def _common(client: Polite) -> dict[str, str]:
    s = client.settings
    out = {"db": "pubmed", "tool": "paperchat"}
    if s.email:
        out["email"] = s.email
    if s.ncbi_api_key:
        out["api_key"] = s.ncbi_api_key.get_secret_value()
    return out


def _xml(client: Polite, endpoint: str, params: dict) -> ET.Element:
    r = client.get(f"{client.settings.pubmed_url}/{endpoint}", {**_common(client), **params})
    try:
        return ET.fromstring(r.content)
    except ET.ParseError as exc:
        raise ServiceFailed(f"PubMed answered something that is not XML ({exc})") from None


def search(client: Polite, q: FetchQuery, n: int) -> tuple[int, list[str]]:
    root = _xml(client, "esearch.fcgi", {"term": term(q), "retmax": min(n, MAX_IDS), "retstart": 0})
    if root.find("ERROR") is not None:
        raise ServiceFailed(f"PubMed refused the search: {clean_text(root.findtext('ERROR'))}")
    return int(root.findtext("Count") or 0), [i.text or "" for i in root.iter("Id") if i.text]


def count(client: Polite, q: FetchQuery) -> int:
    return search(client, q, 0)[0]


def pages(client: Polite, q: FetchQuery, state: dict | None) -> Iterator[tuple[list, dict | None, int | None]]:
    """The ids are taken once (kept in the state, so a resumed fetch asks for the same papers), then
    fetched a batch at a time."""
    state = dict(state or {})
    if "ids" not in state:
        total, ids = search(client, q, q.limit)
        state = {"ids": ids, "done": 0, "total": total}
    ids, done = state["ids"], int(state["done"])
    while done < len(ids):
        batch = ids[done: done + BATCH]
        root = _xml(client, "efetch.fcgi", {"id": ",".join(batch), "retmode": "xml"})
        done += len(batch)
        items = [parse(a) for a in root.findall("PubmedArticle")]
        yield items, ({**state, "done": done} if done < len(ids) else None), state.get("total")
    if not ids:
        yield [], None, 0


def _text(node: ET.Element | None) -> str:
    return clean_text("".join(node.itertext())) if node is not None else ""


def abstract_of(article: ET.Element) -> str:
    """The abstract, a structured one with its labels: 'BACKGROUND: … METHODS: …'."""
    parts = []
    for t in article.findall("Abstract/AbstractText"):
        text, label = _text(t), (t.get("Label") or "").strip()
        if text:
            parts.append(f"{label}: {text}" if label and label.upper() != "UNLABELLED" else text)
    return " ".join(parts)


def parse(a: ET.Element) -> Fetched | Skipped:
    cit = a.find("MedlineCitation")
    pmid = _text(cit.find("PMID")) if cit is not None else ""
    art = cit.find("Article") if cit is not None else None
    if not pmid or art is None:
        return Skipped(service="pubmed", service_id=pmid, reason="malformed", detail="no PMID or Article")
    title = _text(art.find("ArticleTitle"))
    abstract = abstract_of(art)
    if not abstract:
        return Skipped(service="pubmed", service_id=pmid, title=title, reason="no abstract")
    doi = next((split_doi(_text(i))[0] for i in a.findall("PubmedData/ArticleIdList/ArticleId")
                if i.get("IdType") == "doi"), "")
    doi = doi or next((split_doi(_text(e))[0] for e in art.findall("ELocationID") if e.get("EIdType") == "doi"), "")
    authors = []
    for au in art.findall("AuthorList/Author"):
        name = " ".join(x for x in (_text(au.find("ForeName")), _text(au.find("LastName"))) if x)
        if name := name or _text(au.find("CollectiveName")):
            authors.append(name)
    date = art.find("Journal/JournalIssue/PubDate")
    year = parse_year(_text(date.find("Year")) or _text(date.find("MedlineDate"))) if date is not None else None
    keywords = [_text(k) for k in cit.findall("KeywordList/Keyword")]
    keywords += [_text(m.find("DescriptorName")) for m in cit.findall("MeshHeadingList/MeshHeading")]
    return Fetched(
        service="pubmed", service_id=pmid, title=re.sub(r"\.$", "", title), abstract=abstract, authors=authors,
        year=year, venue=_text(art.find("Journal/Title")), doi=doi, pmid=pmid,
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/", keywords=list(dict.fromkeys(k for k in keywords if k)),
    )
