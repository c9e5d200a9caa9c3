"""Removing papers: by id, or a whole source (file); vectors, BM25 and catalogue together, in an order a crash cannot harm.

Same write order as ingest (rag.library.ingest): the generation goes "dirty" before the first write; a paper's
record goes before its chunks (once the record is gone the paper is gone for every reader, and chunks
left without a record are swept by the next write); the generation is fresh once the last write is
done, so every reader's catalogue and BM25 caches are rebuilt without the papers. A kill -9 part-way
leaves a library that opens and agrees with itself; running the same removal again finishes it.

A source removed takes only the papers no other source holds (rag.library.sources): a paper two files hold
stays, under the other file. Removing a paper by id takes it out whichever sources hold it.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path

from pydantic import BaseModel, Field

from rag.library.collections import DIRTY
from rag.errors import UserError
from rag.library.sources import holdings, leaving


class SourceSummary(BaseModel):
    """One source of the library (a file, or a name given with --source), as `paperchat remove --source` and
    the Library tab offer it."""

    source_id: str  # the identity stored with its papers: NAME~HASH, or the --source name
    name: str  # the file name shown in `papers`, citations and cards
    path: str = ""  # where it was last read from ("" for uploads and libraries built before paths were kept)
    papers: int = 0  # papers it holds (its own and those it shares)
    shared: int = 0  # of them, papers another source also holds (they stay when this source is removed)


class RemoveReport(BaseModel):
    """What a removal did. `removed`: paper ids that left the library (vectors, BM25, catalogue); `kept`:
    papers of the removed source that another source still holds (they stay, under that source);
    `not_found`: ids asked for that the library does not hold; `source`: the source removed, if any."""

    removed: list[str] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)
    not_found: list[str] = Field(default_factory=list)
    source: SourceSummary | None = None
    papers: int = 0  # papers in the library afterwards
    seconds: float = 0.0

    def summary(self) -> str:
        what = f"source {self.source.name!r}: " if self.source else ""
        out = f"{what}removed {len(self.removed)}"
        if self.kept:
            out += f", kept {len(self.kept)} another source also holds"
        if self.not_found:
            out += f", not found {len(self.not_found)}"
        return out


PART = 512  # papers per delete: a kill loses at most the part under way, and a rerun redoes it


def source_summaries(catalogue: Mapping[str, Mapping]) -> list[SourceSummary]:
    """Every source the catalogue names (owners and co-owners), with its counts, by name then id."""
    found: dict[str, SourceSummary] = {}
    for m in catalogue.values():
        holders = holdings(m)
        for sid, name, where, _ in holders:
            s = found.get(sid)
            if s is None:
                s = found[sid] = SourceSummary(source_id=sid, name=name)
            s.papers += 1
            s.shared += len(holders) > 1
            s.path = s.path or where
    return sorted(found.values(), key=lambda s: (s.name.lower(), s.source_id))


def resolve_source(catalogue: Mapping[str, Mapping], given: str) -> SourceSummary:
    """The source `given` names: its id, the path it was read from (a path names that file only), or its
    file name when only one source has that name. UserError (naming the candidates) otherwise."""
    given = (given or "").strip()
    if not given:
        raise UserError("--source needs a name: a file name, a path or a source id (`paperchat sources` lists them)")
    every = source_summaries(catalogue)
    for s in every:
        if s.source_id == given:
            return s
    base = Path(given).name
    named = [s for s in every if s.name == base or s.name.lower() == base.lower()]
    if base != given:  # a path: the file read from there, never another file that has its name
        where = given
        with contextlib.suppress(OSError, ValueError):
            where = str(Path(given).expanduser().resolve())
        at = [s for s in every if s.path == where]
        if len(at) == 1:
            return at[0]
        raise UserError(f"no source of this library was read from {where}" + (
            "; sources named " + repr(base) + ": " + ", ".join(_candidate(s) for s in named)
            + " (give one of their ids)" if named else ""))
    if len(named) == 1:
        return named[0]
    if named:
        raise UserError(f"{len(named)} sources are named {base!r}; give one of their ids: "
                        + ", ".join(_candidate(s) for s in named))
    shown = ", ".join(repr(s.name) for s in every[:10]) + (f" and {len(every) - 10} more" if len(every) > 10 else "")
    raise UserError(f"no source {given!r} in this library" + (f"; its sources: {shown}" if every else " (it is empty)"))


def _candidate(s: SourceSummary) -> str:
    return f"{s.source_id} ({s.papers} papers, {s.path or 'no path: uploaded or read before paths were kept'})"


class Remover:
    """Removes papers through the ingestor's own record and chunk writes (rag.library.ingest.Ingestor), under the
    library's write lock."""

    def __init__(self, ingestor, write_lock: Callable[[], AbstractContextManager]):
        self.ingestor, self.catalogue, self.write_lock = ingestor, ingestor.catalogue, write_lock

    def sources(self) -> list[SourceSummary]:
        self.catalogue.refresh()
        return source_summaries(self.catalogue.entries)

    def remove(self, ids: Iterable[str]) -> RemoveReport:
        want = list(dict.fromkeys(str(i).strip() for i in ids if str(i).strip()))
        return self._run(lambda cat: ([p for p in want if p in cat], {}, [], [p for p in want if p not in cat], None))

    def remove_source(self, given: str) -> RemoveReport:
        def plan(cat):
            src = resolve_source(cat, given)
            kept, rewritten, gone = leaving(cat, src.source_id, set())  # as ingest drops what a file no longer holds
            return gone, kept, rewritten, [], src
        return self._run(plan)

    def _run(self, plan) -> RemoveReport:
        """Under the write lock: finish what a killed write left (orphan chunks), then plan on the current
        catalogue and write: co-owners first, then records, then their chunks, a part at a time."""
        t0 = time.perf_counter()
        cat = self.catalogue
        with self.write_lock():
            self.ingestor.store.rebuild_if_unloadable()
            cat.refresh()
            was_dirty = cat.generation.startswith(DIRTY)
            changed = False
            try:
                if was_dirty:
                    cat.set_generation(f"{DIRTY}-{uuid.uuid4().hex}")
                    changed = True
                    self.ingestor.sweep_orphans()
                gone, kept, rewritten, missing, src = plan(cat.entries)
                if gone or kept or rewritten:
                    if not changed:
                        cat.set_generation(f"{DIRTY}-{uuid.uuid4().hex}")
                        changed = True
                    self.ingestor.update_metas(kept)
                    # the next holder's own text, where it differs (rag.library.sources)
                    self.ingestor.write_versions(rewritten, src.source_id if src else "")
                    for s in range(0, len(gone), PART):
                        self.ingestor.delete_papers(gone[s : s + PART])
            finally:
                if changed:
                    cat.set_generation(uuid.uuid4().hex)
                    cat.refresh()
        return RemoveReport(removed=gone, kept=sorted([*kept, *(p.paper_id for p, _, _ in rewritten)]),
                            not_found=missing, source=src,
                            papers=len(cat.entries), seconds=time.perf_counter() - t0)
