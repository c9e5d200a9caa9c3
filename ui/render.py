"""Pure presentation: answers, summaries and evidence lists turned into chat Markdown, source-card HTML,
an exportable Markdown document and BibTeX. No Gradio here, so it is cheap to test.

Everything that comes from the library (abstracts, titles, file names, the answer text composed from
abstracts) is escaped: abstracts may hold hostile HTML or Markdown.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from rag.exports import documents as exports
from rag.reading.citations import parse_numbers

from ui import markup
from ui.escape import h, md  # noqa: F401 - re-exported: callers import them from here too
from ui.identity import meta_line

# The same citation-mark grammar as rag.reading.citations: [1], [1, 2], [1-3], [1; 4].
_MARK = re.compile(r"\[\s*(\d+(?:\s*(?:[-–,;]|and)\s*\d+)*)\s*\]")

STANCE_LABEL = {"supports": "supports", "contradicts": "contradicts", "related": "related"}


def card_id(turn: int, n: int) -> str:
    return f"pc-{turn}-{n}"


def link_marks(text: str, turn: int, known: set[int] | None = None) -> str:
    """Escaped Markdown of `text` in which every [n] that has a source card becomes an anchor link to it."""
    text = markup.prepare(text)  # LaTeX text commands and *emphasis* as formatting (ui.markup)
    out: list[str] = []
    pos = 0
    for m in _MARK.finditer(text):
        out.append(md(text[pos : m.start()]))
        nums = parse_numbers(m.group(1))
        if known is not None and not any(n in known for n in nums):
            out.append(md(m.group(0)))
        else:
            out.append("".join(
                f'<a class="pc-cite" href="#{card_id(turn, n)}" title="source {n}">[{n}]</a>'
                if known is None or n in known else md(f"[{n}]") for n in nums))
        pos = m.end()
    out.append(md(text[pos:]))
    return "".join(markup.balance(out))


def safe_filename(name: str, default: str = "upload") -> str:
    """A basename safe for any filesystem: ASCII letters, digits, '.', '_' and '-' only; no leading dot or
    dash; at most 100 characters, the (possibly compound, e.g. .jsonl.gz) extension kept."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode("ascii")
    m = re.search(r"((?:\.[A-Za-z0-9]{1,8}){1,2})$", base)
    ext = m.group(1) if m else ""
    stem = base[: len(base) - len(ext)] if ext else base
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", stem)
    stem = re.sub(r"\.{2,}", ".", stem).strip("._-")
    if not re.search(r"[A-Za-z0-9]", stem):
        stem = default
    return stem[: 100 - len(ext)] + ext


# -- highlighting --------------------------------------------------------------------------------

def _find_span(abstract: str, sentence: str) -> tuple[int, int] | None:
    """Where `sentence` sits in `abstract`, tolerant of whitespace and case differences."""
    sentence = (sentence or "").strip()
    if not sentence or not abstract:
        return None
    i = abstract.find(sentence)
    if i >= 0:
        return i, i + len(sentence)
    words = re.findall(r"\S+", sentence)
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, abstract, re.IGNORECASE)
    if m:
        return m.start(), m.end()
    # Tolerate a trailing mark or punctuation the evidence lost or gained.
    core = re.sub(r"[\s.;:,!?]+$", "", sentence)
    if core and core != sentence:
        return _find_span(abstract, core)
    return None


