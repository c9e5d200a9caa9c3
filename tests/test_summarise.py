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

from rag.exports.documents import bibtex_escape, bibtex_key, to_bibtex
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


def test_summary_citations_are_graded_for_the_topic_and_the_cards_show_it(seeds_library, diffusion):
    from ui.render import render_summary

    disjoint = seed(seeds_library, "001:9").paper_id  # "Diffusion models trained on ... disjoint subsets"
    every = diffusion.citations + [c for t in diffusion.themes for c in t.citations]
    assert all(c.grade in ("answers", "related", "weak") for c in every)
    assert all(c.quoted for c in every)  # extractive: the abstracts' own sentences
    by_id = {c.paper.paper_id: c for c in diffusion.citations}
    # graded by the answer scorer's probability with the topic as the question (issue 30): at least related
    d = by_id[disjoint]
    assert d.grade in ("answers", "related") and d.grade_score >= seeds_library.settings.ask.floor and d.role
    js = diffusion.as_json()["citations"]
    assert all({"grade", "grade_score", "quoted", "role", "supported"} <= set(c) for c in js)
    panel = render_summary(diffusion, diffusion.topic, 1).panel
    assert "✓ supported" not in panel
    for c in diffusion.citations:
        card = panel.split(f'id="pc-1-{c.n}"')[1].split("</article>")[0]
        assert f'>{c.grade} {c.grade_score:.2f}<' in card and "quoted verbatim" in card, card[:400]
    from html import escape

    from ui.render import GRADE_TITLES

    assert escape(GRADE_TITLES["topic"][d.grade]) in panel
    assert f"[{d.n}]" in diffusion.render_text() and f"[{d.grade} " in diffusion.render_text()


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
    from rag.library.retrieval import Filters

    res = summarise("diffusion models", seeds_library, settings=seeds_library.settings, filters=Filters(venue="ICLR"))
    assert res.citations and {c.paper.venue for c in res.citations} == {"ICLR"}


# ----------------------------------------------------------------------------------------- on the topic only


@pytest.fixture(scope="module")
def transport(seeds_library):
    return summarise("optimal transport", seeds_library, settings=seeds_library.settings)


def test_only_papers_whose_contribution_is_on_the_topic(seeds_library, transport):
    # the OT papers are summarised; the bandit paper on switching costs (Lazy Graph-LinUCB) is not, but is
    # listed apart as related
    ot = {seed(seeds_library, w).paper_id for w in ("003:2", "000:11")}
    bandit = seed(seeds_library, "003:13").paper_id
    assert ot <= cited_ids(transport) and bandit not in cited_ids(transport)
    assert bandit in {h.paper.paper_id for h in transport.related}
    assert "Related, not summarised" in transport.render_text()
    # the header counts only the papers summarised
    n = len(transport.citations)
    assert transport.summary.startswith(f"The library holds {n} papers on “optimal transport”")
    assert_citations_resolve(transport)


def test_rlhf_summary_has_the_dpo_paper_and_leaves_out_conformal_prediction_and_layerwise_sgd(seeds_library):
    res = summarise("reinforcement learning from human feedback", seeds_library, settings=seeds_library.settings)
    text = res.render_text()
    # The DPO paper names RLHF only by its acronym ("a better RLHF/ML fit"), which MiniLM does not read as
    # the topic; it is the paper a researcher expects here, and it is summarised, not listed as related.
    dpo = seed(seeds_library, "001:5")
    assert not res.abstained and dpo.paper_id in cited_ids(res)
    assert "Direct Preference Optimization" in text
    off = {seed(seeds_library, w).paper_id for w in ("004:2", "001:12")}  # conformal prediction, layerwise SGD
    assert not off & cited_ids(res)
    n = len(res.citations)
    assert res.summary.startswith(f"The library holds {n} paper{'s' if n > 1 else ''} on “reinforcement learning")
    assert "7 papers" not in res.summary
    # the sentence quoted is on the topic, not the paper's "A *toy* experiment ... is given"
    assert "toy" not in text


