"""Field clean-up shared by the loaders: text normalisation, years, authors, identifiers, records refused whole."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

from rag.records import Paper, Rejection, normalise_text, text_hash
from rag.loaders._io import MAX_ABSTRACT_CHARS, MAX_TITLE_CHARS

# Only real inline HTML formatting is removed: abstracts legitimately contain "<object>" or "</s>".
_HTML_TAG = re.compile(
    r"</?(?:p|br|i|b|em|strong|sub|sup|span|div|a|u|tt|code|small|jats:[a-z-]+)(?:\s[^<>]{0,200})?/?>",
    re.IGNORECASE,
)
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z]{2,8});")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Invisible characters that change how text reads or compares but not how it looks: bidi embeddings,
# overrides and isolates (U+202A-E, U+2066-9; "ICLR\u202e" showed as a venue of its own), marks
# (U+200E/F, U+061C), zero-width space / joiners, word joiner, BOM, soft hyphen.
_INVISIBLE = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b-\u200d\u2060\ufeff\u00ad]")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d|2100)(?!\d)")
_DOI = re.compile(r"10\.\d{4,9}/\S+")
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s?#]+?)(?:v\d+)?(?:\.pdf)?$", re.IGNORECASE)
_OPENREVIEW_URL = re.compile(r"openreview\.net/(?:forum|pdf)\?id=([\w-]+)", re.IGNORECASE)


def clean_text(value: Any) -> str:
    """Whitespace-folded text with HTML formatting tags, entities and control characters resolved.
    LaTeX and everything else is kept as written."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):  # a BLOB where text belongs (a damaged or forged Zotero database)
        value = bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, list):  # e.g. SciFact's abstract as a list of sentences
        value = " ".join(str(v) for v in value if isinstance(v, (str, int, float)))
    text = str(value)
    if "<" in text:
        text = _HTML_TAG.sub(" ", text)
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    if not text.isascii():  # (a C-speed check: most fields are ASCII and skip the second pass)
        text = _INVISIBLE.sub("", text)
    return normalise_text(_CONTROL.sub(" ", text))