def highlight(abstract: str, sentences: str | list[str] | None) -> str:
    """The abstract as escaped HTML with each evidence sentence in <mark>; a sentence that cannot be found in
    the abstract is shown on its own (marked) above it."""
    if isinstance(sentences, str) or sentences is None:
        sentences = [sentences] if sentences else []
    # formatting as markers first (ui.markup), on the abstract and its sentences alike, so they still match
    abstract = markup.prepare(abstract)
    sentences = [markup.prepare(x) for x in dict.fromkeys(sentences) if x]
    spans: list[tuple[int, int]] = []
    alone: list[str] = []
    for sent in sentences:
        span = _find_span(abstract, sent)
        if span is None:
            alone.append(sent)
        elif not any(a < span[1] and span[0] < b for a, b in spans):
            spans.append(span)
    pieces, pos = [], 0
    for a, b in sorted(spans):
        pieces += [abstract[pos:a], abstract[a:b]]
        pos = b
    pieces.append(abstract[pos:])
    shown = markup.balance([h(p) for p in pieces])  # odd pieces are the evidence
    out = "".join(f"<mark>{x}</mark>" if i % 2 else x for i, x in enumerate(shown))
    lead = "".join(f'<p class="pc-evidence-alone"><mark>{markup.balance([h(x)])[0]}</mark></p>' for x in alone)
    return f'{lead}<p class="pc-abstract">{out}</p>'


# -- cards ---------------------------------------------------------------------------------------

def card(turn: int, n: int | None, paper, evidence: str | list[str] = "", badge: str = "", badge_class: str = "",
         extra: str = "", more_badges: list[tuple[str, str]] = ()) -> str:
    title = getattr(paper, "title", "") or "(untitled)"
    num = f'<span class="pc-n">{n}</span>' if n is not None else ""
    badge_html = "".join(f'<span class="pc-badge {c}">{h(b)}</span>' for b, c in [(badge, badge_class), *more_badges] if b)
    ident = f' id="{card_id(turn, n)}"' if n is not None else ""
    pid = getattr(paper, "paper_id", "") or ""
    return (f'<article class="pc-card"{ident} data-paper="{h(pid)}">'
            f'<div class="pc-head">{num}<span class="pc-title">{markup.html(title)}</span>{badge_html}</div>'
            f"{meta_line(paper)}{extra}"
            f"{highlight(getattr(paper, 'abstract', '') or '', evidence)}</article>")


def panel(title: str, body: str, note: str = "") -> str:
    note_html = f'<p class="pc-note">{note}</p>' if note else ""
    return f'<section class="pc-turn"><h3 class="pc-turn-title">{title}</h3>{note_html}{body}</section>'


def empty_panel(message: str) -> str:
    return f'<div class="pc-empty">{h(message)}</div>'


def stack_panels(current: str, earlier: list[tuple[str, str]]) -> str:
    """The newest turn's sources in full, earlier turns folded away below (links into them still work)."""
    parts = [current]
    for label, html_ in earlier:
        parts.append(f'<details class="pc-earlier"><summary>{label}</summary>{html_}</details>')
    return '<div class="pc-panel">' + "".join(parts) + "</div>"


# -- rendered results ----------------------------------------------------------------------------

@dataclass
class Rendered:
    chat: str  # Markdown (escaped, with anchor links) for the chat bubble
    panel: str  # HTML for the sources panel
    export_md: str  # a standalone Markdown document
    citations: list = field(default_factory=list)  # Citation records for BibTeX
    data: dict = field(default_factory=dict)  # the result's JSON
    kind: str = "answer"  # answer / summary / evidence: with `subject`, names the export files (rag.exports.documents)
    subject: str = ""  # the question, topic or claim
    export_tex: str = ""  # a summary as LaTeX prose with \cite marks (rag.exports.latex), its .bib the BibTeX export


def _filters_note(filters) -> str:
    described = filters.describe() if filters else ""  # (rag.library.retrieval.Filters.describe: the exports say the same)
    return f"filtered to {described}" if described else ""


def _flags_md(flags: list[str]) -> str:
    return "".join(f"\n\n<small>Note: {md(f)}</small>" for f in flags or [])


