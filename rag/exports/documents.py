"""Exports of every kind of answer: the Markdown document, its references (rag.exports.bibliography: BibTeX, RIS), the files.

The UI's download buttons (`write_export_files`) and `paperchat summarise --bibtex` both come through
here, so a paper gets the same BibTeX key everywhere. Files say what they hold:
paperchat-summary-optimal-transport.md, paperchat-answer-how-can-residual-streams-be-widened.bib.
Markdown keeps the abstracts' own text ($…$ math included); the headline names the question or topic
and the filters it was asked under.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from pathlib import Path

from pydantic import BaseModel

from rag.exports.bibliography import bibtex_escape, bibtex_key, to_bibtex, to_ris  # noqa: F401 - the exports' one import
from rag.records import Citation

KINDS = ("answer", "summary", "evidence")

# -- files -----------------------------------------------------------------------------------------


class ExportFiles(BaseModel):
    """Paths of one result's export files."""

    markdown: str
    bibtex: str
    ris: str
    latex: str = ""  # a summary's LaTeX prose (its \cite keys are the .bib's), when there is one


# words that open a phrase: a name cut at the one before them ends a phrase ("…-be-widened", not "…-without-losing-the")
_PHRASE_OPENERS = {"without", "with", "for", "of", "in", "on", "to", "by", "from", "and", "or", "via", "using", "under",
                   "over", "across", "through", "between", "into", "that", "which", "when", "while", "as", "at"}


def export_stem(kind: str, subject: str, max_chars: int = 60) -> str:
    """paperchat-KIND-SUBJECT-AS-WORDS: what the file holds, readable in a downloads folder, safe on any
    filesystem (ASCII letters, digits and dashes; cut at a word)."""
    plain = unicodedata.normalize("NFKD", subject or "").encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", plain)
    kept: list[str] = []
    for w in words:
        if len("-".join([*kept, w])) > max_chars:
            break
        kept.append(w)
    if len(kept) < len(words):  # cut: end where a phrase ends, before its last preposition or conjunction
        ends = [i for i in range(2, len(kept) + 1) if words[i] in _PHRASE_OPENERS]
        if ends:
            kept = kept[:ends[-1]]
        while len(kept) > 1 and kept[-1] in _PHRASE_OPENERS | {"the", "a", "an"}:
            kept.pop()
    slug = "-".join(kept)
    kind = re.sub(r"[^a-z]", "", (kind or "").lower()) or "export"
    return f"paperchat-{kind}" + (f"-{slug}" if slug else "")


def write_export_files(folder: Path, kind: str, subject: str, markdown: str, citations: list[Citation],
                       latex: str = "") -> ExportFiles:
    """The Markdown, BibTeX and RIS of one result in `folder` (a session's own), and its LaTeX when given,
    replacing the result before's."""
    for old in folder.glob("paperchat-*"):
        with contextlib.suppress(OSError):
            old.unlink()
    stem = folder / export_stem(kind, subject)
    paths = ExportFiles(markdown=f"{stem}.md", bibtex=f"{stem}.bib", ris=f"{stem}.ris",
                        latex=f"{stem}.tex" if latex else "")
    if latex:
        Path(paths.latex).write_text(latex + f"% \\bibliography{{{Path(paths.bibtex).stem}}}\n", encoding="utf-8")
    Path(paths.markdown).write_text(markdown, encoding="utf-8")
    Path(paths.bibtex).write_text(to_bibtex(citations) if citations else "% no references\n", encoding="utf-8")
    Path(paths.ris).write_text(to_ris(citations), encoding="utf-8")
    return paths


def filters_line(filters) -> str:
    """The filters a result was asked under, as an export's second line ('' when there are none)."""
    described = filters.describe() if filters is not None and hasattr(filters, "describe") else ""
    return f"*Filtered to {described}.*" if described else ""


def _headline(title: str, filters) -> list[str]:
    line = filters_line(filters)
    return [title, ""] + ([line, ""] if line else [])


# -- Markdown --------------------------------------------------------------------------------------


