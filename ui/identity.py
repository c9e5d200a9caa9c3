"""What identifies a paper on a card, first: its authors, venue, year and links (its URL, DOI, arXiv id); the file
and record it came from last, for the reader who needs to find it on disk. Pure HTML, no Gradio."""

from __future__ import annotations

import re
from urllib.parse import urlparse

from ui.escape import h

_KNOWN_HOSTS = {"doi.org": "DOI", "dx.doi.org": "DOI", "arxiv.org": "arXiv", "openreview.net": "OpenReview"}


def authors_short(authors: list[str], most: int = 3) -> str:
    return ", ".join(authors[:most]) + (" et al." if len(authors) > most else "")


def links(paper) -> list[tuple[str, str]]:
    """(label, address) of each link the record gives: its URL, then its DOI or arXiv id when the URL is not
    already that (both come from the record's own id, rag.loaders.common.named_id)."""
    out: list[tuple[str, str]] = []
    url = getattr(paper, "url", "") or ""
    if re.match(r"^https?://", url):
        host = (urlparse(url).hostname or "").removeprefix("www.")
        out.append((_KNOWN_HOSTS.get(host, host or "link"), url))
    pid = getattr(paper, "paper_id", "") or ""
    kind, _, ident = pid.partition(":")
    if kind == "doi" and ident and not any(label == "DOI" for label, _ in out):
        out.append((f"DOI {ident}", f"https://doi.org/{ident}"))
    elif kind == "arXiv" and ident and not any(label == "arXiv" for label, _ in out):
        out.append((f"arXiv {ident}", f"https://arxiv.org/abs/{ident}"))
    return out


def link_html(label: str, url: str) -> str:
    return f'<a href="{h(url)}" target="_blank" rel="noopener noreferrer" class="pc-link">{h(label)}</a>'


def where_from(paper) -> str:
    """The file and record a paper came from ('' when not known)."""
    src = getattr(paper, "source", "") or ""
    if not src:
        return ""
    pos = getattr(paper, "position", 0)
    return f"{src}{', record ' + str(pos) if pos else ''}"


def meta_line(paper) -> str:
    """A card's line under its title: authors · venue · year · links · (derived title) · file, record."""
    bits = []
    authors = getattr(paper, "authors", None) or []
    if authors:
        bits.append(f'<span class="pc-authors">{h(authors_short(authors))}</span>')
    if getattr(paper, "venue", ""):
        bits.append(f'<span class="pc-venue">{h(paper.venue)}</span>')
    if getattr(paper, "year", None):
        bits.append(f"<span>{h(paper.year)}</span>")
    bits += [link_html(label, url) for label, url in links(paper)]
    if getattr(paper, "title_derived", False):
        bits.append('<span class="pc-derived" title="the source has no title; this one is derived from the abstract">'
                    "title derived from abstract</span>")
    where = where_from(paper)
    if where:
        bits.append(f'<span class="pc-src pc-nomath" title="the file it came from and its record number there">'
                    f"{h(where)}</span>")
    return '<div class="pc-meta">' + " · ".join(bits) + "</div>"
