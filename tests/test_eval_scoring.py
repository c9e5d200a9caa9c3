"""The answer and summary yardstick (rag.evaluation.mlqa), checked on answers and summaries written by hand
against the tiny set in tests/data/mlqa_tiny: the right sentence quoted or restated hits, a sentence of
another paper does not, and the citation shares count what a reader would count."""

from __future__ import annotations

import pytest

from rag.evaluation.mlqa import (answer_figures, covers, figures_by_type, load_questions, load_topics, normalise,
                                 percentile, score_answer, score_summary, summary_figures)
from rag.errors import UserError

from conftest import ROOT

TINY = ROOT / "tests" / "data" / "mlqa_tiny"
DRIFT = "We propose DriftAvg, which reweights each client's update by how far its recent data moved from the global average."


@pytest.fixture(scope="module")
def questions():
    return {q.id: q for q in load_questions(TINY, "test")}


def cit(n, pid, grade="answers", evidence="", more=()):
    return {"n": n, "paper_id": pid, "grade": grade, "evidence": evidence, "more_evidence": list(more)}


def test_the_split_is_read_and_a_missing_one_named():
    assert [q.id for q in load_questions(TINY, "train")] == ["rl-curiosity"]
    assert len(load_questions(TINY, None)) == 6 and len(load_topics(TINY, "test")) == 2
    with pytest.raises(UserError, match="no rows of split 'dev'.*test, train"):
        load_questions(TINY, "dev")
    with pytest.raises(UserError, match="not an mlqa folder: questions.jsonl is missing"):
        load_questions(TINY / "nowhere", "test")


def test_normalised_containment_and_the_80_percent_cover():
    assert normalise("Client's update — by $k$-means!") == "client s update by k means"
    assert covers(f"As shown, {DRIFT.lower()}", DRIFT)  # contains it, case and marks aside
    restated = DRIFT.replace("We propose", "The authors propose")  # 18 of its 19 words
    assert covers(restated, DRIFT)
    half = "We propose DriftAvg, which reweights each client's update."
    assert not covers(half, DRIFT)  # 8 of 19 words: a fragment is not the answer
    assert not covers("", DRIFT) and not covers(DRIFT, "")


def test_a_quoted_answer_sentence_hits_and_its_citations_count(questions):
    q = questions["fl-drift"]
    ans = {"answer": f"{DRIFT[:-1]} [1]. Client data drift over time makes the shared model stale [1]. "
                     "Gradients leak client images [2].",
           "citations": [cit(1, "fl-drift", evidence=DRIFT), cit(2, "fl-privacy", evidence="Federated learning leaks.")]}
    s = score_answer(q, ans)
    assert s.hit and s.hit_cites_own and s.hit_sentence.startswith("We propose DriftAvg")
    assert (s.cited_sentences, s.own_cited_sentences) == (3, 2)
    # two citations graded `answers`: the own paper quoting the answer sentence is right, the other paper is not
    assert (s.answers_citations, s.right_answers_citations) == (2, 1)


def test_a_restated_sentence_hits_a_trailing_mark_is_its_citation(questions):
    q = questions["fl-drift"]
    text = "The authors propose DriftAvg, which reweights each client's update by how far its recent data moved " \
           "from the global average. [1]"
    s = score_answer(q, {"answer": text, "citations": [cit(1, "fl-drift", evidence=DRIFT)]})
    assert s.hit and s.hit_cites_own and s.cited_sentences == 1 and s.own_cited_sentences == 1


def test_the_right_sentence_cited_to_the_wrong_paper_hits_but_shares_say_so(questions):
    q = questions["fl-drift"]
    s = score_answer(q, {"answer": f"{DRIFT[:-1]} [1].", "citations": [cit(1, "kb-distill", evidence="Keyboards.")]})
    assert s.hit and not s.hit_cites_own and not s.cites_own  # the README's hit is about the sentence
    assert s.own_cited_sentences == 0 and s.right_answers_citations == 0 and s.answers_citations == 1


def test_another_papers_sentence_and_an_abstention_miss(questions):
    q = questions["fl-drift"]
    other = "We quantise client updates to two bits with an error feedback buffer kept on each device."
    s = score_answer(q, {"answer": f"{other[:-1]} [1].", "citations": [cit(1, "fl-compress", "related", other)]})
    assert not s.hit and s.cited_sentences == 1 and s.own_cited_sentences == 0 and s.answers_citations == 0
    s = score_answer(q, {"answer": "The library does not answer this question. The nearest papers are listed below.",
                         "abstained": True, "citations": []})
    assert s.abstained and not s.hit and s.cited_sentences == 0


def test_a_partial_sentence_quoted_makes_the_citation_right_not_the_answer(questions):
    q = questions["fl-drift"]
    partial = "Client data drift over time makes the shared model stale."
    s = score_answer(q, {"answer": f"{partial[:-1]} [1].", "citations": [cit(1, "fl-drift", evidence=partial)]})
    assert not s.hit and s.right_answers_citations == 1


def test_figures_pool_per_type_and_time():
    qs = {q.id: q for q in load_questions(TINY, "test")}
    a = score_answer(qs["fl-drift"], {"answer": f"{DRIFT[:-1]} [1].", "citations": [cit(1, "fl-drift", evidence=DRIFT)]}, 1.0)
    b = score_answer(qs["gnn-scale"], {"answer": "Nothing [1]. Else [2].", "citations": [cit(1, "gnn-scale", "weak"),
                                                                                       cit(2, "x", "weak")]}, 3.0)
    c = score_answer(qs["gnn-oversmooth"], {"answer": "The library does not answer this question.", "abstained": True}, 2.0)
    f = figures_by_type([a, b, c])
    assert f["overall"]["hit"] == pytest.approx(1 / 3, abs=1e-4) and f["overall"]["abstained"] == pytest.approx(1 / 3, abs=1e-4)
    assert f["overall"]["own_paper_share"] == pytest.approx(2 / 3, abs=1e-4)  # 2 of 3 cited sentences
    assert f["overall"]["answers_right"] == 1.0 and f["overall"]["p50_seconds"] == 2.0
    assert f["by_type"]["how"]["hit"] == 1.0 and f["by_type"]["what-problem"]["hit"] == 0.0
    assert f["by_type"]["why"]["own_paper_share"] is None  # no cited sentence: no share, not 0
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85) and answer_figures([])["hit"] is None


def test_summary_precision_recall_and_the_empty_failure():
    fl, gnn = load_topics(TINY, "test")
    s = score_summary(fl, ["fl-drift", "fl-compress", "kb-distill", "opt-warmup", "fl-drift"])
    # 4 distinct papers, 2 core; kb-distill judged off, opt-warmup not judged (off for precision)
    assert (s.cited, s.judged_ok, s.precision) == (4, 2, 0.5)
    assert s.core_recall == pytest.approx(2 / 3, abs=1e-4)  # min(3 core, max(4, 10)) = 3
    e = score_summary(gnn, [], abstained=True)
    assert e.empty and e.failure and e.precision is None and e.core_recall == 0.0
    one = load_topics(TINY, "train")[0]  # a single core paper: an empty summary is not counted a failure
    assert score_summary(one, [], abstained=True).failure is False
    f = summary_figures([s, e])
    assert f["precision"] == 0.5 and f["core_recall"] == pytest.approx(1 / 3, abs=1e-4) and f["failures"] == 1
