"""A summary holds its area (issue 33): areas named the way researchers name them, with a modifier, are
summarised from the seeds' papers on them; a summary covers its area up to --k and says how many more
there are; its one paper is never graded weak against its own topic; `summarise --latex` writes prose
with \\cite{key} marks whose keys are the .bib's.

On the seeds with the real offline embedder (one library per session, see conftest).
"""

from __future__ import annotations

import re

import pytest

from rag.tasks.summarise import summarise
from seed_questions import seed

pytestmark = pytest.mark.slow


def cited(res) -> set[str]:
    return {c.paper.paper_id for c in res.citations}


def ids(lib, *where) -> set[str]:
    return {seed(lib, w).paper_id for w in where}


@pytest.mark.parametrize("topic, want", [
    # the whole-phrase rule read "optimal transport machine learning" as one phrase and found it nowhere
    ("optimal transport in machine learning", ("003:2", "000:11")),
    pytest.param("optimizers for training deep networks", ("003:5", "003:6"),  # RMNP, Block Adaptive Signum
                 marks=pytest.mark.xfail(reason="issue 33, left: the name's words are mostly its setting; RMNP is "
                                         "covered (0.62), BAS is at 0.03 against the 0.40 cut-off: it names "
                                         "'optimizers' but one of the setting's three words, so its head does not "
                                         "name the area, and its BM25 share and cosine gap hold it down "
                                         "(bench/area_explain.py, docs/quality.md)", strict=False)),
    ("graph neural networks in machine learning", ("004:13",)),
    ("diffusion models in machine learning", ("001:9", "004:19")),
])
def test_an_area_named_with_a_modifier_is_summarised_from_its_papers(seeds_library, topic, want):
    res = summarise(topic, seeds_library, settings=seeds_library.settings)
    assert not res.abstained, res.summary
    assert ids(seeds_library, *want) <= cited(res), res.render_text()
    assert "no papers on this topic" not in res.summary


def test_fine_tuning_of_large_language_models_holds_its_papers_not_the_whole_library(seeds_library):
    res = summarise("fine-tuning of large language models", seeds_library, settings=seeds_library.settings)
    # LoRA for fine-tuning large models; iterative self-improvement fine-tunes an LLM. LoRA's abstract names
    # "fine-tuning large models", never the whole name: the head, in the setting, names the area.
    assert ids(seeds_library, "003:10", "001:11") <= cited(res), res.render_text()
    # a bandit's switching costs and the equivariant tensor products are no part of it
    assert not ids(seeds_library, "003:13", "003:12") & cited(res)
    assert len(res.citations) <= 8


def test_reasoning_in_large_language_models_holds_its_papers_not_the_other_language_model_ones(seeds_library):
    res = summarise("reasoning in large language models", seeds_library, settings=seeds_library.settings)
    # self-improvement on reasoning tasks of growing difficulty; RLIF elicits reasoning from internal feedback
    assert ids(seeds_library, "001:11", "000:4") <= cited(res), res.render_text()
    # distribution shifts of language models, and the formal languages an RNN recognises, are no part of it:
    # they came in on the setting's words and their rank, unlike the area's likeliest papers (the company stage)
    assert not ids(seeds_library, "000:14", "003:16") & cited(res), res.render_text()


def test_reasoning_named_in_one_word_is_summarised_not_refused(seeds_library):
    # The seeds' best chunk for "reasoning" is at cosine 0.35: a cosine rule asked first said "no papers on
    # this topic". The area scorer alone decides now (bench/topic_cover.py: it still keeps no paper for any of
    # 18 areas the seeds do not hold).
    res = summarise("reasoning", seeds_library, settings=seeds_library.settings)
    assert not res.abstained and "no papers on this topic" not in res.summary, res.summary
    # self-improvement on reasoning tasks of growing difficulty; GRPO's trade-off of reasoning plasticity
    assert ids(seeds_library, "001:11", "000:7") <= cited(res), res.render_text()
    # implicit models name "LLM reasoning" only as the last of four domains their theory is validated across
    assert not ids(seeds_library, "004:9") & cited(res), res.render_text()


def test_an_area_named_as_a_noun_compound_holds_the_paper_that_names_it_by_verb_and_object(seeds_library):
    # The conformal-prediction paper opens "Quantifying uncertainty is crucial ..." and never writes "uncertainty
    # quantification": the summary said "The library has no papers on this topic" (its p 0.32, not named).
    res = summarise("uncertainty quantification", seeds_library, settings=seeds_library.settings)
    assert not res.abstained and "no papers on this topic" not in res.summary, res.summary
    assert ids(seeds_library, "004:2") <= cited(res), res.render_text()


