"""Abstract text as a reader should see it in the page (its markup read by rag.reading.markup): LaTeX text commands (\\textit{…}, \\emph{…}, {\\em …}, \\_ …) and Markdown
emphasis (*word*, **word**) become formatting, math between $…$ is left whole for KaTeX in the browser
(ui/app.js for HTML, the Chatbot's own latex_delimiters for the chat), and everything else is escaped.

    html(text)       escaped HTML with <em>/<strong>/<code>
    markdown(text)   escaped Markdown (for the Chatbot) with the same inline tags
    prepare(text) + balance(pieces)   the two steps, for callers that cut the text (highlighting)

Formatting travels as private control characters between prepare() and balance(), so that escaping
(ui.render.h / md) and cutting the text into pieces (a highlighted sentence) leave it alone; balance()
closes what a piece leaves open and reopens it in the next, so cut text never yields crossed tags.
"""

from __future__ import annotations

import re
from pathlib import Path

from rag.reading.markup import CLOSE as _CLOSE, KIND, MARKERS, MATH, OPEN as _OPEN, prepare  # noqa: F401 - re-exported
from ui.escape import h, md


def balance(pieces: list[str]) -> list[str]:
    """Markers to tags, each piece closed on its own: what a piece leaves open is closed at its end and
    reopened at the start of the next; a closing marker with nothing open is dropped."""
    stack: list[str] = []
    out = []
    for piece in pieces:
        buf = [f"<{k}>" for k in stack]
        for ch in _split(piece):
            if ch in _OPEN:
                stack.append(_OPEN[ch])
                buf.append(f"<{_OPEN[ch]}>")
            elif ch in _CLOSE:
                kind = _CLOSE[ch]
                if kind in stack:
                    # close down to it, then reopen what was inside (keeps tags nested)
                    i = len(stack) - 1 - stack[::-1].index(kind)
                    inner = stack[i + 1:]
                    buf += [f"</{k}>" for k in reversed(stack[i:])] + [f"<{k}>" for k in inner]
                    del stack[i]
            else:
                buf.append(ch)
        buf += [f"</{k}>" for k in reversed(stack)]
        out.append("".join(buf))
    return out


def _split(piece: str) -> list[str]:
    return [p for p in re.split(r"([\x01-\x06])", piece) if p]


def html(text: str) -> str:
    """Escaped HTML of abstract text, its formatting as tags, its math left for KaTeX."""
    return balance([h(prepare(text))])[0]


def markdown(text: str) -> str:
    """Escaped Markdown of abstract text (for the chat), formatting as inline tags, math left for KaTeX."""
    return balance([md(prepare(text))])[0]


def plain(text: str) -> str:
    """The text with its formatting markers dropped (a title in a table cell, a tooltip)."""
    return MARKERS.sub("", prepare(text))


def katex_assets() -> dict[str, str]:
    """Where Gradio's own frontend keeps KaTeX (its auto-render module and stylesheet), as paths under the
    app's /assets route; {} when this Gradio has none (math then shows as source, nothing breaks)."""
    import gradio

    assets = Path(gradio.__file__).resolve().parent / "templates" / "frontend" / "assets"
    js = sorted(assets.glob("auto-render-*.js"))
    css = sorted(assets.glob("katex-*.css"))
    return {"js": f"assets/{js[0].name}", "css": f"assets/{css[0].name}" if css else ""} if js else {}