def _abstained(text: str, nearest, heading: str, note: str, flags, data: dict, outside_filter: bool = False,
               filters=None, kind: str = "answer", subject: str = "") -> Rendered:
    """No answer: say so, and show the nearest papers (hits or evidence items), none of them cited. Under a
    filter that nothing passing it answers, the papers shown are those outside it that do, with the sentence."""
    if outside_filter:
        cards = "".join(card(0, None, x.paper, getattr(x, "text", "") or "", "outside the filter — not cited",
                             "pc-nearest") for x in nearest)
        pnl = panel("Outside the filter", cards or empty_panel("The library has no papers to show."),
                    "Nothing that passes the filter answers this; these papers outside it do.")
    else:
        cards = "".join(card(0, None, x.paper, getattr(x, "sentence", "") or "", "nearest — not cited", "pc-nearest")
                        for x in nearest)
        body = cards or empty_panel("The library has no papers to show.")
        pnl = panel("Nearest papers", body, "Nothing in the library answers this; these papers came closest.")
    exp = exports.abstained_markdown(heading, text, nearest, filters)
    note_md = f"\n\n<small>{md(note)}</small>" if note else ""
    return Rendered(_side(md(text)) + note_md + _flags_md(flags), pnl, exp, [], data, kind, subject)


def _side(chat: str) -> str:
    """The tasks say the nearest papers are "listed below" (true in the terminal); in the page they are wherever
    the sources column is, which app.js knows: "on the right" or "below"."""
    return chat.replace("listed below", 'listed <span class="pc-side-right">on the right</span>'
                                        '<span class="pc-side-below">below</span>')


def render_answer(ans, turn: int, filters=None) -> Rendered:
    note = _filters_note(filters)
    note_md = f"\n\n<small>{md(note)}</small>" if note else ""
    if ans.abstained:
        return _abstained(ans.answer, ans.nearest, f"# {ans.question}", note, ans.flags, ans.as_json(),
                          getattr(ans, "coverage", "") == "outside_filter", filters, "answer", ans.question)
    known = {c.n for c in ans.citations}
    text, more = ans.answer, getattr(ans, "more", 0)
    more_md = ""
    if more:  # a list of an area's papers leaving some out: "Show all" (not the CLI's --k) shows them
        from rag.tasks.paper_lists import more_paragraph
        from ui.summarysize import more_line

        text = text.replace(f"\n\n{more_paragraph(ans.more_text)}", "")
        more_md = f"\n\n<small>{more_line(len(ans.citations), more, papers_control=False)}</small>"
    chat = link_marks(text, turn, known) + more_md + note_md + _flags_md(ans.flags)
    cards = []
    for c in ans.citations:
        badge, cls, extra = citation_badge(c)
        cards.append(card(turn, c.n, c.paper, [c.evidence, *c.more_evidence], badge, cls, extra))
    pnl = panel(f"Sources · {len(cards)} cited", "".join(cards) or empty_panel("No sources were cited."))
    return Rendered(chat, pnl, exports.answer_markdown(ans, filters), list(ans.citations), ans.as_json(), "answer",
                    ans.question)


GRADE_CLASS = {"answers": "pc-ok", "related": "pc-related", "weak": "pc-bad"}
# What a grade says, by what the citation was graded against (rag.reading.citation_grades): an answer's question,
# a summary's topic, an evidence list's claim.
GRADE_TITLES = {
    "question": {"answers": "this sentence answers the question", "related": "on the question's topic, a partial answer",
                 "weak": "this source hardly answers the question"},
    "topic": {"answers": "the quoted sentence is squarely on the topic", "related": "the quoted sentence touches the topic",
              "weak": "the quoted sentence hardly bears on the topic"},
    "claim": {"answers": "the evidence sentence bears directly on the claim",
              "related": "the evidence sentence is on the claim's subject, a partial match",
              "weak": "the evidence sentence hardly bears on the claim"},
}
GRADE_TITLE = GRADE_TITLES["question"]
_CITING = {"question": "the answer's sentence", "topic": "the summary's sentence", "claim": "the claim"}


def grade_note(c, about: str = "question") -> str:
    """The line under a card's head: what the grade means with its score, the evidence's role, quoted or not."""
    # The score is the answer scorer's probability that the sentence answers (rag.reading.answer_scorer).
    bits = [f"{GRADE_TITLES[about][c.grade]} (probability it answers: {c.grade_score:.2f})"]
    role = getattr(c, "role", "") or next(iter(getattr(c, "roles", None) or []), "")
    if role:
        bits.append(f"the sentence is the abstract's {role}")
    bits.append("quoted verbatim" if getattr(c, "quoted", False) else
                "paraphrased; the evidence backs it" if c.supported else f"the evidence does not back {_CITING[about]}")
    return " · ".join(bits)


