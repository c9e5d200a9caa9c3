"""cite: the abstracts that bear on a claim, best first, with evidence sentences, scores and stances.

Extractive paths run on the seeds with the real offline embedder (one library per session, see conftest);
the LLM stance path uses a fake chat model that answers from the prompt it is given.
"""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from rag.tasks.cite import NOT_FOUND_TEXT, cite, parse_stance
from seed_questions import seed

pytestmark = pytest.mark.slow


# Claims reworded from seed abstracts, and the abstract that states each.
REWORDED = [
    ("Diffusion models trained on disjoint parts of a dataset generate very similar images from the same noise.", "001:9"),
    ("Expanding the residual stream as in hyper-connections breaks the identity mapping and makes training unstable.", "000:2"),
    ("Vision transformers are as vulnerable to adversarial examples as convolutional networks.", "001:15"),
    ("Group fairness across subpopulations can be seen as a bargaining game.", "003:9"),
    ("Adam and SignSGD can be bridged by scaling sign updates block-wise, saving memory.", "003:6"),
    ("Cross-validation may give invalid confidence intervals when comparing individually stable models.", "000:10"),
    ("Implicit models that iterate one weight-tied block to a fixed point train with constant memory.", "004:9"),
    ("Mamba can learn in context, much like Transformers do.", "003:1"),
]


@pytest.mark.parametrize("claim,where", REWORDED, ids=[w for _, w in REWORDED])
def test_reworded_claim_finds_its_abstract_first(seeds_library, claim, where):
    res = cite(claim, seeds_library, settings=seeds_library.settings)
    assert res.found, res.message
    first = res.evidence[0]
    assert first.paper.paper_id == seed(seeds_library, where).paper_id
    assert first.sentence in first.paper.abstract  # the evidence is the abstract's own sentence
    assert first.stance == "related"  # no LLM: similarity cannot tell support from contradiction


def test_cite_json_follows_the_contract(seeds_library):
    res = cite(REWORDED[0][0], seeds_library, settings=seeds_library.settings, k=5)
    js = json.loads(json.dumps(res.as_json()))
    assert js["claim"] == REWORDED[0][0] and js["found"] is True
    assert 1 <= len(js["evidence"]) <= 5
    keys = {"paper_id", "title", "source", "position", "sentence", "score", "stance"}
    for e in js["evidence"]:
        assert keys <= set(e) and e["stance"] in {"supports", "contradicts", "related"} and e["sentence"]
    scores = [e["score"] for e in js["evidence"]]
    assert scores == sorted(scores, reverse=True)


def test_evidence_shows_the_sentence_that_states_the_claim(seeds_library):
    res = cite("CLIP fails to bind colours to the right shapes in scenes with several objects.", seeds_library,
               settings=seeds_library.settings)
    assert res.evidence[0].paper.paper_id == seed(seeds_library, "000:8").paper_id
    assert "binding" in res.evidence[0].sentence.lower() or "which concepts" in res.evidence[0].sentence


def test_evidence_is_graded_for_the_claim_and_its_card_shows_the_grade(seeds_library):
    from ui.render import render_evidence

    res = cite(REWORDED[0][0], seeds_library, settings=seeds_library.settings)
    first = res.evidence[0]
    # the sentence that states the claim bears on it directly, and is the abstract's own
    assert first.paper.paper_id == seed(seeds_library, "001:9").paper_id
    # graded by the answer scorer's probability (issue 30): at least related, and the card says the same
    s = seeds_library.settings.ask
    assert first.grade in ("answers", "related") and first.grade_score >= s.floor and first.quoted
    js = res.as_json()["evidence"][0]
    assert js["grade"] == first.grade and js["quoted"] is True and js["grade_score"] == round(first.grade_score, 4)
    assert js["supported"] is True and js["stance"] == "related"  # the older fields keep their meaning
    card = render_evidence(res, res.claim, 1).panel.split('id="pc-1-1"')[1].split("</article>")[0]
    badges = re.findall(r'class="pc-badge ([\w-]+)">([^<]*)<', card)
    from html import escape

    from ui.render import GRADE_CLASS, GRADE_TITLES

    assert badges == [(GRADE_CLASS[first.grade], f"{first.grade} {first.grade_score:.2f}"),
                      ("pc-related", "stance: related")], badges
    assert escape(GRADE_TITLES["claim"][first.grade]) in card and "quoted verbatim" in card and "✓ supported" not in card
    # a claim the library does not hold: none of the nearest papers' sentences answers it
    off = cite("The Eiffel Tower is the tallest building in Paris.", seeds_library, settings=seeds_library.settings)
    assert off.nearest and all(e.grade != "answers" for e in off.nearest)


@pytest.mark.parametrize("claim", ["The Eiffel Tower is the tallest building in Paris.",
                                   "Rainfall in the Amazon has decreased over the last decade."])
