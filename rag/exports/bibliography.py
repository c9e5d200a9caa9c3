"""An answer's references for reference managers: BibTeX and RIS that Zotero (and the others) import as they are.

What Zotero's importers read (zotero/translators BibTeX.js and RIS.js): BibTeX @inproceedings ->
conference paper (booktitle -> proceedings title), @misc -> document; title, author ("First Last and
..."), year, doi, url, abstract, keywords (tags), note. RIS TY CONF -> conference paper (T2 -> conference
name), GEN -> document; TI, AU ("Last, First", one per line), PY, DO, UR, AB, KW, N1. A tag Zotero does
not expect for the item type is kept as a note, not an error; so every field written here is one it maps.

Keys are what a researcher would type: first author's surname, year, first significant word of the title
("vaswani2017attention"); without authors, the title's first significant word, the year and the next one.
"""

from __future__ import annotations

import re
import unicodedata

from rag.records import Citation, Paper, text_hash

# Words that never make a key: function words, and the openings of titles derived from abstracts
# ("While machine learning has advanced ...", "Despite ...", "Recent work ...").
_KEY_SKIP = set("""a an the on of for in and or to with without towards toward via we our this that these those is are
be can do does how what why when which while whereas although though despite since because as at by from into
new novel recent recently using beyond through under over more most less its their it not no yes all any""".split())
_DOI = re.compile(r"(?:doi\.org/|doi:\s*)(10\.\d{4,9}/[^\s\"<>{}]+)", re.IGNORECASE)


