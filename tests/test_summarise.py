"""summarise: themes, cited paragraphs, overview, references and BibTeX.

Extractive paths run on the seeds with the real offline embedder (one library per session, see conftest);
LLM paths use fake chat models that script the answers, including citations that must not survive.
"""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from rag.exports import bibtex_escape, bibtex_key, to_bibtex
from rag.records import Citation, Paper
from rag.tasks.summarise import summarise
from seed_questions import seed

pytestmark = pytest.mark.slow

MARK = re.compile(r"\[(\d+)\]")


def cited_ids(res) -> set[str]:
    return {c.paper.paper_id for c in res.citations}


def assert_citations_resolve(res) -> None:
    """What a reader checks: every [n] in the text is in the reference list, each with its evidence."""
    numbers = {c.n for c in res.citations}
    assert sorted(numbers) == list(range(1, len(numbers) + 1))  # numbered 1..m, no gaps
    texts = [res.summary] + [t.text for t in res.themes]
    used = {int(n) for t in texts for n in MARK.findall(t)}
    assert used == numbers
    for t in res.themes:
        assert {int(n) for n in MARK.findall(t.text)} == {c.n for c in t.citations}
    for c in res.citations:
        assert c.evidence and c.evidence in c.paper.abstract


@pytest.fixture(scope="module")
def diffusion(seeds_library):
    return summarise("diffusion models", seeds_library, settings=seeds_library.settings)


# ----------------------------------------------------------------------------------------- extractive


def test_diffusion_summary_cites_the_diffusion_abstracts(seeds_library, diffusion):
    want = {seed(seeds_library, "001:9").paper_id, seed(seeds_library, "004:19").paper_id}
    assert want <= cited_ids(diffusion)
    assert len(diffusion.citations) <= 5  # not the whole library
    assert diffusion.mode == "extractive" and not diffusion.abstained
    assert_citations_resolve(diffusion)
    # Extractive paragraphs are the abstracts' own sentences: every citation is supported verbatim.
    assert all(c.supported for c in diffusion.citations)


def test_summary_json_follows_the_contract(diffusion):
    js = json.loads(json.dumps(diffusion.as_json()))
    assert {"topic", "summary", "themes", "citations"} <= set(js)
    assert js["topic"] == "diffusion models" and js["summary"]
    assert 1 <= len(js["themes"]) <= 6
    for t in js["themes"]:
        assert {"title", "text", "citations"} <= set(t) and t["title"] and t["text"]
    keys = {"n", "paper_id", "title", "venue", "year", "source", "position", "evidence", "supported"}
    for c in js["citations"] + [c for t in js["themes"] for c in t["citations"]]:
        assert keys <= set(c)
    assert {c["venue"] for c in js["citations"]} <= {"ICML", "ICLR"}


def test_broad_area_splits_into_named_themes(seeds_library):
    res = summarise("federated and distributed learning", seeds_library, settings=seeds_library.settings)
    want = {seed(seeds_library, w).paper_id for w in ("003:18", "004:12", "001:16", "004:14")}
    assert len(want & cited_ids(res)) >= 3
    assert 2 <= len(res.themes) <= 6
    titles = [t.title for t in res.themes]
    assert len(set(titles)) == len(titles) and all(2 <= len(t) <= 80 for t in titles)
    assert all(t.citations for t in res.themes)
    # the overview names the area and how it divides, then cites
    assert "federated and distributed learning" in res.summary and MARK.search(res.summary)
    assert_citations_resolve(res)


def test_each_paper_appears_in_one_theme(seeds_library):
    res = summarise("optimization", seeds_library, settings=seeds_library.settings)
    seen: list[str] = []
    for t in res.themes:
        seen += [c.paper.paper_id for c in t.citations]
    assert len(seen) == len(set(seen))
    assert set(seen) == cited_ids(res)  # the overview cites nothing the themes do not
    assert len(res.citations) <= 15


def test_area_the_library_does_not_hold_abstains(seeds_library):
    res = summarise("protein folding", seeds_library, settings=seeds_library.settings)
    assert res.abstained and not res.citations and not res.themes
    assert "no papers on this topic" in res.summary and res.nearest
    assert "Nearest papers" in res.render_text()


def test_render_text_lists_themes_and_references(diffusion):
    text = diffusion.render_text()
    assert "References" in text and "[1]" in text
    assert "* title derived from the abstract" in text  # the seeds' titles are derived


