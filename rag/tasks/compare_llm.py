"""LLM mode of a comparison table: one model call writes every cell as a short phrase, each checked against its paper.

The model sees the table's papers as numbered sources (their sentences tagged with their roles, as
the ask prompt does) and answers one line per source (`prompts/compare_*.txt`). Each phrase is then
checked against its own paper: its evidence is the abstract's sentence it is most relevant to, by
rag.reading.grades' score (the citation grade of answers), and it stands only when that grade is `answers`
and the evidence sentence's role fits the column (Problem: objective or background; Approach: method;
Finding: result; Setting: any but background) -- a phrase of a finding resting on a method sentence
fails. A phrase that fails, a cell the model left empty and a paper it skipped show the quoted
sentence instead, marked `fallback` with a note saying why.
"""

from __future__ import annotations

import re

from rag.reading.citations import strip_marks
from rag.reading.grades import graded, relevance
from rag.prompts import load_prompt
from rag.settings import Settings
from rag.tasks.numbered_sources import format_sources
from rag.tasks.compare_cells import ROLE_COLUMNS
from rag.tasks.comparison import COLUMNS, HEADINGS, NOT_STATED, Cell, Table
from rag.tasks.topicality import Reading

_FIELD = re.compile(r"\b(problem|approach|finding|setting)\s*:\s*(.*?)\s*(?=\|?\s*\b(?:problem|approach|finding|"
                    r"setting)\s*:|$)", re.IGNORECASE | re.DOTALL)
_SOURCE = re.compile(r"^\s*(?:source\s*)?\[?\s*(\d+)\s*\]?\s*[.):\-]?\s*", re.IGNORECASE)
_EMPTY = re.compile(r"^(?:not stated|none|n/?a|-+|—|unknown|not (?:given|mentioned|specified))\.?$", re.IGNORECASE)
MAX_PHRASE = 200  # characters: past this the model wrote a paragraph, not a cell


def parse(text: str, n_sources: int) -> tuple[dict[int, dict[str, str]], list[str]]:
    """{source number: {column: phrase}} from the model's lines, and notes on lines naming no real source."""
    out: dict[int, dict[str, str]] = {}
    flags: list[str] = []
    current: int | None = None
    for raw in text.splitlines():
        line = raw.strip().strip("*").strip()
        if not line:
            continue
        m = _SOURCE.match(line)
        if m and (line.startswith("[") or re.match(r"^(?:source\s*)?\d+\s*[.):\-]", line, re.IGNORECASE)):
            n = int(m.group(1))
            current = n if 1 <= n <= n_sources else None
            if current is None:
                flags.append(f"removed row [{n}]: there is no source {n}")
                continue
            line = line[m.end():]
        if current is None:
            continue
        for f in _FIELD.finditer(line):
            out.setdefault(current, {})[f.group(1).lower()] = f.group(2).strip(" |*").strip()
    return out, flags


def _allowed(column: str) -> tuple[str, ...]:
    return ROLE_COLUMNS.get(column, ("objective", "method", "result", "other"))


def write_cells(table: Table, readings: list[Reading], settings: Settings, model, emb) -> None:
    """Replace the quoted cells of `table` (rows in the order of `readings`) by checked model phrases,
    in place; one model call for the whole table."""
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    pd = settings.prompts_dir
    chain = ChatPromptTemplate.from_messages([
        ("system", load_prompt("compare_system", pd)),
        ("user", load_prompt("compare_table", pd)),
    ]) | model | StrOutputParser()
    sources = format_sources([r.hit for r in readings], pd, roles=[r.roles for r in readings])
    draft = chain.invoke({"topic": table.topic or "(the chosen papers)", "sources": sources, "n": len(readings)})
    phrases, flags = parse(draft, len(readings))
    known = any(role != "other" for r in readings for role in r.roles)  # roles unknown: any sentence may back
    # Every phrase against its own paper's sentences, one relevance call per paper.
    for n, (row, r) in enumerate(zip(table.rows, readings), 1):
        got = phrases.get(n)
        if not got:
            flags.append(f"the model wrote no cells for [{n}]; its quoted sentences are shown")
            for c in COLUMNS:
                _fall_back(row.cells, c, "the model wrote no cell for this paper")
            continue
        wanted = {c: strip_marks(got.get(c, "")) for c in COLUMNS}
        texts = [t for t in wanted.values() if t and not _EMPTY.match(t)]
        scores = {t: relevance(t, r.sentences, emb) for t in dict.fromkeys(texts)} if r.sentences else {}
        for c in COLUMNS:
            phrase = wanted[c]
            if not phrase or _EMPTY.match(phrase):
                _fall_back(row.cells, c, "the model wrote “not stated”")
                continue
            s = scores.get(phrase)
            if s is None or not len(s):
                _fall_back(row.cells, c, "the abstract has no sentence to check the model's phrase against")
                continue
            j = int(s.argmax())
            g = graded(float(s[j]), settings.ask.floor, settings.ask.answers_at)
            role = r.roles[j] if j < len(r.roles) else "other"
            fits = not known or role in _allowed(c)
            if g.grade == "answers" and fits and len(phrase) <= MAX_PHRASE:
                row.cells[c] = Cell(column=c, paper_id=row.paper.paper_id, text=phrase, sentence=r.sentences[j],
                                    role=role, score=float(r.relevance[j]), position=j, source="model",
                                    grade=g.grade, grade_score=g.score)
                continue
            why = (f"its best sentence is {role}, not {'/'.join(_allowed(c))}" if g.grade == "answers" and not fits
                   else "too long for a cell" if g.grade == "answers"
                   else f"no sentence of the abstract backs it ({g.grade} {g.score:.2f})")
            _fall_back(row.cells, c, f"the model's phrase “{phrase}” failed the check: {why}", g)
            flags.append(f"[{n}] {HEADINGS[c]}: the model's phrase failed the check ({why}); the quoted sentence is shown")
    table.mode = "llm"
    table.flags = list(dict.fromkeys(table.flags + flags))


def _fall_back(cells: dict[str, Cell], column: str, why: str, g=None) -> None:
    """The quoted cell stays, marked as a fallback (or stays `not stated` when nothing was quoted)."""
    c = cells[column]
    update = {"note": why}
    if c.stated:
        update["source"] = "fallback"
    if g is not None:
        update.update(grade=g.grade, grade_score=g.score)
    cells[column] = c.model_copy(update=update)
    if not c.stated:
        cells[column].text = NOT_STATED