def test_a_summary_says_how_many_more_papers_its_area_holds_and_how_to_see_them(seeds_library):
    full = summarise("optimal transport", seeds_library, settings=seeds_library.settings)
    assert len(full.citations) >= 2 and not full.more
    one = summarise("optimal transport", seeds_library, settings=seeds_library.settings, k=1)
    assert len(one.citations) == 1 and one.more == len(full.citations) - 1
    n = len(full.citations)
    assert f'--k {n}' in one.more_text and one.more_text in one.render_text()
    assert one.as_json()["more"] == one.more
    # the overview counts what it shows, and does not say the library holds only that ("holds 1 paper" above
    # "1 more paper on this area" was untrue)
    assert one.summary.startswith(f"The library holds {n} papers on “optimal transport”; here is the nearest [1].")


def test_a_one_paper_summary_is_never_graded_weak_against_its_own_topic(seeds_library):
    for topic in ("reinforcement learning from human feedback", "test-time scaling"):
        res = summarise(topic, seeds_library, settings=seeds_library.settings)
        if len(res.citations) == 1:
            every = res.citations + [c for t in res.themes for c in t.citations]
            assert all(c.grade != "weak" for c in every), (topic, [(c.grade, c.grade_score) for c in every])


def test_summarise_latex_writes_prose_whose_cites_are_the_bib_keys(seeds_home, seeds_library, tmp_path, monkeypatch,
                                                                    capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(seeds_home))
    tex = tmp_path / "related.tex"
    assert main(["summarise", "optimal transport", "--latex", str(tex)]) == 0
    body = tex.read_text(encoding="utf-8")
    bib = (tmp_path / "related.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    cites = {k for group in re.findall(r"\\cite\{([^}]*)\}", body) for k in group.split(",")}
    assert cites and cites == keys  # every reference cited, every cite resolves
    assert not re.search(r"\[\d+\]", body)  # no numbered marks left
    assert "\\paragraph{" in body or "The library holds" in body
    # what LaTeX would choke on is escaped outside math: no bare % or & in the prose
    prose = "\n".join(ln for ln in body.splitlines() if not ln.startswith("%"))
    assert not re.search(r"(?<!\\)[%&#]", prose)
    assert body.count("{") == body.count("}")


def test_a_name_with_a_setting_is_named_by_its_head_in_a_paper_in_that_setting():
    from rag.tasks.area_scorer import in_setting, split_name, topic_forms
    from rag.tasks.topicality import _content, naming

    assert split_name("in-context learning of large language models") == ("in-context learning", "large language models")
    assert split_name("pruning and quantization for model compression") == ("pruning and quantization", "model compression")
    assert split_name("optimal transport") == ("optimal transport", "")
    llm = topic_forms("in-context learning of large language models")[2]
    acr = naming("large language models")[1]

    def reads(text):
        return in_setting(set(_content(text)[0]), text, llm, acr)

    assert reads("We fine-tune large models with low-rank adapters.")  # two of the setting's three words
    assert reads("Demonstrations in the prompt steer LLMs.")  # its acronym
    assert not reads("Transformers trained from scratch learn linear regression in context.")
    rlhf = topic_forms("reinforcement learning from human feedback")[2]
    # an RL paper with no human in it is not in "human feedback": "reinforcement learning" alone does not name RLHF
    assert not in_setting(set(_content("Policy gradients for Atari with sparse rewards.")[0]), "", rlhf, set())


def test_the_area_scorer_reads_a_modifier_as_head_and_setting():
    from rag.tasks.area_scorer import topic_forms

    whole, heads, tails, _ = topic_forms("optimal transport in machine learning")
    assert heads == [("optim", "transport")] and tails == [("machin", "learn")]
    whole, heads, tails, _ = topic_forms("graph neural networks")
    assert heads == whole and tails == []


def test_the_latex_paragraph_compiles_with_its_bib(seeds_library, tmp_path):
    import shutil
    import subprocess

    if not (shutil.which("pdflatex") and shutil.which("bibtex")):
        pytest.skip("pdflatex/bibtex not installed (apt-get install texlive-latex-base)")
    from rag.exports.latex import write_latex

    res = summarise("diffusion models", seeds_library, settings=seeds_library.settings)
    write_latex(res, tmp_path / "rel.tex")
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}\\input{rel}"
                                       "\\bibliographystyle{plain}\\bibliography{rel}\\end{document}\n")
    run = lambda *cmd: subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)  # noqa: E731
    for cmd in (["pdflatex", "-interaction=nonstopmode", "main.tex"], ["bibtex", "main"],
                ["pdflatex", "-interaction=nonstopmode", "main.tex"], ["pdflatex", "-interaction=nonstopmode", "main.tex"]):
        run(*cmd)
    log = (tmp_path / "main.log").read_text(errors="replace")
    assert (tmp_path / "main.pdf").exists() and "\n! " not in log, log[-2000:]
    assert "undefined" not in log  # every \cite found its entry