def test_a_sentence_names_a_topic_by_its_phrase_or_its_acronym():
    from rag.tasks.topicality import names, naming

    def says(topic, text):
        return names(text, *naming(topic))

    rlhf = "reinforcement learning from human feedback"
    assert says(rlhf, "reworking social choice theory's textbook path for a better RLHF/ML fit")
    assert says(rlhf, "Reinforcement Learning from Human Feedback is costly.")
    assert not says(rlhf, "We use reinforcement learning with partial feedback from an adversary.")
    assert not says(rlhf, "The rlhf-like loss")  # an acronym counts as its authors write it
    assert says("graph neural networks", "GNNs achieve strong performance")
    assert says("in-context learning", "Mamba exhibits ICL capabilities")
    assert says("Mamba and selective state space models", "Selective State Space Models (SSMs) such as Mamba")
    assert not says("Mamba and selective state space models", "we extend the framework to continuous state spaces")
    assert not says("attention", "has gained significant attention")  # one word says too little on its own


def test_mamba_summary_leaves_out_the_mip_solver_paper(seeds_library):
    res = summarise("Mamba and selective state space models", seeds_library, settings=seeds_library.settings)
    mamba = {seed(seeds_library, w).paper_id for w in ("000:13", "003:1")}
    assert mamba <= cited_ids(res)
    assert seed(seeds_library, "003:14").paper_id not in cited_ids(res)  # PMVB, branching in MIP solvers
    assert seed(seeds_library, "003:13").paper_id not in cited_ids(res)  # a bandit's "continuous state spaces"
    assert "Building on this" not in res.summary + " ".join(t.text for t in res.themes)


def test_gnn_summary_leaves_out_papers_that_share_only_words_of_the_phrase(seeds_library):
    # "feed-forward ReLU networks built on general directed acyclic graph (DAG) architectures" and "scaling
    # laws for quadratic and diagonal neural networks" hold two of the topic's three words, not the topic
    res = summarise("graph neural networks", seeds_library, settings=seeds_library.settings)
    assert seed(seeds_library, "004:13").paper_id in cited_ids(res)  # the minimax analysis of ReLU GNNs
    assert seed(seeds_library, "004:18").paper_id not in cited_ids(res)  # DAG-ReLU parameter spaces
    assert seed(seeds_library, "004:7").paper_id not in cited_ids(res)  # scaling laws
    # The one paper's paragraph quotes what it did or found ("This paper develops a minimax analysis ...", its
    # own voice, is a contribution whatever the classifier says), not its opening that merely names GNNs
    text = " ".join(t.text for t in res.themes)
    assert "worst-case generalization error" in text or "This paper develops a minimax analysis" in text
    assert "achieve strong empirical performance across domains" not in text
    assert_citations_resolve(res)


def test_the_overlap_needs_the_topics_words_side_by_side():
    from rag.tasks.topicality import holds_phrase, phrase_parts

    assert phrase_parts("equivariant neural networks") == [("equivari", "neural", "network")]
    assert len(phrase_parts("learning and reasoning")) == 2  # parts on the connective, each its own phrase
    (enn,) = phrase_parts("equivariant neural networks")
    assert holds_phrase("$E(3)$-equivariant neural networks have proven extremely effective", enn)
    assert holds_phrase("An Equivariant Neural Network for molecules", enn)  # case and plural aside
    assert not holds_phrase("For equivariant networks, where results are even scarcer", enn)
    assert not holds_phrase("neural networks whose layers are equivariant", enn)  # every word, scattered
    (gnn,) = phrase_parts("graph neural networks")
    assert not holds_phrase("feed-forward ReLU neural networks built on directed acyclic graph architectures", gnn)


def test_a_hyphenated_word_names_the_topic_written_closed_and_the_other_way_round():
    # 5 of the 25 core papers of mlqa's "variational autoencoders" write "auto-encoders"; "metalearning and
    # fewshot learning" found 3 of its 30 core papers (0.60 of them with the fold)
    from rag.tasks.topicality import holds_phrase, phrase_parts

    (vae,) = phrase_parts("variational autoencoders")
    assert holds_phrase("We train Variational Auto-Encoders with a flow prior.", vae)
    (mab,) = phrase_parts("multi-armed bandits")
    assert holds_phrase("Regret bounds for multiarmed bandits.", mab) and holds_phrase("multi-armed bandit", mab)
    (icl,) = phrase_parts("in-context learning")
    assert holds_phrase("learning in context", icl) is False and holds_phrase("in context learning", icl)
    assert not holds_phrase("auto encoders", vae)  # two words apart are two words


