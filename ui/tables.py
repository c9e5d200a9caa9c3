"""The comparison table in the UI: the chat's table (every cell a link to its sentence in its paper's card), the
cards with each cell's sentence marked, and the exports (Markdown, CSV, BibTeX). Pure presentation, no Gradio.

Clicking a cell follows an ordinary `#pc-…` link, so app.js's citation handler opens the card (unfolding an
earlier turn if need be) and flashes the sentence; the clicked sentence then stays marked (`pc-current`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.exports.documents import export_stem
from rag.tasks.compare_render import to_csv, to_markdown, trim
from rag.tasks.comparison import COLUMNS, HEADINGS, NOT_STATED

from ui import markup
from ui.identity import meta_line
from ui.render import Rendered, _abstained, _filters_note, _flags_md, _find_span, card_id, empty_panel, h, md, panel

@dataclass
class TableRendered(Rendered):
    """A rendered comparison table: what every answer has, and the table as CSV (a download of its own)."""

    csv: str = ""


CHAT_CELL = 140  # characters of a cell shown in the chat; the whole sentence is in the card and the exports


def sentence_id(turn: int, n: int, position: int) -> str:
    """The element id of sentence `position` of the paper in row n, in its card."""
    return f"{card_id(turn, n)}-s{position}"


def _marked_abstract(abstract: str, marks: list[tuple[int, str, str]], turn: int, n: int) -> str:
    """The abstract as escaped HTML with each (position, sentence, column) in a <mark> carrying its id and
    columns; a sentence that cannot be found is shown marked above it."""
    spans: dict[tuple[int, int], tuple[int, list[str]]] = {}
    alone: list[str] = []
    abstract = markup.prepare(abstract)  # LaTeX text commands and *emphasis* as formatting (ui.markup)
    for pos, sent, col in marks:
        sent = markup.prepare(sent)
        span = _find_span(abstract, sent)
        if span is None:
            alone.append(f'<p class="pc-evidence-alone"><mark class="pc-cellmark" id="{sentence_id(turn, n, pos)}">'
                         f"{markup.balance([h(sent)])[0]}</mark></p>")
            continue
        if span in spans:
            spans[span][1].append(col)
        elif not any(a < span[1] and span[0] < b for a, b in spans):
            spans[span] = (pos, [col])
    pieces, opens, at = [], [], 0
    for (a, b), (pos, cols) in sorted(spans.items()):
        label = " · ".join(HEADINGS[c] for c in cols)
        opens.append(f'<mark class="pc-cellmark" id="{sentence_id(turn, n, pos)}" title="{h(label)}">')
        pieces += [abstract[at:a], abstract[a:b]]
        at = b
    pieces.append(abstract[at:])
    shown = markup.balance([h(x) for x in pieces])  # odd pieces are the marked sentences
    out = "".join(f"{opens[i // 2]}{x}</mark>" if i % 2 else x for i, x in enumerate(shown))
    return "".join(alone) + f'<p class="pc-abstract">{out}</p>'


def _row_card(turn: int, n: int, row) -> str:
    p = row.paper
    marks = [(row.cell(c).position, row.cell(c).sentence, c) for c in COLUMNS if row.cell(c).stated]
    cols = ", ".join(f"{HEADINGS[c]}: {row.cell(c).role}" for c in COLUMNS if row.cell(c).stated) or "nothing stated"
    extra = f'<div class="pc-score">{h(row.theme)} · relevance {row.score:.2f} · {h(cols)}</div>'
    return (f'<article class="pc-card" id="{card_id(turn, n)}"><div class="pc-head"><span class="pc-n">{n}</span>'
            f'<span class="pc-title">{markup.html(p.title or p.paper_id)}</span></div>{meta_line(p)}{extra}'
            f"{_marked_abstract(p.abstract or '', marks, turn, n)}</article>")


def _chat_cell(turn: int, n: int, cell) -> str:
    if not cell.stated:
        return f"*{NOT_STATED}*"
    tip = f"{cell.role}, relevance {cell.score:.2f}" + (f" — {cell.note}" if cell.note else "")
    mark = " ⚠" if cell.source == "fallback" else ""
    return (f'<a class="pc-cell" href="#{sentence_id(turn, n, cell.position)}" title="{h(tip)}">'
            f"{markup.markdown(trim(cell.text, CHAT_CELL))}</a>{mark}")


def render_table(table, turn: int, filters=None) -> Rendered:
    """compare() result: the table in the chat (a table per theme), one card per row in the panel."""
    note = _filters_note(filters)
    title = f"# Compare: {table.topic}" if table.topic else "# Compare: the chosen papers"
    if table.abstained:
        return _abstained(table.message, table.nearest, title, note, table.flags, table.as_json(), filters=filters,
                          kind="comparison", subject=table.topic or "chosen papers")
    parts: list[str] = []
    theme = None
    columns = table.shown_columns()  # a column no row states (often Setting) is left out
    head = "| | Paper | " + " | ".join(HEADINGS[c] for c in columns) + " |\n|---|---|" + "---|" * len(columns)
    for n, row in enumerate(table.rows, 1):
        if row.theme != theme:
            theme = row.theme
            parts.append(f"\n\n**{md(theme)}**\n\n{head}" if len(table.themes) > 1 or n == 1 else "")
        p = row.paper
        pub = " ".join(str(x) for x in (p.venue, p.year) if x)
        paper = (f'<a class="pc-cite" href="#{card_id(turn, n)}">[{n}]</a> {md(trim(p.title or p.paper_id, 90))}'
                 + (f" ({md(pub)})" if pub else ""))
        parts.append(f"\n| {n} | {paper} | " + " | ".join(_chat_cell(turn, n, row.cell(c)) for c in columns) + " |")
    chat = "".join(parts).strip()
    if table.mode == "llm":
        chat += "\n\n<small>Cells are the model's phrases, each checked against its paper's sentence; ⚠ marks " \
                "a phrase that failed the check, replaced by the quoted sentence.</small>"
    chat += (f"\n\n<small>{md(note)}</small>" if note else "") + _flags_md(table.flags)
    cards = "".join(_row_card(turn, n, row) for n, row in enumerate(table.rows, 1))
    if table.related:
        from ui.render import card

        cards += ('<div class="pc-label">Related, not compared</div>'
                  + "".join(card(turn, None, x.paper, "", "related — not compared", "pc-nearest") for x in table.related))
    pnl = panel(f"Compare · {len(table.rows)} paper{'s' if len(table.rows) != 1 else ''}",
                cards or empty_panel("No papers to compare."))
    return TableRendered(chat, pnl, to_markdown(table), table.citations(), table.as_json(), kind="comparison",
                         subject=table.topic or "chosen papers", csv=to_csv(table))


# -- the chat's Compare mode -----------------------------------------------------------------------

def request_of(message: str, library) -> tuple[str, list[str] | None]:
    """(topic, chosen paper ids or None) from what was typed: "papers: ID, ID | topic" chooses papers, and so
    does a list of ids the library holds; anything else is a topic."""
    import re

    text = (message or "").strip()
    m = re.match(r"^papers?\s*:\s*(.*)$", text, re.IGNORECASE | re.DOTALL)
    if m:
        ids, _, topic = m.group(1).partition("|")
        return topic.strip(), [i for i in re.split(r"[,\s]+", ids) if i]
    tokens = [t for t in re.split(r"[,\s]+", text) if t]
    library.refresh()
    if len(tokens) > 1 and all(t in library.catalogue for t in tokens):
        return "", tokens
    return text, None


def run_compare(library, settings, message: str, filters, turn: int):
    """The Compare mode's turn: yields the streamed text, returns a TableRendered (via StopIteration)."""
    from rag.tasks.compare import compare

    from ui.streaming import stream_task

    topic, ids = request_of(message, library)
    if ids is not None:
        filters = filters.model_copy(update={"papers": ids})
    table = yield from stream_task(compare, dict(topic=topic, library=library, settings=settings, filters=filters),
                                   tokens=False)
    return render_table(table, turn, filters)


def write_csv(folder, turn: int, rendered) -> str | None:
    """paperchat-comparison-TOPIC.csv beside the turn's other exports, for a comparison table (None otherwise)."""
    text = getattr(rendered, "csv", "")
    if not text:
        return None
    path = folder / f"{export_stem(rendered.kind, rendered.subject or f'{turn:02d}')}.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)