def test_claim_nothing_supports_lists_the_nearest_papers(seeds_library, claim):
    res = cite(claim, seeds_library, settings=seeds_library.settings)
    js = res.as_json()
    assert js["found"] is False and not js["evidence"]
    assert js["message"].startswith(NOT_FOUND_TEXT)
    assert js["nearest"] and {"paper_id", "title", "sentence", "score"} <= set(js["nearest"][0])
    assert NOT_FOUND_TEXT[1:] in res.render_text() and "Nearest papers" in res.render_text()


def test_citation_marks_in_the_draft_claim_are_ignored(seeds_library):
    plain = cite(REWORDED[2][0], seeds_library, settings=seeds_library.settings)
    marked = cite(REWORDED[2][0].rstrip(".") + " [3][12].", seeds_library, settings=seeds_library.settings)
    assert [e.paper.paper_id for e in marked.evidence] == [e.paper.paper_id for e in plain.evidence]


def test_cli_cite_json(seeds_home, seeds_library, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(seeds_home))
    assert main(["cite", REWORDED[3][0], "--json", "--k", "3"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["evidence"][0]["paper_id"] == seed(seeds_library, "003:9").paper_id
    assert len(js["evidence"]) <= 3
    assert main(["cite", REWORDED[3][0]]) == 0
    out = capsys.readouterr().out
    assert "[1] RELATED" in out and "“" in out


# ----------------------------------------------------------------------------------------- LLM stance


class StanceJudge(BaseChatModel):
    """Says the ViT robustness abstract supports the claim, the CNN-free ones contradict, garbles one."""

    @property
    def _llm_type(self) -> str:
        return "stance-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kw):
        text = messages[-1].content
        if "Vision Transformers" in text:
            out = "Supports."
        elif "Spiking" in text:
            out = "I cannot say."
        else:
            out = "contradicts"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=out))])


def test_llm_judges_stance_with_the_prompt(seeds_library):
    res = cite(REWORDED[2][0], seeds_library, settings=seeds_library.settings, k=5, model=StanceJudge())
    assert res.mode == "llm" and res.found
    by_id = {e.paper.paper_id: e for e in res.evidence}
    vit = seed(seeds_library, "001:15").paper_id
    assert by_id[vit].stance == "supports"
    for e in res.evidence:
        assert e.stance in {"supports", "contradicts", "related"}
        if e.paper.paper_id != vit and "Spiking" not in e.paper.abstract:
            assert e.stance == "contradicts"
        if "Spiking" in e.paper.abstract:
            assert e.stance == "related" and any(f.startswith(f"[{e.n}]") for f in res.flags)


@pytest.mark.parametrize("answer,stance", [
    ("supports", "supports"), ("Contradicts.", "contradicts"), ("Related", "related"),
    ("The abstract does not support the claim.", "related"), ("Answer: SUPPORTS", "supports"), ("banana", None),
])
def test_stance_answers_are_read_as_one_word(answer, stance):
    assert parse_stance(answer) == stance


# The quoted sentence (issue 30 item 4): the relevance rule blended with the answer scorer and the claim's rare
# words (rag/tasks/cite.py, chosen on SciFact train). Claims reworded from seed abstracts, and the words of the
# sentence that states each.
STATED = [
    # the scorer and the claim's rare words ("fixed", "usable") find the sentence stating the limitation, where
    # relevance alone quoted the paper's main result about Wasserstein bounds
    ("For a fixed stepsize, the weak Gaussian limit of stochastic approximation gives no usable error bound.",
     "000:3", "offers no usable error bound"),
    ("Wide spiking neural network classifiers are stable on average under small input perturbations.",
     "004:16", "wide LIF-SNN classifiers are stable on average"),
    ("Large batches can be deferred to late training without losing performance.",
     "004:10", "large batches can be safely deferred"),
    ("InfoNCE objectives create distribution gaps across modalities.", "000:19", "yield distribution gaps"),
]


@pytest.mark.parametrize("claim,where,stated", STATED, ids=[w for _, w, _ in STATED])
def test_evidence_quotes_the_sentence_that_states_the_claim(seeds_library, claim, where, stated):
    res = cite(claim, seeds_library, settings=seeds_library.settings)
    ev = {e.paper.paper_id: e for e in res.evidence}
    e = ev[seed(seeds_library, where).paper_id]
    assert stated in e.sentence, e.sentence


@pytest.mark.xfail(strict=True, reason="the answer scorer rates the paper's 'we propose mHC ...' 0.97 for this "
                   "claim read as a topic, above the background sentence that states it (0.65); the blend chosen on "
                   "SciFact train (0.598 -> 0.646 of dev quotes a rationale) quotes the proposal here, where relevance "
                   "alone quoted the statement (docs/quality.md, 'cite on SciFact')")
def test_evidence_for_a_stated_problem_quotes_the_problem_not_the_proposal(seeds_library):
    res = cite(REWORDED[1][0], seeds_library, settings=seeds_library.settings)
    assert "compromises the identity mapping" in res.evidence[0].sentence, res.evidence[0].sentence
