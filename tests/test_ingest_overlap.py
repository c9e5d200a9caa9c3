"""Ingest embeds batch i+1 while it writes batch i (rag.library.ingest.OneAhead). A user sees nothing of it but
speed: the same counts and the same library as writing each batch right after embedding it, and an
embedder that fails mid-ingest still leaves whole papers only, the next run carrying on."""

from __future__ import annotations

import json

import pytest

from conftest import make_settings
from rag.embedders import HashingEmbeddings
from rag.embedders.endpoint import EndpointFailed
from rag.errors import LibraryError
from rag.library.ingest import BATCH
from rag.library.library import Library


def corpus(path, n: int, repeat_at: int | None = None):
    rows = [{"id": f"p{i}", "title": f"Paper {i} on topic {i % 17}",
             "abstract": f"We study problem {i} with method {i % 7}. Results improve benchmark {i % 11} a lot."}
            for i in range(n)]
    if repeat_at is not None:  # the same paper again, a batch later: kept once, reported as repeated
        rows.insert(repeat_at, dict(rows[3]))
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


class FailsOn(HashingEmbeddings):
    """Fails like an endpoint that stopped answering, once it is asked for a text holding `word`."""

    def __init__(self, word: str):
        self.word = word

    def embed_array(self, texts):
        if any(self.word in t for t in texts):
            raise EndpointFailed("the embedding endpoint at http://emb:8080/v1 failed (HTTP 503) after 6 attempts")
        return super().embed_array(texts)


@pytest.mark.parametrize("repeat_at", [None, BATCH + 5])
def test_overlapped_ingest_counts_and_stores_exactly_what_sequential_ingest_does(tmp_path, repeat_at):
    f = corpus(tmp_path / "papers.jsonl", 2 * BATCH + 40, repeat_at)
    got = {}
    for overlap in (True, False):
        lib = Library(make_settings(tmp_path / f"home-{overlap}", embedder="fake"))
        lib.ingestor.overlap = overlap
        r = lib.ingest([f], progress=False)
        got[overlap] = (r.added, r.updated, r.duplicates, len(lib), lib.collections.chunks.count(),
                        sorted((pid, m["hash"], m["position"], m["n_chunks"]) for pid, m in lib.catalogue.items()))
    assert got[True] == got[False]
    assert got[True][:4] == (2 * BATCH + 40, 0, 0 if repeat_at is None else 1, 2 * BATCH + 40)


def test_an_embedder_failing_one_batch_ahead_leaves_the_written_batch_whole(tmp_path):
    f = corpus(tmp_path / "papers.jsonl", 2 * BATCH + 40)
    settings = make_settings(tmp_path / "home", embedder="fake")
    # Paper BATCH + 10 is in the second batch: its embedding fails while the first batch is written.
    with pytest.raises(LibraryError, match=f"holds {BATCH} papers, each whole.*carries on"):
        Library(settings, embedder=FailsOn(f"problem {BATCH + 10} ")).ingest([f], progress=False)
    lib = Library(settings)
    assert len(lib) == BATCH
    assert lib.collections.chunks.count() == sum(int(m["n_chunks"]) for m in lib.catalogue.values())
    r = lib.ingest([f], progress=False)
    assert (r.added, r.unchanged, len(lib)) == (BATCH + 40, BATCH, 2 * BATCH + 40)


def test_ingest_holds_numpy_to_one_blas_thread_and_gives_the_cores_back_after(tmp_path):
    """numpy's BLAS runs beside the model's pass during ingest (the role classifier's products): held to one
    thread then, so its spinning workers leave the cores to the model; after ingest (the map's layout, a
    search) it has its threads back, even when ingest failed."""
    import threadpoolctl  # a dependency of ingest's

    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    seen: list[list[int]] = []

    class Watches(HashingEmbeddings):
        def embed_array(self, texts):
            seen.append(blas_threads())
            return super().embed_array(texts)

    f = corpus(tmp_path / "papers.jsonl", 40)
    Library(make_settings(tmp_path / "home", embedder="fake"), embedder=Watches()).ingest([f], progress=False)
    assert seen and all(t == [1] * len(before) for t in seen)
    assert blas_threads() == before
    with pytest.raises(LibraryError):
        Library(make_settings(tmp_path / "home2", embedder="fake"),
                embedder=FailsOn("problem 3 ")).ingest([f], progress=False)
    assert blas_threads() == before
