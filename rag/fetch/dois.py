"""`paperchat fetch --dois FILE`: one DOI or arXiv id a line, each resolved through OpenAlex (an arXiv id by
its DataCite DOI, 10.48550/arXiv.ID), falling back to Crossref for a DOI and to arXiv for an arXiv id."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from rag.errors import UserError
from rag.fetch import arxiv, crossref, openalex
from rag.fetch.records import Fetched, Skipped, bare_arxiv, split_doi

PER_PAGE = 25  # lines resolved between two saved states
_ARXIV_ID = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})$")


def read_list(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--dois {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def classify(line: str) -> tuple[str, str]:
    """("doi", doi) or ("arxiv", id) or ("", "") for a line that is neither."""
    doi, arxiv_id = split_doi(line)
    if doi:
        return "doi", doi
    if arxiv_id:
        return "arxiv", arxiv_id
    bare = bare_arxiv(line)
    return ("arxiv", bare) if _ARXIV_ID.match(bare) else ("", "")


def pages(clients: dict, lines: list[str], state: dict | None) -> Iterator[tuple[list, dict | None, int | None]]:
    done = int((state or {}).get("done", 0))
    while done < len(lines):
        chunk = lines[done: done + PER_PAGE]
        items: list[Fetched | Skipped] = []
        for k, line in enumerate(chunk, done + 1):
            items.append(resolve(clients, line, k))
        done += len(chunk)
        yield items, ({"done": done} if done < len(lines) else None), len(lines)
    if not lines:
        yield [], None, 0


def resolve(clients: dict, line: str, k: int) -> Fetched | Skipped:
    kind, ident = classify(line)
    if not kind:
        return Skipped(service="dois", service_id=f"line {k}", reason="malformed",
                       detail=f"{line[:60]!r} is neither a DOI nor an arXiv id")
    found = openalex.by_doi(clients["openalex"], ident if kind == "doi" else f"10.48550/arXiv.{ident}")
    if found is None:
        if kind == "doi":
            found = crossref.by_doi(clients["crossref"], ident)
        else:
            found = next(iter(arxiv.by_ids(clients["arxiv"], [ident])), None)
    if found is None:
        return Skipped(service="dois", service_id=f"line {k}", title=ident, reason="malformed",
                       detail="not found in OpenAlex, " + ("Crossref" if kind == "doi" else "arXiv"))
    return found
