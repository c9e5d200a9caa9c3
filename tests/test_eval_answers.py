"""`paperchat eval answers` / `eval summaries` end to end on the tiny set in tests/data/mlqa_tiny: the
extractive answerer, and scripted chat models standing in for a user's model (one restates the right
sentence, one cites another paper, one restates the right sentence but cites another paper), so what the
report says is what a reader of those answers would see."""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from conftest import ROOT, make_settings
from rag.evaluation.mlqa import load_questions, normalise

TINY = ROOT / "tests" / "data" / "mlqa_tiny"
QUESTIONS = {q.q: q for q in load_questions(TINY, None)}
_SOURCE = re.compile(r'<source n="(\d+)" title="([^"]*)"[^>]*>\n(.*?)\n</source>', re.S)


class Scripted(BaseChatModel):
    """A chat model that reads the sources it is given and answers by a script: `restate` the question's
    marked answer sentence (its first word dropped: 0.8 of its words or more, not a verbatim quote), citing
    the source that holds it (`cite="right"`) or another one (`cite="wrong"`); or `other`: restate another
    source's first sentence, citing that source."""

    script: str = "restate"
    cite: str = "right"
    model_name: str = "scripted"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages, stop=None, run_manager=None, **kw) -> ChatResult:
        prompt = messages[-1].content
        q = next(q for text, q in QUESTIONS.items() if f"Question: {text}" in prompt)
        gold = q.answer_sentences[0]
        sources = [(int(n), re.sub(r"\[(?:background|objective|method|result|other)\]\s*", "", body))
                   for n, _, body in _SOURCE.findall(prompt)]
        right = next((n for n, body in sources if normalise(gold) in normalise(body)), None)
        others = [(n, body) for n, body in sources if n != right]
        wrong = others[0][0] if others else (right % 5) + 1  # a number of the hits that is not the right paper
        if self.script == "other" or right is None:
            text = (others[0][1].split(". ")[0] if others else "Client updates can be compressed") + f" [{wrong}]."
        else:
            text = f"Put simply, {gold.split(' ', 1)[1].rstrip('.')} [{right if self.cite == 'right' else wrong}]."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("eval-home")


@pytest.fixture(scope="module")
def settings(home):
    return make_settings(home, embedder="minilm")


def run(settings, **kw):
    from rag.evaluation.answers import evaluate_answers

    return evaluate_answers(settings, mlqa=TINY, progress=False, **kw)


def kept(res: dict) -> dict[str, dict]:
    return {json.loads(line)["id"]: json.loads(line) for line in open(res["run_file"], encoding="utf-8")}


def test_extractive_report_says_which_answers_quote_the_answer(settings, home):
    res = run(settings)
    assert (res["answerer"], res["model"], res["set"], res["split"]) == ("extractive", None, "mlqa", "test")
    assert res["library"]["papers"] == 9 and res["commit"] and res["asked_now"] == 5
    assert set(res["by_type"]) == {"how", "why", "what-finding", "what-problem", "topic"}
    answers = kept(res)
    for s in res["per_question"]:
        # The extractive answerer quotes abstracts verbatim: a hit is exactly an answer holding the marked sentence
        q = next(q for q in QUESTIONS.values() if q.id == s["id"])
        text = normalise(answers[s["id"]]["answer"]["answer"])
        assert s["hit"] == any(normalise(m) in text for m in q.answer_sentences), s
    scored = res["per_question"]
    assert res["overall"]["hit"] == pytest.approx(sum(s["hit"] for s in scored) / 5, abs=1e-4)
    assert 0 < res["overall"]["hit"]  # the what-problem question's sentence is its abstract's opening, asked as is
    assert res["overall"]["p50_seconds"] > 0 and res["overall"]["p95_seconds"] >= res["overall"]["p50_seconds"]
    # the eval lives in its own home under evals/: no library of the user's was made or touched
    assert not (home / "libraries").exists() and res["library"]["home"].startswith(str(home / "evals"))


def test_a_second_run_carries_on_and_a_limit_takes_the_first(settings):
    first = run(settings)
    again = run(settings)
    assert again["asked_now"] == 0 and again["reused"] == 5 and again["overall"] == first["overall"]
    assert run(settings, limit=2)["overall"]["questions"] == 2
    assert run(settings, fresh=True)["asked_now"] == 5


def test_a_model_restating_the_right_sentence_hits_every_question(settings):
    res = run(settings, model=Scripted())
    assert res["answerer"] == "llm" and res["model"] == "scripted"
    f = res["overall"]
    assert f["hit"] == 1.0 and f["hit_cites_own"] == 1.0 and f["own_paper_share"] == 1.0 and f["abstained"] == 0
    assert f["answers_right"] in (1.0, None)  # every citation graded `answers` is the right paper's sentence
    assert all(s["hit_sentence"].startswith("Put simply") for s in res["per_question"])


