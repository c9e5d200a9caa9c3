"""compare: a literature table whose every cell is its paper's own sentence of the column's role, or `not stated`.

Cell choice is tested on hand-made readings (no embedder); tables on the seeds with the real offline
embedder (roles need MiniLM); the CLI contract and bad inputs through `paperchat compare`; LLM mode with
scripted fakes whose phrases must pass the check against their paper or fall back to the quote.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rag.reading.citations import quote
from rag.records import Hit, Paper
from rag.tasks.compare_cells import ROLE_COLUMNS, clauses, pick_cells
from rag.tasks.compare_render import render_text, to_csv, to_markdown, trim
from rag.tasks.comparison import COLUMNS, HEADINGS, NOT_STATED
from rag.tasks.topicality import Reading
from seed_questions import seed


def reading(sentences_roles: list[tuple[str, str]], rel: list[float] | None = None) -> Reading:
    sents = [s for s, _ in sentences_roles]
    p = Paper(paper_id="p1", abstract=" ".join(sents), title="A paper")
    rel = rel or [0.5] * len(sents)
    return Reading(Hit(paper=p, score=1.0, text=""), sents, [r for _, r in sentences_roles], np.array(rel))


# ----------------------------------------------------------------------------------------- which sentence


def test_each_column_takes_its_own_role_and_the_most_relevant_one():
    r = reading([("Transport plans are costly to compute at scale.", "background"),
                 ("We propose a sparse solver for entropic transport.", "method"),
                 ("We use a multiscale scheme on the cost matrix.", "method"),
                 ("The solver is ten times faster than Sinkhorn.", "result")], [0.5, 0.6, 0.7, 0.6])
    cells = pick_cells(r)
    assert cells["problem"].sentence == "Transport plans are costly to compute at scale."
    assert cells["approach"].sentence == "We use a multiscale scheme on the cost matrix."  # the more relevant method
    assert cells["finding"].role == "result" and cells["finding"].position == 3
    assert all(c.paper_id == "p1" for c in cells.values())


def test_a_missing_role_is_not_stated_never_another_roles_sentence():
    r = reading([("Graph colouring is hard.", "background"), ("We prove a lower bound for greedy colouring.", "result")])
    cells = pick_cells(r)
    assert cells["approach"].text == NOT_STATED and not cells["approach"].stated and cells["approach"].position == -1
    assert cells["finding"].sentence == "We prove a lower bound for greedy colouring."
    # and with no role known at all (a non-MiniLM embedder), no role column is filled
    unknown = pick_cells(reading([("We propose X.", "other"), ("X is faster.", "other")]))
    assert all(not unknown[c].stated for c in ("problem", "approach", "finding"))


def test_setting_is_a_sentence_naming_data_model_or_assumptions_not_background():
    r = reading([("Prior work evaluates on ImageNet only.", "background"),
                 ("We propose a pruning rule.", "method"),
                 ("We evaluate on CIFAR-10 and ImageNet with ResNets.", "method"),
                 ("Pruning keeps accuracy within one point.", "result")], [0.3, 0.6, 0.5, 0.6])
    cells = pick_cells(r)
    assert cells["approach"].sentence == "We propose a pruning rule."
    assert cells["setting"].sentence == "We evaluate on CIFAR-10 and ImageNet with ResNets."
    none = pick_cells(reading([("Prior work uses ImageNet.", "background"), ("We propose a rule.", "method")]))
    assert not none["setting"].stated


def test_setting_never_repeats_a_sentence_already_in_another_cell():
    s = "We prove convergence of the method under Lipschitz gradients and bounded noise."
    cells = pick_cells(reading([("Optimisation is hard.", "background"), (s, "result")]))
    assert cells["finding"].sentence == s and not cells["setting"].stated


def test_a_cell_prefers_a_sentence_of_its_role_that_stands_alone():
    leaning = "Getting there requires reworking social choice theory's textbook path for a better RLHF fit."
    alone = "We recast preference optimisation as a social choice rule over preference profiles."
    r = reading([("Direct preference optimisation bypasses reward modelling.", "background"),
                 (leaning, "method"), (alone, "method"), ("The framework admits non-convex losses.", "result")],
                [0.5, 0.8, 0.5, 0.6])
    cells = pick_cells(r)
    assert cells["approach"].text == alone and not cells["approach"].note  # the less relevant one, but it reads alone
    # only a leaning opening: the main clause is shown, the whole sentence kept for the highlight
    opening = "To address these challenges, we propose a sparse solver for entropic transport."
    cut = pick_cells(reading([("Transport is costly.", "background"), (opening, "method")]))["approach"]
    assert cut.text == "We propose a sparse solver for entropic transport." and cut.sentence == opening
    # nothing of the role stands: the leaning sentence, and the cell says why
    only = pick_cells(reading([("Transport is costly.", "background"), (leaning, "method")]))["approach"]
    assert only.text == leaning and "leans on the one before" in only.note


LEANING = st.sampled_from(["Getting there requires reworking the textbook path for a better fit.",
                           "It elevates the connection to a broad viewpoint on preference optimisation.",
                           "These models fail to bind colours to objects in scenes with several objects.",
                           "For (i), we analyze the convergence of gradient descent under heavy-tailed noise."])
STANDING = st.sampled_from(["We propose a sparse solver for entropic optimal transport.",
                            "Both supervised fine-tuning and RLHF improve helpfulness on every benchmark.",
                            "Our method converges twice as fast as Sinkhorn on every cost matrix.",
                            "To address this, we train a single model on all tasks at once."])


@given(st.lists(st.tuples(st.one_of(LEANING, STANDING), st.sampled_from(["background", "objective", "method", "result"]),
                          st.floats(0.0, 1.0)), min_size=1, max_size=8))
def test_a_cell_leans_only_when_no_sentence_of_its_role_stands(rows):
    from rag.reading.standalone import standing

    r = reading([(s, role) for s, role, _ in rows], [x for _, _, x in rows])
    for column, cell in pick_cells(r).items():
        if column == "setting" or not cell.stated:
            continue
        stands = [s for s, role, _ in rows if role in ROLE_COLUMNS[column] and standing(s) is not None]
        if stands:
            assert standing(cell.text) == cell.text and not cell.note, (column, cell.text)
        else:
            assert cell.text == cell.sentence and cell.note


PLANTED = [("As shown in [3], attention layers forget tokens beyond their window.", "background"),
           ("We propose a recurrent memory that extends attention, as Vaswani et al. [5].", "method"),
           ("Memory recall improves by 12 points [2, 4] and the earth is flat [1].", "result"),
           ("We evaluate on the long-range arena benchmark with inputs in [0, 1].", "other")]


def test_cells_never_keep_the_abstracts_own_reference_marks():
    """Issue 28 item 8: a table's rows are numbered [n]; an abstract's "[3]" in a cell reads as row 3."""
    cells = pick_cells(reading(PLANTED))
    shown = {c: cells[c].text for c in cells}
    assert shown["problem"] == "As shown in, attention layers forget tokens beyond their window."
    assert shown["approach"] == "We propose a recurrent memory that extends attention, as Vaswani et al."
    assert shown["finding"] == "Memory recall improves by 12 points and the earth is flat."
    assert shown["setting"] == "We evaluate on the long-range arena benchmark with inputs in (0, 1)."  # an interval
    assert cells["finding"].sentence == PLANTED[2][0]  # the abstract's sentence itself, for highlighting it


def test_markdown_and_csv_of_a_real_table_hold_no_planted_marks(tmp_path):
    from rag.library import Library
    from rag.library.retrieval import Filters
    from rag.settings import Settings
    from rag.tasks.compare import compare

    f = tmp_path / "planted.jsonl"
    f.write_text(json.dumps({"id": "p1", "title": "Recurrent memory for attention",
                             "abstract": " ".join(s for s, _ in PLANTED)}) + "\n" + json.dumps(
        {"id": "p2", "title": "Sparse kernels", "abstract": "Long sequences are slow to attend over. We propose "
         "sparse kernels for attention. They run four times faster on the long-range arena benchmark."}) + "\n")
    lib = Library(Settings(home=tmp_path / "home", embedder="minilm"))
    lib.ingest([f], progress=False)
    table = compare("", lib, settings=lib.settings, filters=Filters(papers=["p1", "p2"]))
    row = next(r for r in table.rows if r.paper.paper_id == "p1")
    stated = [row.cell(c).text for c in COLUMNS if row.cell(c).stated]
    assert stated and not any(m in t for t in stated for m in ("[1]", "[3]", "[5]", "[2, 4]"))
    md, sheet = to_markdown(table), to_csv(table)
    for t in stated:
        assert t.replace("|", "\\|") in md
    cells_csv = [v for r in csv.DictReader(io.StringIO(sheet)) for k, v in r.items() if k in COLUMNS]
    assert cells_csv and not any(m in v for v in cells_csv for m in ("[1]", "[3]", "[5]"))


def test_clauses_are_substrings():
    s = "We train a model on text, which learns fast; it generalises — even to code"
    assert clauses(s) == ["We train a model on text", "which learns fast", "it generalises", "even to code"]
    assert all(c in s for c in clauses(s))


@hsettings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab cdé…,"), max_size=200), st.integers(min_value=2, max_value=80))
def test_trim_fits_and_cuts_at_a_word_boundary(text, limit):
    out = trim(text, limit)
    norm = " ".join(text.split())
    assert len(out) <= limit
    if len(norm) <= limit:
        assert out == norm
    else:
        assert out.endswith("…")
        kept = out[:-1]
        assert norm.startswith(kept)
        # the cut falls between words, unless the cell holds no whole word
        assert norm[len(kept)] in " ,;:" or " " not in norm[: max(1, limit - 1)]


# ----------------------------------------------------------------------------------------- on the seeds

@pytest.fixture(scope="module")
def transport(seeds_library):
    from rag.tasks.compare import compare

    return compare("optimal transport", seeds_library, settings=seeds_library.settings)


@pytest.mark.slow
def test_rlhf_cells_read_alone_or_say_why_not(seeds_library):
    from rag.reading.standalone import standing
    from rag.tasks.compare import compare

    table = compare("reinforcement learning from human feedback", seeds_library, settings=seeds_library.settings)
    dpo = next(r for r in table.rows if "Direct Preference Optimization" in r.paper.abstract)
    for c in ROLE_COLUMNS:
        cell = dpo.cell(c)
        assert not cell.text.lower().startswith("chief among which")  # never a fragment cut from a clause
        # the DPO abstract's two method sentences both lean ("Getting there ...", "It elevates ..."): the cell
        # shows one and says so; any other cell reads alone
        assert standing(cell.text) == cell.text or "leans on the one before" in cell.note, (c, cell.text)


@pytest.mark.slow
def test_rows_are_the_papers_a_summary_is_about(seeds_library, transport):
    ids = [r.paper.paper_id for r in transport.rows]
    ot = {seed(seeds_library, w).paper_id for w in ("003:2", "000:11")}
    bandit = seed(seeds_library, "003:13").paper_id
    assert ot <= set(ids) and bandit not in ids  # the bandit paper's contribution is not about transport
    assert bandit in {h.paper.paper_id for h in transport.related}
    assert not transport.abstained and transport.mode == "extractive"
    for row in transport.rows:
        assert row.theme in transport.themes
        stated = [row.cell(c) for c in COLUMNS if row.cell(c).stated]
        assert stated  # every on-topic paper states something
        for c in COLUMNS:
            cell = row.cell(c)
            if not cell.stated:
                assert cell.text == NOT_STATED
                continue
            assert cell.paper_id == row.paper.paper_id and cell.sentence in row.paper.abstract
            # the sentence or its clause, verbatim (a main clause cut from a leaning opening: first letter raised),
            # its own [n] marks dropped (rag.reading.citations.quote)
            said = quote(cell.sentence)
            assert cell.text in said or cell.text[:1].lower() + cell.text[1:] in said
            if c in ROLE_COLUMNS:
                assert cell.role in ROLE_COLUMNS[c], (c, cell.role)
        role_cells = [row.cell(c).sentence for c in ROLE_COLUMNS if row.cell(c).stated]
        assert len(role_cells) == len(set(role_cells))  # no sentence in two role columns


@pytest.mark.slow
def test_a_table_on_an_acronym_has_the_rows_of_its_name(seeds_library, transport):
    from rag.tasks.compare import compare

    # "OT" alone tabled one paper; the seeds spell it out ("optimal transport (OT)"), and so does the table now
    table = compare("OT", seeds_library, settings=seeds_library.settings)
    assert [r.paper.paper_id for r in table.rows] == [r.paper.paper_id for r in transport.rows]
    assert table.topic == "OT"


@pytest.mark.slow
def test_terminal_table_fits_100_columns_and_trims_with_an_ellipsis(transport):
    text = render_text(transport, 100)
    assert all(len(line) <= 100 for line in text.splitlines()), max(text.splitlines(), key=len)
    assert "Problem" in text and "Approach" in text and "Finding" in text
    # the Setting column only when some row states a setting (an empty column is left out)
    assert ("Setting" in text) == any(r.cell("setting").stated for r in transport.rows)
    assert "…" in text  # abstract sentences do not fit a 17-column cell in four lines
    assert "[1]" in text and "References" in text


@pytest.mark.slow
def test_markdown_and_csv_hold_the_full_text(transport):
    md = to_markdown(transport)
    shown = " | ".join(HEADINGS[c] for c in transport.shown_columns())
    assert f"| Theme | Paper | {shown} |" in md and set(transport.shown_columns()) >= {"problem", "approach", "finding"}
    first = transport.rows[0]
    cell = next(first.cell(c) for c in COLUMNS if first.cell(c).stated)
    assert cell.text.replace("|", "\\|") in md
    rows = list(csv.DictReader(io.StringIO(to_csv(transport))))
    assert len(rows) == len(transport.rows) and rows[0]["paper_id"] == first.paper.paper_id
    assert rows[0][f"{cell.column}_sentence"] == cell.sentence


@pytest.mark.slow
def test_chosen_papers_are_all_rows_in_the_order_given(seeds_library):
    from rag.library.retrieval import Filters
    from rag.tasks.compare import compare

    ids = [seed(seeds_library, w).paper_id for w in ("001:9", "003:2", "000:13")]  # diffusion, OT, Mamba
    table = compare("", seeds_library, settings=seeds_library.settings, filters=Filters(papers=ids))
    assert sorted(r.paper.paper_id for r in table.rows) == sorted(ids)
    if len(table.themes) == 1:
        assert [r.paper.paper_id for r in table.rows] == ids


# ----------------------------------------------------------------------------------------- the command


@pytest.mark.slow
def test_cli_compare_json_csv_markdown_and_bibtex(seeds_home, seeds_library, tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(seeds_home))
    bib = tmp_path / "rows.bib"
    assert main(["compare", "optimal transport", "--json", "--k", "3", "--bibtex", str(bib)]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["columns"] == ["problem", "approach", "finding", "setting"] and 1 <= len(js["rows"]) <= 3
    row = js["rows"][0]
    assert {"paper_id", "title", "venue", "year", "theme", "cells"} <= set(row)
    for c in js["columns"]:
        cell = row["cells"][c]
        assert {"text", "sentence", "role", "score", "paper_id", "stated"} <= set(cell)
        assert cell["paper_id"] == row["paper_id"]
    assert bib.read_text(encoding="utf-8").count("@inproceedings{") == len(js["rows"])
    assert main(["compare", "optimal transport", "--csv"]) == 0
    assert capsys.readouterr().out.startswith("n,paper_id,title,venue,year,theme,score,problem,")
    assert main(["compare", "optimal transport", "--markdown", "--venue", "ICML"]) == 0
    md = capsys.readouterr().out
    assert "| Theme | Paper |" in md and "ICML" in md
    assert main(["compare", "optimal transport", "--venue", "ICLR"]) == 1  # no ICLR paper on it: no table, one line
    assert "under these filters" in capsys.readouterr().err
    assert main(["compare", "optimal transport"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines())


@pytest.mark.slow
def test_cli_bad_inputs_give_one_line_and_a_failing_status(seeds_home, seeds_library, tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(seeds_home))
    for argv, status, words in [
        (["compare", "--papers", "doi:10.0/nothing"], 2, "no paper with id 'doi:10.0/nothing'"),
        (["compare", "how to bake sourdough bread with a crispy crust"], 1, "has no papers on"),
        (["compare"], 2, "name a topic"),
    ]:
        assert main(argv) == status, argv
        cap = capsys.readouterr()
        lines = cap.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("paperchat: ") and words in lines[0], cap.err
        assert not cap.out.strip()


def test_cli_empty_library_is_one_line(tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    assert main(["compare", "optimal transport"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is empty" in err[0] and "paperchat ingest" in err[0]


# ----------------------------------------------------------------------------------------- LLM mode (fakes)


class CountingFake(FakeListChatModel):
    calls: int = 0

    def _call(self, messages, stop=None, run_manager=None, **kw):
        type(self).calls += 1
        return super()._call(messages, stop, run_manager, **kw)


@pytest.mark.slow
def test_llm_cells_are_checked_phrases_and_failures_fall_back_to_the_quote(seeds_library):
    from rag.library.retrieval import Filters
    from rag.tasks.compare import compare

    ids = [seed(seeds_library, w).paper_id for w in ("003:2", "000:11")]
    quoted = compare("optimal transport", seeds_library, settings=seeds_library.settings, filters=Filters(papers=ids))
    first, second = quoted.rows
    # A faithful phrase: the first words of the paper's own finding (or approach) sentence.
    col = "finding" if first.cell("finding").stated else "approach"
    faithful = " ".join(first.cell(col).sentence.split()[:14])
    script = (f"[1] Problem: not stated | Approach: {faithful if col == 'approach' else 'x'} | "
              f"Finding: {faithful if col == 'finding' else 'x'} | Setting: not stated\n"
              "[2] Problem: cooking pasta al dente | Approach: quantum annealing of proteins | "
              "Finding: the stock market rises on Mondays | Setting: not stated\n"
              "[7] Problem: a row for a source that does not exist | Approach: - | Finding: - | Setting: -")
    CountingFake.calls = 0
    model = CountingFake(responses=[script])
    table = compare("optimal transport", seeds_library, settings=seeds_library.settings, filters=Filters(papers=ids),
                    model=model)
    assert CountingFake.calls == 1 and table.mode == "llm"  # one call for the whole table
    assert [r.paper.paper_id for r in table.rows] == [r.paper.paper_id for r in quoted.rows]
    good = table.rows[0].cell(col)
    assert good.source == "model" and good.text == faithful and good.grade == "answers"
    assert good.sentence == first.cell(col).sentence
    for c in ("problem", "approach", "finding"):  # made-up phrases fail and show the quote, saying so
        cell, was = table.rows[1].cell(c), second.cell(c)
        if was.stated:
            assert cell.source == "fallback" and cell.text == was.text and "failed the check" in cell.note
        else:
            assert not cell.stated and cell.text == NOT_STATED
    assert any("[7]" in f for f in table.flags)
    if any(second.cell(c).stated for c in ("problem", "approach", "finding")):
        text = render_text(table, 100)
        assert "[quoted]" in text and "failed the check" in text


# ----------------------------------------------------------------------------------------- LLM mode (a real server)


@pytest.mark.slow
def test_real_small_model_cells_are_checked_or_fall_back(seeds_library, llama_server):
    """SmolLM2-135M through llama.cpp: whatever it writes, no cell shows a phrase its paper does not back."""
    from rag.library.retrieval import Filters
    from rag.tasks.compare import compare

    settings = seeds_library.settings.model_copy(update={
        "llm": "openai", "openai_base_url": llama_server, "model": "smollm2", "openai_api_key": None})
    ids = [seed(seeds_library, w).paper_id for w in ("003:2", "000:11")]
    table = compare("optimal transport", seeds_library, settings=settings, filters=Filters(papers=ids))
    assert table.mode == "llm" and len(table.rows) == 2
    for row in table.rows:
        for c in COLUMNS:
            cell = row.cell(c)
            assert cell.source in ("model", "fallback", "quoted", "none")
            if cell.source == "model":
                assert cell.grade == "answers" and cell.sentence in row.paper.abstract
            elif cell.stated:
                # the quote, verbatim, or its main clause when only the opening leans ("As a corollary, in
                # the affine Brenier regime …" shows as "In the affine Brenier regime …")
                assert cell.text in cell.sentence or cell.text[:1].lower() + cell.text[1:] in cell.sentence


from test_llm_server import llama_server  # noqa: E402,F401  (llama.cpp serving SmolLM2 on loopback)


def test_the_problem_cell_states_the_problem_not_the_proposal(seeds_library):
    # The column as the answer scorer's question ("What problem does this paper address?", issue 30 item 4): the
    # anytime online-learning paper's Problem cell is the gap it closes, not its opening "We propose ..." (which
    # the role classifier calls background, and which relevance to its own abstract ranked first).
    from rag.library.retrieval import Filters
    from rag.tasks.compare import compare

    p = seed(seeds_library, "003:19")
    table = compare("", seeds_library, settings=seeds_library.settings, filters=Filters(papers=[p.paper_id]))
    problem = table.rows[0].cell("problem")
    assert "extending these guarantees to the anytime setting" in problem.sentence, problem.sentence
    assert not problem.sentence.startswith("We propose")
