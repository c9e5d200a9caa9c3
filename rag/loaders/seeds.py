"""The seed format (.txt): a header line naming venue and year ("ICML 2026 Papers", "ICML 2026 论文列表"),
then one abstract per blank-line-separated paragraph. Abstracts carry no title, so each gets a
derived one (see titles.py).

`position` is the abstract's 1-based index in the file; rejections name the line a paragraph starts on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from rag.records import Paper, Rejection, text_hash
from rag.loaders._io import MAX_RECORD_BYTES, iter_lines
from rag.loaders.common import abstract_too_long, clean_text
from rag.loaders.titles import derive_title

NOT_A_LIST = "not a paperchat abstract list: first line should name venue and year, e.g. 'ICML 2026 Papers'"
_HEADER = re.compile(
    r"^\s*(?P<venue>[^\W\d_][\w&.+' -]{0,60}?)[\s,:-]*(?P<year>(?:19|20)\d\d)\s*"
    r"(?:论文列表|论文|papers?(?:\s+list)?|accepted\s+papers|abstracts?|paper\s+list)?\s*[.:]?\s*$",
    re.IGNORECASE,
)


def parse_header(line: str) -> tuple[str, int] | None:
    """('ICML', 2026) from 'ICML 2026 论文列表' / 'ICML 2026 Papers'; None if the line is not a header."""
    m = _HEADER.match(line)
    if not m or not m.group("venue").strip():
        return None
    return m.group("venue").strip(" -,:"), int(m.group("year"))


def sniff(first_line: str) -> bool:
    return parse_header(first_line.lstrip("\ufeff")) is not None


def load(path: Path, source: str) -> Iterator[Paper | Rejection]:
    header: tuple[str, int] | None = None
    para: list[str] = []
    para_line, size, position, problem = 0, 0, 0, ""

    def flush() -> Iterator[Paper | Rejection]:
        nonlocal position
        position += 1
        where = f"line {para_line}"
        if problem:
            yield Rejection(source=source, where=where, reason=problem)
            return
        abstract = clean_text(" ".join(para))
        if not abstract:
            yield Rejection(source=source, where=where, reason="empty abstract")
            return
        if too_long := abstract_too_long(abstract):
            yield Rejection(source=source, where=where, reason=too_long)
            return
        venue, year = header  # type: ignore[misc]
        yield Paper(paper_id=text_hash(abstract), abstract=abstract, title=derive_title(abstract), title_derived=True,
                    venue=venue, year=year, source=source, position=position)

    for line in iter_lines(path):
        if header is None:  # the first non-blank line must be the header
            if line.text is not None and not line.text.strip():
                continue
            header = parse_header(line.text or "")
            if header is None:
                yield Rejection(source=source, reason=NOT_A_LIST)
                return
            continue
        if line.fatal:
            if para:
                yield from flush()
            yield Rejection(source=source, where=f"line {line.no}", reason=line.problem)
            return
        if line.text is not None and not line.text.strip():
            if para or problem:
                yield from flush()
            para, size, problem = [], 0, ""
            continue
        if not para and not problem:
            para_line = line.no
        if line.text is None:
            problem, para = line.problem, []
            continue
        size += len(line.text)
        if problem:
            continue
        if size > MAX_RECORD_BYTES:
            problem, para = f"abstract too large (over {MAX_RECORD_BYTES / 1e6:g} MB)", []
            continue
        para.append(line.text)
    if header is None:
        yield Rejection(source=source, reason="empty file")
        return
    if para or problem:
        yield from flush()
    if position == 0:
        yield Rejection(source=source, reason="no abstracts after the header line")
