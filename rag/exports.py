"""Exports of every kind of answer: the Markdown document and the BibTeX of its references, and the files the UI offers.

The UI's download buttons (`write_exports`: paperchat-NN.md and paperchat-NN.bib per session turn) and
`paperchat summarise --bibtex` both come through here, so a paper gets the same BibTeX key everywhere.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from .records import Citation, Paper, text_hash

# -- files -----------------------------------------------------------------------------------------


def write_exports(folder: Path, turn: int, markdown: str, citations: list[Citation]) -> tuple[str, str]:
    """paperchat-NN.md and paperchat-NN.bib for one turn in `folder`, replacing the turn before's."""
    for old in folder.glob("paperchat-*"):
        with contextlib.suppress(OSError):
            old.unlink()
    md_path = folder / f"paperchat-{turn:02d}.md"
    bib_path = folder / f"paperchat-{turn:02d}.bib"
    md_path.write_text(markdown, encoding="utf-8")
    bib_path.write_text(to_bibtex(citations) if citations else "% no references\n", encoding="utf-8")
    return str(md_path), str(bib_path)


# -- Markdown --------------------------------------------------------------------------------------


def ref_line(n: int | None, paper) -> str:
    """One reference as a Markdown list line: [n] title. venue, year. file:record <url>."""
    title = getattr(paper, "title", "") or "(untitled)"
    star = " (title derived from the abstract)" if getattr(paper, "title_derived", False) else ""
    where = ", ".join(str(x) for x in (paper.venue, paper.year) if x)
    src = f"{paper.source}:{paper.position}" if paper.source else ""
    url = f" <{paper.url}>" if getattr(paper, "url", "") else ""
    lead = f"[{n}] " if n is not None else "- "
    return f"{lead}{title}{star}" + (f". {where}" if where else "") + (f". {src}" if src else "") + url


def abstained_markdown(heading: str, text: str, nearest) -> str:
    """No answer: the message and the nearest papers (hits or evidence items), none of them cited."""
    return f"{heading}\n\n{text}\n\n## Nearest papers\n\n" + "\n".join(ref_line(None, x.paper) for x in nearest) + "\n"


def answer_markdown(ans) -> str:
    """ask(): the question, the cited answer, the references with their evidence, the notes."""
    exp = [f"# {ans.question}", "", ans.answer, ""]
    if ans.citations:
        exp += ["## References", ""]
        for c in ans.citations:
            exp.append(ref_line(c.n, c.paper))
            if c.evidence:
                grade = f"  ({c.grade} {c.grade_score:.2f})" if getattr(c, "grade", None) else ""
                exp.append(f"    > {c.evidence}" + ("" if c.supported else "  (not supported by the abstract)") + grade)
            exp += [f"    > {e}" for e in c.more_evidence]
        exp.append("")
    if ans.flags:
        exp += ["## Notes", ""] + [f"- {f}" for f in ans.flags] + [""]
    return "\n".join(exp)


def summary_markdown(topic: str, overview: str, themes: list, citations: list[Citation], related: list = ()) -> str:
    """summarise(): the overview, one section per theme, the references, the papers related but not summarised."""
    exp = [f"# {topic}", ""]
    if overview:
        exp += [overview, ""]
    for t in themes:
        exp += [f"## {getattr(t, 'title', '') or 'Theme'}", "", getattr(t, "text", "") or "", ""]
    if citations:
        exp += ["## References", ""] + [ref_line(c.n, c.paper) for c in citations] + [""]
    if related:
        exp += ["## Related, not summarised", ""] + [ref_line(None, x.paper) for x in related] + [""]
    return "\n".join(exp)


def evidence_number(i: int, item) -> int:
    """An evidence item's reference number: its own, else its rank (from 1)."""
    return getattr(item, "n", None) or i


def evidence_markdown(claim: str, items: list) -> str:
    """cite(): each abstract that bears on the claim, with its stance and sentence."""
    exp = [f"# Evidence for: {claim}", ""]
    for i, it in enumerate(items, 1):
        exp.append(f"{ref_line(evidence_number(i, it), it.paper)} — {getattr(it, 'stance', 'related')}")
        exp.append(f"    > {getattr(it, 'sentence', '')}")
    exp.append("")
    return "\n".join(exp)


