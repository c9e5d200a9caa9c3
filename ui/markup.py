"""Abstract text as a reader should see it: LaTeX text commands (\\textit{…}, \\emph{…}, {\\em …}, \\_ …) and Markdown
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

from ui.escape import h, md

# Private markers: opening and closing italic, bold, code. Stripped from input first.
_OPEN = {"\x01": "em", "\x03": "strong", "\x05": "code"}
_CLOSE = {"\x02": "em", "\x04": "strong", "\x06": "code"}
_MARKERS = re.compile(r"[\x01-\x06]")
KIND = {"em": ("\x01", "\x02"), "strong": ("\x03", "\x04"), "code": ("\x05", "\x06")}

# Math is never touched: $$…$$, $…$ (one line's worth), \(…\), \[…\].
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]{1,400}?\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
_COMMANDS = {"textit": "em", "emph": "em", "textsl": "em", "textbf": "strong", "texttt": "code",
             "textsc": "", "textrm": "", "textsf": "", "textnormal": "", "text": "", "mbox": "",
             "textup": "", "underline": ""}
# innermost first: the braces hold no braces; repeated until nothing changes (nesting)
_COMMAND = re.compile(r"\\(" + "|".join(sorted(_COMMANDS, key=len, reverse=True)) + r")\s*\{([^{}]*)\}")
# old-style declarations in a group, as BibTeX-era abstracts write them: {\em i.e.}, {\bf fast}, {\tt code}
_DECLARATIONS = {"em": "em", "it": "em", "itshape": "em", "sl": "em", "bf": "strong", "bfseries": "strong",
                 "tt": "code", "ttfamily": "code", "sc": "", "rm": "", "sf": "", "scshape": "", "normalfont": ""}
_DECLARATION = re.compile(r"\{\\(" + "|".join(sorted(_DECLARATIONS, key=len, reverse=True)) + r")(?![A-Za-z])\s*([^{}]*)\}")
# a bare group, as BibTeX keeps capitals ({BERT}, {G}aussian): its braces go. Not a command's argument
# (\cite{key} stays as written), not a group holding a command ({\"o}) or an escaped brace (\{…\}), and
# not a set written outside math ({0,1}^n: a comma inside keeps the braces).
_GROUP = re.compile(r"(\\[A-Za-z]+\s*)?(?<!\\)\{([^{}\\,]*)\}")
_ESCAPED = re.compile(r"\\([_%&#{}])")
_BOLD = re.compile(r"(?<![\w*\\])\*\*(?=\S)([^*\n]{1,300}?)(?<=\S)\*\*(?![\w*])")
_ITALIC = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]{1,300}?)(?<=[^\s*\\])\*(?![\w*])")


def _text(part: str) -> str:
    """One stretch of text outside math."""
    for _ in range(6):
        new = _COMMAND.sub(lambda m: _wrap(_COMMANDS[m.group(1)], m.group(2)), part)
        new = _DECLARATION.sub(lambda m: _wrap(_DECLARATIONS[m.group(1)], m.group(2)), new)
        new = _GROUP.sub(lambda m: m.group(0) if m.group(1) else m.group(2), new)
        if new == part:
            break
        part = new
    part = _ESCAPED.sub(r"\1", part)
    part = part.replace("``", "“").replace("''", "”").replace("---", "—")
    part = re.sub(r"(?<=\d)--(?=\d)| -- ", lambda m: "–" if m.group(0) == "--" else " – ", part)
    part = _BOLD.sub(lambda m: _wrap("strong", m.group(1)), part)
    return _ITALIC.sub(lambda m: _wrap("em", m.group(1)), part)


def _wrap(kind: str, inner: str) -> str:
    if not kind:
        return inner
    a, b = KIND[kind]
    return a + inner + b


def prepare(text: str) -> str:
    """The text with its formatting as markers, math kept verbatim (escape it, then balance())."""
    text = _MARKERS.sub("", text or "")
    out, pos = [], 0
    for m in MATH.finditer(text):
        out.append(_text(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_text(text[pos:]))
    return "".join(out)


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
    return _MARKERS.sub("", prepare(text))


def katex_assets() -> dict[str, str]:
    """Where Gradio's own frontend keeps KaTeX (its auto-render module and stylesheet), as paths under the
    app's /assets route; {} when this Gradio has none (math then shows as source, nothing breaks)."""
    import gradio

    assets = Path(gradio.__file__).resolve().parent / "templates" / "frontend" / "assets"
    js = sorted(assets.glob("auto-render-*.js"))
    css = sorted(assets.glob("katex-*.css"))
    return {"js": f"assets/{js[0].name}", "css": f"assets/{css[0].name}" if css else ""} if js else {}
