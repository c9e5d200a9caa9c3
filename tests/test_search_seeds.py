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
