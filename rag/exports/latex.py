"""A summary as a related-work paragraph a researcher can paste: LaTeX prose whose [n] marks become
\\cite{key} (the keys of the BibTeX export, rag.exports.bibliography.export_keys), and the matching .bib.

The overview opens, each theme follows as a \\paragraph; text is escaped as the BibTeX fields are (math
$...$ kept as the abstracts write it), curly quotes become LaTeX's, and adjacent marks merge into one
\\cite{a,b}. `summarise ... --latex FILE.tex` writes FILE.tex and FILE.bib; the UI offers the same files.
"""

from __future__ import annotations

import re
from pathlib import Path

from rag.exports.bibliography import bibtex_escape, export_keys, to_bibtex

_RUN = re.compile(r"(?:\s*\[\d+\])+")
# The overview's opening counts the library's papers ("The library holds 3 papers on “X” in 1 theme [1][2][3].");
# in a paper's related-work section that is paperchat speaking, not the literature: it is left out.
_LEAD = re.compile(r"^The library holds [^“]*“[^”]*”.*?[\])]\.\s*")
_EMPH = re.compile(r"(?<![*\w])\*([^*\s][^*]*?)\*(?![*\w])")
_MARK = re.compile(r"\[(\d+)\]")


def _prose(text: str, keys: dict[int, str]) -> str:
    """The text escaped for LaTeX, each run of [n] marks one \\cite (marks that resolve to nothing dropped)."""
    out, last = [], 0
    for m in _RUN.finditer(text):
        out.append(_escape(text[last : m.start()]))
        cited = [keys[int(n)] for n in _MARK.findall(m.group()) if int(n) in keys]
        if cited:
            out.append("~\\cite{" + ",".join(dict.fromkeys(cited)) + "}")
        last = m.end()
    out.append(_escape(text[last:]))
    return "".join(out).strip()


def _escape(text: str) -> str:
    text = text.replace("“", "``").replace("”", "''").replace("‘", "`").replace("’", "'")
    if not text.strip():
        return text
    return _EMPH.sub(lambda m: "\\emph{" + m.group(1) + "}", bibtex_escape(text))  # an abstract's *emphasis*


def to_latex(summary) -> str:
    """The summary (rag.tasks.summary.Summary) as LaTeX prose; its references are to_bibtex(summary.citations)."""
    keys = export_keys(summary.citations)
    by_n = {c.n: keys[c.paper.paper_id] for c in summary.citations}
    out = [f"% Related work on ``{_escape(summary.topic)}'', written by paperchat from the abstracts' own sentences;",
           "% each \\cite is the paper the sentence before it quotes. The references are in the .bib beside this file.", ""]
    if overview := _LEAD.sub("", summary.summary or "", count=1).strip():
        out += [_prose(overview, by_n), ""]
    for t in summary.themes:
        out += [f"\\paragraph{{{_escape(t.title)}.}} {_prose(t.text, by_n)}", ""]
    if getattr(summary, "more", 0):
        out += [f"% {summary.more_text}", ""]
    return "\n".join(out)


def write_latex(summary, tex: Path) -> tuple[Path, Path]:
    """FILE.tex and FILE.bib (same stem) for the summary; returns both paths."""
    tex = Path(tex)
    if tex.suffix != ".tex":
        tex = tex.with_name(tex.name + ".tex")
    bib = tex.with_suffix(".bib")
    body = to_latex(summary)
    tex.write_text(body + f"% \\bibliography{{{bib.stem}}}\n", encoding="utf-8")
    bib.write_text(to_bibtex(summary.citations) if summary.citations else "% no references\n", encoding="utf-8")
    return tex, bib
