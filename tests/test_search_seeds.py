"""The real offline embedder on the seeds: paraphrased questions find their abstract."""

from __future__ import annotations

from rag.library.retrieval import search
from seed_questions import QUESTIONS


def test_paraphrased_questions_find_their_abstract_first(seeds_library):
    misses = []
    for q, file_prefix, position in QUESTIONS:
        hits = search(seeds_library, q, k=5)
        top = hits[0].paper
        if not (top.source.startswith(file_prefix) and top.position == position):
            rank = next((i for i, h in enumerate(hits, 1)
                         if h.paper.source.startswith(file_prefix) and h.paper.position == position), None)
            misses.append((q, f"{top.source}:{top.position}", rank))
    # All in the top 5 and nearly all first.
    assert all(rank is not None for _, _, rank in misses), misses
    assert len(misses) <= 2, misses


def test_a_british_spelling_finds_by_its_words_the_papers_its_american_spelling_does(seeds_library):
    # BM25's stems: "regularisation" was "regularis", which no seed abstract writes (they write "regularization")
    for british, american in (("regularisation", "regularization"), ("optimisers", "optimizers"),
                              ("quantised training", "quantized training")):
        found = [pid for pid, _ in seeds_library.lexical.search(british, 10)]
        assert found and found == [pid for pid, _ in seeds_library.lexical.search(american, 10)], british