def _ascii(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii")


def surname(name: str) -> str:
    """The family name of "Last, First" or "First Last" (a trailing "Jr." or "III" passed over)."""
    name = name.strip()
    if "," in name:
        return name.split(",")[0].strip()
    words = [w for w in name.split() if w.strip(".").lower() not in {"jr", "sr", "ii", "iii", "iv"}]
    return words[-1] if words else ""


def significant_words(text: str) -> list[str]:
    """The words of a title that can name it: no function words, no bare numbers, at least two letters."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", _ascii(text or ""))
    return [w.lower() for w in words if len(w) > 1 and w.lower() not in _KEY_SKIP]


def bibtex_key(p: Paper) -> str:
    """surname + year + first significant title word; without authors, two significant title words
    around the year. The same paper gets the same key in every export (to_bibtex only lengthens a key
    two papers of one export share)."""
    words = significant_words(p.title) or significant_words(p.abstract[:300])
    year = str(p.year or "")
    family = re.sub(r"[^a-z]", "", _ascii(surname(p.authors[0])).lower()) if p.authors else ""
    if family:
        key = family + year + (words[0] if words else "")
    else:
        key = (words[0] if words else "paper") + year + (words[1] if len(words) > 1 else "")
    return key if key != "paper" else f"paper{text_hash(p.paper_id, 4)}"


def doi_of(p: Paper) -> str:
    """The DOI the record carries: its id (doi:...) or a doi.org URL; '' if none."""
    if p.paper_id.lower().startswith("doi:"):
        return p.paper_id[4:].strip()
    m = _DOI.search(p.url or "")
    return m.group(1).rstrip(".,;") if m else ""


def arxiv_of(p: Paper) -> str:
    return p.paper_id[6:] if p.paper_id.startswith("arXiv:") else ""


def url_of(p: Paper) -> str:
    """The record's URL; for an arXiv paper without one, its abstract page."""
    return p.url or (f"https://arxiv.org/abs/{arxiv_of(p)}" if arxiv_of(p) else "")


# -- BibTeX ----------------------------------------------------------------------------------------


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


def _bibtex_name(name: str) -> str:
    """One author as BibTeX reads one: a name with "and" inside ("Barnes and Noble", a lab) is braced, or
    every reader splits it into two people."""
    esc = bibtex_escape(name)
    return "{" + esc + "}" if re.search(r"\band\b", esc, re.IGNORECASE) else esc


def _verbatim(text: str) -> str:
    """A URL or DOI as BibTeX carries it: % and # escaped (they end or break a field), braces balanced."""
    return _balance(re.sub(r"\s+", "", text).replace("%", r"\%").replace("#", r"\#"))


def _note(p: Paper) -> str:
    notes = []
    if p.title_derived:
        notes.append("title derived from the abstract")
    if p.source:
        notes.append(f"{p.source}, record {p.position}")
    return "; ".join(notes)


def export_keys(citations: list[Citation]) -> dict[str, str]:
    """paper id -> its key in this export (bibtex_key; lengthened when two papers of it share one), so a
    LaTeX paragraph's \\cite marks and its .bib agree."""
    keys: dict[str, str] = {}
    seen: set[str] = set()
    for c in citations:
        p = c.paper
        if p.paper_id in keys:
            continue
        key = bibtex_key(p)
        if key in seen:  # two papers of this export share surname, year and word: both kept, keys still stable
            key = f"{key}-{text_hash(p.paper_id, 4)}"
        seen.add(key)
        keys[p.paper_id] = key
    return keys


def to_bibtex(citations: list[Citation]) -> str:
    """The reference list as BibTeX: @inproceedings when the venue is known, else @misc."""
    entries: list[str] = []
    keys = export_keys(citations)
    for c in citations:
        p = c.paper
        key = keys[p.paper_id]
        fields: list[tuple[str, str]] = [("title", "{" + bibtex_escape(p.title or p.paper_id) + "}")]
        if p.authors:
            fields.append(("author", " and ".join(_bibtex_name(a) for a in p.authors)))
        if p.venue:
            fields.append(("booktitle", bibtex_escape(p.venue)))
        if p.year:
            fields.append(("year", str(p.year)))
        if doi := doi_of(p):
            fields.append(("doi", _verbatim(doi)))
        if arxiv := arxiv_of(p):
            fields += [("eprint", _verbatim(arxiv)), ("archiveprefix", "arXiv")]
        if url := url_of(p):
            fields.append(("url", _verbatim(url)))
        if p.keywords:
            fields.append(("keywords", bibtex_escape(", ".join(p.keywords))))
        if p.abstract:
            fields.append(("abstract", bibtex_escape(p.abstract)))
        if note := _note(p):
            fields.append(("note", bibtex_escape(note)))
        kind = "inproceedings" if p.venue else "misc"
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        entries.append(f"@{kind}{{{key},\n{body}\n}}\n")
    return "\n".join(entries)


# -- RIS -------------------------------------------------------------------------------------------


def ris_author(name: str) -> str:
    """"Last, First" as RIS wants it (Zotero splits AU at the comma), from either spelling."""
    name = re.sub(r"\s+", " ", name).strip()
    if "," in name or " " not in name:
        return name
    last = surname(name)
    first = name[: name.rfind(last)].strip() if last in name else ""
    rest = name[name.rfind(last) + len(last):].strip()
    return f"{last}, {first}" + (f", {rest}" if rest else "") if first else name


def _line(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()  # one RIS line: a newline would start a new tag


def ris_records(citations: list[Citation]) -> list[dict]:
    """The references as rispy records (its default tag names)."""
    out = []
    for c in citations:
        p = c.paper
        # (no ID tag: Zotero's RIS importer does not map it and would keep it as a note)
        rec: dict = {"type_of_reference": "CONF" if p.venue else "GEN", "title": _line(p.title or p.paper_id)}
        if p.authors:
            rec["authors"] = [ris_author(a) for a in p.authors]
        if p.year:
            rec["year"] = str(p.year)
        if p.venue:
            rec["secondary_title"] = _line(p.venue)
        if doi := doi_of(p):
            rec["doi"] = doi
        if url := url_of(p):
            rec["urls"] = [url]
        if p.keywords:
            rec["keywords"] = [_line(k) for k in p.keywords]
        if p.abstract:
            rec["abstract"] = _line(p.abstract)
        if note := _note(p):
            rec["notes"] = [note]
        out.append(rec)
    return out


def to_ris(citations: list[Citation]) -> str:
    """The reference list as RIS (written by rispy, the library our RIS loader reads with)."""
    import rispy

    class Writer(rispy.RisWriter):
        def set_header(self, count: int) -> str:
            return ""  # rispy numbers records ("1."): a line outside any record, which RIS readers need not accept

    return rispy.dumps(ris_records(citations), implementation=Writer) if citations else ""