def test_a_paper_unlike_the_areas_likeliest_papers_is_less_probably_of_the_area():
    # The shipped second stage (rag.tasks.area_scorer.company): of two papers the first stage reads alike,
    # the one apart from the area's likeliest papers (an auction-price paper "with deep recurrent neural
    # networks" among methods explaining networks' predictions) is less probably of the area.
    import numpy as np

    from rag.tasks.area_scorer import logits, model

    m = model()
    assert "company_w" in m and float(m["company_w"]) > 0
    x = np.repeat(m["mean"][None, :], 5, axis=0)  # every paper the same to the first stage
    x[:3, 0] += m["std"][0]  # three clearly likelier: their contribution is closer to the area
    rng = np.random.default_rng(0)
    topic = rng.normal(size=16)
    vecs = np.array([topic + 0.3 * rng.normal(size=16) for _ in range(4)] + [rng.normal(size=16)])
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    z = logits(x, m, vecs)
    assert z[3] > z[4]  # alike the likeliest three, against apart from them
    assert np.allclose(logits(x, m)[3], logits(x, m)[4])  # the first stage alone cannot tell them apart
    # a lone candidate has no others to be like: the stage adds only its bias
    assert np.allclose(logits(x[:1], m, vecs[:1]), logits(x[:1], m) + float(m["company_b"]))


def test_an_area_in_british_spelling_is_summarised_from_the_papers_of_its_american_spelling(seeds_library):
    # "optimisation" and "regularisation" answered "The library has no papers on this topic": Snowball stems
    # "optimisation" to "optimis" and "optimization" to "optim", so no paper named the area by its words
    # (rag.reading.stems reads -ise as -ize on both sides)
    american = {t: cited(summarise(t, seeds_library, settings=seeds_library.settings))
                for t in ("regularization", "optimization")}
    regularisation = summarise("regularisation", seeds_library, settings=seeds_library.settings)
    assert not regularisation.abstained and cited(regularisation) == american["regularization"], regularisation.summary
    optimisation = summarise("optimisation", seeds_library, settings=seeds_library.settings)
    assert cited(optimisation) == american["optimization"], optimisation.render_text()


def test_an_area_in_british_spelling_is_read_as_its_papers_spell_it(seeds_library):
    # The stems met, but MiniLM read "generalisation" further from the seeds' generalization paper (cosine 0.25
    # against 0.32): "generalisation theory" answered "The library has no papers on this topic"
    res = summarise("generalisation theory", seeds_library, settings=seeds_library.settings)
    assert cited(res) == cited(summarise("generalization theory", seeds_library, settings=seeds_library.settings)) \
        and cited(res), res.summary
    assert "on “generalization theory”" in res.summary and res.topic == "generalisation theory", res.summary
    # a word the papers write only as it is typed stays ("supervised", never "supervized")
    from rag.tasks.summarise import read_as

    assert read_as("supervised learning", seeds_library) == "supervised learning"


@pytest.mark.parametrize("acronym, name", [("RLHF", "reinforcement learning from human feedback"),
                                           ("OT", "optimal transport"),
                                           ("RL from human feedback", "reinforcement learning from human feedback")])
def test_an_area_typed_as_its_acronym_is_summarised_from_the_papers_of_its_name(seeds_library, acronym, name):
    # "RLHF", "OT" and "RL from human feedback" summarised one paper each where their names summarise two: an
    # acronym is read as the seeds' abstracts spell it out ("reinforcement learning from human feedback (RLHF)")
    res = summarise(acronym, seeds_library, settings=seeds_library.settings)
    assert cited(res) == cited(summarise(name, seeds_library, settings=seeds_library.settings)), res.render_text()
    assert f"on “{name}”" in res.summary and res.topic == acronym, res.summary  # how it was read, and what was asked


@pytest.mark.parametrize("request_", ["papers on optimal transport", "What does the library say about optimal transport?",
                                      "a survey of recent advances in optimal transport"])
def test_a_request_framed_around_its_area_is_summarised_as_the_area(seeds_library, request_):
    # "papers on optimal transport" read "papers" as the area and "optimal transport" as its setting: one of
    # the two transport papers was left out
    res = summarise(request_, seeds_library, settings=seeds_library.settings)
    assert cited(res) == cited(summarise("optimal transport", seeds_library, settings=seeds_library.settings)), \
        res.render_text()
    assert "on “optimal transport”" in res.summary and res.topic == request_, res.summary


@pytest.mark.parametrize("topic, bare", [("fine-tuning in machine learning", "fine-tuning"),
                                         ("attention for deep learning", "attention")])
def test_a_setting_naming_the_whole_field_restricts_nothing(seeds_library, topic, bare):
    # "… in machine learning" was read as a setting a paper must write: "fine-tuning in machine learning" left
    # out the self-improvement paper that fine-tunes an LLM (its abstract never writes "machine learning"), and
    # "attention for deep learning" the paper on the standard algorithm for computing attention
    want = {"fine-tuning": ("001:11",), "attention": ("004:11", "004:6")}[bare]
    res = summarise(topic, seeds_library, settings=seeds_library.settings)
    assert ids(seeds_library, *want) <= cited(res), res.render_text()
    assert ids(seeds_library, *want) <= cited(summarise(bare, seeds_library, settings=seeds_library.settings))
