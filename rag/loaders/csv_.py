"""CSV and TSV with a header row (plain or gzip), streamed row by row.

`position` is the 1-based data row (header excluded); rejections name the physical line the row starts on.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from pathlib import Path

from rag.records import Paper, Rejection
from rag.loaders._io import MAX_RECORD_BYTES, iter_lines
from rag.loaders.mapping import missing_abstract, resolve, to_paper


def _delimiter(first_line: str, tsv: bool) -> str:
    if tsv:
        return "\t"
    counts = {d: first_line.count(d) for d in (",", "\t", ";")}
    return max(counts, key=lambda d: (counts[d], d == ","))  # a tie (e.g. one column) means ","


def load(path: Path, fields: Mapping[str, str], source: str, tsv: bool = False) -> Iterator[Paper | Rejection]:
    problems: dict[int, str] = {}  # line number -> why it was unusable (fed to csv as a blank line)
    fatal: list[tuple[int, str]] = []
    first: list[str] = []

    def lines() -> Iterator[str]:
        for line in iter_lines(path):
            if line.text is None:
                problems[line.no] = line.problem
                if line.fatal:
                    fatal.append((line.no, line.problem))
                    return
                yield "\n"
            else:
                if not first and line.text.strip():
                    first.append(line.text)
                yield line.text + "\n"

    stream = lines()
    # Peek at the first non-blank line to choose the delimiter, then hand everything to the csv module.
    buffered: list[str] = []
    for text in stream:
        buffered.append(text)
        if first:
            break
    if not first:
        yield Rejection(source=source, reason=next(iter(problems.values()), "empty file (no header row)"))
        return
    csv.field_size_limit(MAX_RECORD_BYTES)
    reader = csv.reader(_chain(buffered, stream), delimiter=_delimiter(first[0], tsv))
    header: list[str] | None = None
    cols: dict[str, str | None] = {}
    position = 0
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            position += header is not None
            yield Rejection(source=source, where=f"line {start}", reason=f"malformed CSV: {e}")
            continue
        bad = [problems.pop(n) for n in range(start, reader.line_num + 1) if n in problems]
        if not row and not bad:
            continue  # blank line
        if header is None:
            if bad:
                yield Rejection(source=source, reason=f"cannot read the header row (line {start}): {bad[0]}")
                return
            header = [h.strip() for h in row]
            cols = resolve(header, fields)
            if cols["abstract"] is None:
                yield Rejection(source=source, reason=missing_abstract(header, fields, "column"))
                return
            continue
        position += 1
        where = f"line {start}"
        if bad:
            yield Rejection(source=source, where=where, reason=bad[0])
            continue
        record = dict(zip(header, row))
        result = to_paper(record, cols, source, position)
        yield result if isinstance(result, Paper) else Rejection(source=source, where=where, reason=result)
    if fatal:
        yield Rejection(source=source, where=f"line {fatal[0][0]}", reason=fatal[0][1])
    elif header is None:
        yield Rejection(source=source, reason="empty file (no header row)")


def _chain(first: list[str], rest: Iterator[str]) -> Iterator[str]:
    yield from first
    yield from rest