def cap_titles(items: Iterator, notes: list[str]) -> Iterator:
    """The loader's stream with every title longer than MAX_TITLE_CHARS cut there (at a word where one is
    near), each cut said in `notes`: a title is copied into every chunk of its paper, so a 200,000-character
    one cost 5 GB and two minutes for one record."""
    for item in items:
        if isinstance(item, Paper) and len(item.title) > MAX_TITLE_CHARS:
            cut = item.title[:MAX_TITLE_CHARS]
            cut = cut.rsplit(" ", 1)[0] if " " in cut[MAX_TITLE_CHARS // 2 :] else cut
            notes.append(f"{item.source}: record {item.position}: title cut to {len(cut):,} characters "
                         f"(it had {len(item.title):,}; the limit is {MAX_TITLE_CHARS})")
            item.title = cut.rstrip() + "…"
        yield item


def abstract_too_long(abstract: str) -> str:
    """Why an abstract is refused for its length ('' when it is not): a whole paper pasted as an abstract,
    or text built to stall sentence splitting and embedding, is named rather than silently cut."""
    if len(abstract) <= MAX_ABSTRACT_CHARS:
        return ""
    return (f"abstract too long ({len(abstract):,} characters; the limit is {MAX_ABSTRACT_CHARS:,}: "
            f"is this a whole paper?)")


def refused_whole(abstract: str, source: str, where: str, no_abstract: str, *, label: str = "", doi: str = "",
                  own_id: str = "", url: str = "") -> Rejection | None:
    """A record read whole and refused for what it holds (no abstract: `no_abstract` says so in the format's
    words; or one too long, after `label`), carrying the id it names so that a re-ingest keeps only that
    paper (rag.records.Rejection.read); None when its abstract is fine."""
    if not abstract:
        return Rejection(source=source, where=where, reason=no_abstract, read=True,
                         paper_id=named_id(doi=doi, own_id=own_id, url=url))
    if too_long := abstract_too_long(abstract):
        return Rejection(source=source, where=where, reason=f"{label}: {too_long}" if label else too_long, read=True,
                         paper_id=make_paper_id(abstract, doi=doi, own_id=own_id, url=url))
    return None


def parse_year(value: Any) -> int | None:
    """An int year, or the first plausible year in a date string ("2021-05-03", "May 2021")."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value) if 1500 <= value <= 2100 else None
    m = _YEAR.search(str(value))
    return int(m.group(1)) if m else None


def split_authors(value: Any) -> list[str]:
    """Authors from a list (of names or {"name": ...}/{"given","family"} objects) or one string:
    "A and B", "A; B" or "A, B"."""
    if value is None:
        return []
    if isinstance(value, list):
        out = []
        for a in value:
            if isinstance(a, dict):
                name = a.get("name") or " ".join(str(a.get(k, "")) for k in ("given", "family"))
            elif isinstance(a, list):  # arXiv's authors_parsed: [last, first, suffix]
                name = " ".join(str(x) for x in (a[1:2] + a[:1] + a[2:3]) if x)
            else:
                name = a
            name = clean_text(name)
            if name:
                out.append(name)
        return out
    text = clean_text(value)
    if not text:
        return []
    if ";" in text:
        parts = text.split(";")
    elif re.search(r"\s+and\s+", text):
        parts = re.split(r"\s+and\s+", text)
        if all(p.count(",") == 1 for p in parts):  # "Last, First and Last, First" (BibTeX style)
            parts = [" ".join(x.strip() for x in reversed(p.split(","))) for p in parts]
        else:  # "A, B and C"
            parts = [q for p in parts for q in p.split(",")]
    else:
        parts = text.split(",")
    return [p.strip() for p in parts if p.strip()]


def split_keywords(value: Any) -> list[str]:
    """Keywords from a list or one string ("a; b" or "a, b": CSL's `keyword`, paperlists' `keywords`), in
    order, each once (by its first spelling: "Optimal transport; optimal transport" is one)."""
    if isinstance(value, list):
        parts = [clean_text(v) for v in value if isinstance(v, str)]
    else:
        parts = [clean_text(p) for p in re.split(r"[;,]", clean_text(value))]
    seen: dict[str, str] = {}
    for p in parts:
        if p:
            seen.setdefault(p.casefold(), p)
    return list(seen.values())


def normalise_doi(value: Any) -> str:
    """'10.1234/abc' (from a bare DOI, 'doi:...' or a doi.org URL), lower-cased; '' if none."""
    m = _DOI.search(str(value or ""))
    return m.group(0).rstrip(".,;").lower() if m else ""


def arxiv_id_from_url(url: str) -> str:
    m = _ARXIV_URL.search(url or "")
    return m.group(1) if m else ""


def make_paper_id(abstract: str, *, doi: str = "", own_id: str = "", url: str = "") -> str:
    """The record's own identifier where it has one (DOI first), else a hash of the abstract text."""
    return named_id(doi=doi, own_id=own_id, url=url) or text_hash(abstract)


def named_id(*, doi: str = "", own_id: str = "", url: str = "") -> str:
    """The identifier a record names for itself (DOI, its own id, an arXiv or OpenReview URL), or ''."""
    if doi := normalise_doi(doi):
        return f"doi:{doi}"
    own_id = normalise_text(str(own_id or ""))
    if own_id:
        bare = re.sub(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)", "", own_id, flags=re.IGNORECASE)
        return f"doi:{normalise_doi(bare)}" if bare.startswith("10.") and normalise_doi(bare) else own_id
    if a := arxiv_id_from_url(url):
        return f"arXiv:{a}"
    if m := _OPENREVIEW_URL.search(url or ""):
        return f"openreview:{m.group(1)}"
    return ""
