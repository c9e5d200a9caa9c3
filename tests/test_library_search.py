"""The Library tab's search lists the papers above a relevance cut-off and says how many (issue 17, item 2)."""

from __future__ import annotations

from rag.library.retrieval import CUT_ABSOLUTE, Filters, library_search, search


def test_a_precise_query_lists_few_papers_and_says_how_many(seeds_library):
    m = library_search(seeds_library, "manifold-constrained hyper-connections for the residual stream")
    assert m.hits[0].paper.title.startswith("Manifold-Constrained Hyper-Connections (mHC)")
    assert 1 <= len(m.hits) < 10 and m.below > 0
    assert all(h.score >= m.cutoff for h in m.hits[1:]) and m.cutoff >= CUT_ABSOLUTE
    assert m.note.startswith(f"{len(m.hits)} paper") and f"{m.below} weaker match" in m.note
    # what was cut is what plain search ranks below the cut-off
    plain = search(seeds_library, "manifold-constrained hyper-connections for the residual stream", 50)
    assert [h.paper.paper_id for h in plain[: len(m.hits)]] == [h.paper.paper_id for h in m.hits]
    assert all(h.score < m.cutoff for h in plain[len(m.hits):])


def test_a_broad_query_lists_more_and_no_match_says_so(seeds_library):
    broad = library_search(seeds_library, "large language models")
    narrow = library_search(seeds_library, "manifold-constrained hyper-connections for the residual stream")
    assert len(broad.hits) > len(narrow.hits)
    none = library_search(seeds_library, "anything", Filters(venue="NoSuchVenue"))
    assert none.hits == [] and none.note == "No paper matches “anything”."
    # z-scores always find a paper standing out; one far from the query is not a match
    far = library_search(seeds_library, "quokka census")
    assert far.hits == [] and far.note == "No paper matches “quokka census”." and far.below > 0
