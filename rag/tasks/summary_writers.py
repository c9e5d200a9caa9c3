"""The two summary writers: extractive (the papers' own sentences) and LLM (map per theme, reduce to an overview).

Both end the same way: every paragraph goes through the citation check, and the references are
numbered by first use across the overview and the themes.
"""

from __future__ import annotations

import re

import numpy as np

from ..citations import CheckedAnswer, check, quote, strip_marks
from ..embcache import CachedEmbedder
from ..prompts import load_prompt
from ..records import Citation, Paper
from ..sentences import split_sentences
from ..settings import Settings
from .ask import format_sources
from .summary import Summary, Theme, ThemeDraft

_MARKS = re.compile(r"\[(\d+)\]")


class _Part:
    """A checked piece of text whose [n] refer to its own source list."""

    def __init__(self, checked: CheckedAnswer):
        self.checked = checked
        self.local = {c.n: c for c in checked.citations}


def _assemble(overview: _Part | None, themes: list[tuple[ThemeDraft, _Part]]) -> tuple[str, list[Theme], list[Citation]]:
    """Number the references by first use (overview first, then themes in order) and rewrite the marks."""
    parts = ([overview] if overview else []) + [p for _, p in themes]
    number: dict[str, int] = {}
    best: dict[str, Citation] = {}
    for part in parts:
        for n in sorted(part.local):
            c = part.local[n]
            pid = c.paper.paper_id
            if pid not in number:
                number[pid] = len(number) + 1
            if pid not in best or c.score > best[pid].score:
                best[pid] = c

    def rewrite(part: _Part) -> str:
        return _MARKS.sub(lambda m: f"[{number[part.local[int(m.group(1))].paper.paper_id]}]"
                          if int(m.group(1)) in part.local else "", part.checked.text)

    def renum(part: _Part) -> list[Citation]:
        cs = [c.model_copy(update={"n": number[c.paper.paper_id]}) for c in part.local.values()]
        return sorted(cs, key=lambda c: c.n)

    out_themes = [Theme(title=t.title, text=rewrite(p), citations=renum(p), terms=t.terms) for t, p in themes]
    refs = sorted((c.model_copy(update={"n": number[pid]}) for pid, c in best.items()), key=lambda c: c.n)
    return (rewrite(overview) if overview else ""), out_themes, refs


def _flags(parts: list[_Part]) -> list[str]:
    out: list[str] = []
    for p in parts:
        for f in p.checked.flags:
            # Local numbers mean nothing to the reader once renumbered; keep the message, drop the number.
            out.append(re.sub(r"\[\d+\]", "[?]", f) if f.startswith("not supported") else f)
    return list(dict.fromkeys(out))


def _no_end(s: str) -> str:
    """The sentence without its final punctuation, so a citation mark can go before it. A sentence that
    ends inside brackets or quotes ("... length correction,...)") loses the stop inside them too, or the
    sentence splitter would cut the mark off into a sentence of its own."""
    s = s.rstrip()
    m = re.search(r"[.!?]+([\"'”’)\]]+)$", s)
    if m:
        return s[: m.start()] + m.group(1)
    return s[:-1] if s and s[-1] in ".!?" else s


_CONNECTIVE = re.compile(
    r"^(?:next|then|finally|moreover|furthermore|additionally|importantly|however|thus|therefore|hence|"
    r"consequently|specifically|in particular|in addition|to (?:this|that) end|to address (?:this|these)|"
    r"as a result|building on|second(?:ly)?|third(?:ly)?|also|this|these|such|it|they)\b", re.IGNORECASE)


_SETUP = re.compile(r"^(?:OBJECTIVES?|BACKGROUND|METHODS?|DESIGN|SETTING|PARTICIPANTS|INTRODUCTION|AIMS?|PURPOSE)\b")


def _has_marks(s: str) -> bool:
    # Sentences with bracketed numbers ("the box $[0,1]^n$") would be read as citations by the check.
    return bool(re.search(r"\[\s*\d", s))


# -- extractive


def _sentence_table(topic: str, papers: list[Paper], paper_vecs: np.ndarray, emb: CachedEmbedder):
    """Per paper: its sentences, their cosine to the topic and to the paper as a whole."""
    sents = [split_sentences(p.abstract) or [p.abstract] for p in papers]
    flat = [s for ss in sents for s in ss]
    v = emb([topic] + flat)
    tv, sv = v[0], v[1:]
    table, i = [], 0
    for j, ss in enumerate(sents):
        block = sv[i : i + len(ss)]
        table.append((ss, block @ tv, block @ paper_vecs[j]))
        i += len(ss)
    return table


def _pick(ss: list[str], topical: np.ndarray, central: np.ndarray, avoid: set[str]) -> tuple[str, float]:
    """The paper's sentence that is both central to it and on the topic; skips what is already used,
    fragments, run-ons and sentences the citation check would misread."""
    best, best_s = ss[0], -9.0
    for s, a, b in zip(ss, topical, central):
        score = 0.5 * float(a) + 0.5 * float(b)
        if s in avoid:
            score -= 2.0
        if _has_marks(s):
            score -= 1.0
        if len(s) < 40 or len(s) > 450:
            score -= 0.3
        if _CONNECTIVE.match(s):  # leans on the sentence before it, which the reader does not see
            score -= 0.15
        if _SETUP.match(s):  # a structured abstract's aim or method, not what it found
            score -= 0.1
        if score > best_s:
            best, best_s = s, score
    return best, best_s


