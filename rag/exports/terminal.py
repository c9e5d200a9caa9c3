"""Library text for a terminal: an abstract's markup read (rag.reading.markup) and shown plain, its TeX as Unicode.

    readable(r"We bound the error by $\\varepsilon^{\\frac{1}{d+2}}$ for *unregularized* OT")
    -> "We bound the error by ε^(1/(d+2)) for unregularized OT"

Symbols come from pylatexenc's latex2text (a kept table of some 1,500 macros: Greek, operators, \\mathcal, \\mathbb
…). It reads TeX's structure loosely, though: `\\frac{1}{d+2}` as "1/d+2", `x^{2k}` as "x^2k", `\\|x\\|` as "x".
So the structure is written first, by the rules below -- a fraction and a multi-symbol exponent or index get
their brackets, norms their bars -- and pylatexenc only names the symbols. Emphasis is shown plain: a terminal
grid measures its cells in characters, and escape codes would count.
"""

from __future__ import annotations

import functools
import re

from rag.reading.markup import MARKERS, MATH, prepare

# An atom needs no brackets: one letter or digit run, one macro (\alpha), or a macro with one argument.
_ATOM = re.compile(r"^\s*(?:[A-Za-z]|\d+(?:\.\d+)?|\\[A-Za-z]+(?:\s*\{[^{}]*\})?|\\[^A-Za-z])\s*$")
_FUNCTIONS = ("log", "ln", "exp", "sin", "cos", "tan", "max", "min", "sup", "inf", "det", "lim", "arg", "dim", "ker",
              "Pr")
_SIMPLE = {r"\|": "‖", r"\lVert": "‖", r"\rVert": "‖", r"\Vert": "‖", r"\lvert": "|", r"\rvert": "|", r"\vert": "|",
           r"\widetilde": r"\tilde", r"\widehat": r"\hat", r"\dfrac": r"\frac", r"\tfrac": r"\frac",
           r"\left": "", r"\right": "", r"\big": "", r"\Big": "", r"\bigg": "", r"\Bigg": "", r"\,": " ",
           r"\;": " ", r"\!": "", r"\quad": " "}


def _group(s: str, i: int) -> tuple[str, int] | None:
    """The balanced {…} group starting at s[i] (after spaces): (its inside, the index after it), or None."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s) or s[i] != "{":
        return None
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{" and (j == 0 or s[j - 1] != "\\"):
            depth += 1
        elif s[j] == "}" and s[j - 1] != "\\":
            depth -= 1
            if depth == 0:
                return s[i + 1:j], j + 1
    return None


def _bracket(part: str) -> str:
    part = _structure(part)
    return part if _ATOM.match(part) else f"({part.strip()})"


def _structure(tex: str) -> str:
    """TeX whose fractions, exponents and indices carry their grouping as brackets (still TeX for the symbols)."""
    out, i = [], 0
    while i < len(tex):
        if tex.startswith(r"\frac", i) and not tex[i + 5:i + 6].isalpha():
            a = _group(tex, i + 5)
            b = _group(tex, a[1]) if a else None
            if a and b:
                out.append(f"{_bracket(a[0])}/{_bracket(b[0])}")
                i = b[1]
                continue
        if tex[i] in "^_":
            g = _group(tex, i + 1)
            if g:
                out.append(tex[i] + "{" + _bracket(g[0]) + "}")
                i = g[1]
                continue
        out.append(tex[i])
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=1)
def _latex2text():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


def tex(span: str) -> str:
    """One math span ($…$, $$…$$, \\(…\\), \\[…\\]) as Unicode text."""
    inner = span.strip("$")
    if span.startswith(("\\(", "\\[")):
        inner = span[2:-2]
    for macro, repl in sorted(_SIMPLE.items(), key=lambda kv: -len(kv[0])):
        inner = re.sub(re.escape(macro) + (r"(?![A-Za-z])" if macro[-1].isalpha() else ""), lambda _: repl, inner)
    # a function name as a word with spaces around it ("n log n", not "nlog n"), none before its bracket: "log(x)"
    inner = re.sub(r"(?<=([\w}]))?\\(" + "|".join(_FUNCTIONS) + r")(?![A-Za-z])\s*(?=([A-Za-z0-9\\]))?",
                   lambda m: (" " if m.group(1) else "") + m.group(2) + (" " if m.group(3) else ""), inner)
    try:
        text = _latex2text().latex_to_text(_structure(inner))
    except Exception:  # noqa: BLE001 - TeX a parser cannot read is shown as written, never lost
        return span
    text = re.sub(r"\b(" + "|".join(_FUNCTIONS) + r") +(?=[(\[])", r"\1", re.sub(r"\s+", " ", text))
    # a macro pylatexenc does not know (an abstract's own \\eps) shows by its name rather than vanishing
    return text.strip() or re.sub(r"\\(?=[A-Za-z])", "", inner).strip() or span


def readable(text: str) -> str:
    """Library text for a terminal: emphasis and TeX text commands plain, math as Unicode, the rest as it was."""
    prepared = prepare(text or "")
    out, pos = [], 0
    for m in MATH.finditer(prepared):
        out.append(prepared[pos:m.start()])
        out.append(tex(m.group(0)))
        pos = m.end()
    out.append(prepared[pos:])
    return MARKERS.sub("", "".join(out))
