"""Which source a file is, and under which id each of its records is stored.

A *source* is what "records gone from a file leave the library" is about, so two different files must
never be one source, while a file the user moved, renamed or uploaded again must stay itself. Adding is
recoverable and deleting is not, so when in doubt a file is a new source:

- `--source NAME` names it outright;
- otherwise a file whose path is a source's recorded path *is* that source (edited in place);
- otherwise a file is an existing source S recognised by content (moved, renamed, uploaded again) only
  when all of these hold: most of its first records (over LINEAGE_SHARE of up to LINEAGE_PEEK) are S's;
  it holds most of S (over LINEAGE_SHARE of S's papers, counted over the whole file); S's file is not
  still there under another path; and, when S has no recorded path (an upload, or a library built
  before paths were kept), the file has S's file name;
- otherwise it is a new source, `NAME~HASH` (the file name and a hash of where it was read from).

Papers store `source_id` (and `source_path`) in their metadata; libraries built before sources had
ids identified them by file name, which is what `owner()` returns for those papers, so their files are
recognised again (by content) and re-ingesting them adds nothing.

A paper several sources hold (the same DOI, arXiv id or abstract in two files) is stored once, under
the source that added it, with the others, their paths and their own versions beside it (see holders, below):
it leaves the library only when no source holds it any more.

Paper ids: DOIs, arXiv and OpenReview ids and content hashes mean the same paper wherever they appear,
so they are ids across the library. A record's own id (a CSV `id`, a BEIR `_id`) only means something
within its file: it is the paper id while no other source holds a paper under it, else `ID@SOURCE`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from rag.records import Paper, Rejection, text_hash

LINEAGE_PEEK = 256  # records of a file looked at to recognise it
LINEAGE_SHARE = 0.5  # share of those that must be one source's for the file to be that source
_GLOBAL_PREFIXES = ("doi:", "arXiv:", "openreview:")


# -- holders: which sources hold one stored paper, and what each of them holds ------------------------
# A paper several files hold is stored once. Its record is shown under one of them, the
# *owner* (`source_id`, `source`, `source_path`, `position`); every other holder is named in `also_in` (ids,
# in the order they joined) and described in `also_at` ({source id: {"name", "path", "position", "hash"}}):
# its own path, so that a file still on disk is known to be there whoever the paper is shown under, and,
# when its record's text differs from the shown one, its own version (`"paper"`). When the owner lets go
# (its file no longer holds the paper, or its source is removed) the next holder takes over with its own
# path, position and text: a paper never shows one file's text under another file's name.


def owner(meta: Mapping) -> str:
    """The source a stored paper is shown under (its file name in libraries built before source ids)."""
    return str(meta.get("source_id") or meta.get("source") or "")


def _json(meta: Mapping, key: str, empty):
    try:
        got = json.loads(meta.get(key) or "null")
    except ValueError:
        return empty
    return got if isinstance(got, type(empty)) else empty


def owners(meta: Mapping) -> list[str]:
    """Every source that holds the paper: its owner first, then those in `also_in`."""
    first = owner(meta)
    return [first] + [s for s in _json(meta, "also_in", []) if isinstance(s, str) and s != first]


def also_at(meta: Mapping) -> dict[str, dict]:
    """Each co-holder's entry (an empty one for co-holders recorded before entries were kept)."""
    at = _json(meta, "also_at", {})
    return {sid: at[sid] if isinstance(at.get(sid), dict) else {} for sid in owners(meta)[1:]}


def holdings(meta: Mapping) -> list[tuple[str, str, str, str]]:
    """(source id, file name, path, content hash of its version) for every holder, the owner first."""
    shown = str(meta.get("hash", ""))
    out = [(owner(meta), str(meta.get("source") or owner(meta).split("~", 1)[0]), str(meta.get("source_path") or ""),
            shown)]
    for sid, e in also_at(meta).items():
        out.append((sid, str(e.get("name") or sid.split("~", 1)[0]), str(e.get("path") or ""),
                    str(e.get("hash") or shown)))
    return out


def entry(p: Paper, where: str, shown_hash: str) -> dict:
    """A co-holder's entry for its record `p` read from `where`: its own version kept when it differs."""
    e = {"name": p.source, "path": where, "position": p.position, "hash": p.content_hash}
    if p.content_hash != shown_hash:
        e["paper"] = p.model_dump(exclude={"paper_id", "roles", "roles_model"})
    return e


def fields(at: Mapping[str, dict]) -> dict[str, str]:
    """The co-holder fields of a record's metadata (JSON, as Chroma stores them)."""
    return {"also_in": json.dumps(list(at)), "also_at": json.dumps(dict(at))}


def joining(meta: Mapping, sid: str, e: dict) -> dict:
    """The metadata with `sid` holding the paper too (or its entry brought up to date)."""
    at = also_at(meta)
    at[sid] = e
    return {**meta, **fields(at)}


