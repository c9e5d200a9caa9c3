"""Derived titles under better rules reach existing libraries (issue 17, item 6): re-derived on open or at the
next ingest, as metadata only, nothing re-embedded."""

from __future__ import annotations

import numpy as np

from conftest import SEEDS
from rag.library.catalogue import paper_from_meta
from rag.library.library import Library
from rag.loaders.titles import TITLES_VERSION


def _age(lib: Library) -> dict[str, str]:
    """Make the library look built under older title rules: every derived title "Old …" (with the content
    hash an ingest of that time stored), the version before. Returns the current titles."""
    lib.refresh()
    now = {pid: m["title"] for pid, m in lib.catalogue.items() if m.get("title_derived")}
    got = lib.collections.papers.get(ids=list(now), include=["documents", "metadatas"])
    metas = {}
    for pid, doc, m in zip(got["ids"], got["documents"], got["metadatas"]):
        old = paper_from_meta(pid, m, doc).model_copy(update={"title": "Old " + m["title"]})
        metas[pid] = {**m, "title": old.title, "hash": old.content_hash}
    lib.ingestor.update_metas(metas)
    lib.collections.titles = TITLES_VERSION - 1
    lib.records.set_generation("aged")
    return now


def _chunk_ids(lib: Library) -> list[str]:
    return sorted(lib.collections.chunks.get(include=[])["ids"])


def test_an_existing_library_picks_up_better_titles_on_open_without_reembedding(fake_settings):
    lib = Library(fake_settings)
    lib.ingest([SEEDS], progress=False)
    now = _age(lib)
    chunks = _chunk_ids(lib)
    fresh = Library(fake_settings)  # the open re-derives
    assert fresh.collections.titles == TITLES_VERSION
    fresh.refresh()
    assert {pid: fresh.catalogue[pid]["title"] for pid in now} == now
    assert _chunk_ids(fresh) == chunks
    assert "PowerFlow: Reformulating unsupervised fine-tuning as a distribution matching problem" in now.values()
    # The stored hashes are what an ingest computes: the seeds are unchanged, nothing replaced.
    r = fresh.ingest([SEEDS], progress=False)
    assert (r.added, r.updated, r.unchanged) == (0, 0, 76)


def test_an_ingest_rewrites_only_the_metadata_of_records_whose_derived_title_changed(fake_settings, monkeypatch):
    lib = Library(fake_settings)
    lib.ingest([SEEDS], progress=False)
    now = _age(lib)
    monkeypatch.setattr("rag.library.library.retitle_if_stale", lambda lib: 0)  # the open could not (a writer was busy)
    again = Library(fake_settings)
    again.refresh()
    assert all(again.catalogue[pid]["title"].startswith("Old ") for pid in now)
    vectors = again.collections.chunks.get(ids=_chunk_ids(again)[:20], include=["embeddings"])["embeddings"]
    r = again.ingest([SEEDS], progress=False)
    assert (r.added, r.updated, r.unchanged) == (0, 0, 76)  # not "updated": nothing re-embedded
    again.refresh()
    assert {pid: again.catalogue[pid]["title"] for pid in now} == now
    after = again.collections.chunks.get(ids=_chunk_ids(again)[:20], include=["embeddings"])["embeddings"]
    assert np.array_equal(np.array(vectors), np.array(after))