def citation_badge(c, about: str = "question") -> tuple[str, str, str]:
    """(badge text, badge class, extra HTML) for a citation: its grade (how well the evidence answers the
    question, bears on the summary's topic or on the claim: `about`) with its probability, and '✗ not
    supported' beside it when the sentence citing it does not rest on the evidence."""
    grade = getattr(c, "grade", None)
    if grade is None:  # not graded (a follow-up answered by role, "What do they find?"): what the check found
        role = getattr(c, "role", "")
        note = f"the sentence is the abstract's {role}, quoted for what was asked of each paper; not graded"
        extra = f'<div class="pc-score">{h(note)}</div>' if role and c.supported else ""
        return ("✓ supported", "pc-ok", extra) if c.supported else ("✗ not supported", "pc-bad", "")
    extra = f'<div class="pc-score">{h(grade_note(c, about))}</div>'
    if not c.supported:
        return f"{grade} {c.grade_score:.2f} · ✗ not supported", "pc-bad", extra
    return f"{grade} {c.grade_score:.2f}", GRADE_CLASS[grade], extra


def _json(obj) -> dict:
    fn = getattr(obj, "as_json", None)
    if callable(fn):
        return fn()
    dump = getattr(obj, "model_dump", None)
    return dump(mode="json") if callable(dump) else {}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def render_summary(res, topic: str, turn: int, filters=None) -> Rendered:
    """summarise() result: overview + themes in the chat, one card per cited paper in the panel."""
    note = _filters_note(filters)
    if getattr(res, "abstained", False):
        return _abstained(res.summary, res.nearest, f"# {topic}", note, getattr(res, "flags", []), _json(res),
                          filters=filters, kind="summary", subject=topic)
    citations = list(getattr(res, "citations", []) or [])
    themes = list(getattr(res, "themes", []) or [])
    by_n = {c.n: c for c in citations}
    for t in themes:  # themes may carry citations the top-level list lacks
        for c in getattr(t, "citations", []) or []:
            if getattr(c, "n", None) is not None and c.n not in by_n:
                by_n[c.n] = c
    citations = [by_n[n] for n in sorted(by_n)]
    known = set(by_n)
    overview = getattr(res, "summary", "") or ""
    parts = []
    if overview:
        parts.append(link_marks(overview, turn, known))
    for t in themes:
        parts.append(f"**{md(getattr(t, 'title', '') or 'Theme')}**  \n" + link_marks(getattr(t, "text", "") or "", turn, known))
    if not parts:
        parts.append("The library has nothing on this area.")
    if more := getattr(res, "more", 0):  # the area holds more papers than summarised: say how to see them
        from ui.summarysize import more_line

        parts.append(f"<small>{more_line(len(citations), more)}</small>")
    if note:
        parts.append(f"<small>{md(note)}</small>")
    chat = "\n\n".join(parts) + _flags_md(getattr(res, "flags", []) or [])
    toc = ""
    if themes:
        items = []
        for t in themes:
            ns = sorted({c.n for c in (getattr(t, "citations", []) or []) if getattr(c, "n", None) is not None})
            refs = " ".join(f'<a class="pc-cite" href="#{card_id(turn, n)}">[{n}]</a>' for n in ns)
            items.append(f"<li><span>{h(getattr(t, 'title', ''))}</span> {refs}</li>")
        toc = f'<div class="pc-themes"><div class="pc-label">Themes</div><ol>{"".join(items)}</ol></div>'
    # every sentence the summary quotes from a paper is marked in its card, not only the best one
    # its badge: the grade of what it quotes for the topic, as an answer's is for the question
    cards = "".join(card(turn, c.n, c.paper, [c.evidence, *(getattr(c, "more_evidence", None) or [])],
                         *citation_badge(c, "topic")) for c in citations)
    related = list(getattr(res, "related", []) or [])
    if related:
        cards += ('<div class="pc-label">Related, not summarised</div>'
                  + "".join(card(turn, None, x.paper, "", "related — not summarised", "pc-nearest") for x in related))
    pnl = panel(f"Summary · {_count(len(themes), 'theme')} · {_count(len(citations), 'paper')}",
                toc + (cards or empty_panel("No papers were cited.")))
    from rag.exports.latex import to_latex

    return Rendered(chat, pnl, exports.summary_markdown(topic, overview, themes, citations, related, filters),
                    citations, _json(res), "summary", topic, to_latex(res) if hasattr(res, "themes") else "")


