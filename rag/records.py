"""Typed records that cross module boundaries: what loaders yield, what the
library stores, what retrieval returns and what tasks answer."""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel, Field


def normalise_text(text: str) -> str:
    """Whitespace-folded text, the form ids and content hashes are taken of."""
    return re.sub(r"\s+", " ", text).strip()


def text_hash(text: str, n: int = 16) -> str:
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()[:n]


class Paper(BaseModel):
    """One abstract with what is known about it and where it came from."""

    paper_id: str
    abstract: str
    title: str = ""
    title_derived: bool = False
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    venue: str = ""
    url: str = ""
    source: str = ""
    position: int = 0
    keywords: list[str] = Field(default_factory=list)  # the record's own keywords / tags (RIS KW, CSL, Zotero)
    collections: list[str] = Field(default_factory=list)  # Zotero collections holding it ("Parent / Child")
    # Rhetorical role of each sentence (rag.reading.roles.encode: one letter per sentence of split_sentences);
    # derived at ingest, so not part of the content hash; "" when not known yet.
    roles: str = ""
    roles_model: str = ""  # rag.reading.roles.model_id() of the classifier that gave `roles` ("" before roles were versioned)

    @property
    def content_hash(self) -> str:
        # Changes when anything a user sees changes, so an edited record replaces its old version.
        meta = "|".join([self.title, ";".join(self.authors), str(self.year or ""), self.venue, self.url])
        # Keywords and collections only when present, so records without them keep the hash they had.
        if self.keywords or self.collections:
            meta += "|" + ";".join(self.keywords) + "|" + ";".join(self.collections)
        return text_hash(self.abstract + "\x1f" + meta)

    def catalogue_entry(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "title_derived": self.title_derived,
            "authors": self.authors,
            "year": self.year,
            "venue": self.venue,
            "url": self.url,
            "source": self.source,
            "position": self.position,
            "keywords": self.keywords,
            "collections": self.collections,
            "roles": self.roles,  # one letter per sentence (rag.reading.roles): B O M R X; "" if not stored yet
        }


class Rejection(BaseModel):
    """A record or file that could not be ingested, and why, in one line."""

    source: str
    where: str = ""  # "line 12", "record 3", "" for the whole file
    reason: str
    # A record read whole and refused for what it holds (no abstract, too long), unlike one that could not
    # be read: `paper_id` is the id it names for itself ("" when none, e.g. no DOI). A re-ingest keeps only
    # that stored paper for it, while any other rejection might be any record, so keeps all the file's papers.
    read: bool = False
    paper_id: str = ""

    def __str__(self) -> str:
        where = f":{self.where}" if self.where else ""
        return f"{self.source}{where}: {self.reason}"


class Chunk(BaseModel):
    """A piece of an abstract small enough for the embedder's window."""

    chunk_id: str
    paper_id: str
    text: str  # what is embedded and indexed (title prefixed)
    n: int  # 0-based index within the paper


class Hit(BaseModel):
    """One paper found by retrieval: its best chunk and the fused score."""

    paper: Paper
    score: float
    text: str  # the best-matching chunk's text (without title prefix)
    dense: float = 0.0  # cosine similarity of the best chunk (absolute: gates abstention)
    lexical: float = 0.0  # BM25 score of the paper (title + abstract)

    def as_json(self) -> dict:
        p = self.paper
        return {
            "paper_id": p.paper_id,
            "title": p.title,
            "venue": p.venue,
            "year": p.year,
            "source": p.source,
            "position": p.position,
            "score": round(self.score, 6),
            "text": self.text,
        }


class Citation(BaseModel):
    n: int
    paper: Paper
    evidence: str = ""  # the sentence cited for: once graded, the best-scoring of those supporting the text
    supported: bool = False  # the evidence backs the answer sentence citing it (cosine >= the check's threshold)
    score: float = 0.0  # that cosine
    more_evidence: list[str] = Field(default_factory=list)  # other sentences of it the answer rests on
    # How well the evidence answers the question (rag.reading.grades): answers / related / weak, and its score.
    grade: Literal["answers", "related", "weak"] | None = None
    grade_score: float = 0.0
    quoted: bool = False  # every answer sentence citing it is a verbatim sentence of the abstract
    role: str = ""  # the evidence sentence's rhetorical role (rag.reading.roles)

    def as_json(self) -> dict:
        p = self.paper
        return {
            "n": self.n,
            "paper_id": p.paper_id,
            "title": p.title,
            "title_derived": p.title_derived,
            "venue": p.venue,
            "year": p.year,
            "source": p.source,
            "position": p.position,
            "url": p.url,
            "evidence": self.evidence,
            "more_evidence": self.more_evidence,
            "supported": self.supported,
            "support_score": round(self.score, 4),
            "grade": self.grade,
            "grade_score": round(self.grade_score, 4),
            "quoted": self.quoted,
            "role": self.role,
        }


class Answer(BaseModel):
    question: str
    answer: str
    mode: Literal["extractive", "llm"] = "extractive"
    abstained: bool = False
    # answered | answered_elsewhere (a follow-up the previous papers do not answer; others do) |
    # outside_filter (nothing under the filter answers; papers outside it do, listed in `nearest`) | not_answered
    coverage: Literal["answered", "answered_elsewhere", "outside_filter", "not_answered"] = "answered"
    # rag.reading.questions.kind: how / finding / why / problem / topic / other; a list of an area's papers:
    # papers ("Which papers study X?") or compare ("Compare A and B"; rag.tasks.paper_lists)
    question_kind: str = ""
    citations: list[Citation] = Field(default_factory=list)
    nearest: list[Hit] = Field(default_factory=list)  # shown when abstaining
    flags: list[str] = Field(default_factory=list)  # what the citation check removed or found unsupported
    # a list of an area's papers (question_kind papers / compare): the area, how many more papers it holds past
    # those listed, and how to see them ("" and 0 for any other answer)
    area: str = ""
    more: int = 0
    more_text: str = ""

    def as_json(self) -> dict:
        return {
            "question": self.question,
            "answer": self.answer,
            "mode": self.mode,
            "abstained": self.abstained,
            "coverage": self.coverage,
            "question_kind": self.question_kind,
            "citations": [c.as_json() for c in self.citations],
            "nearest": [h.as_json() for h in self.nearest],
            "flags": self.flags,
            "area": self.area,
            "more": self.more,
            "more_text": self.more_text,
        }
