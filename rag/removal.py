"""Removing papers: by id, or a whole source (file); vectors, BM25 and catalogue together, in an order a crash cannot harm.

Same write order as ingest (rag.ingest): the generation goes "dirty" before the first write; a paper's
record goes before its chunks (once the record is gone the paper is gone for every reader, and chunks
left without a record are swept by the next write); the generation is fresh once the last write is
done, so every reader's catalogue and BM25 caches are rebuilt without the papers. A kill -9 part-way
leaves a library that opens and agrees with itself; running the same removal again finishes it.

A source removed takes only the papers no other source holds (rag.sources): a paper two files hold
stays, under the other file. Removing a paper by id takes it out whichever sources hold it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


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
