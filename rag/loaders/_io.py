"""Byte-level reading shared by every loader.

Files are read as bytes (gzip recognised by its magic number, not its name) and decoded one line at a
time, so a decoding problem can name its line and byte offset, a BOM is tolerated, and no single line
or record can take more than `MAX_RECORD_BYTES` of memory however the file is built. A gzip file is read
only up to `decompressed_limit()` (a gzip bomb stops with a per-file error instead of filling the disk
cache or the CPU for minutes).
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MAX_RECORD_BYTES = 4_000_000  # one line / record; an abstract is a few KB, so this only stops pathology
MAX_TITLE_CHARS = 300  # longest of 87,691 paperlists titles: 217; past this a title is cut (and said), not refused
MAX_ABSTRACT_CHARS = 20_000  # longest of 87,691 paperlists abstracts: 16,262; longer is a pasted paper or an attack
# gzip: read at most this many times the compressed size (text compresses 3-10x; paperlists.jsonl.gz 3.3x;
# a bomb 1000x), and never less than the floor, so small honest files are never refused.
MAX_GZIP_RATIO = 50
MIN_DECOMPRESSED_LIMIT = 64 << 20
SNIFF_BYTES = 64 * 1024  # what is checked up front to reject a whole file before yielding anything
BOM = codecs.BOM_UTF8
_GZIP_ERRORS = (OSError, EOFError, zlib.error)  # gzip.BadGzipFile is an OSError


class ReadProblem(Exception):
    """The rest of the file cannot be read (corrupt compression, bad bytes in a chunked reader)."""


class TooMuchData(ReadProblem):
    """A compressed file expands past decompressed_limit()."""


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def decompressed_limit(path: Path) -> int:
    """How many decompressed bytes of a gzip file are read before it is refused."""
    return max(MIN_DECOMPRESSED_LIMIT, MAX_GZIP_RATIO * path.stat().st_size)


class _Capped:
    """A gzip stream that raises TooMuchData once more than `limit` bytes have come out of it."""

    def __init__(self, f: BinaryIO, limit: int) -> None:
        self._f, self._limit, self._out = f, limit, 0

    def _count(self, data: bytes) -> bytes:
        self._out += len(data)
        if self._out > self._limit:
            raise TooMuchData(f"decompresses to over {self._limit / (1 << 20):.0f} MB ({MAX_GZIP_RATIO}x its compressed size "
                              f"at most, {MIN_DECOMPRESSED_LIMIT >> 20} MB for small files): not read further "
                              f"(a gzip bomb?); stopped reading")
        return data

    def read(self, n: int = -1) -> bytes:
        return self._count(self._f.read(n))

    def readline(self, n: int = -1) -> bytes:
        return self._count(self._f.readline(n))

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> _Capped:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_bytes(path: Path) -> BinaryIO:
    """The file's bytes, decompressed if it is gzip (however it is named), capped for gzip."""
    if is_gzip(path):
        return _Capped(gzip.open(path, "rb"), decompressed_limit(path))  # type: ignore[return-value]
    return open(path, "rb")


def read_head(path: Path, n: int = SNIFF_BYTES) -> tuple[bytes, bool]:
    """The first n bytes (decompressed, BOM kept) and whether that is the whole file."""
    try:
        with open_bytes(path) as f:
            head = f.read(n + 1)
    except _GZIP_ERRORS as e:
        raise ReadProblem(f"not a readable gzip file ({_gzip_reason(e)})") from None
    return head[:n], len(head) <= n


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def text_problem(head: bytes, complete: bool) -> str | None:
    """Why these leading bytes are not a UTF-8 text file, or None if they are (offsets count the BOM)."""
    if not head[len(BOM):].strip() if head.startswith(BOM) else not head.strip():
        return "empty file" if complete else None  # blank head of a long file: decided by the loader
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "UTF-16 text, not UTF-8 (save the file as UTF-8)"
    nul = head.find(b"\x00")
    if nul >= 0:
        return f"binary data, not text (NUL byte at line {_line_of(head, nul)}, byte offset {nul})"
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=complete)
    except UnicodeDecodeError as e:
        return (
            f"not UTF-8 text: invalid byte 0x{head[e.start]:02x} at line {_line_of(head, e.start)}, "
            f"byte offset {e.start} (save the file as UTF-8)"
        )
    return None


@dataclass
class Line:
    no: int  # 1-based physical line number
    text: str | None  # without the line ending; None when the line is unusable (see problem)
    problem: str = ""
    fatal: bool = False  # nothing after this line can be read


def _gzip_reason(e: BaseException) -> str:
    return "truncated" if isinstance(e, EOFError) else str(e) or type(e).__name__


def _too_large(size: int, cap: int) -> str:
    return f"record too large ({size / 1e6:.1f} MB; the limit is {cap / 1e6:g} MB)"


def iter_lines(path: Path, cap: int | None = None) -> Iterator[Line]:
    """Every physical line, decoded; over-long or undecodable lines come back as problems, in place."""
    cap = cap or MAX_RECORD_BYTES
    no = offset = 0
    current = 1  # the line being read, for an error that stops reading mid-way
    try:
        with open_bytes(path) as f:
            while True:
                current = no + 1
                raw = f.readline(cap + 1)
                if not raw:
                    return
                no += 1
                if no == 1 and raw.startswith(BOM):
                    raw, offset = raw[len(BOM):], len(BOM)
                if len(raw) > cap and not raw.endswith(b"\n"):
                    size = len(raw)
                    while not raw.endswith(b"\n"):  # skip the rest of the line without keeping it
                        raw = f.readline(1 << 20)
                        if not raw:
                            break
                        size += len(raw)
                    offset += size
                    yield Line(no, None, _too_large(size, cap))
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    yield Line(no, None, f"not UTF-8: invalid byte 0x{raw[e.start]:02x} at byte offset {offset + e.start}")
                else:
                    yield Line(no, text.rstrip("\r\n"))
                offset += len(raw)
    except TooMuchData as e:
        yield Line(current, None, str(e), fatal=True)
    except _GZIP_ERRORS as e:
        yield Line(no + 1, None, f"compressed data is corrupt ({_gzip_reason(e)}); stopped reading", fatal=True)


def iter_chunks(path: Path, size: int = 1 << 16) -> Iterator[str]:
    """Decoded text in chunks (for formats whose records span lines); raises ReadProblem on bad bytes."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
    offset = 0
    try:
        with open_bytes(path) as f:
            while True:
                raw = f.read(size)
                try:
                    text = decoder.decode(raw, final=not raw)
                except UnicodeDecodeError as e:
                    raise ReadProblem(f"not UTF-8: invalid byte at byte offset {offset + e.start}; stopped reading") from None
                if text:
                    yield text
                if not raw:
                    return
                offset += len(raw)
    except _GZIP_ERRORS as e:
        raise ReadProblem(f"compressed data is corrupt ({_gzip_reason(e)}); stopped reading") from None
