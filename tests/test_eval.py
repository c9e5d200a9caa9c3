"""`paperchat eval retrieval` on a BEIR folder whose right answers are known, checked by hand."""

from __future__ import annotations

import json
import math

import pytest

from rag.evaluation.metrics import evaluate, mrr_at_k, ndcg_at_k, recall_at_k

DOCS = {
    "d1": ("Quokka census", "Quokka populations on Rottnest island were counted by a census of marsupials."),
    "d2": ("Volcanic glass", "Obsidian volcanic glass fractures conchoidally into razor sharp flakes."),
    "d3": ("Glass blowing", "Glass blowing shapes molten silica with breath through a blowpipe."),
    "d4": ("Tidal pools", "Starfish and anemones inhabit tidal pools along rocky shorelines."),
    "d5": ("Kelp forests", "Kelp forests shelter sea otters; urchins graze kelp when otters vanish."),
    "d6": ("Chess openings", "The Sicilian defence is a sharp chess opening for black."),
}
QUERIES = {
    "q1": "quokka marsupial census on Rottnest",  # d1 only: rank 1
    "q2": "obsidian volcanic glass flakes",  # d2 (grade 2) first, d3 (grade 1) behind it
    "q3": "starfish anemones in tidal pools and rocky shorelines",  # judged relevant: d5, which ranks below d4
}
QRELS = [("q1", "d1", 1), ("q2", "d2", 2), ("q2", "d3", 1), ("q3", "d5", 1)]


def test_metrics_match_hand_computation():
    rels = {"a": 2, "b": 1}
    assert ndcg_at_k(["a", "b", "c"], rels) == pytest.approx(1.0)
    # b first, then a: DCG = 1/1 + 2/log2(3); ideal = 2/1 + 1/log2(3)
    assert ndcg_at_k(["b", "a"], rels) == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert recall_at_k(["x", "a"], rels, 100) == 0.5
    assert mrr_at_k(["x", "y", "b"], rels, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["x"] * 10 + ["a"], rels, 10) == 0.0


@pytest.fixture
def beir(tmp_path):
    d = tmp_path / "tiny"
    (d / "qrels").mkdir(parents=True)
    (d / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": k, "title": t, "text": x})
                                              for k, (t, x) in DOCS.items()), encoding="utf-8")
    (d / "queries.jsonl").write_text("\n".join(json.dumps({"_id": k, "text": v}) for k, v in QUERIES.items()),
                                     encoding="utf-8")
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(f"{q}\t{c}\t{s}" for q, c, s in QRELS),
                                          encoding="utf-8")
    return d


def test_eval_reports_hand_computed_metrics(beir, fake_settings):
    from rag.evaluation.retrieval import evaluate_beir
    from rag.library.library import Library
    from rag.library.retrieval import search

    res = evaluate_beir(beir, "test", fake_settings, progress=False)
    # The ranks eval saw are the ones search gives; q3's judged doc is second at best.
    lib = Library(fake_settings.model_copy(update={"library": "check"}))
    lib.ingest([beir / "corpus.jsonl"], progress=False)
    run = {q: [h.paper.paper_id for h in search(lib, t, 100)] for q, t in QUERIES.items()}
    assert run["q1"][0] == "d1" and run["q2"][:2] == ["d2", "d3"] and run["q3"][0] == "d4"
    r3 = run["q3"].index("d5") + 1
    expected_ndcg = (1 + 1 + 1 / math.log2(r3 + 1)) / 3
    assert res["ndcg@10"] == pytest.approx(expected_ndcg, abs=1e-4)
    assert res["mrr@10"] == pytest.approx((1 + 1 + 1 / r3) / 3, abs=1e-4)
    assert res["recall@100"] == 1.0 and res["queries"] == 3
    assert evaluate(run, {"q1": {"d1": 1}}) == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}


def test_eval_cli_json_and_bad_folder(beir, tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    assert main(["eval", "retrieval", "--beir", str(beir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"ndcg@10", "recall@100", "mrr@10", "queries", "seconds"} <= set(out) and out["queries"] == 3
    assert main(["eval", "retrieval", "--beir", str(tmp_path / "nothing")]) == 2
    assert "not a BEIR folder" in capsys.readouterr().err