def test_a_noun_compound_of_an_action_is_also_named_by_its_verb_and_object():
    from rag.tasks.topicality import holds_phrase, phrase_parts

    (uq,) = phrase_parts("uncertainty quantification")
    assert holds_phrase("Quantifying uncertainty is crucial in safety-critical learning systems", uq)
    assert holds_phrase("Conformal prediction is one promising way to quantify uncertainty", uq)
    assert not holds_phrase("quantified predictive uncertainty", uq)  # side by side, as the compound is
    (kd,) = phrase_parts("knowledge distillation")
    assert holds_phrase("We distill the knowledge of an ensemble into one network", kd)
    (rl,) = phrase_parts("reinforcement learning")  # "learning" names no action on "reinforcement"
    assert not holds_phrase("Curriculum learning, reinforcement signals and rewards", rl)


def test_a_topic_named_only_as_a_test_bed_is_not_the_contribution():
    from rag.tasks.topicality import naming, phrase_parts, tested_on

    def bed(topic, text):
        return tested_on(text, phrase_parts(topic), naming(topic)[1])

    # the transformer paper of the seeds validates its theory on synthetic data; it is not about synthetic data
    assert bed("synthetic data", "Finally, we validate our theoretical findings with experiments on both "
                                 "synthetic data and real-world tasks, illustrating the practical relevance.")
    assert bed("graph neural networks", "We evaluate on three GNN benchmarks.")
    assert bed("optimal transport", "The method is applied to optimal transport between point clouds.")
    # the last item of a list of test beds: "across four domains: …, and LLM reasoning", "such as …, and X"
    assert bed("reasoning", "The theory is validated across four domains: imaging, scientific computing, operations "
                            "research, and LLM reasoning, demonstrating that the solution quality improves.")
    assert bed("machine translation", "We evaluate on tasks such as image classification, language modeling, and "
                                      "machine translation.")
    assert not bed("synthetic data", "We propose a generator of synthetic data for pretraining.")
    assert not bed("in-context learning", "Experiments show that in-context learning emerges from pretraining.")
    # named outside the test bed too
    assert not bed("synthetic data", "Synthetic data is cheap, and we evaluate on it.")


def test_a_topic_the_seeds_only_test_on_gets_no_summary(seeds_library):
    # Synthetic data is in the seeds only where theory is checked: the transformer paper's "experiments on
    # both synthetic data and real-world tasks", the ViT paper's "Experiments on both synthetic and
    # real-world datasets further validate ...". These two used to be summarised as papers on synthetic
    # data; they are listed apart as the nearest papers, not summarised.
    res = summarise("synthetic data", seeds_library, settings=seeds_library.settings)
    assert res.abstained and not res.citations and not res.themes
    assert "no papers on this topic" in res.summary and "not summarised" in res.summary
    nearest = [h.paper.paper_id for h in res.nearest]
    assert {seed(seeds_library, w).paper_id for w in ("004:3", "001:15")} <= set(nearest[:5])
    assert "Nearest papers" in res.render_text()


def test_equivariant_networks_summarise_exactly_their_two_papers(seeds_library):
    res = summarise("equivariant neural networks", seeds_library, settings=seeds_library.settings)
    # Clebsch-Gordan tensor products for E(3)-equivariant networks; universality of equivariant networks
    assert cited_ids(res) == {seed(seeds_library, w).paper_id for w in ("003:12", "004:8")}
    assert res.summary.startswith("The library holds 2 papers on “equivariant neural networks”")
    assert_citations_resolve(res)


