"""What a fetch is and what it brings: the query (which is the source's identity), the records each
service's parser yields, and the one line each skipped work gets."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

Service = Literal["openalex", "arxiv", "s2", "pubmed", "dois"]
SERVICES: tuple[str, ...] = ("openalex", "arxiv", "s2", "pubmed")
NAMES = {"openalex": "OpenAlex", "arxiv": "arXiv", "s2": "Semantic Scholar", "pubmed": "PubMed",
         "crossref": "Crossref", "dois": "a DOI list"}


class FetchQuery(BaseModel):
    """One fetch as the user asked for it. Everything but the limit names the set of papers, so it is the
    source's identity: the same query fetched again updates the same source."""

    service: Service
    query: str = ""  # the service's own syntax, passed through; for "dois", the list file's resolved path
    since: int | None = None
    until: int | None = None
    author: str = ""
    limit: int = 300

    def source_id(self) -> str:
        parts = [f"{self.service}:", f'"{self.query}"' if self.service != "dois" else self.query]
        if self.since or self.until:
            parts.append(f"{self.since or ''}-{self.until or ''}")
        if self.author:
            parts.append(f"author {self.author}")
        # "~" separates a file name from its hash in source ids (rag.library.sources): never inside a name.
        return " ".join(parts).replace("~", "-")

    def slug(self) -> str:
        """A file name for the snapshot: the service and the query's words, then a short hash of the rest."""
        import hashlib

        words = re.sub(r"[^A-Za-z0-9]+", "-", self.query if self.service != "dois" else self.query.rsplit("/", 1)[-1])
        words = words.strip("-").lower()[:48].strip("-") or "query"
        h = hashlib.sha256(self.source_id().encode("utf-8")).hexdigest()[:8]
        return f"{self.service}-{words}-{h}"


class Fetched(BaseModel):
    """One work as a service gave it, in our field names; `abstract` is never empty (such works are Skipped)."""

    service: str
    service_id: str  # the service's own id (OpenAlex W…, arXiv id, S2 paperId, PMID)
    title: str = ""
    abstract: str
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    venue: str = ""
    doi: str = ""  # bare, lower-cased ("10.1038/…"); arXiv's own DataCite DOIs are kept as arxiv_id instead
    arxiv_id: str = ""  # without version
    pmid: str = ""
    url: str = ""
    keywords: list[str] = Field(default_factory=list)

    def names(self) -> list[str]:
        """Every id this work is known by, as the library writes ids ("doi:…", "arXiv:…", "pmid:…")."""
        out = [f"doi:{self.doi}"] if self.doi else []
        out += [f"arXiv:{self.arxiv_id}"] if self.arxiv_id else []
        out += [f"pmid:{self.pmid}"] if self.pmid else []
        return out


class Skipped(BaseModel):
    """A work not stored, and why (named in the summary: never stored empty)."""

    service: str
    service_id: str = ""
    title: str = ""
    reason: Literal["no abstract", "malformed"]
    detail: str = ""

    def __str__(self) -> str:
        what = f"{NAMES.get(self.service, self.service)} {self.service_id}".strip()
        title = f" ({self.title[:70]!r})" if self.title else ""
        return f"{what}{title}: {self.reason}" + (f" ({self.detail})" if self.detail else "")


_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_DOI = re.compile(r"10\.\d{4,9}/\S+")


def split_doi(value: str | None) -> tuple[str, str]:
    """(doi, arxiv id) from a DOI in any spelling: arXiv's DataCite DOIs (10.48550/arXiv.X) are arXiv ids,
    so the preprint OpenAlex knows by DOI and the one arXiv knows by id are one paper."""
    m = _DOI.search(str(value or ""))
    if not m:
        return "", ""
    doi = m.group(0).rstrip(".,;").lower()
    if a := _ARXIV_DOI.match(doi):
        return "", bare_arxiv(a.group(1))
    return doi, ""


def bare_arxiv(value: str) -> str:
    """'2304.05376' from 'arXiv:2304.05376v2', 'http://arxiv.org/abs/2304.05376v2', 'hep-th/9901001'."""
    v = re.sub(r"^(?:https?://(?:export\.)?arxiv\.org/(?:abs|pdf)/|arxiv:)", "", str(value).strip(), flags=re.I)
    return re.sub(r"v\d+$", "", v.removesuffix(".pdf"))


_HEADING = re.compile(r"^(?:abstract|summary)\s*[.:]?\s+(?=[A-Z0-9])", re.IGNORECASE)


def drop_heading(abstract: str) -> str:
    """An abstract without the 'Abstract' heading Crossref's JATS (and so OpenAlex) often starts with."""
    return _HEADING.sub("", abstract, count=1)