def ref_line(n: int | None, paper) -> str:
    """One reference as a Markdown list line: [n] title. authors. venue, year. doi:… <url>. file:record."""
    from rag.exports.bibliography import doi_of

    title = getattr(paper, "title", "") or "(untitled)"
    star = " (title derived from the abstract)" if getattr(paper, "title_derived", False) else ""
    authors = list(getattr(paper, "authors", None) or [])
    who = ", ".join(authors[:10]) + (" et al." if len(authors) > 10 else "")
    where = ", ".join(str(x) for x in (paper.venue, paper.year) if x)
    doi = doi_of(paper) if isinstance(getattr(paper, "paper_id", None), str) else ""
    src = f"{paper.source}:{paper.position}" if paper.source else ""
    url = f" <{paper.url}>" if getattr(paper, "url", "") else ""
    lead = f"[{n}] " if n is not None else "- "
    return lead + period_join([f"{title}{star}", who, where, f"doi:{doi}" if doi else "", src]) + url


def period_join(parts: list[str]) -> str:
    """The non-empty parts as sentences, a full stop between them unless one already ends it: "Xie et al. On
    Scalable …", not "Xie et al.. On Scalable …"; "Is attention enough? Smith"."""
    out = ""
    for part in (p for p in parts if p):
        out += part if not out else (" " if out.endswith((".", "?", "!")) else ". ") + part
    return out


def abstained_markdown(heading: str, text: str, nearest, filters=None) -> str:
    """No answer: the message and the nearest papers (hits or evidence items), none of them cited."""
    return "\n".join(_headline(heading, filters)) + f"\n{text}\n\n## Nearest papers\n\n" + \
        "\n".join(ref_line(None, x.paper) for x in nearest) + "\n"


def _quotes(c) -> list[str]:
    """A reference's quoted sentences, under its line: the evidence (with what the check found), then the rest."""
    out = []
    if c.evidence:
        grade = f"  ({c.grade} {c.grade_score:.2f})" if getattr(c, "grade", None) else ""
        out.append(f"    > {c.evidence}" + ("" if c.supported else "  (not supported by the abstract)") + grade)
    return out + [f"    > {e}" for e in getattr(c, "more_evidence", None) or [] if e and e != c.evidence]


def answer_markdown(ans, filters=None) -> str:
    """ask(): the question, the filters, the cited answer, the references with their evidence, the notes."""
    exp = _headline(f"# {ans.question}", filters) + [ans.answer, ""]
    if ans.citations:
        exp += ["## References", ""]
        for c in ans.citations:
            exp += [ref_line(c.n, c.paper), *_quotes(c)]
        exp.append("")
    if ans.flags:
        exp += ["## Notes", ""] + [f"- {f}" for f in ans.flags] + [""]
    return "\n".join(exp)


def summary_markdown(topic: str, overview: str, themes: list, citations: list[Citation], related: list = (),
                     filters=None) -> str:
    """summarise(): the topic and filters, the overview, one section per theme, the references each with the
    sentences the summary quotes from it, the papers related but not summarised."""
    exp = _headline(f"# {topic}", filters)
    if overview:
        exp += [overview, ""]
    for t in themes:
        exp += [f"## {getattr(t, 'title', '') or 'Theme'}", "", getattr(t, "text", "") or "", ""]
    if citations:
        exp += ["## References", ""]
        for c in citations:
            exp += [ref_line(c.n, c.paper), *_quotes(c)]
        exp.append("")
    if related:
        exp += ["## Related, not summarised", ""] + [ref_line(None, x.paper) for x in related] + [""]
    return "\n".join(exp)


def evidence_number(i: int, item) -> int:
    """An evidence item's reference number: its own, else its rank (from 1)."""
    return getattr(item, "n", None) or i


def evidence_markdown(claim: str, items: list, filters=None) -> str:
    """cite(): the claim and filters, each abstract that bears on the claim, with its stance and sentence."""
    exp = _headline(f"# Evidence for: {claim}", filters)
    for i, it in enumerate(items, 1):
        grade = f"  ({it.grade} {it.grade_score:.2f})" if getattr(it, "grade", None) else ""
        exp.append(f"{ref_line(evidence_number(i, it), it.paper)} — {getattr(it, 'stance', 'related')}")
        exp.append(f"    > {getattr(it, 'sentence', '')}{grade}")
    exp.append("")
    return "\n".join(exp)


def evidence_citations(items: list) -> list[Citation]:
    """cite()'s evidence as citations, for BibTeX."""
    return [Citation(n=evidence_number(i, it), paper=it.paper, evidence=getattr(it, "sentence", ""),
                     supported=bool(getattr(it, "supported", False)), grade=getattr(it, "grade", None),
                     grade_score=float(getattr(it, "grade_score", 0.0) or 0.0), quoted=bool(getattr(it, "quoted", False)))
            for i, it in enumerate(items, 1)]