def test_a_topic_one_paper_covers_gets_a_one_paper_summary(seeds_library):
    # the GNN paper's "ratio-based scaling tests" is not test-time scaling; the library has one paper on it
    res = summarise("test-time scaling", seeds_library, settings=seeds_library.settings)
    assert cited_ids(res) == {seed(seeds_library, "004:4").paper_id}
    assert res.summary.startswith("The library holds 1 paper on “test-time scaling”")
    assert len(res.themes) == 1
    assert seed(seeds_library, "004:13").paper_id not in cited_ids(res)
    assert_citations_resolve(res)


def test_attention_summary_keeps_the_attention_algorithms_paper(seeds_library):
    # "fast Attention for arbitrary temperatures" scores below the attention-based regressors; it is no
    # less about attention, and a cut relative to the best paper used to drop it
    res = summarise("attention", seeds_library, settings=seeds_library.settings)
    want = {seed(seeds_library, w).paper_id for w in ("004:11", "001:19", "004:6")}
    assert want <= cited_ids(res)
    assert_citations_resolve(res)


_TOPICS = ("optimal transport", "federated and distributed learning", "optimization", "attention",
           "Mamba and selective state space models", "diffusion models", "in-context learning")


@pytest.fixture(scope="module")
def several(seeds_library):
    return [summarise(t, seeds_library, settings=seeds_library.settings) for t in _TOPICS]


def test_theme_names_are_noun_phrases_not_fragments(several):
    from rag.tasks.theme_names import is_name

    # (one theme is named by the topic itself)
    titles = [t.title for res in several if len(res.themes) > 1 for t in res.themes]
    assert titles
    for title in titles:
        assert 1 <= len(title.split()) <= 6, title
        # "Faster and deviation", "Beyond and limit", "Similar and cost": each side of "and" names something
        for part in title.split(" and "):
            assert is_name(part.lower(), part), title
    several_themes = [res for res in several if len(res.themes) > 1]
    assert several_themes  # some areas do divide


def test_every_quoted_sentence_stands_alone(several):
    from rag.reading.sentences import split_sentences
    from rag.tasks.summary_writers import stands_alone

    leaning = re.compile(r"^(As a corollary|Building on|Then\b|These results|To address this|This\b(?! paper| work))")
    for res in several:
        overview = split_sentences(res.summary)
        # the overview: how the area divides (themes, counts, papers cited), then each theme's contribution
        assert overview[0].startswith("The library holds") and MARK.search(overview[0])
        if len(res.themes) > 1:
            assert all(t.title[1:].lower() in overview[0].lower() for t in res.themes[:4])
            assert all(f"({len(t.citations)} paper" in overview[0] for t in res.themes)
        for s in overview + [x for t in res.themes for x in split_sentences(t.text)]:
            assert MARK.search(s), s  # every sentence cited
            assert not leaning.match(s), s
            assert stands_alone(MARK.sub("", s).strip()) or len(s) < 60, s


def test_theme_names_end_in_a_noun_and_start_with_no_gerund_or_vague_adjective():
    from rag.tasks.theme_names import is_name

    # fragments the namer produced on the seeds ("large language model reasoning") before this was checked
    for term in ("self-consistency require", "sustained self-improvement and self-consistency require",
                 "constant large-batch", "batch size throughout", "supporting sustained self-improvement",
                 "simulate online learning"):
        assert not all(is_name(p) for p in term.split(" and ")), term
    for term in ("federated hypergradient estimation", "personalized collaborative learning", "linear attention",
                 "learnable optimizer", "accumulated gradient", "regularised optimal transport"):
        assert is_name(term), term


def test_stands_alone_rejects_sentences_that_lean_on_others():
    from rag.tasks.summary_writers import stands_alone

    for s in ("As a corollary, in the affine Brenier regime we derive a sharp pointwise tube bound of order d.",
              "Building on this existence theorem, we show that a latent Neural ODE recovers the flow.",
              "Then, we show for first time that diffusion models are incapable of solving serial problems.",
              "These results indicate that practical GNN tasks often operate in the spectral-homophily regime.",
              "To address this, we propose Lazy Graph-LinUCB, an algorithm that performs lazy updates.",
              "This work hereby focuses on these two complementary questions: identifiability and optimization.",
              "Are there fast attention algorithms that scale polylogarithmically with the entry size?",
              "Getting there requires reworking social choice theory's textbook path for a better RLHF/ML fit."):
        assert not stands_alone(s), s
    for s in ("This paper develops a control-theoretic framework for the stability of selective SSMs.",
              "We propose ITSPACE, a proximal majorization-minimization method for the Bures-Wasserstein objective.",
              "Diffusion models trained on disjoint subsets of a dataset produce similar outputs for the same noise."):
        assert stands_alone(s), s


