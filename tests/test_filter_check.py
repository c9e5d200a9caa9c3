"""A filter no paper could pass says why (issue 31 item 5), rather than "nothing that passes the filter answers this"."""

from __future__ import annotations

import json

from rag.library.filter_check import why_nothing_passes
from rag.library.retrieval import Filters


def _library(fake_library, tmp_path, records):
    f = tmp_path / "papers.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    fake_library.ingest([f], progress=False)
    return fake_library


def test_impossible_filters_say_what_the_library_lacks(fake_library, tmp_path):
    lib = _library(fake_library, tmp_path, [
        {"title": "Sparse attention kernels", "abstract": "Sparse attention kernels cut memory traffic.",
         "venue": "ICLR", "year": 2024},
        {"title": "Gated graph colouring", "abstract": "We colour graphs with gated heuristics.", "venue": "ICML",
         "year": 2026}])
    assert why_nothing_passes(lib, Filters(author="Hinton")).startswith(
        "No paper in this library lists its authors, so none can pass the author filter “Hinton”")
    assert why_nothing_passes(lib, Filters(year_from=2010, year_to=2012)) == \
        "This library's papers are from 2024–2026: none from 2010–2012."
    assert why_nothing_passes(lib, Filters(venue="NeurIPS")) == "No paper in this library is from NeurIPS."
    assert "together" in why_nothing_passes(lib, Filters(venue="ICLR", year_from=2026))
    # a filter some paper passes: nothing to say
    assert why_nothing_passes(lib, Filters(venue="ICLR")) == "" and why_nothing_passes(lib, Filters()) == ""


def test_an_author_no_paper_lists_is_named(fake_library, tmp_path):
    lib = _library(fake_library, tmp_path, [
        {"title": "Deep nets", "abstract": "Deep nets learn features.", "authors": ["Geoffrey E. Hinton"]}])
    assert why_nothing_passes(lib, Filters(author="Hinton")) == ""
    assert why_nothing_passes(lib, Filters(author="LeCun")) == "No paper in this library has an author named “LeCun”."
