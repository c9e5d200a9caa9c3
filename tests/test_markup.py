"""Abstract text as a reader sees it (ui.markup): LaTeX text commands and *emphasis* become formatting, math
stays whole for KaTeX, and nothing in an abstract can become markup of its own."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings, strategies as st

from ui import markup, render

SEED_LIKE = (r"three key factors: \textit{anisotropy} across eigenmodes, \emph{spectral} gaps on ogbn\_arxiv and "
             r"ogbn\_products\_50k; models *memorize* and **generalise**; at least "
             r"$\Omega(\varepsilon^{-{d_{0}}/({4\alpha})})$ blocks.")


def test_text_commands_and_emphasis_become_formatting_math_stays_whole():
    out = markup.html(SEED_LIKE)
    assert "<em>anisotropy</em>" in out and "<em>spectral</em>" in out and "<em>memorize</em>" in out
    assert "<strong>generalise</strong>" in out
    assert "ogbn_arxiv" in out and "ogbn_products_50k" in out and "\\_" not in out and "\\textit" not in out
    # the math is left for KaTeX: escaped (entities) but whole, with its underscores and stars untouched
    shown = out.replace("&#36;", "$").replace("&#123;", "{").replace("&#125;", "}")
    assert r"$\Omega(\varepsilon^{-{d_{0}}/({4\alpha})})$" in shown
    md = markup.markdown(SEED_LIKE)
    assert "<em>anisotropy</em>" in md and "\\$\\\\Omega" in md  # Markdown-escaped: the chat shows it verbatim


def test_old_style_declarations_in_a_group_become_formatting():
    """BibTeX-era abstracts write {\\em i.e.} and {\\bf …}: the reader sees italic "i.e.", not "\\em i.e."."""
    text = r"exact solvers ({\em i.e.} those of {\bf Sinkhorn} and {\tt ot\_lib}) beat {\sc Lp} ones"
    out = markup.html(text)
    assert "<em>i.e.</em>" in out and "<strong>Sinkhorn</strong>" in out and "<code>ot_lib</code>" in out
    assert "\\" not in out and "&#123;" not in out and " Lp ones" in out
    assert "<em>i.e.</em>" in markup.markdown(text) and markup.plain(text).startswith("exact solvers (i.e. those")
    # \emph and \item are commands of their own, not the declarations \em and \it
    assert "<em>x</em>" in markup.html(r"\emph{x}") and "\\item" in markup.html(r"{\item y}").replace("&#123;", "")


def test_a_bare_group_shows_its_words_without_braces():
    """BibTeX keeps capitals in braces ({BERT}, {G}aussian): the reader sees BERT, not {BERT}."""
    text = r"We pre-train {BERT} on {G}aussian data, \textit{{RoBERTa} too}; math $x_{ij}$ stays"
    out = markup.html(text)
    assert "pre-train BERT on Gaussian data" in out and "<em>RoBERTa too</em>" in out
    assert "&#36;x_&#123;ij&#125;&#36;" in out  # inside math the braces are KaTeX's
    assert markup.plain(text).startswith("We pre-train BERT on Gaussian") and "BERT" in markup.markdown(text)
    # braces that mean something stay: a command's argument, escaped braces, a set written outside math
    kept = markup.plain(r"see \cite{key}, the set \{a\} and {0,1}^n")
    assert r"\cite{key}" in kept and "set {a}" in kept and "{0,1}^n" in kept


def test_a_highlight_cutting_through_formatting_keeps_tags_nested():
    abstract = r"We study \textit{sparse attention for long inputs} and show it helps. It is fast."
    out = render.highlight(abstract, r"\textit{sparse attention for long inputs} and show it helps.")
    assert "<mark><em>sparse attention for long inputs</em> and show it helps.</mark>" in out
    # a sentence ending inside an italic run: closed before </mark>, reopened after it
    out = render.highlight(r"A \emph{first claim. Then more} text.", "A \\emph{first claim.")
    assert_balanced(out)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.ok = True
        self.seen: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.seen.add(tag)
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.ok = False


def assert_balanced(html_: str) -> set[str]:
    p = _Tags()
    p.feed(html_)
    assert p.ok and not p.stack, html_
    return p.seen


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab *_$\\{}<>&\"'`-\x01\x02") + ["\\textit{", "\\emph{", "**", "\\_", "$x$",
                                                                      "<script>", "[1]"]),
                max_size=40).map("".join))
def test_any_text_yields_only_our_tags_and_balanced(text):
    out = markup.html(text)
    assert assert_balanced(out) <= {"em", "strong", "code"}
    linked = render.link_marks(text, 1, {1})
    assert assert_balanced(linked) <= {"em", "strong", "code", "a"}
    hl = render.highlight(text, text[: len(text) // 2])
    assert assert_balanced(hl) <= {"em", "strong", "code", "mark", "p"}
    # the words are all still there (formatting aside)
    letters = re.sub(r"[^ab]", "", text)
    assert re.sub(r"[^ab]", "", re.sub(r"<[^>]+>|&[#\w]+;", "", out)) == letters


def test_gradio_ships_katex_where_the_page_loads_it():
    assets = markup.katex_assets()
    assert assets["js"].startswith("assets/auto-render-") and assets["css"].startswith("assets/katex-")
