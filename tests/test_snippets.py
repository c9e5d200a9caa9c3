"""Snippets are cut where a reader expects (issue 17, item 3): at a word boundary, with "…", never mid-formula."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rag.reading.snippets import ELLIPSIS, snippet

_WORDS = st.sampled_from(["needle", "haystack", "theorems", "many", "a", "$O(n)$", "$\\Omega(\\varepsilon^{-d})$",
                          "long-context", "(BM25)", "results,", "retrieval;", "x", "Hölder", "\\$5", "—", "$x",
                          "y$", "supercalifragilisticexpialidocious" * 3])


@settings(max_examples=400, deadline=None)
@given(words=st.lists(_WORDS, max_size=80), spaces=st.lists(st.sampled_from([" ", "  ", "\n", "\t "]), min_size=80,
                                                             max_size=80), limit=st.integers(2, 250))
def test_a_snippet_is_a_whole_word_prefix_within_the_limit(words, spaces, limit):
    text = "".join(w + s for w, s in zip(words, spaces))
    folded = re.sub(r"\s+", " ", text).strip()
    out = snippet(text, limit)
    assert len(out) <= limit
    if len(folded) <= limit:
        assert out == folded
        return
    assert out.endswith(ELLIPSIS)
    kept = out[: -len(ELLIPSIS)]
    assert folded.startswith(kept)
    first_word = folded.split(" ")[0]
    if len(first_word) + len(ELLIPSIS) <= limit and "$" not in first_word:
        # cut between words, not inside one, and not leaving a formula open
        assert kept and not (kept[-1].isalnum() and folded[len(kept)].isalnum()), (kept, folded[len(kept):][:20])
        assert len(re.findall(r"(?<!\\)\$", kept)) % 2 == 0
        assert kept[-1] not in ",;:(", kept


def test_the_issues_examples_end_on_whole_words():
    text = "Our method improves needle-in-a-haystack retrieval on long contexts and proves many theorems about it."
    assert snippet(text, 50) == "Our method improves needle-in-a-haystack…"
    assert snippet(text, 86) == "Our method improves needle-in-a-haystack retrieval on long contexts and proves many…"
    assert snippet("A bound of $\\Omega(\\varepsilon^{-d_0/(4\\alpha)})$ holds for all", 30) == "A bound of…"
    assert snippet("short", 200) == "short"
