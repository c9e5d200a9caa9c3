"""Sentence splitting for scientific abstracts (abbreviations, decimals and LaTeX kept whole)."""

from __future__ import annotations

import re

_ABBREV = {
    "e.g", "i.e", "et al", "etc", "vs", "fig", "figs", "eq", "eqs", "sec", "ref", "refs", "approx",
    "resp", "cf", "no", "dr", "mr", "ms", "prof", "al", "viz", "ca", "tab", "vol", "pp", "st",
}
# A candidate boundary: end punctuation, optional closing quote/bracket, whitespace, then an opener.
_WORD_END = re.compile(r"([A-Za-z][A-Za-z.]{0,30})\.$")  # the word before a full stop ("e.g", "al", "J")
# Letters in dots ("r.v", "i.i.d", "w.r.t", "a.k.a", "U.S"): all 24 in the mlqa abstracts run on after them.
_DOTTED = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,2}")
_LOOKBACK = 40
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9$\\*])")


def _protect_math(text: str) -> tuple[str, list[str]]:
    saved: list[str] = []

    def keep(m: re.Match) -> str:
        saved.append(m.group(0))
        return f"\x00{len(saved) - 1}\x00"

    return re.sub(r"\$[^$]{1,400}\$", keep, text), saved


def split_sentences(text: str) -> list[str]:
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return []
    masked, saved = _protect_math(text)
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(masked):
        # Only the last few characters decide (an abbreviation or an initial): looking at everything since
        # the last boundary made text with no boundary (". A" repeated) quadratic.
        before = masked[max(start, m.start() - _LOOKBACK) : m.start()].rstrip("\"')]")
        word = _WORD_END.search(before)
        if word and (word.group(1).lower().rstrip(".") in _ABBREV or len(word.group(1)) == 1
                     or _DOTTED.fullmatch(word.group(1))):
            continue  # "et al. Then", "e.g. Foo", "J. Smith", "an observable r.v. X"
        out.append(masked[start : m.start() + len(m.group(0).rstrip())].strip())
        start = m.end()
    out.append(masked[start:].strip())
    restore = lambda s: re.sub(r"\x00(\d+)\x00", lambda m: saved[int(m.group(1))], s)  # noqa: E731
    return [restore(s) for s in out if s]
