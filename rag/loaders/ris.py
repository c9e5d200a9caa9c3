"""RIS (.ris: the export of Zotero, Mendeley, EndNote, Web of Science, Scopus, PubMed), fields read by rispy.

We cut the file into records ourselves (a `TY  -` line opens one, `ER  -` closes it) on the shared line
reader, so every record keeps the line it starts on, no line or record can outgrow the read caps, and a
bad line is named; rispy (a maintained RIS reader/writer on PyPI) then reads each record's tags, with its
handling of multi-line values, list tags (AU, KW, UR) and `;`-separated URLs.

`position` is the record's 1-based index in the file; rejections name the line the record starts on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import rispy

from rag.records import Paper, Rejection
from rag.loaders._io import MAX_RECORD_BYTES, iter_lines
from rag.loaders.common import clean_text, make_paper_id, parse_year, refused_whole, split_keywords
from rag.loaders.titles import derive_title

_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: |$)")
_SNIFF = re.compile(r"^TY  -", re.MULTILINE)
_VENUES = ("secondary_title", "alternate_title3", "journal_name", "alternate_title2", "alternate_title1")


def sniff(head: str) -> bool:
    """RIS: the first non-blank line is a tag line and a `TY  -` line opens a record near the top."""
    first = next((ln for ln in head.split("\n", 50)[:50] if ln.strip()), "")
    return bool(_TAG.match(first)) and bool(_SNIFF.search(head[:8192]))


def _tag(text: str) -> str:
    m = _TAG.match(text)
    return m.group(1) if m else ""


def load(path: Path, source: str) -> Iterator[Paper | Rejection]:
    position = 0
    lines: list[str] | None = None  # the open record's lines (None: between records)
    start = size = 0
    problem = ""  # why the open record cannot be read (its first bad line)
    stray = 0  # line of the first text outside a record, until the next record reports it
    for line in iter_lines(path):
        if line.text is None:
            if line.fatal:
                if lines is not None:
                    position += 1
                yield Rejection(source=source, where=f"line {line.no}", reason=line.problem)
                return
            if lines is None:
                yield Rejection(source=source, where=f"line {line.no}", reason=line.problem)
            elif not problem:
                problem = f"line {line.no}: {line.problem}"
            continue
        tag = _tag(line.text)
        if tag == "TY":
            if lines is not None:  # a record without its ER: it ends where the next one starts
                position += 1
                yield _record(lines, problem, source, position, start)
            if stray:
                yield Rejection(source=source, where=f"line {stray}",
                                reason="text outside a record (a missing 'TY  -' line?); skipped up to the next record")
                stray = 0
            lines, start, size, problem = [line.text], line.no, len(line.text), ""
        elif lines is None:
            if tag and tag != "ER" and not stray:  # a record's tags with no TY before them: not loaded
                stray = line.no
        else:
            size += len(line.text) + 1
            if size > MAX_RECORD_BYTES and not problem:
                problem = f"record too large (over {MAX_RECORD_BYTES / 1e6:g} MB)"
            if not problem:
                lines.append(line.text)
            if tag == "ER":
                position += 1
                yield _record(lines, problem, source, position, start)
                lines = None
    if stray:
        yield Rejection(source=source, where=f"line {stray}",
                        reason="text outside a record (a missing 'TY  -' line?); skipped")
    if lines is not None:
        position += 1
        yield Rejection(source=source, where=f"line {start}",
                        reason="record is not closed (no 'ER  -' line: is the file cut short?)")
    if position == 0 and not stray:
        yield Rejection(source=source, reason="no RIS records found (expected 'TY  - ' ... 'ER  - ')")


def _record(lines: list[str], problem: str, source: str, position: int, start: int) -> Paper | Rejection:
    where = f"line {start}"
    if problem:
        return Rejection(source=source, where=where, reason=problem)
    if _tag(lines[-1]) != "ER":
        lines = [*lines, "ER  - "]
    entries = rispy.RisParser(skip_unknown_tags=True).parse_lines(iter(_joined(lines)))
    if not entries:
        return Rejection(source=source, where=where, reason="record could not be read")
    return to_paper(entries[0], source, position, where)


def _rispy_tag(line: str) -> bool:
    """A tag line as rispy tells one (RisParser.parse_line), so the two never disagree."""
    return line[2:5] == "  -" and line[:2].isupper() and line[0:1].isalpha()


def _joined(lines: list[str]) -> list[str]:
    """Continuation lines (a value wrapped over lines) joined onto their tag's line here, in one pass:
    rispy joins them one at a time, which copies the value again for every line (quadratic in a record
    of many short lines)."""
    out: list[list[str]] = []
    for line in lines:
        if _rispy_tag(line) or not out:
            out.append([line])
        elif line.strip():
            out[-1].append(line.strip())
    return [" ".join(parts) for parts in out]


def _text(value: Any) -> str:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), "")
    return clean_text(value)


def _name(raw: str) -> str:
    """"Hinton, Geoffrey E." -> "Geoffrey E. Hinton" (RIS names are "Last, First[, Suffix]")."""
    parts = [p.strip() for p in clean_text(raw).split(",")]
    if len(parts) == 1:
        return parts[0]
    last, first, rest = parts[0], parts[1], parts[2:]
    return " ".join(p for p in (first, last, *rest) if p)


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def to_paper(entry: dict, source: str, position: int, where: str) -> Paper | Rejection:
    """A Paper from one record as rispy reads it, or why not."""
    title = _text(entry.get("title")) or _text(entry.get("primary_title"))
    abstract = _text(entry.get("abstract")) or _text(entry.get("notes_abstract"))
    urls = [u for u in (clean_text(x) for x in _list(entry.get("urls"))) if u]
    doi = _text(entry.get("doi")) or next((u for u in urls if "doi.org/" in u.lower()), "")
    url = urls[0] if urls else ""
    named = f" {title[:80]!r}" if title else ""
    if refused := refused_whole(abstract, source, where, f"record{named} has no abstract (AB or N2)", doi=doi, url=url):
        return refused
    authors = [n for a in _list(entry.get("authors")) or _list(entry.get("first_authors")) if (n := _name(str(a)))]
    keywords = [k for k in (clean_text(x) for x in _list(entry.get("keywords"))) if k]
    year = next((y for k in ("year", "publication_year", "date") if (y := parse_year(_text(entry.get(k))))), None)
    return Paper(
        paper_id=make_paper_id(abstract, doi=doi, url=url),
        abstract=abstract,
        title=title or derive_title(abstract),
        title_derived=not title,
        authors=authors,
        year=year,
        venue=next((v for k in _VENUES if (v := _text(entry.get(k)))), ""),
        url=url,
        source=source,
        position=position,
        keywords=split_keywords(keywords),  # each once, by its first spelling, as every loader
    )
