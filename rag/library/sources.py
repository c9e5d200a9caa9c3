"""Which source a file is, and under which id each of its records is stored.

A *source* is what "records gone from a file leave the library" is about, so two different files must
never be one source, while a file the user moved, renamed or uploaded again must stay itself:

- `--source NAME` names it outright;
- otherwise a file whose path is a source's recorded path *is* that source (edited in place);
- otherwise a file whose first records (up to LINEAGE_PEEK) are mostly (LINEAGE_SHARE) an existing
  source's records is that source, provided that source's file is not still there under another path
  (it was moved, renamed, or uploaded, and uploads record no path);
- otherwise it is a new source, `NAME~HASH` (the file name and a hash of where it was read from).

Papers store `source_id` (and `source_path`) in their metadata; libraries built before sources had
ids identified them by file name, which is what `owner()` returns for those papers, so their files are
recognised again (by content) and re-ingesting them adds nothing.

A paper several sources hold (the same DOI, arXiv id or abstract in two files) is stored once, under
the source that added it, with the others in `also_in`: it leaves the library only when no source
holds it any more.

Paper ids: DOIs, arXiv and OpenReview ids and content hashes mean the same paper wherever they appear,
so they are ids across the library. A record's own id (a CSV `id`, a BEIR `_id`) only means something
within its file: it is the paper id while no other source holds a paper under it, else `ID@SOURCE`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

from rag.records import Paper, Rejection, text_hash

LINEAGE_PEEK = 256  # records of a file looked at to recognise it
LINEAGE_SHARE = 0.5  # share of those that must be one source's for the file to be that source
_GLOBAL_PREFIXES = ("doi:", "arXiv:", "openreview:")


def owner(meta: Mapping) -> str:
    """The source a stored paper belongs to (its file name in libraries built before source ids)."""
    return str(meta.get("source_id") or meta.get("source") or "")


def owners(meta: Mapping) -> list[str]:
    """Every source that holds the paper: its owner first, then those in `also_in`."""
    try:
        also = json.loads(meta.get("also_in") or "[]")
    except ValueError:
        also = []
    first = owner(meta)
    return [first] + [s for s in also if isinstance(s, str) and s != first]


def with_owners(meta: Mapping, holders: list[str]) -> dict:
    """The metadata with `holders` as its owner (first) and co-owners; the shown file name follows the owner."""
    out = dict(meta)
    if holders[0] != owner(meta):
        out.update(source_id=holders[0], source=holders[0].split("~", 1)[0], source_path="")
    out["also_in"] = json.dumps(holders[1:])
    return out


def is_local_id(p: Paper) -> bool:
    """Whether the paper id is the record's own id, meaningful only within its file."""
    return not p.paper_id.startswith(_GLOBAL_PREFIXES) and p.paper_id != text_hash(p.abstract)


def new_source_id(name: str, where: str) -> str:
    return f"{name}~{hashlib.sha256(where.encode('utf-8')).hexdigest()[:8]}"


class SourceIndex:
    """What identifying files needs to know of the library: each source's recorded paths, and which source
    holds each content hash. Built once per ingest (one pass over the catalogue) and kept up to date as
    files are written, so a folder of many small files costs one pass, not one per file."""

    def __init__(self, catalogue: Mapping[str, Mapping]) -> None:
        self.paths: dict[str, set[str]] = {}
        self.by_hash: dict[str, str] = {}
        for m in catalogue.values():
            self.add(owner(m), str(m.get("source_path") or ""), [str(m.get("hash", ""))])

    def add(self, source_id: str, where: str, hashes) -> None:
        self.paths.setdefault(source_id, set()).add(where)
        for h in hashes:
            self.by_hash.setdefault(h, source_id)

    def identify(self, path: Path, first: list[Paper], explicit: str | None = None,
                 remember_path: bool = True) -> tuple[str, str]:
        """(source id, path to record) for a file, from its path and its first records; see the module doc."""
        where = str(path.resolve()) if remember_path else ""
        if explicit:
            return explicit, where
        if where:
            for sid, ps in self.paths.items():
                if where in ps:
                    return sid, where
        votes = Counter(s for s in (self.by_hash.get(p.content_hash) for p in first) if s)
        for sid, n in votes.most_common():
            if n < LINEAGE_SHARE * len(first):
                break
            live = [p for p in self.paths.get(sid, set()) if p and p != where and Path(p).exists()]
            if not live:  # moved, renamed, uploaded again, or built before paths were recorded
                return sid, where
        return new_source_id(path.name, where or f"upload:{path.resolve()}"), where


def stored_id(p: Paper, source_id: str, catalogue: Mapping[str, Mapping]) -> str:
    """The id the paper is stored under: its own id unless another source holds a different paper under
    it (the very same record, e.g. one file copied into two folders, is one paper)."""
    if not is_local_id(p):
        return p.paper_id
    scoped = f"{p.paper_id}@{source_id}"
    if scoped in catalogue:
        return scoped
    held = catalogue.get(p.paper_id)
    if held is None or source_id in owners(held) or held.get("hash") == p.content_hash:
        return p.paper_id
    return scoped


def still_named(r: Rejection, source_id: str) -> tuple[str, ...]:
    """The stored ids a refused record may still stand for: a record read whole but refused (no abstract)
    names its own id, if it has one (stored as is, or scoped to its source); other rejections name none."""
    return (r.paper_id, f"{r.paper_id}@{source_id}") if r.read and r.paper_id else ()


def leaving(catalogue: Mapping[str, Mapping], source_id: str, held: set[str]) -> tuple[dict[str, dict], list[str]]:
    """A file read whole is the truth for its own papers: those of its source it no longer holds (`held`:
    the ids it holds or still names) leave (a Zotero item trashed or deleted, a record cut from a file),
    except those another source also holds, which stay under that source. (kept: their new metadata, gone)"""
    dropped = [(pid, m) for pid, m in catalogue.items() if pid not in held and source_id in owners(m)]
    kept = {pid: with_owners(m, [s for s in owners(m) if s != source_id]) for pid, m in dropped
            if len(owners(m)) > 1}
    return kept, [pid for pid, _ in dropped if pid not in kept]


class Repeats:
    """Records a file holds more than once (same stored id): the first is kept, each repeat is counted,
    and every repeated record is reported once, with where its copies are."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.first: dict[str, int] = {}
        self.copies: dict[str, list[int]] = {}

    def seen(self, pid: str, position: int) -> bool:
        """True if pid was already seen in this file (a repeat, to skip)."""
        if pid not in self.first:
            self.first[pid] = position
            return False
        self.copies.setdefault(pid, []).append(position)
        return True

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.copies.values())

    def notes(self) -> list[str]:
        out = []
        for pid, later in self.copies.items():
            shown = ", ".join(map(str, later[:10])) + (f" and {len(later) - 10} more" if len(later) > 10 else "")
            out.append(f"{self.source}: record {self.first[pid]} repeated as record{'s' if len(later) > 1 else ''} "
                       f"{shown}; kept once")
        return out


def peek(items: Iterator, n: int) -> tuple[Iterator, list]:
    """The items up to the n-th Paper, and an iterator that still yields everything."""
    head: list = []
    papers = 0
    for item in items:
        head.append(item)
        papers += isinstance(item, Paper)
        if papers >= n:
            break
    return itertools.chain(head, items), head
