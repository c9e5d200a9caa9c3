"""An abstract's own markup, read: LaTeX text commands (\\textit{…}, \\emph{…}, {\\em …}, \\_ …), Markdown emphasis
(*word*, **word**), TeX quotes and dashes, and the math spans ($…$, \\(…\\)) that are left whole.

    prepare(text)   the text with its formatting as private markers (italic, bold, code), math verbatim
    plain(text)     the same with the markers dropped

The one reading of markup the UI (ui.markup: HTML and the chat's Markdown) and the terminal (rag.exports.terminal:
Unicode text) both render from, so that what counts as emphasis or math is decided in one place.
"""

from __future__ import annotations

import re

# Private markers: opening and closing italic, bold, code. Stripped from input first.
OPEN = {"\x01": "em", "\x03": "strong", "\x05": "code"}
CLOSE = {"\x02": "em", "\x04": "strong", "\x06": "code"}
MARKERS = re.compile(r"[\x01-\x06]")
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
    # TeX's en dash: a range (1--3), a pair of names (Bures--Wasserstein), a spaced dash
    part = re.sub(r"(?<=\w)--(?=\w)| -- ", lambda m: "–" if m.group(0) == "--" else " – ", part)
    part = _BOLD.sub(lambda m: _wrap("strong", m.group(1)), part)
    return _ITALIC.sub(lambda m: _wrap("em", m.group(1)), part)


def _wrap(kind: str, inner: str) -> str:
    if not kind:
        return inner
    a, b = KIND[kind]
    return a + inner + b


def prepare(text: str) -> str:
    """The text with its formatting as markers, math kept verbatim (escape it, then balance())."""
    text = MARKERS.sub("", text or "")
    out, pos = [], 0
    for m in MATH.finditer(text):
        out.append(_text(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_text(text[pos:]))
    return "".join(out)


def plain(text: str) -> str:
    """The text with its formatting markers dropped (a title in a table cell, a tooltip, a terminal line)."""
    return MARKERS.sub("", prepare(text))
