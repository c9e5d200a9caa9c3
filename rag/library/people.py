"""Authors named as a person would name them: name words, the match rule, and an index of every author's words.

A query names an author when every word of it is a word of one author's name, whole or as an initial
(either way: "G. Hinton" finds "Geoffrey E. Hinton" and "Geoffrey Hinton" finds "G. Hinton"), with at
least one word whole ("Hinton" does not find "H. Smith"; "Li" finds "Li Wei" but not "Lin" or "Liang").

`PeopleIndex` holds every author name of a catalogue (in the facets' row order) as words, inverted: word ->
the names holding it, the words sorted, so the names holding a word that begins with a letter are one
slice. A query is then a few array operations (at 87k papers, "Li" names 7,000 papers; comparing them name
by name cost 0.6 s a query).
"""

from __future__ import annotations

import bisect
import json
import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

_WORD = re.compile(r"[^\W_]+")
_NAME, _PAPER = "\x1f", "\x1e"  # separators of names and of papers in the index's one text
_TOKEN = re.compile(r"[^\W_]+|[\x1e\x1f]")


def name_words(name: str) -> list[str]:
    """A person's name as comparable words: case, accents and punctuation aside ("Hintön, G.E." ->
    ["hinton", "g", "e"])."""
    plain = name.casefold()
    if not plain.isascii():  # most names are ASCII: they skip the decomposition
        plain = "".join(c for c in unicodedata.normalize("NFKD", plain) if not unicodedata.combining(c))
    return _WORD.findall(plain)


def names_match(query: list[str], name: list[str]) -> bool:
    """Every query word stands for a different word of the name, whole or as its initial (either way),
    and one longer than an initial stands whole ("Hinton" is not "H. Smith")."""
    free, whole = list(name), False
    for q in sorted(query, key=len, reverse=True):  # whole words claim their match before initials do
        k = next((i for i, w in enumerate(free) if w == q), None)
        if k is not None:
            whole = whole or len(q) > 1
        else:
            k = next((i for i, w in enumerate(free) if (len(q) == 1 and w.startswith(q))
                      or (len(w) == 1 and q.startswith(w))), None)
        if k is None:
            return False
        free.pop(k)
    return whole


def authors_of(meta: dict) -> list[str]:
    """A catalogue record's author names (stored as JSON text)."""
    try:
        got = json.loads(meta.get("authors") or "[]")
    except (TypeError, ValueError):
        return []
    return [a for a in got if isinstance(a, str)] if isinstance(got, list) else []


class PeopleIndex:
    """Every author name of a list of papers, by its words. Names are numbered in paper order; `row` gives
    each name's paper and `first` each paper's first name, so name n is author n - first[row[n]] of it.

    Built from the authors as the catalogue stores them (JSON text, one per paper) in a few passes over
    one text of all names: at 87k papers (480k names), reading each name on its own cost seconds."""

    def __init__(self, authors_json: Sequence[str]):
        parts, decoded = [], []
        for raw in authors_json:
            raw = raw or "[]"
            # Most stored lists are as json.dumps writes ASCII names (["A B", "C D"]): their names are the
            # text between '", "'. The rest (accents are escaped, \u00f6) are decoded, and folded below.
            if raw.isascii() and "\\" not in raw and raw.startswith('["') and raw.endswith('"]') and '","' not in raw:
                parts.append(raw[2:-2].replace('", "', _NAME))
            else:
                decoded.append(len(parts))
                parts.append(_NAME.join(authors_of({"authors": raw})))
        if decoded:  # name_words' folding (accents off), on all decoded lists at once
            plain = unicodedata.normalize("NFKD", _PAPER.join(parts[i] for i in decoded).casefold())
            plain = plain.translate({ord(c): None for c in set(plain) if unicodedata.combining(c)})
            for i, folded in zip(decoded, plain.split(_PAPER)):
                parts[i] = folded
        # Then the words and separators of all names, in order. Each separator starts a new name (a paper's,
        # a new paper too): a word's name is the number of separators before it.
        text = _PAPER.join(parts).casefold()
        tokens = _TOKEN.findall(text)
        self.vocab = sorted(set(tokens) - {_NAME, _PAPER})
        code = {w: i for i, w in enumerate(self.vocab)}
        code[_NAME], code[_PAPER] = -1, -2
        codes = np.fromiter(map(code.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        del code[_NAME], code[_PAPER]
        is_word = codes >= 0
        name_of = np.cumsum(~is_word)  # the name each token belongs to (a separator: the name it opens)
        opens_paper = name_of[codes == -2]
        row = np.zeros(int(name_of[-1]) + 1 if len(tokens) else 1, dtype=np.int32)
        row[opens_paper] = 1
        self.row = np.cumsum(row, dtype=np.int32)  # the paper of each name
        self.first = np.concatenate([[0], opens_paper]).astype(np.int32)  # each paper's first name
        ranks = codes[is_word]
        order = np.argsort(ranks)  # (the names of one word need no order: they become a mask)
        self.postings = name_of[is_word][order].astype(np.int32)  # names, grouped by word, words in vocab order
        self.offsets = np.concatenate([[0], np.cumsum(np.bincount(ranks, minlength=len(self.vocab)))])
        self.code = code

    @classmethod
    def of_lists(cls, authors: Sequence[list[str]]) -> PeopleIndex:
        return cls([json.dumps(a) for a in authors])

    def _whole(self, word: str) -> np.ndarray:
        i = self.code.get(word)
        return self.postings[self.offsets[i]:self.offsets[i + 1]] if i is not None else self.postings[:0]

    def _starting(self, letter: str) -> np.ndarray:
        """Names with a word that begins with `letter` (a name may appear more than once)."""
        lo = bisect.bisect_left(self.vocab, letter)
        hi = bisect.bisect_left(self.vocab, letter[:-1] + chr(ord(letter[-1]) + 1))
        return self.postings[self.offsets[lo]:self.offsets[hi]]

    def _name(self, n: int, names_of: Callable[[int], list[str]]) -> str:
        row = int(self.row[n])
        names, k = names_of(row), n - int(self.first[row])
        return names[k] if k < len(names) else ""  # (a stored list json.dumps did not write: no match)

    def rows(self, query: list[str], names_of: Callable[[int], list[str]]) -> np.ndarray:
        """The papers (rows, ascending) with an author `query` (name_words) names; `names_of(row)` gives a
        paper's author names, read only when the query's words could claim the same word of a name."""
        long = [w for w in query if len(w) > 1]
        if not long:
            return np.zeros(0, dtype=np.int32)
        hit = np.zeros(len(self.row), dtype=bool)
        for w in long:  # one word at least stands whole
            hit[self._whole(w)] = True
        for w in query:  # and each word has a word of the name to stand for: itself, or an initial either way
            allowed = np.zeros(len(self.row), dtype=bool)
            if len(w) == 1:
                allowed[self._starting(w)] = True
            else:
                allowed[self._whole(w)] = True
                allowed[self._whole(w[0])] = True
            hit &= allowed
        names = np.flatnonzero(hit)
        if len({w[0] for w in query}) < len(query):
            # Two query words could stand for one word of a name ("Li Li", "L. Li"): compare name by name.
            keep = [n for n in names.tolist() if names_match(query, name_words(self._name(n, names_of)))]
            names = np.asarray(keep, dtype=np.int64)
        # With words of different initials, each word of a name serves at most one of them: no comparison needed.
        return np.unique(self.row[names])
