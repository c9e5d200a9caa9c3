"""English stems for every lexical comparison (BM25, grades, topicality, theme names): Snowball's, after a
British -ise spelling is read as -ize.

Snowball stems "optimisation" to "optimis" and "optimization" to "optim", so a researcher who writes
"Bayesian optimisation" matched none of the library's "Bayesian optimization" papers by their words (5 core
papers of 14 on mlqa's area; docs/quality.md, "British spellings"). Both sides go through this one reading,
the query and the papers, so a word read wrongly as -ize ("supervised" -> "supervized") still meets itself.
"""

from __future__ import annotations

import re
from functools import lru_cache

# -isation, -ise, -ised, -ises, -ising, -iser(s) (regularisation, normalised, summarising, optimisers);
# -yse(d/s), -ysing, -yser(s) (analyse -> analyze). Five letters at least: "rise", "wise" keep theirs.
_ISE = re.compile(r"(?<=\w{2})is(ations?|e|es|ed|ing|ers?)$")
_YSE = re.compile(r"(?<=\w{2})ys(e|es|ed|ing|ers?)$")


def american(word: str) -> str:
    """The word (lower-case) with a British -ise / -yse ending written -ize / -yze."""
    w = word.lower()
    if len(w) < 5:
        return w
    return _YSE.sub(r"yz\1", _ISE.sub(r"iz\1", w))


_STEMMER = None


def _snowball():
    import Stemmer  # PyStemmer

    global _STEMMER
    _STEMMER = _STEMMER or Stemmer.Stemmer("english")
    return _STEMMER


@lru_cache(maxsize=200_000)
def stem_word(word: str) -> str:
    return _snowball().stemWord(american(word))


def stem_words(words: list[str]) -> list[str]:
    return _snowball().stemWords([american(w) for w in words])


_LETTERS = re.compile(r"[A-Za-z]{5,}")


def as_most_write(word: str, texts: list[str]) -> str:
    """The word in -ize spelling when more of these texts write its stem so than in -ise ("generalisation" ->
    "generalization"), its capitals kept; else as given. The stems meet either way, but the embedder reads the
    letters: the seeds' "generalisation theory" sat further from its paper (cosine 0.25 against 0.32) and found
    none. A word the texts write only -ise ("supervised", never "supervized") stays."""
    w = word.lower()
    a = american(w)
    if a == w:
        return word
    s = stem_word(w)
    ise = ize = 0
    for t in texts:
        forms = {x for x in map(str.lower, _LETTERS.findall(t)) if stem_word(x) == s}
        ise += any(american(x) != x for x in forms)
        ize += any(american(x) == x for x in forms)
    if ize <= ise:
        return word
    i = next(i for i, (x, y) in enumerate(zip(w, a)) if x != y)  # the one letter -ise / -yse differ by
    return word[:i] + (a[i].upper() if word[i].isupper() else a[i]) + word[i + 1:]


class Stems:
    """What bm25s takes for a stemmer (PyStemmer's two methods), reading words as stem_word does."""

    def stemWord(self, word: str) -> str:  # noqa: N802 (PyStemmer's name, which bm25s calls)
        return stem_word(word)

    def stemWords(self, words: list[str]) -> list[str]:  # noqa: N802
        return stem_words(words)
