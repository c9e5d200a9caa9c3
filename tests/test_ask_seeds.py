"""The default (extractive) answerer with the real offline embedder on the seeds."""

from __future__ import annotations

import json
import re

from rag.tasks.ask import ask
from seed_questions import OFF_TOPIC, QUESTIONS


def cites(ans, file_prefix, position) -> bool:
    return any(c.paper.source.startswith(file_prefix) and c.paper.position == position for c in ans.citations)


def test_answers_cite_the_abstract_that_answers_with_evidence(seeds_library):
    hits = 0
    for q, f, pos in QUESTIONS:
        ans = ask(q, seeds_library, settings=seeds_library.settings)
        assert not ans.abstained, q
        assert ans.mode == "extractive"
        assert all(c.evidence and c.evidence in c.paper.abstract for c in ans.citations)
        assert {int(n) for n in re.findall(r"\[(\d+)\]", ans.answer)} == {c.n for c in ans.citations}
        assert 1 <= len(re.findall(r"\]\.", ans.answer)) <= 5
        hits += cites(ans, f, pos)
    assert hits / len(QUESTIONS) >= 0.85, f"{hits}/{len(QUESTIONS)}"


def test_off_topic_questions_abstain_and_list_nearest_papers(seeds_library):
    answers = [ask(q, seeds_library, settings=seeds_library.settings) for q in OFF_TOPIC]
    assert sum(a.abstained for a in answers) >= 3
    for a in answers:
        if a.abstained:
            assert a.nearest and not a.citations and "does not answer" in a.answer


def test_extractive_follow_up_carries_the_topic(seeds_library):
    q1 = "How many blocks does a Transformer need to approximate Hölder functions?"
    a1 = ask(q1, seeds_library, settings=seeds_library.settings)
    a2 = ask("and what lower bound do they prove?", seeds_library, settings=seeds_library.settings,
             history=[(q1, a1.answer)])
    assert cites(a2, "000", 1)
    assert "lower bound" in a2.answer.lower() or "at least" in a2.answer.lower()


def test_ask_json_contract(seeds_library, capsys, monkeypatch):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(seeds_library.settings.home))
    assert main(["ask", "What is an optimizer that bridges Adam and SignSGD?", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mode"] == "extractive" and out["abstained"] is False
    keys = {"n", "paper_id", "title", "venue", "year", "source", "position", "evidence", "supported"}
    assert out["citations"] and all(keys <= set(c) for c in out["citations"])
    assert any("Block Adaptive Signum" in c["title"] for c in out["citations"])