def co_holders(meta: Mapping, *leaving: str) -> dict[str, dict]:
    """The co-holders' entries, less those of `leaving`."""
    return {sid: e for sid, e in also_at(meta).items() if sid not in leaving}


def after_owner_leaves(pid: str, meta: Mapping) -> tuple[dict | None, tuple[Paper, str, str] | None]:
    """The record once its owner lets go of it: (new metadata, None) when the next holder's text is the one
    shown (its name, path and position follow); (None, (its own version, its source id, its path)) when its
    own text must be written; (None, None) when no one else holds it."""
    rest = co_holders(meta)
    if not rest:
        return None, None
    sid, e = next(iter(rest.items()))
    del rest[sid]
    if isinstance(e.get("paper"), dict):
        try:
            return None, (Paper(**{**e["paper"], "paper_id": pid}), sid, str(e.get("path") or ""))
        except (TypeError, ValueError):
            pass  # an entry this code cannot read: the shown text stays, as before versions were kept
    out = {**meta, **fields(rest), "source_id": sid, "source": str(e.get("name") or sid.split("~", 1)[0]),
           "source_path": str(e.get("path") or "")}
    if "position" in e:
        out["position"] = int(e["position"])
    return out, None


def without(meta: Mapping, sid: str) -> dict:
    """The metadata with co-holder `sid` letting go of the paper."""
    return {**meta, **fields(co_holders(meta, sid))}


def keep_versions(at: Mapping[str, dict], old: Paper, new_hash: str) -> dict[str, dict]:
    """Co-holders' entries once the owner's text changes to `new_hash`: one that held the shown text (`old`)
    without a version of its own keeps that text as its own, for the day it is shown again."""
    out = {}
    for sid, e in at.items():
        if "paper" not in e and (e.get("hash") or old.content_hash) != new_hash:
            mine = old.model_copy(update={"source": e.get("name") or old.source,
                                          "position": int(e.get("position") or old.position)})
            e = {**e, "hash": old.content_hash, "paper": mine.model_dump(exclude={"paper_id", "roles", "roles_model"})}
        out[sid] = e
    return out


def is_local_id(p: Paper) -> bool:
    """Whether the paper id is the record's own id, meaningful only within its file."""
    return not p.paper_id.startswith(_GLOBAL_PREFIXES) and p.paper_id != text_hash(p.abstract)


def new_source_id(name: str, where: str) -> str:
    return f"{name}~{hashlib.sha256(where.encode('utf-8')).hexdigest()[:8]}"


class SourceIndex:
    """What identifying files needs to know of the library: every source's recorded paths and file name,
    the content hashes each holds, and the stored ids of each content hash. Built once per ingest (one pass
    over the catalogue) and kept up to date as files are written, so a folder of many small files costs
    one pass, not one per file."""

    def __init__(self, catalogue: Mapping[str, Mapping]) -> None:
        self.paths: dict[str, set[str]] = {}
        self.names: dict[str, str] = {}
        self.hashes: dict[str, set[str]] = {}  # source id -> content hashes of its records
        self.by_hash: dict[str, set[str]] = {}  # content hash -> every source holding a record with it
        self.ids: dict[str, set[str]] = {}  # content hash -> stored paper ids (rag.library.sources.stored_id)
        for pid, m in catalogue.items():
            for sid, name, where, h in holdings(m):
                self._hold(sid, name, where, h)
            self.ids.setdefault(str(m.get("hash", "")), set()).add(pid)

    def _hold(self, sid: str, name: str, where: str, h: str) -> None:
        self.paths.setdefault(sid, set()).add(where)
        self.names.setdefault(sid, name)
        self.hashes.setdefault(sid, set()).add(h)
        self.by_hash.setdefault(h, set()).add(sid)

    def add(self, source_id: str, where: str, papers: list[Paper]) -> None:
        """A batch of the file being written: its records are the source's from now on."""
        for p in papers:
            self._hold(source_id, p.source, where, p.content_hash)
            self.ids.setdefault(p.content_hash, set()).add(p.paper_id)

    def identify(self, path: Path, first: list[Paper], explicit: str | None = None,
                 remember_path: bool = True, whole: Callable[[], set[str]] | None = None) -> tuple[str, str]:
        """(source id, path to record) for a file, from its path and its first records (`whole`: the content
        hashes of all its records, read again only when a candidate is larger than what was peeked); see
        the module doc."""
        where = str(path.resolve()) if remember_path else ""
        if explicit:
            return explicit, where
        if where:
            for sid, ps in self.paths.items():
                if where in ps:
                    return sid, where
        votes = Counter(s for p in first for s in self.by_hash.get(p.content_hash, ()))
        every: set[str] | None = None
        for sid, n in votes.most_common():
            if n <= LINEAGE_SHARE * len(first):
                break
            recorded = {p for p in self.paths.get(sid, set()) if p}
            if any(p != where and Path(p).exists() for p in recorded):
                continue  # that file is still there: this is another file holding the same records
            if not recorded and self.names.get(sid) != path.name:
                continue  # an upload (or a legacy source) is only ever taken up by a file of its own name
            own = self.hashes.get(sid, set())
            if len(own) > len(first) and whole is not None:  # more than was peeked: count over the whole file
                every = whole() if every is None else every
                n = len(own & every)
            if n > LINEAGE_SHARE * len(own):
                return sid, where
        return new_source_id(path.name, where or f"upload:{path.resolve()}"), where

    def same_record(self, p: Paper) -> list[str]:
        """Stored ids of papers with exactly p's content."""
        return sorted(self.ids.get(p.content_hash, ()))


