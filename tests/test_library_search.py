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


def test_after_its_papers_are_removed_a_query_lists_no_unrelated_papers(seeds_library, tmp_path):
    """Issue 31: the cut-off is relative to the candidates, so with a query's real matches removed the noise left
    stood out from the noise ("optimal transport" then listed 11 optimisation papers). It is recomputed on what
    is left, and nothing that merely stands out from noise is a match."""
    import shutil

    from rag.library import Library

    home = tmp_path / "home"
    shutil.copytree(seeds_library.settings.home, home)
    lib = Library(seeds_library.settings.model_copy(update={"home": home}))
    before = library_search(lib, "optimal transport")
    assert len(before.hits) >= 2 and "transport" in before.hits[0].paper.abstract.lower()
    while (found := library_search(lib, "optimal transport").hits) and "transport" in found[0].paper.abstract.lower():
        lib.remove([found[0].paper.paper_id])
    after = library_search(lib, "optimal transport")
    assert after.hits == [] and after.note == "No paper matches “optimal transport”.", \
        [h.paper.title for h in after.hits]
    # another query's matches are untouched by the removals
    assert library_search(lib, "state space models").hits[0].paper.title.startswith("Selective State Space Models")