def test_cli_summarise_json_and_bibtex(seeds_home, seeds_library, tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(seeds_home))
    bib = tmp_path / "refs.bib"
    assert main(["summarise", "diffusion models", "--json", "--bibtex", str(bib)]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["citations"] and js["themes"]
    text = bib.read_text(encoding="utf-8")
    assert text.count("@inproceedings{") == len(js["citations"])
    assert "booktitle = {ICLR}" in text and "year = {2026}" in text
    assert "note = {title derived from the abstract" in text
    assert text.count("{") == text.count("}")


def test_filters_restrict_the_summary(seeds_library):
    from rag.retrieval import Filters

    res = summarise("diffusion models", seeds_library, settings=seeds_library.settings, filters=Filters(venue="ICLR"))
    assert res.citations and {c.paper.venue for c in res.citations} == {"ICLR"}


# ----------------------------------------------------------------------------------------- BibTeX


def _paper(**kw) -> Paper:
    base = dict(paper_id="2401.00001", abstract="We study $O(n^{2})$ things & 50% of {cases}.", title="A Study",
                authors=["Ada Lovelace", "Alan Turing"], year=2024, venue="NeurIPS", url="https://x.org/a_b#c")
    base.update(kw)
    return Paper(**base)


def test_bibtex_keys_are_stable_and_distinct():
    a, b = _paper(), _paper(paper_id="2401.00002")
    assert bibtex_key(a) == bibtex_key(_paper()) and bibtex_key(a).startswith("lovelace2024")
    assert bibtex_key(a) != bibtex_key(b)
    # no authors: the title's first significant word
    assert bibtex_key(_paper(authors=[], title="The Manifold Hypothesis")).startswith("manifold2024")


def test_bibtex_escapes_and_balances():
    assert bibtex_escape("50% & more_x #1") == r"50\% \& more\_x \#1"
    assert bibtex_escape("keep $a_{i}$ math") == "keep $a_{i}$ math"
    unbalanced = bibtex_escape("a } b { c")
    assert unbalanced.count("{") == unbalanced.count("}")
    entry = to_bibtex([Citation(n=1, paper=_paper(title="Odd {title", title_derived=True))])
    assert entry.count("{") == entry.count("}")
    assert "note = {title derived from the abstract" in entry
    assert "booktitle = {NeurIPS}" in entry and "year = {2024}" in entry
    assert "author = {Ada Lovelace and Alan Turing}" in entry
    assert r"50\% of" in entry and "url = {" in entry


# ----------------------------------------------------------------------------------------- LLM (fakes)


def test_llm_summary_drops_citations_that_resolve_to_nothing(seeds_library):
    # "diffusion models" makes one theme (three papers): one map call, then the reduce call.
    model = FakeListChatModel(responses=[
        "Title: Memorisation and generalisation in diffusion\n"
        "Score-based diffusion models generate samples that are not in the training set [1]. "
        "Models trained on disjoint subsets produce similar outputs for the same noise [2]. "
        "They are also said to solve every problem [9].",
        "Diffusion models generalise beyond their training data [1][2]. This is well studied [7].",
    ])
    res = summarise("diffusion models", seeds_library, settings=seeds_library.settings, model=model)
    assert res.mode == "llm"
    assert res.themes[0].title == "Memorisation and generalisation in diffusion"
    everything = res.summary + " ".join(t.text for t in res.themes)
    assert "[9]" not in everything and "[7]" not in everything
    assert any("[9]" in f for f in res.flags) and any("[7]" in f for f in res.flags)
    assert_citations_resolve(res)
    want = {seed(seeds_library, "001:9").paper_id, seed(seeds_library, "004:19").paper_id}
    assert cited_ids(res) <= {h for h in want | {seed(seeds_library, "004:17").paper_id}}
    assert len(cited_ids(res)) == 2


class ByPrompt(BaseChatModel):
    """Answers map prompts and the reduce prompt differently, whatever the number of themes or their order."""

    @property
    def _llm_type(self) -> str:
        return "by-prompt-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kw):
        text = messages[-1].content
        if "overview paragraph" in text:
            out = "The area spans several lines of work [1][2]. One more claim [42]."
        else:
            out = "Title: A theme\nThe first source studies this [1]. Another claim cites nothing real [9]."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=out))])


def test_llm_map_reduce_over_several_themes(seeds_library):
    res = summarise("federated and distributed learning", seeds_library, settings=seeds_library.settings,
                    model=ByPrompt())
    assert len(res.themes) >= 2 and res.mode == "llm"
    everything = res.summary + " ".join(t.text for t in res.themes)
    assert "[9]" not in everything and "[42]" not in everything
    assert_citations_resolve(res)
    # each theme's [1] is that theme's own first source, so the themes cite different papers
    firsts = [t.citations[0].paper.paper_id for t in res.themes]
    assert len(set(firsts)) == len(firsts)


def test_llm_paragraph_without_citations_is_flagged(seeds_library):
    model = FakeListChatModel(responses=["Title: Diffusion\nDiffusion models are interesting.", "An overview."])
    res = summarise("diffusion models", seeds_library, settings=seeds_library.settings, model=model)
    assert not res.citations
    assert any("cited none of its sources" in f for f in res.flags)
