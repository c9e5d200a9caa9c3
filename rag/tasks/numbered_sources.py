"""The numbered, delimited sources a language model is given (answers, summaries' themes, tables), each
sentence optionally preceded by its role. Its own room so that ask, summaries and tables share it and ask can
call summaries without an import circle."""

from __future__ import annotations

from rag.prompts import load_prompt
from rag.reading.citations import quote
from rag.records import Hit
from rag.tasks.extractive import sentences_of


def format_sources(hits: list[Hit], prompts_dir=None, roles: list[list[str]] | None = None,
                   numbers: list[int] | None = None) -> str:
    """The numbered, delimited sources; with roles, each sentence is preceded by its role ([method] …).
    `numbers` gives each hit its source number (default 1, 2, …)."""
    tpl = load_prompt("source", prompts_dir)
    # Escape our own delimiter inside abstracts so a hostile abstract cannot close its source early, and
    # neutralise the abstract's own [n] marks so the model cannot copy one as if it were its citation.
    clean = lambda s: quote(s.replace("</source", "</ source").replace("<source", "< source"))  # noqa: E731
    out = []
    for k, h in enumerate(hits):
        i = numbers[k] if numbers else k + 1
        text = h.paper.abstract
        rs = roles[k] if roles and k < len(roles) else None
        sents = sentences_of(h.paper)
        if rs and len(rs) == len(sents) and set(rs) != {"other"}:  # all "other": roles unknown (not MiniLM)
            text = " ".join(f"[{r}] {s}" for r, s in zip(rs, sents))
        out.append(tpl.format(n=i, title=clean(h.paper.title), venue=h.paper.venue, year=h.paper.year or "",
                              abstract=clean(text)))
    return "\n".join(out)
