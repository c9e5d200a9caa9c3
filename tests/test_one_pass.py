"""One forward pass of the model per chunk: the chunk's vector and every sentence's come from it (issue 34).

Ingest hands the model the chunks and nothing else; tasks read each abstract sentence's vector pooled inside
its chunk (rag.library.embcache, a key kind of its own); a library built before that gets them from one chunk
pass per paper the first time a task reads it, its stored chunk vectors untouched."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import make_settings
from test_roles import MHC

LORA = ("Low-rank adaptation fine-tunes large language models by training two small adapter matrices per layer. "
        "We prove that LoRA converges to a global minimum when the adapters are initialised asymmetrically. "
        "Experiments on GLUE show the asymmetric start matches full fine-tuning with a hundredth of the memory.")


def one_pass_settings(tmp_path):
    from rag.settings import ChunkSettings

    return make_settings(tmp_path / "home", embedder="minilm", chunk=ChunkSettings(one_pass=True))


@pytest.fixture(scope="module")
def minilm():
    from rag.embedders import get_embedder

    return get_embedder("minilm")


class Counting:
    """Every text the model is handed, by call (embed_array: each text alone; embed_chunks: chunks)."""

    def __init__(self, emb, monkeypatch):
        self.alone: list[str] = []
        self.chunks: list[str] = []
        real_a, real_c = emb.embed_array, emb.embed_chunks
        monkeypatch.setattr(emb, "embed_array", lambda texts: self.alone.extend(texts) or real_a(texts))
        monkeypatch.setattr(emb, "embed_chunks", lambda texts, spans: self.chunks.extend(texts) or real_c(texts, spans))


def _file(tmp_path):
    f = tmp_path / "two.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [
        {"id": "mhc", "title": "Manifold-Constrained Hyper-Connections", "abstract": MHC},
        {"id": "lora", "title": "Asymmetric LoRA", "abstract": LORA}]), encoding="utf-8")
    return f


def test_the_chunk_pass_gives_the_chunks_own_vectors_and_each_sentence_its_own(minilm):
    from rag.reading.sentences import split_sentences
    from rag.reading.windows import windows

    sents = split_sentences(MHC)
    (w,) = windows("Manifold-Constrained Hyper-Connections. ", sents, 2000, 256, minilm.count_tokens)
    vecs, (pooled,) = minilm.embed_chunks([w.text], [[(a, b) for _, a, b in w.spans]])
    assert np.array_equal(vecs, minilm.embed_array([w.text]))  # chunk vectors unchanged, bit for bit
    assert [t for t, _, _ in w.spans] == sents and all(w.text[a:b] == t for t, a, b in w.spans)
    alone = minilm.embed_array(sents)
    # read in its chunk, a sentence's vector keeps most of what it says alone, and takes some of the abstract's
    # topic (the last sentence of this one is about as near the second read alone as to itself read alone)
    cos = pooled @ alone.T
    assert np.diag(cos).min() > 0.55 and np.diag(cos).mean() > cos[~np.eye(len(sents), dtype=bool)].mean() + 0.15


def test_the_read_out_makes_each_sentence_vector_stand_in_for_the_sentence_alone(minilm):
    # the raw mean of a sentence's tokens in its chunk takes the abstract's topic; read out, each sentence's
    # vector is nearer its own stand-alone vector, and nearest it among the abstract's sentences
    from rag.reading.sentences import split_sentences
    from rag.reading.windows import windows

    sents = split_sentences(MHC)
    (w,) = windows("Manifold-Constrained Hyper-Connections. ", sents, 2000, 256, minilm.count_tokens)
    spans = [[(a, b) for _, a, b in w.spans]]
    _, (raw,) = minilm.embed_chunks([w.text], spans, readout=False)
    vecs, (read,) = minilm.embed_chunks([w.text], spans)
    assert np.array_equal(vecs, minilm.embed_array([w.text]))  # the chunk's own vector is untouched
    alone = minilm.embed_array(sents)
    before, after = np.diag(raw @ alone.T), np.diag(read @ alone.T)
    assert after.mean() > before.mean() + 0.05 and after.mean() > 0.8, (before.mean(), after.mean())
    assert list((read @ alone.T).argmax(axis=1)) == list(range(len(sents)))


def test_windows_serve_each_sentence_once_from_the_first_window_holding_it():
    from rag.reading.windows import windows

    sents = [f"Sentence number {i} says something of its own." for i in range(9)]
    ws = windows("A title. ", sents, max_chars=150)
    assert len(ws) > 2
    served = [t for w in ws for t, _, _ in w.spans]
    assert served == sents  # every sentence exactly once, in order
    for w in ws:
        assert all(w.text[a:b] == t for t, a, b in w.spans) and w.text.startswith("A title. ")


def test_ingest_hands_the_model_only_the_chunks_and_answers_embed_only_the_question(minilm, tmp_path, monkeypatch):
    from rag.library.library import Library
    from rag.reading.sentences import split_sentences
    from rag.tasks.ask import ask

    seen = Counting(minilm, monkeypatch)
    settings = one_pass_settings(tmp_path)
    lib = Library(settings, embedder=minilm)
    lib.ingest([_file(tmp_path)], progress=False)
    assert seen.alone == [] and len(seen.chunks) >= 2  # no sentence embedded on its own
    assert not any(s in seen.chunks for s in split_sentences(LORA))
    papers = lib.get_papers(["mhc", "lora"])
    assert len(papers["mhc"].roles) == len(split_sentences(MHC)) and papers["mhc"].roles[0] == "B"
    del seen.chunks[:]
    s = settings.model_copy(update={"ask": settings.ask.model_copy(update={"abstain_below": -1.0})})
    ans = ask("When does LoRA converge?", lib, settings=s)
    assert ans.citations and ans.citations[0].paper.paper_id == "lora"
    assert "converges" in ans.citations[0].evidence
    assert seen.chunks == [] and set(seen.alone) <= {"When does LoRA converge?"}, seen.alone


def test_a_library_without_pooled_sentence_vectors_gets_them_once_and_keeps_its_chunk_vectors(minilm, tmp_path, monkeypatch):
    import sqlite3

    from rag.library.library import Library
    from rag.tasks.ask import ask

    settings = one_pass_settings(tmp_path)
    lib = Library(settings, embedder=minilm)
    lib.ingest([_file(tmp_path)], progress=False)
    stored = lib.collections.chunks.get(include=["embeddings"])
    # An older library: its cache holds chunk vectors but no pooled sentence vectors.
    (path,) = (settings.home / "cache").glob("*.sqlite")
    from rag.library.embcache import EmbeddingCache, pooled_kind
    from rag.library.ingest import chunking_of
    from rag.reading.sentences import split_sentences

    db = sqlite3.connect(path)
    kind = pooled_kind(chunking_of(settings))
    gone = [EmbeddingCache.key(t, kind) for t in split_sentences(MHC) + split_sentences(LORA)]
    db.executemany("DELETE FROM vec WHERE key = ?", [(k,) for k in gone])
    db.commit()
    db.close()
    seen = Counting(minilm, monkeypatch)
    lib = Library(settings, embedder=minilm)
    s = settings.model_copy(update={"ask": settings.ask.model_copy(update={"abstain_below": -1.0})})
    first = ask("When does LoRA converge?", lib, settings=s)
    assert first.citations[0].paper.paper_id == "lora" and "converges" in first.citations[0].evidence
    assert len(seen.chunks) >= 1 and set(seen.alone) <= {"When does LoRA converge?"}  # a chunk pass, no sentence alone
    del seen.chunks[:]
    again = ask("When does LoRA converge?", Library(settings, embedder=minilm), settings=s)
    assert seen.chunks == [] and again.answer == first.answer  # kept in the cache: nothing recomputed
    after = lib.collections.chunks.get(include=["embeddings"])
    assert after["ids"] == stored["ids"] and np.array_equal(np.asarray(after["embeddings"]), np.asarray(stored["embeddings"]))