def test_a_model_citing_another_paper_scores_nothing(settings):
    f = run(settings, model=Scripted(script="other"))["overall"]
    assert f["hit"] == 0 and f["own_paper_share"] == 0 and f["answers_right"] in (0, None)


def test_the_right_sentence_cited_to_another_paper_hits_but_the_shares_say_so(settings):
    f = run(settings, model=Scripted(cite="wrong"))["overall"]
    assert f["hit"] == 1.0 and f["hit_cites_own"] == 0 and f["own_paper_share"] == 0 and f["answers_right"] in (0, None)


def test_eval_summaries_scores_areas_judged_in_another_file_over_the_same_library(tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    areas = tmp_path / "natural.jsonl"
    areas.write_text(json.dumps({"topic": "graph neural networks for molecules", "core": ["gnn-molecules"],
                                 "related": ["gnn-scale"], "off": ["fl-drift"], "split": "judged"}) + "\n")
    assert main(["eval", "summaries", "--mlqa", str(TINY), "--areas", str(areas), "--split", "judged", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["topic"] for a in out["per_area"]] == ["graph neural networks for molecules"]
    assert out["areas_file"] == str(areas) and out["split"] == "judged"
    # areas judged over another library would score every summary as off: refused, the bad id named
    areas.write_text(json.dumps({"topic": "optimizers", "core": ["adam-2014"], "related": [], "off": [],
                                 "split": "judged"}) + "\n")
    assert main(["eval", "summaries", "--mlqa", str(TINY), "--areas", str(areas), "--split", "judged"]) == 2
    err = capsys.readouterr().err
    assert "1 of its 1 judged papers are not in the set's library" in err and "adam-2014" in err
    assert main(["eval", "summaries", "--mlqa", str(TINY), "--areas", str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl does not exist" in capsys.readouterr().err


def test_cli_json_summaries_and_a_bad_folder(tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    assert main(["eval", "summaries", "--mlqa", str(TINY), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["topic"] for a in out["per_area"]] == ["federated learning", "graph neural networks"]
    assert {"precision", "pooled_precision", "core_recall", "empty", "failures"} <= set(out["overall"])
    assert main(["eval", "answers", "--mlqa", str(TINY), "--limit", "1"]) == 0
    text = capsys.readouterr().out
    assert "answerer extractive" in text and "overall" in text and "1 asked now" in text
    assert main(["eval", "answers", "--mlqa", str(tmp_path / "nothing")]) == 2
    assert "not an mlqa folder" in capsys.readouterr().err
    assert main(["eval", "answers", "--mlqa", str(TINY), "--split", "dev"]) == 2
    assert "no rows of split 'dev'" in capsys.readouterr().err


def test_pubmedqa_conclusions_are_the_answers(tmp_path, monkeypatch, capsys):
    from rag.cli import main

    pqal = {str(100 + i): {"QUESTION": q, "CONTEXTS": [ctx], "LONG_ANSWER": concl, "final_decision": d}
            for i, (q, ctx, concl, d) in enumerate([
                ("Does daily walking lower resting blood pressure in older adults?",
                 "We followed 300 adults over 65 who walked 30 minutes a day for a year.",
                 "Daily walking lowered resting systolic blood pressure by 6 mmHg in older adults.", "yes"),
                ("Do night shifts change how nurses sleep on days off?",
                 "Sleep diaries of 120 nurses were kept for eight weeks across rotating shifts.",
                 "Nurses on night shifts slept no differently on their days off.", "no")])}
    f = tmp_path / "ori_pqal.json"
    f.write_text(json.dumps(pqal), encoding="utf-8")
    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    assert main(["eval", "answers", "--pubmedqa", str(f), "--split", "all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["set"] == "pubmedqa" and out["library"]["papers"] == 2 and set(out["by_type"]) == {"yes", "no"}


def test_a_run_killed_mid_line_keeps_what_was_whole(tmp_path):
    from rag.evaluation.runs import RunFile

    f = tmp_path / "answers.jsonl"
    f.write_text('{"id": "a", "answer": {}}\n{"id": "b", "ans', encoding="utf-8")
    run = RunFile(f)
    assert list(run.done) == ["a"]  # the torn row is dropped: "b" is asked again
    run.add({"id": "b", "answer": {}})
    assert list(RunFile(f).done) == ["a", "b"]