def test_the_panel_marks_every_sentence_the_summary_quotes(several):
    from rag.reading.sentences import split_sentences
    from ui import markup
    from ui.render import render_summary

    res = several[1]  # federated learning: several themes, papers quoted in the overview and in a theme
    r = render_summary(res, res.topic, 1)
    by_n = {c.n: c for c in res.citations}
    quoted = 0
    for text in [res.summary] + [t.text for t in res.themes]:
        for s in split_sentences(text):
            for n in map(int, MARK.findall(s)):
                body = MARK.sub("", s).strip().rstrip(".").strip()
                # a quote may be trimmed to stand alone ("Furthermore, we consider X" -> "We consider X") and
                # shows " -- " as a dash: matched from its second character, against the abstract as shown
                abstract = markup.html(by_n[n].paper.abstract)
                shown = markup.html(body)  # as the card shows it: escaped, " -- " as a dash, \emph as italics
                if body and shown[1:] in abstract:
                    card = r.panel.split(f'id="pc-1-{n}"')[1].split("</article>")[0]
                    marked = " ".join(re.findall(r"<mark>(.*?)</mark>", card, re.S))
                    assert shown[1:61] in marked or shown[1:31] in marked, (n, body)
                    quoted += 1
    assert quoted > len(res.citations)  # some paper is quoted twice, and both are marked
    assert "1 themes" not in r.panel and "1 papers" not in r.panel


def test_one_theme_is_counted_in_the_singular(diffusion):
    from ui.render import render_summary

    assert len(diffusion.themes) == 1
    assert "· 1 theme ·" in render_summary(diffusion, "diffusion models", 1).panel


# ----------------------------------------------------------------------------------------- BibTeX


def _paper(**kw) -> Paper:
    base = dict(paper_id="2401.00001", abstract="We study $O(n^{2})$ things & 50% of {cases}.", title="A Study",
                authors=["Ada Lovelace", "Alan Turing"], year=2024, venue="NeurIPS", url="https://x.org/a_b#c")
    base.update(kw)
    return Paper(**base)


def test_bibtex_keys_are_stable_and_distinct():
    a, b = _paper(), _paper(paper_id="2401.00002")
    assert bibtex_key(a) == bibtex_key(_paper()) == "lovelace2024study"
    # two papers sharing author, year and title word are told apart within one export
    keys = [ln.split("{")[1].rstrip(",") for ln in to_bibtex([Citation(n=1, paper=a), Citation(n=2, paper=b)]).splitlines()
            if ln.startswith("@")]
    assert len(set(keys)) == 2
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


def test_bibtex_export_reads_back_as_written(tmp_path):
    """What `--bibtex` writes, paperchat's own BibTeX loader reads back to the same text (~, ^, braces, math)."""
    from rag.loaders import load_file

    title = "HMD^2: a ~50% title with $x^{2}$ & more_x"
    abstract = "See https://example.org/~vgg/x. Odd } brace, { another; a^b and 10~m."
    f = tmp_path / "refs.bib"
    f.write_text(to_bibtex([Citation(n=1, paper=_paper(title=title, abstract=abstract))]), encoding="utf-8")
    (p,) = list(load_file(f))
    assert (p.title, p.abstract) == (title, abstract)


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
    # the model paraphrases: graded for the topic like any summary, but not quoted
    assert all(c.grade and not c.quoted for c in res.citations)


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


def test_llm_mode_summarises_the_same_papers_in_the_same_themes(seeds_library, transport):
    res = summarise("optimal transport", seeds_library, settings=seeds_library.settings, model=ByPrompt())
    assert res.mode == "llm"
    assert cited_ids(res) <= cited_ids(transport)  # the model saw only the on-topic papers
    assert [h.paper.paper_id for h in res.related] == [h.paper.paper_id for h in transport.related]
    assert len(res.themes) == len(transport.themes)
    assert res.summary.startswith("The library holds")  # the same orientation before the model's overview
    assert "[42]" not in res.summary  # the same citation check after


