"""Author scoping by the name index (rag.library.people): the papers it finds are exactly those a name-by-name reading finds."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from rag.library.catalogue import Facets
from rag.library.people import PeopleIndex, name_words, names_match

# Few letters, short words: many names share surnames, initials and prefixes ("li", "lin", "l"), the hard cases.
_word = st.text(alphabet="lianőgw", min_size=1, max_size=4)
_name = st.lists(_word, min_size=1, max_size=3).map(" ".join)
_papers = st.lists(st.lists(_name, max_size=4), min_size=1, max_size=30)
_query = st.lists(_word, min_size=1, max_size=3).map(lambda ws: " ".join(w if len(w) > 1 else w + "." for w in ws))


def by_reading(papers: list[list[str]], query: str) -> list[int]:
    q = name_words(query)
    return [row for row, names in enumerate(papers) if q and any(names_match(q, name_words(a)) for a in names)]


@settings(max_examples=300, deadline=None)
@given(_papers, _query)
def test_index_finds_exactly_what_reading_each_name_finds(papers, query):
    index = PeopleIndex.of_lists(papers)
    got = index.rows(name_words(query), lambda row: papers[row]).tolist()
    assert got == by_reading(papers, query)


def test_short_common_names_match_whole_words_only():
    papers = [["Li Wei", "Geoffrey E. Hinton"], ["Lin Zhang"], ["Xiaoyu Liang"], ["Y. Li"], ["Wei Li", "Li Li"],
              ["G. Hinton"], ["Ann Lee"]]
    cat = {f"p{i}": {"authors": json.dumps(a)} for i, a in enumerate(papers)}
    f = Facets(cat, list(cat))
    assert f.person_rows("Li").tolist() == [0, 3, 4]  # not Lin, not Liang
    assert f.person_rows("Y. Li").tolist() == [3]
    assert f.person_rows("Li Li").tolist() == [4]  # two words of one name, not "Li" twice over
    assert f.person_rows("L. Li").tolist() == [4]  # "Li Li" again: "L." and "Li" need two words
    assert f.person_rows("Hinton").tolist() == [0, 5]
    assert f.person_rows("Geoffrey Hinton").tolist() == [0, 5]  # "G. Hinton" is Geoffrey Hinton too
    assert f.person_rows("G.").tolist() == [] and f.person_rows("").tolist() == []


def test_name_index_is_built_once_per_library_version_and_kept_for_the_next_process(fake_settings, tmp_path,
                                                                                    monkeypatch):
    """A restarted server does not rebuild the index for an unchanged library, and finds the same papers."""
    from rag.library import people
    from rag.library.library import Library
    from rag.library.retrieval import Filters, search

    f = tmp_path / "list.jsonl"
    rows = [{"id": f"p{i}", "title": f"Language models {i}", "abstract": f"Language models and attention, study {i}.",
             "authors": [["Ashish Vaswani", "Li Wei"], ["Lin Li"], ["Xiaoyu Liang"]][i % 3]} for i in range(9)]
    f.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    lib = Library(fake_settings)
    lib.ingest([f], progress=False)
    first = {h.paper.paper_id for h in search(lib, "language models", 10, Filters(author="Li"))}
    assert first == {"p0", "p1", "p3", "p4", "p6", "p7"}
    built = []
    monkeypatch.setattr(people.PeopleIndex, "__init__", lambda self, authors: built.append(1))
    again = Library(fake_settings)  # another process, same library version: reads the saved index
    assert {h.paper.paper_id for h in search(again, "language models", 10, Filters(author="Li"))} == first
    assert built == []


def test_odd_stored_author_values_do_not_break_the_index():
    """Catalogues written by other versions or by hand: a number, an object, a bare string, broken JSON."""
    raws = ["5", '{"a": 1}', '"Li"', "not json", '["Li Wei", 3]', "[]", "", '["Li Li"]']
    f = Facets({f"p{i}": {"authors": r} for i, r in enumerate(raws)}, [f"p{i}" for i in range(len(raws))])
    assert f.person_rows("Li").tolist() == [4, 7] and f.person_rows("Li Li").tolist() == [7]
