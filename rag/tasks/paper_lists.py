"""A question asking for the papers on an area ("Which papers study Mamba?", "What work exists on scaling
laws?": rag.reading.questions.papers_on) answered as a list: the papers a summary of the area covers, in its
themes, each quoted by its clearest contribution on the area (as the summary's overview quotes a theme's lead;
the list's own overview quotes none), cited. "Compare A and B" (questions.compared) is listed as "A and B".

Answered as a question about one paper, it quoted the best sentence of the best-retrieved paper and stopped:
on the seeds "What work exists on scaling laws?" cited one of the two scaling-law papers; on mlqa, asked so,
an area's answer cited a few of its core papers where its summary cites most (docs/quality.md, "Which papers
study X?"). The area scorer decides which papers, as it does for summaries and tables.
"""

from __future__ import annotations

import re

from rag.library.library import Library
from rag.library.retrieval import Filters
from rag.records import Answer
from rag.settings import Settings
from rag.tasks.summarise import summarise
from rag.tasks.themes import MAX_PAPERS

# The overview's opening line, "The library holds 5 papers on “X” in 2 themes: a (3 papers [1][2][3]) and
# b (2 papers [4][5])." (summary_writers.overview_lead): how the list divides.
_LEAD = re.compile(r"^The library holds .*?[\])]\.(?=\s|$)", re.DOTALL)


def more_paragraph(more_text: str) -> str:
    """The list's last paragraph when the area holds more papers than it lists (the UI puts its Show all line
    in its place: ui.render.render_answer)."""
    return f"({more_text}.)"


def list_answer(area: str, library: Library, settings: Settings, filters: Filters | None, model,
                base: dict, k: int = MAX_PAPERS) -> Answer | None:
    """The answer listing the area's papers, at most k, or None when the library has none on it (the question
    is then answered as any other). `area`, `more` and `more_text` say what it lists and how many more the
    area holds (the UI's "Show all" summarises them)."""
    res = summarise(area, library, settings=settings, filters=filters, model=model, k=k, overview_quotes=False)
    if res.abstained or not res.citations:
        return None
    lead = m.group(0).replace(" in 1 theme", "") if (m := _LEAD.match(res.summary)) else ""
    many = len(res.themes) > 1
    parts = [lead] + [f"{t.title}: {t.text}" if many else t.text for t in res.themes if t.text]
    if res.more:
        parts.append(more_paragraph(res.more_text))
    text = "\n\n".join(p for p in parts if p)
    return Answer(**base, answer=text, coverage="answered", citations=res.citations, flags=res.flags, area=area,
                  more=res.more, more_text=res.more_text)
