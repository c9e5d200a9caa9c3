"""The terminal shows an abstract's markup as a reader wants it (issue 31 item 7): emphasis plain, TeX as readable
Unicode, in every command's text output (search, ask, summarise, cite, compare); `--json` keeps the raw text."""

from __future__ import annotations

import json

import pytest

from rag.exports.terminal import readable, tex

MATHY = ("ITSPACE transport", "We propose **ITSPACE**, an *unregularized* optimal transport solver for Bures--Wasserstein "
         r"barycentres. Optimal transport plans converge at rate $\varepsilon^{\frac{1}{d+2}}$ under entropic "
         r"regularisation, with cost $\mathcal{O}(\varepsilon^{-{d_{0}}/{\alpha}})$ for optimal transport.")


@pytest.mark.parametrize("span, shown", [
    (r"$\varepsilon^{\frac{1}{d+2}}$", "ε^(1/(d+2))"),  # the issue's own example
    (r"$\mathcal{O}(\varepsilon^{-{d_{0}}/{\alpha}})$", "𝒪(ε^(-d_0/α))"),
    (r"$\frac{a+b}{c}$", "(a+b)/c"),  # pylatexenc alone: "a+b/c"
    (r"$\|x\|_2$", "‖x‖_2"),  # pylatexenc alone: "x_2"
    (r"$O(n\log n)$", "O(n log n)"),
    (r"$\mathbb{R}^{d\times d}$", "ℝ^(d×d)"),
    (r"$\eps$", "eps"),  # a macro of the abstract's own: by its name, never an empty gap
])
def test_tex_reads_as_unicode_with_its_grouping(span, shown):
    assert tex(span) == shown


def test_emphasis_and_text_commands_are_plain():
    assert readable(MATHY[1]).startswith("We propose ITSPACE, an unregularized optimal transport solver for "
                                         "Bures–Wasserstein barycentres.")
    assert readable(r"a \textit{fast} solver, {\em i.e.} cheap") == "a fast solver, i.e. cheap"
    assert "ε^(1/(d+2))" in readable(MATHY[1]) and "$" not in readable(MATHY[1])


@pytest.fixture
def mathy_home(tmp_path, monkeypatch):
    from rag.library import Library
    from rag.settings import Settings

    home = tmp_path / "home"
    records = [{"title": MATHY[0], "abstract": MATHY[1], "venue": "ICML", "year": 2026},
               {"title": "Sinkhorn iterations", "abstract": "Sinkhorn iterations solve entropic optimal transport "
                "quickly. We prove *linear* convergence of optimal transport plans in $\\ell_1$."},
               {"title": "Graph colouring", "abstract": "We colour graphs greedily and bound the number of colours."}]
    f = tmp_path / "papers.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    Library(Settings(home=home, embedder="fake")).ingest([f], progress=False)
    monkeypatch.setenv("PAPERCHAT_HOME", str(home))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    return home


def test_every_command_renders_markup_and_json_keeps_it_raw(mathy_home, capsys):
    from rag.cli import main

    outputs = {}
    for cmd in (["search", "optimal transport"], ["ask", "What rate do optimal transport plans converge at?"],
                ["summarise", "optimal transport"], ["cite", "Optimal transport plans converge at a rate."],
                ["compare", "optimal transport"]):
        assert main(cmd) in (0, 1), cmd
        outputs[cmd[0]] = capsys.readouterr().out
    for name, out in outputs.items():
        assert "**" not in out and "*unregularized*" not in out and "\\varepsilon" not in out, (name, out)
        assert "\\frac" not in out and "Bures--" not in out, (name, out)
    assert "ITSPACE" in outputs["search"] and "ε^(1/(d+2))" in outputs["search"]
    assert "ε^(1/(d+2))" in outputs["ask"] + outputs["cite"] + outputs["summarise"]
    assert "ITSPACE" in outputs["compare"]
    # --json: the text as stored
    assert main(["search", "optimal transport", "--json"]) == 0
    raw = capsys.readouterr().out
    assert "\\\\varepsilon^{\\\\frac{1}{d+2}}" in raw and "**ITSPACE**" in raw


def test_an_impossible_filter_says_why_on_the_terminal(mathy_home, capsys):
    from rag.cli import main

    main(["ask", "What rate do optimal transport plans converge at?", "--author", "Hinton"])
    err = capsys.readouterr().err
    assert "note: No paper in this library lists its authors, so none can pass the author filter “Hinton”" in err
    main(["ask", "What rate do optimal transport plans converge at?", "--author", "Hinton", "--json"])
    assert "note: No paper" not in capsys.readouterr().err  # --json: unchanged