_STANCE_CLASS = {"supports": "pc-ok", "contradicts": "pc-bad", "related": "pc-related"}


def render_evidence(res, claim: str, turn: int, filters=None) -> Rendered:
    """cite() result: a ranked list in the chat, one card per abstract with its stance badge."""
    note = _filters_note(filters)
    items = list(getattr(res, "evidence", []) or [])
    flags = list(getattr(res, "flags", []) or [])
    if not items:
        msg = getattr(res, "message", "") or "no supporting abstract found"
        msg = msg[:1].upper() + msg[1:] + ("" if msg.endswith(".") else ".")
        return _abstained(msg, list(getattr(res, "nearest", []) or []), f"# Evidence for: {claim}", note, flags,
                          _json(res), filters=filters, kind="evidence", subject=claim)
    number = exports.evidence_number
    counts: dict[str, int] = {}
    for it in items:
        st = getattr(it, "stance", "related")
        counts[st] = counts.get(st, 0) + 1
    words = {"supports": "supporting", "contradicts": "contradicting", "related": "related"}
    tally = ", ".join(f"{counts[s]} {words[s]}" for s in words if counts.get(s))
    lines = [f"{len(items)} {'abstracts bear' if len(items) != 1 else 'abstract bears'} on this claim "
             f"({md(tally)}), best first:", ""]
    for i, it in enumerate(items, 1):
        n = number(i, it)
        stance = getattr(it, "stance", "related")
        lines.append(f'{i}. <a class="pc-cite" href="#{card_id(turn, n)}">[{n}]</a> **{md(stance)}** — '
                     f"{md(it.paper.title)}: “{md(getattr(it, 'sentence', ''))}”")
    chat = "\n".join(lines)
    if getattr(res, "mode", "") == "extractive":
        chat += ("\n\n<small>Without a language model every abstract is marked *related*: similarity cannot tell "
                 "support from contradiction. A language model judges the stance: choose it as the answerer when the "
                 "server has one.</small>")
    if note:
        chat += f"\n\n<small>{md(note)}</small>"
    chat += _flags_md(flags)
    cards = []
    for i, it in enumerate(items, 1):
        stance = getattr(it, "stance", "related")
        score = getattr(it, "score", None)
        note = [f"evidence score {float(score):.2f}"] if isinstance(score, (int, float)) else []
        sentences = list(getattr(it, "sentences", None) or []) or [getattr(it, "sentence", "")]
        stance_badge = (f"stance: {STANCE_LABEL.get(stance, stance)}", _STANCE_CLASS.get(stance, "pc-related"))
        if getattr(it, "grade", None):  # first the grade (how well the sentence bears on the claim), then the stance
            text, cls, _ = citation_badge(it, "claim")
            badges, note = [(text, cls), stance_badge], [grade_note(it, "claim"), *note]
        else:
            badges = [stance_badge]
        extra = f'<div class="pc-score">{h(" · ".join(note))}</div>' if note else ""
        cards.append(card(turn, number(i, it), it.paper, sentences, *badges[0], extra, more_badges=badges[1:]))
    pnl = panel(f"Evidence · {len(items)} abstract{'s' if len(items) != 1 else ''}", "".join(cards))
    return Rendered(chat, pnl, exports.evidence_markdown(claim, items, filters), exports.evidence_citations(items),
                    _json(res), "evidence", claim)
