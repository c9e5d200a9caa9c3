"""Input formats -> Papers. One module per format; this module finds files and picks the reader.

Every problem a user can cause comes back as a `Rejection` (one line: file, where, why) in the stream,
never as an exception: a file that cannot be read at all yields exactly one Rejection with where=''
and no Paper; a bad record yields a Rejection naming its line (or record / entry) and the rest loads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from rag.errors import FieldsError, LoadError
from rag.records import Paper, Rejection
from rag.loaders import bibtex, csv_, jsonl, ris, seeds, zotero
from rag.loaders._io import ReadProblem, read_head, text_problem
from rag.loaders.mapping import check_fields

__all__ = ["LoadError", "FieldsError", "discover", "load_file", "RECOGNISED"]

# Extensions we read (each also as .gz). Anything else is tried by content only when named explicitly.
RECOGNISED = (".txt", ".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".bib", ".ris")
NOT_RECOGNISED = "skipped: not a recognised abstract list"
NO_SUCH = "no such file or folder"


def _suffix(path: Path) -> str:
    """'.jsonl' for 'x.jsonl' and 'x.jsonl.gz'."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def discover(paths: list[Path]) -> tuple[list[Path], list[Rejection]]:
    """Expand files and folders (recursively, sorted) into the files we recognise. A path that does not
    exist, and every file in a folder that we do not recognise, becomes a Rejection. An explicitly named
    file with an unknown extension is kept (load_file sniffs its content). Hidden files and folders
    (".git", ".DS_Store") inside a folder are passed over silently. A Zotero data folder (one holding
    zotero.sqlite) stands for its database alone: its storage/ of PDFs and its backups are not lists."""
    files: list[Path] = []
    rejected: list[Rejection] = []
    seen: set[Path] = set()

    def add(p: Path) -> None:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            files.append(p)

    for path in map(Path, paths):
        if path.is_dir() and (db := zotero.database_in(path)):
            add(db)
        elif path.is_dir():
            for p in sorted(path.rglob("*")):
                rel = p.relative_to(path).parts
                if any(part.startswith(".") for part in rel) or not p.is_file():
                    continue
                if _suffix(p) in RECOGNISED:
                    add(p)
                else:
                    rejected.append(Rejection(source=str(p), reason=NOT_RECOGNISED))
        elif path.is_file():
            add(path)
        else:
            rejected.append(Rejection(source=str(path), reason=NO_SUCH))
    # A file also named explicitly is tried by content, so its folder-walk rejection no longer applies.
    rejected = [r for r in rejected if r.reason != NOT_RECOGNISED or Path(r.source).resolve() not in seen]
    return files, rejected


def _sniff(head: str, suffix: str) -> str:
    """Which reader: by extension, with the content deciding JSON Lines vs array; else by content."""
    body = head.lstrip("\ufeff \t\r\n")
    first_line = body.split("\n", 1)[0].strip()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "array" if body.startswith("[") and not _one_line_value(first_line, body) else "lines"
    if suffix in (".csv", ".tsv", ".bib", ".txt", ".ris"):
        return suffix[1:]
    if ris.sniff(body):
        return "ris"
    if body.startswith("["):
        return "array"
    if body.startswith("{"):
        return "lines"
    if body.startswith("@") or "\n@" in body[:4096] and "{" in body[:4096]:
        return "bib"
    if seeds.sniff(first_line):
        return "txt"
    header = first_line.lower()
    if any(a in header for a in ("abstract", "summary")) and ("," in header or "\t" in header):
        return "tsv" if header.count("\t") > header.count(",") else "csv"
    return ""


def _one_line_value(first_line: str, body: str) -> bool:
    """A first line that is a whole JSON value with more lines after it: JSON Lines whose first record
    happens to start with "[" (a stray array line), not a JSON array spread over the file."""
    import json

    if len(body) <= len(first_line) or not body[len(first_line):].strip():
        return False  # one line only: a one-line array of records
    try:
        json.loads(first_line, strict=False)
    except ValueError:
        return False
    return True