def test_llm_paragraph_without_citations_is_flagged(seeds_library):
    model = FakeListChatModel(responses=["Title: Diffusion\nDiffusion models are interesting.", "An overview."])
    res = summarise("diffusion models", seeds_library, settings=seeds_library.settings, model=model)
    assert not res.citations
    assert any("cited none of its sources" in f for f in res.flags)


# ----------------------------------------------------------------------------------------- issue 16 (items 3-6)


def _reading(sentences, roles, relevance, pid="x1"):
    import numpy as np

    from rag.records import Hit
    from rag.tasks.topicality import Reading

    paper = Paper(paper_id=pid, abstract=" ".join(sentences), title="A paper", title_derived=True)
    return Reading(Hit(paper=paper, score=1.0, text=paper.abstract), list(sentences), list(roles), np.array(relevance, dtype=np.float32))


def test_a_paragraph_quotes_what_a_paper_did_not_its_background_or_a_definition():
    import numpy as np

    from rag.tasks.summary_writers import _pick, roles_read

    defining = "Optimal transport is a powerful tool for comparing probability distributions across domains."
    hard = "Computing optimal transport plans between large empirical measures remains expensive in high dimension."
    ours = "Here we show that entropic optimal transport plans can be computed in linear time on sparse graphs."
    leaning = "To address this, we propose a sliced estimator of transport costs that scales linearly in samples."
    # the classifier takes the definition for the method and the paper's own "Here we show ..." for background
    r = _reading([defining, hard, ours], ["method", "background", "background"], [0.9, 0.7, 0.75])
    assert roles_read(r) == ["background", "background", "objective"]
    sentence, shown = _pick(r, np.zeros(3), set())
    assert sentence == shown == ours
    # a sentence whose opening alone leans is quoted by its main clause, the abstract's own words
    r = _reading([defining, hard, leaning], ["background", "background", "method"], [0.9, 0.7, 0.75])
    sentence, shown = _pick(r, np.zeros(3), set())
    assert sentence == leaning and shown == "We propose a sliced estimator of transport costs that scales linearly in samples."


def test_the_overview_names_every_theme_and_quotes_each_ones_contribution(several):
    from rag.reading.sentences import split_sentences
    from rag.reading.voice import defines

    for res in several:
        overview = split_sentences(res.summary)
        n = len(res.themes)
        assert f"in {n} theme{'s' if n != 1 else ''}" in overview[0], overview[0]
        assert not re.search(r"\b1 (themes|papers)\b", res.summary), res.summary
        if n > 1:
            # every theme named, with its paper count, and each theme's lead paper quoted once after the lead line
            for t in res.themes:
                assert t.title[1:].lower() in overview[0].lower(), (t.title, overview[0])
                k = len(t.citations)
                assert f"({k} paper{'s' if k != 1 else ''} " in overview[0], (t.title, overview[0])
            quoted = [int(m) for s in overview[1:] for m in MARK.findall(s)]
            assert len(overview) == 1 + n, overview
            assert [any(q == c.n for c in t.citations) for q, t in zip(quoted, res.themes)] == [True] * n
        for s in overview[1:] + [x for t in res.themes for x in split_sentences(t.text)]:
            assert MARK.search(s), s
        # no paragraph of several papers quotes a definition of a term as a paper's contribution
        quoted_definitions = [s for t in res.themes for s in split_sentences(t.text) if defines(MARK.sub("", s))]
        assert len(quoted_definitions) <= 1, quoted_definitions


class _Recording(BaseChatModel):
    """Answers each map prompt with a paragraph citing its sources, and the reduce prompt with sentences
    cited, uncited and citing no paper; keeps every prompt it was given."""

    prompts: list = []

    @property
    def _llm_type(self) -> str:
        return "recording-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kw):
        text = messages[-1].content
        self.prompts.append(text)
        if "overview paragraph" in text:
            out = ("The area studies how learning is spread over many machines [1][2]. "
                   "It is a fast-moving field. Several works disagree on this [99].")
        else:
            n = len(re.findall(r'<source n="', text))
            out = "Title: A theme\n" + " ".join(f"Source {i} studies part of the area [{i}]." for i in range(1, n + 1))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=out))])


