"""Weights per kind of sentence vector (issue 34): a library ingested in two passes (each sentence embedded
alone) and a one-pass library (each sentence pooled in its chunk's pass, then read out to stand in for the
sentence alone: rag.embedders.readout) read with the same weights -- the answer scorer and the area
scorer (rag.reading.vector_kind); the role GRUs have weights for each kind. A researcher sees the same roles and
the same quoted sentence either way."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import make_settings
from test_one_pass import LORA
from test_roles import MHC


@pytest.fixture(scope="module")
def minilm():
    from rag.embedders import get_embedder

    return get_embedder("minilm")


def _library(tmp_path, minilm, one_pass: bool):
    from rag.library.library import Library
    from rag.settings import ChunkSettings

    f = tmp_path / "two.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [
        {"id": "mhc", "title": "Manifold-Constrained Hyper-Connections", "abstract": MHC},
        {"id": "lora", "title": "Asymmetric LoRA", "abstract": LORA}]), encoding="utf-8")
    settings = make_settings(tmp_path / ("one" if one_pass else "two"), embedder="minilm",
                             chunk=ChunkSettings(one_pass=one_pass))
    lib = Library(settings, embedder=minilm)
    lib.ingest([f], progress=False)
    return lib, settings


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def test_the_scorers_serve_both_kinds_of_library_and_roles_have_weights_for_each():
    # a one-pass sentence vector is read out to stand in for the sentence alone (rag.embedders.readout), so the
    # answer and area scorers read the two-pass weights in both kinds of library; the role GRUs lose 0.018 of
    # CSAbstruct accuracy on read-out vectors, so they ship a roles.pooled.npz trained on them
    from rag.reading import answer_scorer, roles
    from rag.reading.role_sequence import SequenceRoleModel
    from rag.reading.vector_kind import POOLED, STANDALONE, weights_for
    from rag.tasks import area_scorer

    for base in (answer_scorer.WEIGHTS, area_scorer.WEIGHTS):
        assert weights_for(base, POOLED) == weights_for(base, STANDALONE) == base and base.exists()
    # one file, loaded once: a one-pass library does not hold a second copy of each model
    assert answer_scorer.model_for(POOLED) is answer_scorer.model_for(STANDALONE) is answer_scorer.model()
    assert area_scorer.model(POOLED) is area_scorer.model(STANDALONE)
    pooled = weights_for(roles.WEIGHTS, POOLED)
    assert pooled.name == "roles.pooled.npz" and pooled.exists() and roles.WEIGHTS.exists()
    assert roles.model_id(POOLED) != roles.model_id(STANDALONE)  # stored roles say which kind gave them
    assert roles.model(POOLED) is roles.model(POOLED)  # loaded once
    for kind in (POOLED, STANDALONE):
        m = roles.model(kind)
        assert isinstance(m, SequenceRoleModel) and m.vectors == kind and m.dimension == 384


def test_each_library_reads_with_the_weights_of_its_own_vectors_and_quotes_the_same_sentence(minilm, tmp_path):
    from rag.reading import roles
    from rag.reading.vector_kind import POOLED, STANDALONE, vector_kind
    from rag.tasks.ask import ask

    answers, stored = {}, {}
    for one_pass, kind in ((False, STANDALONE), (True, POOLED)):
        lib, settings = _library(tmp_path, minilm, one_pass)
        assert vector_kind(lib.text_embedder) == kind
        papers = lib.get_papers(["mhc", "lora"])
        # the roles stored at ingest name the classifier of the library's own kind of vector
        assert {p.roles_model for p in papers.values()} == {roles.model_id(kind)}
        stored[kind] = {pid: p.roles for pid, p in papers.items()}
        s = settings.model_copy(update={"ask": settings.ask.model_copy(update={"abstain_below": -1.0})})
        answers[kind] = ask("When does LoRA converge?", lib, settings=s)
    # what a researcher sees does not depend on how the library was ingested
    assert stored[POOLED]["mhc"][0] == stored[STANDALONE]["mhc"][0] == "B"  # it opens with background
    assert stored[POOLED]["lora"][-1] == stored[STANDALONE]["lora"][-1] == "R"  # it ends on its result
    for kind in (STANDALONE, POOLED):
        top = answers[kind].citations[0]
        assert top.paper.paper_id == "lora" and "converges to a global minimum" in top.evidence, kind


def test_a_library_keeps_the_kind_of_vector_it_was_built_with_whatever_the_setting_says_later(minilm, tmp_path, monkeypatch):
    """A library ingested in two passes (before one pass was the default) keeps reading its sentences alone with
    the two-pass weights when PAPERCHAT_CHUNK__ONE_PASS is on: its stored roles stay trusted and nothing is
    embedded again -- and a one-pass library stays one-pass when the setting is turned off."""
    from rag.library.library import Library
    from rag.reading import roles
    from rag.reading.vector_kind import POOLED, STANDALONE, vector_kind
    from rag.settings import ChunkSettings

    for built, later in ((False, True), (True, False)):
        (tmp_path / str(built)).mkdir()
        lib, settings = _library(tmp_path / str(built), minilm, one_pass=built)
        kind = POOLED if built else STANDALONE
        calls: list[int] = []
        real_a, real_c = minilm.embed_array, minilm.embed_chunks
        monkeypatch.setattr(minilm, "embed_array", lambda texts: calls.append(len(texts)) or real_a(texts))
        monkeypatch.setattr(minilm, "embed_chunks", lambda texts, spans: calls.append(len(texts)) or real_c(texts, spans))
        switched = Library(settings.model_copy(update={"chunk": ChunkSettings(one_pass=later)}), embedder=minilm)
        assert switched.settings.chunk.one_pass is built and vector_kind(switched.text_embedder) == kind
        papers = list(switched.get_papers(["mhc", "lora"]).values())
        assert all(p.roles_model == roles.model_id(kind) for p in papers)
        got = roles.roles_of(papers, switched.text_embedder)
        assert got[0][0] == "background" and calls == [], "a built library was read again"
        monkeypatch.undo()
