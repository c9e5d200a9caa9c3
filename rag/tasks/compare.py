"""Compare papers: a literature table, one row per paper, its problem, approach, finding and setting, every cell cited.

The rows are the papers a summary of the topic would be about -- those whose own contribution is on
the topic (rag.tasks.topicality), at most k, chosen and grouped into themes as summaries are
(rag.tasks.summarise.group_into_themes); or, with `filters.papers`, exactly the chosen papers. Each
cell is the paper's own sentence of the column's role most relevant to the topic (rag.tasks.compare_cells),
or `not stated`. In LLM mode one model call writes every cell as a short phrase from the numbered
sources, and each phrase is checked against its paper's sentences (rag.tasks.compare_llm).

    comparison.py       the Table / Row / Cell records and their JSON
    compare_cells.py    which sentence fills which column
    compare_llm.py      the LLM writer and its check
    compare_render.py   the terminal table, Markdown and CSV
"""

from __future__ import annotations

from collections.abc import Callable

from rag.errors import UserError
from rag.library.library import Library
from rag.records import Hit
from rag.library.retrieval import Filters, search
from rag.settings import Settings, get_settings
from rag.tasks.compare_cells import column_probabilities, pick_cells, read_alone, shorten
from rag.tasks.comparison import MAX_ROWS, Row, Table
from rag.tasks.summarise import NO_PAPERS_TEXT, group_into_themes, read_as
from rag.tasks.area_scorer import on_topic
from rag.tasks.themes import MAX_PAPERS, depth, paper_text
from rag.tasks.topicality import Reading, read

__all__ = ["compare", "Table", "Row"]


def compare(topic: str, library: Library, settings: Settings | None = None, filters: Filters | None = None,
            k: int = MAX_PAPERS, model=None, on_token: Callable[[str], None] | None = None) -> Table:
    """The comparison table of the library's papers on `topic` (at most k rows), or of the papers
    `filters.papers` names (all of them, in that order when there is no topic). `model` overrides the
    configured chat model (tests pass fakes). Raises UserError for an empty library, an unknown paper id
    or neither a topic nor papers; a topic the library does not cover gives an abstained Table."""
    settings = settings or get_settings()
    topic = asked = (topic or "").strip()
    filters = filters or Filters()
    use_llm = model is not None or settings.llm == "openai"
    mode = "llm" if use_llm else "extractive"
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_ROWS:
        raise UserError(f"k (how many papers at most) must be a whole number from 1 to {MAX_ROWS}; got {k!r}")
    if len(library) == 0:
        raise UserError(f"library {library.name!r} is empty: add abstracts first (`paperchat ingest FILE`)")
    emb = library.text_embedder
    chosen = filters.papers is not None
    if chosen:
        readings, hits = _chosen(topic, library, filters.papers, emb)
        related: list[Hit] = []
    elif not topic:
        raise UserError("name a topic to compare papers on, or choose the papers (--papers ID,ID,...)")
    else:
        topic = read_as(topic, library, filters)  # "GANs": the rows of "generative adversarial networks"
        hits = search(library, topic, depth(k), filters)
        readings, near = on_topic(topic, read(topic, hits, emb), emb)
        related = [r.hit for r in near]
        if not readings:
            return Table(topic=asked, mode=mode, abstained=True, nearest=related or hits[:5],
                         message=f"{NO_PAPERS_TEXT[:-1]} (“{asked}”){_scope(filters)}"
                                 + (": the nearest papers touch it only in passing." if near else "."))
    themes = group_into_themes(topic, readings, hits, emb, max_papers=len(readings) if chosen else k,
                               by_score=not chosen or bool(topic))
    rows: list[Row] = []
    in_order: list[Reading] = []
    ordered = [r for t in themes for r in t.readings]
    probs = dict(zip((r.paper.paper_id for r in ordered), column_probabilities(ordered, topic, emb)))
    for t in themes:
        for r in t.readings:
            rows.append(Row(paper=r.paper, theme=t.title, score=r.score, cells=pick_cells(r, probs[r.paper.paper_id])))
            in_order.append(r)
    cells = [c for row in rows for c in row.cells.values()]
    own = {r.paper.paper_id: paper_text(r.paper) for r in in_order}
    shorten(cells, [topic or own[c.paper_id] for c in cells], emb)
    table = Table(topic=asked, rows=rows, themes=[t.title for t in themes], mode=mode, related=related)
    if use_llm:
        from rag.tasks.compare_llm import write_cells

        if model is None:
            from rag.tasks.llm import make_chat_model

            model = make_chat_model(settings)
        write_cells(table, in_order, settings, model, emb)
    if on_token:
        from rag.tasks.compare_render import to_markdown

        on_token(to_markdown(table))
    return table


def _chosen(topic: str, library: Library, ids: list[str], emb) -> tuple[list[Reading], list[Hit]]:
    """The chosen papers read for the topic, or (no topic) each for itself: a sentence's relevance is
    then its closeness to its own paper, so each cell holds the sentence most central to the paper."""
    ids = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    if not ids:
        raise UserError("--papers names no paper: give ids as `paperchat papers --json` lists them")
    found = library.get_papers(ids)
    if unknown := [i for i in ids if i not in found]:
        raise UserError(f"no paper with id {', '.join(map(repr, unknown[:5]))} in this library "
                        f"(`paperchat papers --json` lists the ids)")
    hits = [Hit(paper=found[i], score=0.0, text="") for i in ids]
    if topic:
        return read(topic, hits, emb), hits
    return read_alone(hits, emb), hits


def _scope(filters: Filters) -> str:
    return " under these filters" if filters else ""