def evidence_citations(items: list) -> list[Citation]:
    """cite()'s evidence as citations, for BibTeX."""
    return [Citation(n=evidence_number(i, it), paper=it.paper, evidence=getattr(it, "sentence", ""),
                     supported=bool(getattr(it, "supported", False))) for i, it in enumerate(items, 1)]


# -- BibTeX ----------------------------------------------------------------------------------------


def _ascii(s: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii")


_KEY_SKIP = {"a", "an", "the", "on", "of", "for", "in", "and", "to", "with", "towards", "toward", "via", "we"}


def bibtex_key(p: Paper) -> str:
    """Stable: first author's surname (else the title's first significant word), year, and a short
    hash of the paper id, so the same paper always gets the same key."""
    base = ""
    if p.authors:
        name = p.authors[0].strip()
        surname = name.split(",")[0] if "," in name else (name.split()[-1] if name.split() else "")
        base = re.sub(r"[^A-Za-z]", "", _ascii(surname)).lower()
    if not base:
        for w in re.findall(r"[A-Za-z]+", _ascii(p.title or p.abstract)):
            if w.lower() not in _KEY_SKIP and len(w) > 1:
                base = w.lower()
                break
    return f"{base or 'paper'}{p.year or ''}{text_hash(p.paper_id, 4)}"


def _balance(text: str) -> str:
    """Replace braces that do not pair up (BibTeX counts braces, escaped or not)."""
    out: list[str] = []
    open_at: list[int] = []
    for ch in text:
        if ch == "{":
            open_at.append(len(out))
            out.append(ch)
        elif ch == "}":
            if open_at:
                open_at.pop()
                out.append(ch)
            else:
                out.append(r"\textbraceright{}")
        else:
            out.append(ch)
    for i in open_at:
        out[i] = r"\textbraceleft{}"
    return "".join(out)


def bibtex_escape(text: str) -> str:
    """LaTeX-safe field text: math ($...$) kept as written, & % # _ ~ ^ escaped outside it, braces balanced."""
    text = re.sub(r"\s+", " ", text or "").strip()
    pieces = re.split(r"(\$[^$]+\$)", text)
    out = []
    for i, piece in enumerate(pieces):
        if i % 2 == 1:
            out.append(piece)
            continue
        piece = piece.replace("$", r"\$")
        piece = re.sub(r"(?<!\\)([&%#_])", r"\\\1", piece)
        piece = re.sub(r"(?<!\\)~", r"\\textasciitilde{}", piece)
        piece = re.sub(r"(?<!\\)\^", r"\\textasciicircum{}", piece)
        out.append(piece)
    return _balance("".join(out))


def _bib_authors(authors: list[str]) -> str:
    return " and ".join(bibtex_escape(a) for a in authors)


def to_bibtex(citations: list[Citation]) -> str:
    """The reference list as BibTeX: @inproceedings when the venue is known, else @misc."""
    entries: list[str] = []
    seen: set[str] = set()
    for c in citations:
        p = c.paper
        key = bibtex_key(p)
        if key in seen:  # two papers, same surname, year and 4-hex hash: keep both, keys still stable
            key = f"{key}-{text_hash(p.paper_id, 8)}"
        seen.add(key)
        fields: list[tuple[str, str]] = [("title", "{" + bibtex_escape(p.title or p.paper_id) + "}")]
        if p.authors:
            fields.append(("author", _bib_authors(p.authors)))
        if p.venue:
            fields.append(("booktitle", bibtex_escape(p.venue)))
        if p.year:
            fields.append(("year", str(p.year)))
        if p.url:
            fields.append(("url", _balance(p.url.replace("%", r"\%").replace("#", r"\#"))))
        if p.abstract:
            fields.append(("abstract", bibtex_escape(p.abstract)))
        notes = []
        if p.title_derived:
            notes.append("title derived from the abstract")
        if p.source:
            notes.append(f"{bibtex_escape(p.source)}, record {p.position}")
        if notes:
            fields.append(("note", "; ".join(notes)))
        kind = "inproceedings" if p.venue else "misc"
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        entries.append(f"@{kind}{{{key},\n{body}\n}}\n")
    return "\n".join(entries)
