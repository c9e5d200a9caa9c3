"""JSON Lines and JSON arrays of records (plain or gzip), including BEIR corpora, paperlists-style
dumps, the arXiv metadata snapshot and CSL-JSON (each record told apart by its content).

Streaming: JSON Lines are read a line at a time; a JSON array is cut into its elements by a small
scanner so that only one element is ever held in memory.

`position` is the record's 1-based index among the file's records (non-blank lines / array elements,
rejected ones included, so positions do not shift when one record is fixed); rejections name the
physical line (`line N`) or, in an array, the element (`record N`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rag.records import Paper, Rejection
from rag.loaders import arxiv, csl
from rag.loaders._io import MAX_RECORD_BYTES, ReadProblem, iter_chunks, iter_lines
from rag.loaders.mapping import missing_abstract, resolve, to_paper

SNIFF_RECORDS = 20  # records read before deciding that a file with no good record is not this format


class _Verdict:
    """Holds back rejections until one record loads, so a file that is not JSON at all (or whose records
    have no abstract field) becomes one whole-file rejection rather than a flood of per-line ones."""

    def __init__(self, source: str, what: str) -> None:
        self.source, self.what = source, what
        self.pending: list[tuple[str, Rejection]] = []  # (kind, rejection)
        self.decided = False

    def feed(self, kind: str, item: Paper | Rejection) -> Iterator[Paper | Rejection]:
        if self.decided:
            yield item
            return
        if isinstance(item, Paper):
            self.decided = True
            yield from (r for _, r in self.pending)
            self.pending.clear()
            yield item
            return
        self.pending.append((kind, item))

    @property
    def hopeless(self) -> bool:
        """Enough records seen, none loaded, all for the same structural reason: give up on the file."""
        return not self.decided and len(self.pending) >= SNIFF_RECORDS and self._whole_file() is not None

    def _whole_file(self) -> Rejection | None:
        kinds = {k for k, _ in self.pending}
        if len(kinds) != 1 or kinds & {"record"}:
            return None
        first = self.pending[0][1]
        if kinds == {"json"}:
            reason = f"not {self.what} ({first.where} is {first.reason})"
        else:  # "fields": no record has an abstract field
            reason = first.reason
        return Rejection(source=self.source, reason=reason)

    def finish(self) -> Iterator[Rejection]:
        if self.decided or not self.pending:
            return
        whole = self._whole_file()
        yield from [whole] if whole else (r for _, r in self.pending)
        self.pending.clear()


def _record(obj: Any, cols_cache: dict, fields: Mapping[str, str], source: str, position: int,
            where: str) -> tuple[str, Paper | Rejection]:
    reject = lambda kind, reason: (kind, Rejection(source=source, where=where, reason=reason))  # noqa: E731
    if not isinstance(obj, dict):
        return reject("json", f"not a JSON object (a {_json_type(obj)})")
    if not fields and arxiv.looks_like(obj):
        result = arxiv.to_paper(obj, source, position)
    elif not fields and csl.looks_like(obj):
        result = csl.to_paper(obj, source, position)
    else:
        keys = tuple(obj)
        cols = cols_cache.get(keys)
        if cols is None:
            cols = resolve(keys, fields)
            if len(cols_cache) < 1000:  # records of one file mostly share their keys
                cols_cache[keys] = cols
        if cols["abstract"] is None:
            return reject("fields", missing_abstract(keys, fields))
        result = to_paper(obj, cols, source, position)
    if isinstance(result, Rejection):  # read whole, refused for what it holds (CSL): placed here
        return "record", result.model_copy(update={"where": where})
    return ("paper", result) if isinstance(result, Paper) else reject("record", result)


def _json_type(obj: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(obj), "number")


def _parse(text: str) -> tuple[Any, str]:
    try:
        return json.loads(text, strict=False), ""  # strict=False: raw tabs/newlines inside strings are fine
    except json.JSONDecodeError as e:
        return None, f"not valid JSON: {e.msg} (column {e.colno})"
    except (ValueError, RecursionError) as e:
        return None, f"not valid JSON: {type(e).__name__}"


def load_lines(path: Path, fields: Mapping[str, str], source: str) -> Iterator[Paper | Rejection]:
    verdict = _Verdict(source, "JSON Lines")
    cols_cache: dict = {}
    position = 0
    for line in iter_lines(path):
        if line.text is not None and not line.text.strip():
            continue
        where = f"line {line.no}"
        if line.text is None:
            if line.fatal:
                yield from verdict.finish()
                yield Rejection(source=source, where=where, reason=line.problem)
                return
            position += 1
            kind, item = "record", Rejection(source=source, where=where, reason=line.problem)
        else:
            obj, problem = _parse(line.text)
            if problem:
                position += 1
                kind, item = "json", Rejection(source=source, where=where, reason=problem)
            elif isinstance(obj, list) and obj and all(isinstance(o, dict) for o in obj):
                # A line holding an array of records (a one-line JSON array, or one such line among
                # JSON Lines): each element is a record of its own.
                for k, o in enumerate(obj, 1):
                    position += 1
                    kind, item = _record(o, cols_cache, fields, source, position, f"{where}, element {k}")
                    yield from verdict.feed(kind, item)
                if verdict.hopeless:
                    break
                continue
            else:
                position += 1
                kind, item = _record(obj, cols_cache, fields, source, position, where)
        yield from verdict.feed(kind, item)
        if verdict.hopeless:
            break
    yield from verdict.finish()


# --- JSON arrays ------------------------------------------------------------------------------------
_OUTSIDE = re.compile(r'["{}\[\],]')
_INSIDE = re.compile(r'["\\]')


class _NotAnArray(Exception):
    pass


def _array_elements(chunks: Iterator[str], cap: int) -> Iterator[str | None]:
    """The text of each element of a top-level JSON array (None for one larger than `cap`)."""
    started = False
    depth, in_str, esc = 0, False, False
    parts: list[str] = []  # the current element's text from earlier chunks
    size = 0
    for chunk in chunks:
        if not started:
            stripped = chunk.lstrip()
            if not stripped:
                continue
            if stripped[0] != "[":
                raise _NotAnArray
            started, chunk = True, stripped[1:]
        i = start = 0
        while i < len(chunk):
            if in_str:
                if esc:
                    esc, i = False, i + 1
                    continue
                m = _INSIDE.search(chunk, i)
                if not m:
                    break
                i = m.end()
                esc, in_str = m.group() == "\\", m.group() == "\\"
                continue
            m = _OUTSIDE.search(chunk, i)
            if not m:
                break
            c, j = m.group(), m.start()
            i = j + 1
            if c == '"':
                in_str = True
            elif c in "{[":
                depth += 1
            elif c == "}" or (c == "]" and depth > 0):
                depth -= 1
                if depth < 0:
                    raise _NotAnArray
            elif depth == 0:  # "," or the closing "]": an element ends here
                size += j - start
                text = None if size > cap else "".join(parts) + chunk[start:j]
                parts, size, start = [], 0, j + 1
                if text is None or text.strip():
                    yield text
                if c == "]":
                    return
        size += len(chunk) - start
        parts = [*parts, chunk[start:]] if size <= cap else []
    raise _NotAnArray  # the array never closed


def load_array(path: Path, fields: Mapping[str, str], source: str) -> Iterator[Paper | Rejection]:
    verdict = _Verdict(source, "a JSON array of records")
    cols_cache: dict = {}
    position = 0
    try:
        for text in _array_elements(iter_chunks(path), MAX_RECORD_BYTES):
            position += 1
            where = f"record {position}"
            if text is None:
                kind, item = "record", Rejection(source=source, where=where,
                                                 reason=f"record too large (over {MAX_RECORD_BYTES / 1e6:g} MB)")
            else:
                obj, problem = _parse(text)
                if problem:
                    kind, item = "json", Rejection(source=source, where=where, reason=problem)
                else:
                    kind, item = _record(obj, cols_cache, fields, source, position, where)
            yield from verdict.feed(kind, item)
            if verdict.hopeless:
                break
    except _NotAnArray:
        if not verdict.decided:  # nothing loaded: the file as a whole is not a JSON array
            yield Rejection(source=source, reason="not valid JSON: expected an array of records, or one JSON object a line")
            return
        yield Rejection(source=source, where=f"record {position + 1}",
                        reason="not valid JSON: the array is malformed or not closed; stopped reading")
        return
    except ReadProblem as e:
        yield from verdict.finish()
        yield Rejection(source=source, where=f"record {position + 1}", reason=str(e))
        return
    yield from verdict.finish()