def test_llm_mode_writes_each_theme_from_the_papers_extractive_mode_groups_there(seeds_library, several):
    from rag.reading.citations import quote

    extractive = several[1]  # federated and distributed learning: several themes
    assert extractive.topic == "federated and distributed learning" and len(extractive.themes) >= 2
    model = _Recording(prompts=[])
    res = summarise(extractive.topic, seeds_library, settings=seeds_library.settings, model=model)
    maps = [p for p in model.prompts if "overview paragraph" not in p]
    titles = {c.paper.paper_id: f'title="{quote(c.paper.title)}"' for c in extractive.citations}

    def papers_in(prompt: str) -> frozenset[str]:
        return frozenset(pid for pid, t in titles.items() if t in prompt)

    # the model writes each theme from exactly the papers extractive mode groups there, nothing else
    assert sorted(map(papers_in, maps), key=sorted) == sorted(
        (frozenset(c.paper.paper_id for c in t.citations) for t in extractive.themes), key=sorted)
    assert all(len(re.findall(r'<source n="', p)) == len(papers_in(p)) for p in maps)
    assert len(res.themes) == len(extractive.themes) and cited_ids(res) == cited_ids(extractive)
    # after: the overview keeps only sentences with a valid citation; the others are named in the flags
    assert res.summary.startswith("The library holds") and "The area studies how learning" in res.summary
    assert "fast-moving field" not in res.summary and "disagree" not in res.summary and "[99]" not in res.summary
    assert any("dropped from the overview" in f and "fast-moving" in f for f in res.flags)
    assert_citations_resolve(res)


def test_a_summary_quotes_what_a_paper_found_not_the_sentence_restating_the_topic(seeds_library):
    # Which sentence represents a paper is the answer scorer's pick with the topic as the question, blended with
    # the former rule (issue 30 item 4): for "transformers", the approximation-bounds paper is quoted by what it
    # proved (its upper bound, "We prove that a Transformer network ...", or its lower bound, "... we are the
    # first to rigorously prove ..."), not by "We explore the expressive power of Transformers ...", which
    # restates the topic.
    res = summarise("transformers", seeds_library, settings=seeds_library.settings)
    p = seed(seeds_library, "000:1")
    quoted = [s for t in res.themes for c in t.citations if c.paper.paper_id == p.paper_id
              for s in [c.evidence, *c.more_evidence]]
    assert quoted, [c.paper.title for c in res.citations]
    assert any("rigorously prove" in s or s.startswith("We prove that a Transformer network") for s in quoted), quoted
    assert not any(s.startswith("We explore the expressive power") for s in quoted), quoted


def test_a_request_s_framing_is_not_read_as_its_area():
    from rag.tasks.summarise import unframed

    for request_, area in [("papers on optimal transport", "optimal transport"),
                           ("Summarise recent work on diffusion models.", "diffusion models"),
                           ("What does the library say about in-context learning?", "in-context learning"),
                           ("an overview of graph neural networks", "graph neural networks")]:
        assert unframed(request_) == area, request_
    # an area's own words stay, and a request that is only framing is left as it is
    for name in ("policy gradient methods in reinforcement learning", "methods for causal inference",
                 "operations research", "papers on"):
        assert unframed(name) == name


def test_a_question_asking_for_papers_is_listed_by_the_model_from_the_summarys_papers(seeds_library, transport):
    # with a language model, "Which papers study optimal transport?" is the summary's papers in its themes,
    # written by the model and checked as a summary's paragraphs are
    from rag.tasks.ask import ask

    ans = ask("Which papers study optimal transport?", seeds_library, settings=seeds_library.settings, model=ByPrompt())
    assert ans.mode == "llm" and ans.question_kind == "papers" and ans.citations, ans.answer
    assert ans.answer.startswith("The library holds") and {c.paper.paper_id for c in ans.citations} <= cited_ids(transport)
