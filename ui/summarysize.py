"""A summary's size in the Chat tab (issue 33 item 3): the "Papers" control, as `summarise --k`, and a
"Show all N papers" button after a summary whose area holds more papers than it covers."""

from __future__ import annotations

import gradio as gr

from rag.tasks.themes import MAX_PAPERS

MAX_K = 100  # the most papers the control asks a summary for (as the CLI caps compare's --k)
SUMMARISE = "Summarise an area"  # ui.chattab's mode name (it imports this module)


def papers_control() -> gr.Number:
    """The "Papers" control, in the filter row, shown in the Summarise mode only."""
    return gr.Number(MAX_PAPERS, label="Papers", minimum=1, maximum=MAX_K, precision=0, step=1, scale=1,
                     min_width=100, elem_id="pc-k", visible=False)


def show_all_control() -> gr.Button:
    """"Show all N papers", beside the send button, hidden until a summary leaves papers out."""
    return gr.Button("Show all", visible=False, variant="secondary", scale=0, min_width=200, elem_id="pc-show-all")


def papers_k(value) -> int:
    """The control's value as a summary's k: a whole number in 1..MAX_K; empty or unreadable: MAX_PAPERS."""
    try:
        return min(MAX_K, max(1, int(value))) if value not in (None, "") else MAX_PAPERS
    except (TypeError, ValueError):
        return MAX_PAPERS


def every_paper(topic: str, data: dict) -> dict | None:
    """What "Show all" asks for after this summary or list of an area's papers (its JSON): its topic and every
    paper the area holds (those cited and `more`); None when it cited them all."""
    more = int(data.get("more") or 0)
    return {"topic": topic, "n": min(MAX_K, len(data.get("citations", [])) + more)} if more else None


def more_line(shown: int, more: int, papers_control: bool = True) -> str:
    """What the chat says under a summary (or Ask's list of an area's papers, where the Papers control is not
    shown) that leaves `more` papers out: how to see them, and past MAX_K (the most a summary covers) how many
    "Show all" will summarise rather than "all"."""
    n = shown + more
    papers = f"{more} more paper{'' if more == 1 else 's'} on this area"
    if n <= MAX_K:
        return f"{papers}: “Show all {n} papers” summarises them all" + (f" (or set Papers to {n})." if papers_control
                                                                          else ".")
    return f"{papers}: “Show all {MAX_K} papers” summarises the {MAX_K} nearest, the most a summary covers."


def show_all_button(state: dict | None):
    every = (state or {}).get("all")
    return gr.Button(f"Show all {every['n']} papers", visible=True) if every else gr.Button(visible=False)


def on_show_all(state: dict | None):
    """The last summary asked again with every paper: its topic in the box, the Summarise mode, Papers at N."""
    every = (state or {}).get("all")
    if not every:
        return gr.skip(), gr.skip(), gr.skip()
    return every["topic"], SUMMARISE, gr.Number(value=every["n"], visible=True)
