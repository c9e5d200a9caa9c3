"""The comparison-table records: a Table of Rows (one per paper), each with one Cell per column, and its JSON."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rag.records import Citation, Hit, Paper

MAX_ROWS = 100  # rows of one table at most (compare --k): each row reads and classifies its abstract

Column = Literal["problem", "approach", "finding", "setting"]
COLUMNS: tuple[Column, ...] = ("problem", "approach", "finding", "setting")
HEADINGS = {"problem": "Problem", "approach": "Approach", "finding": "Finding", "setting": "Setting"}
NOT_STATED = "not stated"


class Cell(BaseModel):
    """One paper's entry in one column: the text shown, the abstract's sentence it rests on (with its role,
    its relevance to the topic and its index among the abstract's sentences), or `not stated`.

    `source` says where the text comes from: `quoted` (the sentence, or its clause most relevant to the
    topic, verbatim; its main clause, first letter raised, when only its opening clause leans on the sentence
    before: rag.reading.standalone), `model` (an LLM's phrase that passed the check against `sentence`), `fallback` (the
    model's phrase failed the check, so the quoted sentence is shown: `note` says why) or `none`."""

    column: Column
    paper_id: str
    text: str = NOT_STATED
    sentence: str = ""
    role: str = ""
    score: float = 0.0
    position: int = -1  # index of `sentence` in rag.reading.sentences.split_sentences(abstract); -1 when not stated
    source: Literal["quoted", "model", "fallback", "none"] = "none"
    grade: Literal["answers", "related", "weak"] | None = None  # LLM mode: the phrase against `sentence`
    grade_score: float = 0.0
    note: str = ""

    @property
    def stated(self) -> bool:
        return bool(self.sentence)

    def as_json(self) -> dict:
        out = {"text": self.text, "sentence": self.sentence, "role": self.role, "score": round(self.score, 4),
               "paper_id": self.paper_id, "position": self.position, "stated": self.stated, "source": self.source}
        if self.grade is not None:
            out.update(grade=self.grade, grade_score=round(self.grade_score, 4))
        if self.note:
            out["note"] = self.note
        return out


class Row(BaseModel):
    """One paper: its record, its theme, its relevance to the topic, its cells by column."""

    paper: Paper
    theme: str = ""
    score: float = 0.0
    cells: dict[str, Cell] = Field(default_factory=dict)

    def cell(self, column: str) -> Cell:
        return self.cells.get(column) or Cell(column=column, paper_id=self.paper.paper_id)

    def as_json(self) -> dict:
        p = self.paper
        return {"paper_id": p.paper_id, "title": p.title, "title_derived": p.title_derived, "authors": p.authors,
                "venue": p.venue, "year": p.year, "url": p.url, "source": p.source, "position": p.position,
                "theme": self.theme, "score": round(self.score, 4),
                "cells": {c: self.cell(c).as_json() for c in COLUMNS}}


class Table(BaseModel):
    """A literature table on a topic (or a chosen set of papers): rows by relevance, grouped by theme."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    topic: str = ""
    rows: list[Row] = Field(default_factory=list)
    themes: list[str] = Field(default_factory=list)  # in the order the rows are grouped
    mode: Literal["extractive", "llm"] = "extractive"
    abstained: bool = False
    message: str = ""  # why there is no table (abstained), in one line
    nearest: list[Hit] = Field(default_factory=list)  # when abstaining
    related: list[Hit] = Field(default_factory=list)  # retrieved, near the topic, not about it: not in the table
    flags: list[str] = Field(default_factory=list)

    def as_json(self) -> dict:
        return {"topic": self.topic, "mode": self.mode, "columns": list(COLUMNS), "themes": self.themes,
                "rows": [r.as_json() for r in self.rows], "abstained": self.abstained, "message": self.message,
                "nearest": [h.as_json() for h in self.nearest], "related": [h.as_json() for h in self.related],
                "flags": self.flags}

    def shown_columns(self) -> list[str]:
        """The columns a reader sees (the chat, the terminal, the Markdown export): those some row states; a
        column empty in every row (often Setting) is left out. JSON and CSV keep every column."""
        return [c for c in COLUMNS if any(r.cell(c).stated for r in self.rows)] or list(COLUMNS[:1])

    def citations(self) -> list[Citation]:
        """The rows as a numbered reference list (row n is [n]), for BibTeX and the UI's cards."""
        return [Citation(n=i, paper=r.paper, evidence=r.cell("finding").sentence or r.cell("approach").sentence,
                         supported=True) for i, r in enumerate(self.rows, 1)]