def write_extractive(topic: str, themes: list[ThemeDraft], emb: CachedEmbedder, on_token) -> Summary:
    """Each theme's paragraph from its papers' most central, on-topic sentences; an overview of how the
    area divides, from the leading themes' most on-topic sentences not used yet."""
    all_papers = [h.paper for t in themes for h in t.hits]
    index = {p.paper_id: i for i, p in enumerate(all_papers)}
    all_vecs = np.concatenate([t.vecs for t in themes]) if themes else np.zeros((0, 1))
    table = _sentence_table(topic, all_papers, all_vecs, emb)
    used: set[str] = set()
    theme_parts: list[tuple[ThemeDraft, _Part]] = []
    for t in themes:
        pieces = []
        for h in t.hits:
            i = index[h.paper.paper_id]
            ss, topical, central = table[i]
            s, _ = _pick(ss, topical, central, used)
            used.add(s)
            pieces.append(f"{_no_end(quote(s))} [{i + 1}].")  # the abstract's own [n] marks neutralised
        text = " ".join(pieces)
        theme_parts.append((t, _Part(check(text, all_papers, emb, require_citations=False))))
    # Overview: how the area divides, then each leading theme's most on-topic sentence not used yet.
    counts = ", ".join(f"{' and '.join(t.terms) if t.terms else t.title} ({len(t.hits)})" for t in themes)
    n = len(all_papers)
    lead = (f"The library holds {n} paper{'s' if n != 1 else ''} on “{topic}”"
            + (f", in {len(themes)} themes: {counts}." if len(themes) > 1 else "."))
    pieces = [lead]
    # Each theme's lead paper first, then the next papers of the first themes, up to three sentences.
    order_papers = [t.hits[0] for t in themes[:3]] + [h for t in themes for h in t.hits[1:]]
    for h in order_papers[: max(1, min(3, len(all_papers) - 1 if len(all_papers) > 1 else 1))]:
        i = index[h.paper.paper_id]
        ss, topical, _ = table[i]
        order = np.argsort(-topical)
        fresh = [ss[j] for j in order if ss[j] not in used and not _has_marks(ss[j]) and not _CONNECTIVE.match(ss[j])]
        cand = fresh or [ss[int(order[0])]]
        used.add(cand[0])
        pieces.append(f"{_no_end(quote(cand[0]))} [{i + 1}].")
    overview = _Part(check(" ".join(pieces), all_papers, emb, require_citations=False))
    summary, out_themes, refs = _assemble(overview, theme_parts)
    if on_token:
        on_token(summary)
    return Summary(topic=topic, summary=summary, themes=out_themes, citations=refs, mode="extractive",
                   flags=_flags([overview] + [p for _, p in theme_parts]))


# -- LLM


def write_llm(topic: str, themes: list[ThemeDraft], settings: Settings, model, emb: CachedEmbedder,
              on_token) -> Summary:
    """Map: one paragraph per theme from its numbered sources; reduce: an overview from the paragraphs."""
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    pd = settings.prompts_dir
    map_chain = ChatPromptTemplate.from_messages([
        ("system", load_prompt("summarise_system", pd)),
        ("user", load_prompt("summarise_map", pd)),
    ]) | model | StrOutputParser()
    inputs = [{"topic": topic, "hint": ", ".join(t.terms) or t.title,
               "sources": format_sources(t.hits, pd)} for t in themes]
    drafts = map_chain.batch(inputs, config={"max_concurrency": 4})
    flags: list[str] = []
    theme_parts: list[tuple[ThemeDraft, _Part]] = []
    for t, draft in zip(themes, drafts):
        title, body = _split_title(draft)
        if title:
            t.title = title
        part = _Part(check(body, [h.paper for h in t.hits], emb, require_citations=True))
        if not part.checked.citations:
            flags.append(f"theme “{t.title}”: the model cited none of its sources; the paragraph is shown unverified")
        theme_parts.append((t, part))
        if on_token:
            on_token(f"{t.title}\n{part.checked.text}\n\n")
    # Reduce: the overview sees the theme paragraphs with provisional global numbers.
    _, provisional, refs = _assemble(None, theme_parts)
    sources = [c.paper for c in refs]
    paragraphs = "\n\n".join(f"Theme {i}: {th.title}\n{th.text}" for i, th in enumerate(provisional, 1))
    reduce_chain = ChatPromptTemplate.from_messages([
        ("system", load_prompt("summarise_system", pd)),
        ("user", load_prompt("summarise_reduce", pd)),
    ]) | model | StrOutputParser()
    overview_draft = reduce_chain.invoke({"topic": topic, "themes": paragraphs}) if sources else ""
    overview = _Part(check(strip_title(overview_draft), sources, emb, require_citations=True))
    summary, out_themes, refs = _assemble(overview, theme_parts)
    if on_token:
        on_token(summary)
    return Summary(topic=topic, summary=summary, themes=out_themes, citations=refs, mode="llm",
                   flags=flags + _flags([overview] + [p for _, p in theme_parts]))


def _split_title(draft: str) -> tuple[str, str]:
    """'Title: X' on the first line (as the map prompt asks) -> (X, rest); else ('', draft)."""
    lines = draft.strip().splitlines()
    if lines:
        m = re.match(r"^\s*(?:#+\s*)?(?:\*\*)?title(?:\*\*)?\s*:\s*(.+?)\s*$", lines[0], re.IGNORECASE)
        if m:
            title = strip_marks(m.group(1).strip("*# ")).strip()
            return title[:120], "\n".join(lines[1:]).strip()
    return "", draft.strip()


def strip_title(text: str) -> str:
    lines = text.strip().splitlines()
    if lines and re.match(r"^\s*(?:#+\s*)?(?:\*\*)?(overview|summary)(?:\*\*)?\s*:?\s*$", lines[0], re.IGNORECASE):
        lines = lines[1:]
    return "\n".join(lines).strip()