def load_file(path: Path, fields: dict[str, str] | None = None) -> Iterator[Paper | Rejection]:
    """Yield Papers and per-record Rejections in file order. A file that cannot be read at all (empty,
    not UTF-8, random bytes, wrong format, CSV with no abstract column) yields exactly one Rejection
    with where='' and no Paper. `fields` maps our field names to the file's (e.g. {'abstract': 'summary',
    'title': 'name'}) for JSON, CSV and BibTeX; an unknown field name of ours raises FieldsError."""
    mapping = check_fields(fields)  # a caller's mistake: raise before reading anything
    return _load(Path(path), mapping)


def _load(path: Path, fields: Mapping[str, str]) -> Iterator[Paper | Rejection]:
    source = path.name
    whole = lambda reason: Rejection(source=source, reason=reason)  # noqa: E731
    if not path.exists():
        yield Rejection(source=str(path), reason=NO_SUCH)
        return
    if path.is_dir():
        yield whole("is a folder, not a file")
        return
    if zotero.is_sqlite(path):  # binary, so before the text checks; a non-Zotero database is named as such
        yield from zotero.load(path, source)
        return
    try:
        head, complete = read_head(path)
    except ReadProblem as e:
        yield whole(str(e))
        return
    except OSError as e:
        yield whole(f"cannot read: {e.strerror or e}")
        return
    if problem := text_problem(head, complete):
        yield whole(problem)
        return
    kind = _sniff(head.decode("utf-8", errors="ignore"), _suffix(path))
    if not kind:
        yield whole(f"{NOT_RECOGNISED[len('skipped: '):]} (expected a seed .txt list, .jsonl, .json, .csv, .tsv, .bib, .ris "
                    "or a zotero.sqlite)")
        return
    readers = {
        "txt": lambda: seeds.load(path, source),
        "lines": lambda: jsonl.load_lines(path, fields, source),
        "array": lambda: jsonl.load_array(path, fields, source),
        "csv": lambda: csv_.load(path, fields, source),
        "tsv": lambda: csv_.load(path, fields, source, tsv=True),
        "bib": lambda: bibtex.load(path, fields, source),
        "ris": lambda: ris.load(path, source),
    }
    anything = False
    try:
        for item in readers[kind]():
            anything = True
            yield item
    except OSError as e:  # the file vanished or became unreadable mid-way
        yield Rejection(source=source, reason=f"cannot read: {e.strerror or e}")
        return
    if not anything:
        yield whole("no records found (the file is blank)")


def estimate_records(path: Path) -> int | None:
    """A quick count of the records in a file, for a progress bar's total and ETA (None: unknown).

    One streaming pass over the bytes (decompressing .gz, within the same cap as loading, so a bomb costs
    no more here than there) counting line ends (JSON Lines, CSV), blank-line gaps (seed lists) or lines
    opening an entry (BibTeX). Memory stays at one block whatever the file holds.
    """
    from rag.loaders._io import open_bytes

    suffix = _suffix(path)
    if suffix not in {".jsonl", ".ndjson", ".csv", ".tsv", ".txt", ".bib", ".ris"}:
        return None
    marker = {".txt": b"\n\n", ".bib": b"\n@", ".ris": b"\nER  -"}.get(suffix, b"\n")
    try:
        with open_bytes(path) as f:
            # A .bib starts as if after a line end, so "@article" on line 1 counts.
            n, tail = 0, b"\n" if suffix == ".bib" else b""
            while block := f.read(1 << 20):
                data = tail + block.replace(b"\r", b"")
                n += data.count(marker)
                tail = data[-(len(marker) - 1):] if len(marker) > 1 else b""
    except Exception:  # noqa: BLE001 - only an estimate; loading reports the real problem
        return None
    if suffix == ".txt":
        return max(0, n)  # gaps between header and paragraphs: one per abstract
    return max(0, n - (1 if suffix in {".csv", ".tsv"} else 0))