def stored_id(p: Paper, source_id: str, catalogue: Mapping[str, Mapping], same: list[str] = ()) -> str:
    """The id the paper is stored under: its own id unless another source holds a different paper under
    it. The very same record (one file copied into two folders) is one paper, whichever of `ID`, `ID@SOURCE`
    it was stored under (`same`: the stored ids with its content, SourceIndex.same_record)."""
    if not is_local_id(p):
        return p.paper_id
    scoped = f"{p.paper_id}@{source_id}"
    if scoped in catalogue:
        return scoped
    held = catalogue.get(p.paper_id)
    if held is None or source_id in owners(held) or held.get("hash") == p.content_hash:
        return p.paper_id
    for pid in same:  # the same record stored scoped to the file it was first read from
        if pid.startswith(f"{p.paper_id}@") and pid in catalogue:
            return pid
    return scoped


def still_named(r: Rejection, source_id: str) -> tuple[str, ...]:
    """The stored ids a refused record may still stand for: a record read whole but refused (no abstract)
    names its own id, if it has one (stored as is, or scoped to its source); other rejections name none."""
    return (r.paper_id, f"{r.paper_id}@{source_id}") if r.read and r.paper_id else ()


def leaving(catalogue: Mapping[str, Mapping], source_id: str, held: set[str]
            ) -> tuple[dict[str, dict], list[tuple[Paper, str]], list[str]]:
    """A file read whole is the truth for its own papers: those of its source it no longer holds (`held`:
    the ids it holds or still names) leave (a Zotero item trashed or deleted, a record cut from a file),
    except those another source also holds, which stay under that source, with that source's own path,
    position and text (see holders, below). (kept: new metadata of papers whose shown text stays; rewritten: the
    versions to write (with their holder's path) where the next holder's text differs; gone: ids that leave)"""
    kept: dict[str, dict] = {}
    rewritten: list[tuple[Paper, str]] = []
    gone: list[str] = []
    for pid, m in catalogue.items():
        if pid in held or source_id not in (holders := owners(m)):
            continue
        if holders[0] != source_id:
            kept[pid] = without(m, source_id)
            continue
        meta, version = after_owner_leaves(pid, m)
        if meta is not None:
            kept[pid] = meta
        elif version is not None:
            rewritten.append(version)
        else:
            gone.append(pid)
    return kept, rewritten, gone


class Repeats:
    """Records a file holds more than once (same stored id, same content): the first is kept, each repeat is
    counted, and every repeated record is reported once, with where its copies are. A record under the id of
    an earlier, *different* record of the file is not a repeat: `clash` names it (an error for that record)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.first: dict[str, tuple[int, str]] = {}
        self.copies: dict[str, list[int]] = {}

    def seen(self, pid: str, position: int, content: str = "") -> bool:
        """True if pid was already seen in this file (a repeat, or a clash: to skip)."""
        if pid not in self.first:
            self.first[pid] = (position, content)
            return False
        if content == self.first[pid][1]:
            self.copies.setdefault(pid, []).append(position)
        return True

    def clash(self, pid: str, p: Paper) -> Rejection | None:
        """The refusal of `p` when an earlier record of the file has its id and other content."""
        position, content = self.first[pid]
        if content == p.content_hash:
            return None
        return Rejection(source=self.source, where=f"record {p.position}", read=True, paper_id=pid,
                         reason=f"id {p.paper_id!r} is already record {position}'s, a different record "
                                f"(two records under one id: give each its own id, or map another column to id); "
                                f"not read")

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.copies.values())

    def notes(self) -> list[str]:
        out = []
        for pid, later in self.copies.items():
            shown = ", ".join(map(str, later[:10])) + (f" and {len(later) - 10} more" if len(later) > 10 else "")
            out.append(f"{self.source}: record {self.first[pid][0]} repeated as record{'s' if len(later) > 1 else ''} "
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
