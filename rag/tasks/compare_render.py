"""A comparison table as text: a terminal grid that fits a width, Markdown and CSV (full text in the last two)."""

from __future__ import annotations

import csv
import io
import textwrap

from rag.exports.terminal import readable
from rag.reading.snippets import snippet
from rag.tasks.comparison import COLUMNS, HEADINGS, NOT_STATED, Cell, Row, Table

WIDTH = 100
FALLBACK_MARK = "[quoted] "  # LLM mode: the model's phrase failed the check, the abstract's sentence is shown
FALLBACK_LEGEND = "[quoted]: the model's phrase failed the check against its paper; the abstract's sentence is shown"
CELL_LINES = 5  # lines a cell may take in the terminal grid before it is trimmed with an ellipsis


def trim(text: str, limit: int) -> str:
    """The text cut at a word boundary to at most `limit` characters, "…" marking the cut (rag.reading.snippets,
    the one cut every snippet shares)."""
    return snippet(text, limit)


def _cell_text(c: Cell) -> str:
    if not c.stated:
        return NOT_STATED
    return (FALLBACK_MARK if c.source == "fallback" else "") + c.text


def _shown(text: str) -> str:
    """Text for the terminal grid: emphasis plain, TeX as Unicode (rag.exports.terminal), before any cut."""
    return readable(text)


def _wrap(text: str, width: int, lines: int = CELL_LINES) -> list[str]:
    out = textwrap.wrap(trim(text, width * lines), width, break_long_words=True) or [""]
    while len(out) > lines:  # wrapping wastes line ends: trim again until it fits
        text = trim(text, len(" ".join(out)) - width // 2)
        out = textwrap.wrap(text, width, break_long_words=True)
    return out


def _paper_label(n: int, r: Row) -> str:
    p = r.paper
    pub = " ".join(str(x) for x in (p.venue, p.year) if x)
    return f"[{n}] {_shown(p.title or p.paper_id)}{'*' if p.title_derived else ''}" + (f" ({pub})" if pub else "")


def render_text(table: Table, width: int = WIDTH) -> str:
    """The table as a grid at most `width` characters wide: a paper column and the four cell columns,
    each cell wrapped to CELL_LINES lines and trimmed with an ellipsis (the full text is in --json);
    a theme's title heads its rows; the references (id, title, file) follow."""
    if table.abstained:
        return table.message
    width = max(60, width)
    columns = table.shown_columns()  # a column no row states is left out: its width goes to the others
    n_cols = 1 + len(columns)
    inner = width - 3 * (n_cols - 1)
    cw = inner // (n_cols + 0.2)  # the paper column takes 1.2 shares
    widths = [int(inner - cw * len(columns))] + [int(cw)] * len(columns)
    rule = "─┼─".join("─" * w for w in widths)

    def line(cols: list[list[str]]) -> list[str]:
        height = max(len(c) for c in cols)
        return [" │ ".join((c[i] if i < len(c) else "").ljust(w) for c, w in zip(cols, widths)).rstrip()
                for i in range(height)]

    head = f"Compare: {table.topic}" if table.topic else "Compare: the chosen papers"
    out = [head + ("  (LLM phrases, each checked)" if table.mode == "llm" else ""), ""]
    out += line([["Paper"]] + [[HEADINGS[c]] for c in columns])
    theme = None
    for n, r in enumerate(table.rows, 1):
        if r.theme != theme and len(table.themes) > 1:
            theme = r.theme
            out += [rule.replace("┼", "─"), trim(f"Theme: {theme}", width)]
        out.append(rule)
        out += line([_wrap(_paper_label(n, r), widths[0])] + [_wrap(_shown(_cell_text(r.cell(c))), w)
                                                               for c, w in zip(columns, widths[1:])])
    if any(r.cell(c).source == "fallback" for r in table.rows for c in COLUMNS):
        out += ["", trim(FALLBACK_LEGEND, width)]
    out += ["", "References"]
    for n, r in enumerate(table.rows, 1):
        p = r.paper
        where = f" ({p.source}:{p.position})" if p.source else ""
        out.append(trim(f"[{n}] {p.paper_id}  {_shown(p.title or p.paper_id)}{'*' if p.title_derived else ''}{where}", width))
    if any(r.paper.title_derived for r in table.rows):
        out.append("* title derived from the abstract")
    if table.related:
        out += ["", "Related, not compared (near the topic, but less clearly on it than the papers compared)"]
        out += [trim(f"  - {_shown(h.paper.title)}", width) for h in table.related]
    return "\n".join(out)


def _md(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def to_markdown(table: Table) -> str:
    """One Markdown table (Theme, Paper, the four columns; full text, each cell ending with its row's [n]),
    then the references."""
    from rag.exports.documents import ref_line

    if table.abstained:
        return f"# Compare: {table.topic}\n\n{table.message}\n"
    title = f"# Compare: {table.topic}" if table.topic else "# Compare: the chosen papers"
    columns = table.shown_columns()
    exp = [title, "", "| Theme | Paper | " + " | ".join(HEADINGS[c] for c in columns) + " |",
           "|---|---|" + "---|" * len(columns)]
    for n, r in enumerate(table.rows, 1):
        p = r.paper
        pub = ", ".join(str(x) for x in (p.venue, p.year) if x)
        cells = []
        for c in columns:
            cell = r.cell(c)
            cells.append(_md(_cell_text(cell) + f" [{n}]") if cell.stated else NOT_STATED)
        exp.append(f"| {_md(r.theme)} | {_md(p.title or p.paper_id)}" + (f" ({_md(pub)})" if pub else "")
                   + f" [{n}] | " + " | ".join(cells) + " |")
    if any(r.cell(c).source == "fallback" for r in table.rows for c in COLUMNS):
        exp += ["", FALLBACK_LEGEND]
    exp += ["", "## References", ""] + [ref_line(n, r.paper) for n, r in enumerate(table.rows, 1)] + [""]
    if table.flags:
        exp += ["## Notes", ""] + [f"- {f}" for f in table.flags] + [""]
    return "\n".join(exp)


def to_csv(table: Table) -> str:
    """One line per paper: its record, theme and relevance, then per column the text shown and the
    sentence, role and relevance it rests on (empty when not stated)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["n", "paper_id", "title", "venue", "year", "theme", "score"]
    for c in COLUMNS:
        head += [c, f"{c}_sentence", f"{c}_role", f"{c}_score"]
    w.writerow(head)
    for n, r in enumerate(table.rows, 1):
        p = r.paper
        line = [n, p.paper_id, p.title, p.venue, p.year or "", r.theme, f"{r.score:.4f}"]
        for c in COLUMNS:
            cell = r.cell(c)
            line += [_cell_text(cell), cell.sentence, cell.role, f"{cell.score:.4f}" if cell.stated else ""]
        w.writerow(line)
    return buf.getvalue()
