"""The Summary record: an overview, cited themes and the reference list, as JSON and as text."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rag.exports.documents import period_join
from rag.exports.terminal import readable
from rag.records import Citation, Hit, Paper


class Theme(BaseModel):
    title: str
    text: str
    citations: list[Citation] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)  # the distinctive terms the title came from

    def as_json(self) -> dict:
        return {"title": self.title, "text": self.text, "citations": [c.as_json() for c in self.citations],
                "terms": self.terms}


class Summary(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    topic: str
    summary: str  # the overview paragraph
    themes: list[Theme] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)  # the reference list, numbered as cited
    mode: str = "extractive"
    abstained: bool = False
    nearest: list[Hit] = Field(default_factory=list)  # when abstaining
    related: list[Hit] = Field(default_factory=list)  # retrieved, near the topic, but not about it: not summarised
    flags: list[str] = Field(default_factory=list)
    more: int = 0  # papers found on the area past the k summarised (summarise --k)
    k: int = 15  # the most papers it was asked to summarise

    @property
    def more_text(self) -> str:
        """How many more papers the area holds and how to see them; "" when the summary holds them all."""
        if not self.more:
            return ""
        n = len(self.citations) + self.more
        return (f"{self.more} more paper{'s' if self.more != 1 else ''} on this area: "
                f"summarise \"{self.topic}\" --k {n} (or compare \"{self.topic}\" --k {n})")

    def as_json(self) -> dict:
        return {
            "topic": self.topic,
            "summary": self.summary,
            "themes": [t.as_json() for t in self.themes],
            "citations": [c.as_json() for c in self.citations],
            "mode": self.mode,
            "abstained": self.abstained,
            "nearest": [h.as_json() for h in self.nearest],
            "related": [h.as_json() for h in self.related],
            "flags": self.flags,
            "more": self.more,
            "more_text": self.more_text,
        }

    def render_text(self) -> str:
        """The summary for a terminal: emphasis plain and TeX as Unicode (rag.exports.terminal); as_json keeps it raw."""
        out = [f"Summary: {self.topic}", "", readable(self.summary)]
        if self.abstained:
            if self.nearest:
                out += ["", "Nearest papers:"]
                out += [f"  - {_ref_line(h.paper)}" for h in self.nearest]
            return "\n".join(out)
        for i, t in enumerate(self.themes, 1):
            out += ["", f"{i}. {readable(t.title)}", readable(t.text)]
        if self.citations:
            out += ["", "References"]
            for c in self.citations:
                mark = "" if c.supported else "  (not supported by the abstract)"
                if c.grade:  # how well what it quotes bears on the topic (rag.reading.citation_grades)
                    mark = f"  [{c.grade} {c.grade_score:.2f}{', ' + c.role if c.role else ''}]" + mark
                out.append(f"[{c.n}] {_ref_line(c.paper)}{mark}")
        if self.more:
            out += ["", self.more_text]
        if self.related:
            out += ["", "Related, not summarised (near the topic, but less clearly on it than the papers summarised)"]
            out += [f"  - {_ref_line(h.paper)}" for h in self.related]
        if any(c.paper.title_derived for c in self.citations) or any(h.paper.title_derived for h in self.related):
            out.append("* title derived from the abstract")
        return "\n".join(out)


def _ref_line(p: Paper) -> str:
    where = f" ({p.source}:{p.position})" if p.source else ""
    authors = p.authors[0] + (" et al." if len(p.authors) > 1 else "") if p.authors else ""
    pub = f"{p.venue} {p.year or ''}".strip()
    return period_join([authors, f"{readable(p.title)}{'*' if p.title_derived else ''}"]) + \
        (f" — {pub}" if pub else "") + where


class ThemeDraft:
    """A theme while it is written: its papers as read for the topic (best first), their vectors, its title
    and terms."""

    def __init__(self, readings: list, vecs: np.ndarray):
        self.readings = readings  # rag.tasks.topicality.Reading
        self.vecs = vecs
        self.title = ""
        self.terms: list[str] = []

    @property
    def hits(self) -> list[Hit]:
        return [r.hit for r in self.readings]
