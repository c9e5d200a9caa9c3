"""Snippets: text cut where a reader expects, at a word boundary with "…", never inside a `$…$` formula.

The one cut for every place a piece of an abstract is shown short (`paperchat search`, the map's
cards, the UI's labels and cards), so none of them shows "…improves needle" or "…many theore".
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
_SPACE = re.compile(r"\s+")
_DOLLAR = re.compile(r"(?<!\\)\$")
_TRAILING = " \t,;:([{-–—/\"'“‘"


def snippet(text: str, limit: int = 200) -> str:
    """`text` (whitespace folded) in at most `limit` characters: whole, or cut after its last whole word
    that fits, trailing punctuation dropped, with "…" (counted in the limit). A cut that would leave a
    formula open ends before the formula. Only a first word longer than the limit is cut inside it."""
    text = _SPACE.sub(" ", text or "").strip()
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[:max(limit, 0)]
    room = limit - len(ELLIPSIS)
    head = text[: room + 1]  # one more: a word that ends exactly at the limit is whole
    cut = head.rfind(" ")
    if cut <= 0:
        return text[:room] + ELLIPSIS
    kept = text[:cut]
    # An odd number of unescaped $ means a formula is open: end before it (at a word boundary).
    while len(_DOLLAR.findall(kept)) % 2:
        opened = [m.start() for m in _DOLLAR.finditer(kept)][-1]
        cut = kept.rfind(" ", 0, opened + 1)
        if cut <= 0:
            return text[:room] + ELLIPSIS  # one formula longer than the limit: nothing else to show
        kept = text[:cut]
    return (kept.rstrip(_TRAILING) or kept) + ELLIPSIS
