"""Sentence roles: the shipped classifier labels abstracts as a reader would, ingest stores the roles once,
and libraries built before roles existed still answer (roles computed on the fly) and get them on re-ingest."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SHARED
from rag.reading.roles import ROLES, classify, decode, encode
from rag.reading.sentences import split_sentences

MHC = ("Recently, studies exemplified by Hyper-Connections (HC) have extended the ubiquitous residual connection "
       "paradigm established over the past decade by expanding the residual stream width and diversifying "
       "connectivity patterns. While yielding substantial performance gains, this diversification fundamentally "
       "compromises the identity mapping property intrinsic to the residual connection, which causes severe training "
       "instability and restricted scalability, and additionally incurs notable memory access overhead. To address "
       "these challenges, we propose Manifold-Constrained Hyper-Connections (mHC), a general framework that projects "
       "the residual connection space of HC onto a specific manifold to restore the identity mapping property, while "
       "incorporating rigorous infrastructure optimization to ensure efficiency. Empirical experiments demonstrate "
       "that mHC is effective for training at scale, offering tangible performance improvements and superior "
       "scalability.")


@given(st.lists(st.sampled_from(ROLES), max_size=40))
def test_roles_round_trip_through_their_stored_letters(roles):
    code = encode(roles)
    assert len(code) == len(roles) and decode(code) == roles


def test_an_abstract_reads_background_then_proposal_then_result():
    from rag.embedders import get_embedder

    roles = classify(split_sentences(MHC), get_embedder("minilm"))
    assert roles[0] == "background" and roles[1] == "background"
    assert roles[2] in ("method", "objective")  # "To address these challenges, we propose …"
    assert roles[3] == "result"  # "Empirical experiments demonstrate …"


def test_an_abstract_gets_the_same_roles_whichever_papers_are_classified_with_it():
    # ingest classifies a batch of papers in one call, the GRUs stepping through them side by side (the shorter
    # ones padded): a paper's roles must not depend on its batch
    from rag.embedders import get_embedder
    from rag.reading.roles import classify_many
    from test_one_pass import LORA

    emb = get_embedder("minilm")
    mhc, lora = split_sentences(MHC), split_sentences(LORA)
    alone = [classify(mhc, emb), classify(lora, emb)]
    assert classify_many([mhc, [], lora, mhc[:1]], emb) == [alone[0], [], alone[1], classify(mhc[:1], emb)]
    assert len(mhc) != len(lora)


@pytest.mark.skipif(not (SHARED / "data" / "csabstruct" / "test.jsonl").exists(), reason="needs ../shared/data/csabstruct")
def test_csabstruct_test_abstracts_are_labelled_mostly_right():
    from rag.embedders import get_embedder
    from rag.reading.roles import classify_many

    rows = [json.loads(line) for line in open(SHARED / "data" / "csabstruct" / "test.jsonl", encoding="utf-8")][:60]
    got = classify_many([r["sentences"] for r in rows], get_embedder("minilm"))
    pairs = [(g, w) for r, gs in zip(rows, got) for g, w in zip(gs, r["labels"])]
    assert sum(g == w for g, w in pairs) / len(pairs) >= 0.7


def test_ingest_stores_each_papers_roles_aligned_with_its_sentences(seeds_library):
    papers = seeds_library.get_papers([p.paper_id for p in seeds_library.papers()])
    assert len(papers) == 76
    from rag.reading.roles import model_id
    from rag.reading.vector_kind import vector_kind

    kind = vector_kind(seeds_library.text_embedder)  # one pass by default: roles.pooled.npz
    for p in papers.values():
        assert len(p.roles) == len(split_sentences(p.abstract)), p.title
        assert p.roles_model == model_id(kind)  # which classifier gave them, so a retrained one replaces them
    # the mHC abstract as read at ingest
    (mhc,) = [p for p in papers.values() if p.title.startswith("Manifold-Constrained")]
    roles = decode(mhc.roles)
    assert roles[0] == "background" and roles[2] in ("method", "objective")  # the problem, then the proposal


def test_a_library_stored_before_roles_answers_and_gets_them_on_the_next_ingest(fake_settings, tmp_path, monkeypatch):
    import rag.library.ingest
    from rag.library.library import Library
    from rag.tasks.ask import ask

    f = tmp_path / "two.jsonl"
    f.write_text("\n".join(json.dumps({"id": i, "title": t, "abstract": a}) for i, t, a in [
        ("lora", "Low-rank adaptation", "Low-rank adaptation fine-tunes large models with two adapters. We prove "
                                        "that LoRA converges when the adapters are initialised asymmetrically."),
        ("conf", "Conformal prediction", "Conformal prediction gives coverage guarantees. We make conformal sets "
                                         "smaller under covariate shift."),
    ]), encoding="utf-8")
    old = rag.library.ingest.paper_meta
    monkeypatch.setattr(rag.library.ingest, "paper_meta", lambda *a, **k: {k2: v for k2, v in old(*a, **k).items() if k2 != "roles"})
    lib = Library(fake_settings)
    lib.ingest([f], progress=False)
    assert all("roles" not in m for m in lib.catalogue.values())
    s = fake_settings.model_copy(update={"ask": fake_settings.ask.model_copy(update={"abstain_below": -1.0, "floor": -1.0})})
    ans = ask("When does LoRA converge?", lib, settings=s)  # roles computed on the fly
    assert ans.citations and ans.citations[0].paper.paper_id == "lora"
    monkeypatch.setattr(rag.library.ingest, "paper_meta", old)
    report = Library(fake_settings).ingest([f], progress=False)
    assert report.unchanged == 2 and report.added == report.updated == 0
    lib2 = Library(fake_settings)
    for p in lib2.get_papers(["lora", "conf"]).values():
        assert len(p.roles) == 2  # the hashing fake gives no roles ("other"), but they are stored, one per sentence


def test_a_retrained_role_model_replaces_stored_roles_without_reembedding(tmp_path, monkeypatch):
    """Roles are versioned by the weights' identity: after rag/reading/roles.npz is retrained, answers read the new
    model's roles at once, and the next ingest of unchanged files stores them -- no text is embedded again."""
    import numpy as np

    import rag.reading.roles
    from conftest import make_settings
    from rag.embedders import get_embedder
    from rag.library.library import Library
    from rag.reading.role_sequence import SequenceRoleModel
    from rag.reading.roles import model, model_id, roles_of
    from rag.reading.vector_kind import vector_kind

    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"id": "mhc", "title": "Manifold-Constrained Hyper-Connections", "abstract": MHC}),
                 encoding="utf-8")
    emb = get_embedder("minilm")
    settings = make_settings(tmp_path / "home", embedder="minilm")
    Library(settings, embedder=emb).ingest([f], progress=False)
    kind = vector_kind(Library(settings, embedder=emb).text_embedder)
    first = Library(settings, embedder=emb).get_papers(["mhc"])["mhc"]
    assert first.roles_model == model_id(kind) and decode(first.roles)[0] == "background"

    # "Retrain": the same classifier with its output layer pushed towards `result` for every sentence.
    old = model(kind)
    retrained = tmp_path / "roles.npz"
    bias = np.where(np.array(ROLES) == "result", 50.0, 0.0).astype(np.float32)
    SequenceRoleModel(old.lexical_size, old.vectors, **{**old.w, "out_b": old.w["out_b"] + bias}).save(retrained)
    # a new file, loaded and hashed afresh (with no roles.pooled.npz beside it, both kinds read it)
    monkeypatch.setattr(rag.reading.roles, "WEIGHTS", retrained)
    try:
        assert model_id(kind) != first.roles_model
        calls = []
        real = emb.embed_array
        monkeypatch.setattr(emb, "embed_array", lambda texts: calls.append(len(texts)) or real(texts))
        lib = Library(settings, embedder=emb)
        # read before any ingest: the stored roles are stale, so the new model's are used
        assert roles_of([lib.get_papers(["mhc"])["mhc"]], lib.text_embedder)[0] == ["result"] * 4
        report = lib.ingest([f], progress=False)
        assert report.unchanged == 1 and report.added == report.updated == 0
        p = Library(settings, embedder=emb).get_papers(["mhc"])["mhc"]
        assert p.roles == "RRRR" and p.roles_model == model_id(kind)
        assert sum(calls) == 0, "the chunks and sentences were embedded again"
    finally:
        rag.reading.roles._load.cache_clear()
        rag.reading.roles._file_id.cache_clear()


def test_a_service_serving_minilm_gives_the_same_roles_and_another_model_none():
    """A lab's TEI/vLLM service serving all-MiniLM-L6-v2 under its Hub name still gets each sentence's role
    (its vectors are MiniLM's); a service of another model, whose vectors the classifier was not trained
    on, is not guessed at."""
    from rag.embedders import get_embedder

    local = get_embedder("minilm")

    class Service:  # what rag.embedders.endpoint looks like to the classifier: a declared name and vectors
        def __init__(self, name):
            self.model_id = name

        def embed_array(self, texts):
            return local.embed_array(texts)

    sentences = split_sentences(MHC)
    expected = classify(sentences, local)
    assert classify(sentences, Service("sentence-transformers/all-MiniLM-L6-v2")) == expected
    assert classify(sentences, Service("all-MiniLM-L6-v2")) == expected
    assert set(classify(sentences, Service("BAAI/bge-small-en-v1.5"))) == {"other"}
