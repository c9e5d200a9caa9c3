"""The two summary writers: extractive (the papers' own sentences) and LLM (map per theme, reduce to an overview).

Both end the same way: every paragraph goes through the citation check, and the references are
numbered by first use across the overview and the themes.
"""

from __future__ import annotations

import re

import numpy as np

from rag.reading.answer_scorer import probabilities
from rag.reading.citation_grades import is_quoted
from rag.reading.citations import CheckedAnswer, check, quote, strip_marks
from rag.library.embcache import CachedEmbedder
from rag.prompts import load_prompt
from rag.records import Citation
from rag.settings import Settings
from rag.reading.snippets import snippet
from rag.reading.standalone import standing, stands_alone
from rag.reading.voice import defines, own_voice
from rag.tasks.numbered_sources import format_sources
from rag.tasks.summary import Summary, Theme, ThemeDraft
from rag.tasks.topicality import BACKGROUND_DISCOUNT, CONTRIBUTION, Reading

_MARKS = re.compile(r"\[(\d+)\]")


class _Part:
    """A checked piece of text whose [n] refer to its own source list."""

    def __init__(self, checked: CheckedAnswer):
        self.checked = checked
        self.local = {c.n: c for c in checked.citations}
        for c in checked.citations:  # verbatim: every sentence of this part citing it is the abstract's own
            c.quoted = is_quoted(c.paper.abstract, [s for s, nums in checked.sentences if c.n in nums])


def _assemble(overview: _Part | None, themes: list[tuple[ThemeDraft, _Part]]) -> tuple[str, list[Theme], list[Citation]]:
    """Number the references by first use (overview first, then themes in order) and rewrite the marks."""
    parts = ([overview] if overview else []) + [p for _, p in themes]
    number: dict[str, int] = {}
    best: dict[str, Citation] = {}
    quoted: dict[str, list[str]] = {}  # every sentence of a paper the summary rests on, across its parts
    verbatim: dict[str, bool] = {}  # every part quotes the paper verbatim
    for part in parts:
        for n in sorted(part.local):
            c = part.local[n]
            pid = c.paper.paper_id
            if pid not in number:
                number[pid] = len(number) + 1
            if pid not in best or c.score > best[pid].score:
                best[pid] = c
            quoted.setdefault(pid, []).extend(([c.evidence] if c.supported else []) + c.more_evidence)
            verbatim[pid] = verbatim.get(pid, True) and c.quoted

    def rewrite(part: _Part) -> str:
        return _MARKS.sub(lambda m: f"[{number[part.local[int(m.group(1))].paper.paper_id]}]"
                          if int(m.group(1)) in part.local else "", part.checked.text)

    def renum(part: _Part) -> list[Citation]:
        cs = [c.model_copy(update={"n": number[c.paper.paper_id]}) for c in part.local.values()]
        return sorted(cs, key=lambda c: c.n)

    out_themes = [Theme(title=t.title, text=rewrite(p), citations=renum(p), terms=t.terms) for t, p in themes]
    refs = sorted((c.model_copy(update={"n": number[pid], "quoted": verbatim[pid], "more_evidence": [
        e for e in dict.fromkeys(quoted.get(pid, [])) if e and e != c.evidence]}) for pid, c in best.items()),
        key=lambda c: c.n)
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


# Paragraphs prefer what a paper did and found over the background it starts from.
OFF_TOPIC = 0.5
CONTRIBUTION_ON_TOPIC = 0.2  # a contribution sentence this relevant sets the paper's OFF_TOPIC reference
_ROLE_BONUS = {"objective": 0.08, "method": 0.05, "result": 0.08, "background": -0.15}
# Which sentence represents a paper: (1 - QUOTE_SCORER_WEIGHT) * the rule (relevance, centrality, role bonus)
# + QUOTE_SCORER_WEIGHT * the answer scorer's probability with the topic as the question
# (rag.reading.answer_scorer), inside the same tiers. Chosen on mlqa's train `topic` questions (a bare phrase
# with its paper's answer sentences marked; bench/summary_quotes.py): the paragraph quotes an answer sentence
# 0.692 -> 0.769 of the time, the overview 0.667 -> 0.769; on test (20) 0.55 -> 0.60 and 0.60 -> 0.65.
QUOTE_SCORER_WEIGHT = 0.8


# -- extractive


def _central(readings: list[Reading], emb: CachedEmbedder) -> list[np.ndarray]:
    """Per paper, each sentence's cosine to the paper as a whole (how central it is to it)."""
    flat = [s for r in readings for s in r.sentences]
    sv = emb(flat) if flat else np.zeros((0, 1))
    out, i = [], 0
    for r in readings:
        block = sv[i : i + len(r.sentences)]
        out.append(block @ r.vec if r.vec is not None and len(block) else np.zeros(len(r.sentences)))
        i += len(r.sentences)
    return out


def roles_read(r: Reading) -> list[str]:
    """The paper's sentence roles as a summary reads them: a sentence in the paper's own voice ("We propose
    ...", "Here we show ...") is a contribution (objective) whatever the classifier says, and a definition
    ("X is a Y that ...", "X refers to ...") is background (rag.reading.voice). With no role known (every sentence
    is 'other', e.g. the tests' hashing embedder) only definitions change."""
    known = any(role != "other" for role in r.roles)
    out = []
    for s, role in zip(r.sentences, r.roles):
        if own_voice(s) and role not in CONTRIBUTION:
            role = "objective" if known else role
        elif defines(s):
            role = "background"
        out.append(role)
    return out


def quotable(s: str) -> str | None:
    """The sentence as a summary can quote it: itself when it stands alone; its main clause when only an
    opening clause leans on the sentence before ("To address this, we propose X" -> "We propose X",
    rag.reading.standalone.standing) and that clause stands alone; else None."""
    if stands_alone(s):
        return s
    clause = standing(s)
    return clause if clause and clause != s.strip() and stands_alone(clause) else None


def topic_probabilities(topic: str, readings: list[Reading], emb) -> list[np.ndarray | None]:
    """Per paper, each sentence's answer-scorer probability with the topic as the question (None when the
    scorer has no say)."""
    if not QUOTE_SCORER_WEIGHT or not readings:
        return [None] * len(readings)
    return list(probabilities(topic, [r.sentences for r in readings], emb, [r.roles for r in readings]))


def _pick(r: Reading, central: np.ndarray, used: set[str], contribution_only: bool = False,
          topical: float = 0.5, probs: np.ndarray | None = None) -> tuple[str, str]:
    """(the sentence, as quoted) of the paper that is on the topic and central to it, preferring its
    contribution (objective, method, result; rag.reading.voice's reading) over background, and what the answer
    scorer takes for the topic's answer (`probs`, weighted QUOTE_SCORER_WEIGHT); among sentences that
    stand alone (or whose main clause does), are on the topic and not used yet if there are any, then
    those that stand alone and are not used, then used ones, else any."""
    if not r.sentences:
        return r.paper.abstract, r.paper.abstract
    roles = roles_read(r)
    # as the topicality reads it (a test bed is no contribution), by these roles, and never a definition
    contrib = {i for i in r.contribution(roles) if not defines(r.sentences[i])}
    idx = range(len(r.sentences))
    # relevance as the paper's score counts it (background discounted), centrality, the role's bonus
    score = {i: topical * float(r.relevance[i] - (0.0 if i in contrib else BACKGROUND_DISCOUNT))
             + (1 - topical) * float(central[i])
             + _ROLE_BONUS.get(roles[i], 0.0) for i in idx}
    if probs is not None and len(probs) == len(r.sentences):
        score = {i: (1 - QUOTE_SCORER_WEIGHT) * score[i] + QUOTE_SCORER_WEIGHT * float(probs[i]) for i in idx}
    shown = {i: quotable(r.sentences[i]) for i in idx}
    alone = [i for i in idx if shown[i]]
    fresh = [i for i in alone if r.sentences[i] not in used]
    # A sentence less than OFF_TOPIC times as relevant as the paper's most topical standalone one (the DPO
    # paper's "A toy experiment ... is given" in RLHF) is quoted only when nothing else stands alone.
    # Measured against the paper's contribution when a standalone one is plainly on the topic: a background
    # sentence that names the topic ("GNNs achieve strong empirical performance …") must not push every
    # finding below the cut; when none is (the DPO paper's in RLHF), against all its standalone sentences.
    best = max((float(r.relevance[i]) for i in alone if i in contrib), default=0.0)
    if best < CONTRIBUTION_ON_TOPIC:
        best = max((float(r.relevance[i]) for i in alone), default=0.0)
    on = [[i for i in t if r.relevance[i] >= OFF_TOPIC * best] for t in (fresh, alone)]
    if contribution_only:  # the overview: a contribution sentence if one is on the topic
        on = [[i for i in t if i in contrib] for t in on] + on
    else:  # a paragraph: a fresh contribution sentence on the topic before background that names it
        on = [[i for i in on[0] if i in contrib]] + on
    tiers = on[:-1] + [fresh] + on[-1:] + [alone, [i for i in idx if r.sentences[i] not in used], list(idx)]
    for tier in tiers:
        if tier:
            i = max(tier, key=lambda i: (score[i], -i))
            return r.sentences[i], shown[i] or r.sentences[i]
    return r.sentences[0], r.sentences[0]


def _cite(sentence: str, n: int) -> str:
    return f"{_no_end(quote(sentence))} [{n}]."  # the abstract's own [n] marks neutralised


def _in_sentence(t: ThemeDraft) -> str:
    """A theme's name inside a sentence: lower-case first letter unless its authors capitalise it."""
    lead = t.terms[0] if t.terms else t.title
    if lead[:1].isupper() and lead == t.title[: len(lead)]:
        return t.title
    return t.title[:1].lower() + t.title[1:]


def _marks(ns: list[int]) -> str:
    return "".join(f"[{n}]" for n in ns)


def overview_lead(topic: str, drafts: list[ThemeDraft], themes: list[Theme], more: int = 0) -> str:
    """How the area divides, each theme named with its papers counted and cited: 'The library holds 5 papers
    on “X” in 2 themes: a (3 papers [1][2][3]) and b (2 papers [4][5]).'; one theme is the topic itself:
    'The library holds 2 papers on “X” in 1 theme [1][2].' It counts the papers summarised; when the area
    holds `more` past them it says so first ('The library holds 17 papers on “X”; here are the 5 nearest, in 2
    themes: …'): "holds 15" above "2 more papers on this area" was untrue."""
    n = sum(len(d.readings) for d in drafts)
    if n == 0:
        return ""
    if not more:
        head = f"The library holds {_count(n, 'paper')} on “{topic}” in {_count(len(drafts), 'theme')}"
    else:
        shown = "here is the nearest" if n == 1 else f"here are the {n} nearest"
        themed = "" if len(drafts) == 1 else f", in {_count(len(drafts), 'theme')}"
        head = f"The library holds {_count(n + more, 'paper')} on “{topic}”; {shown}{themed}"
    if len(drafts) == 1:
        return f"{head} {_marks([c.n for c in themes[0].citations])}.".replace(" .", ".")
    parts = [f"{_in_sentence(d)} ({_count(len(d.readings), 'paper')} {_marks([c.n for c in t.citations])})".replace(
        " )", ")") for d, t in zip(drafts, themes)]
    return f"{head}: " + ", ".join(parts[:-1]) + f" and {parts[-1]}."


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def write_extractive(topic: str, themes: list[ThemeDraft], emb: CachedEmbedder, on_token,
                     overview_quotes: bool = True, more: int = 0) -> Summary:
    """An overview (how the area divides, then each theme's clearest contribution) and a paragraph per
    theme from its papers' own sentences, every sentence standing alone and cited. Without overview_quotes
    the overview only divides the area, and each paragraph quotes every paper as the overview quotes a lead,
    by its clearest contribution on the topic (a list of the area's papers, rag.tasks.paper_lists: with the
    overview's quotes a lead paper's paragraph would quote its second best)."""
    readings = [r for t in themes for r in t.readings]
    all_papers = [r.paper for r in readings]
    index = {p.paper_id: i for i, p in enumerate(all_papers)}
    central = dict(zip(index, _central(readings, emb)))
    probs = dict(zip(index, topic_probabilities(topic, readings, emb)))
    used: set[str] = set()
    # The overview first: each theme's clearest contribution, from its lead paper (every theme; the two best
    # papers' when the area is one theme).
    quoted = []
    # (one paper: its paragraph below is its contribution; the overview only counts it)
    leads = [t.readings[0] for t in themes] if len(themes) > 1 else themes[0].readings[:2] if themes else []
    leads = leads if len(readings) > 1 and overview_quotes else []
    for r in leads:
        s, shown = _pick(r, central[r.paper.paper_id], used, contribution_only=True, topical=0.7,
                         probs=probs[r.paper.paper_id])
        used.add(s)
        quoted.append(_cite(shown, index[r.paper.paper_id] + 1))
    # a list quotes each paper as the overview quotes a theme's lead: its clearest contribution on the topic
    as_lead = {} if overview_quotes else {"contribution_only": True, "topical": 0.7}
    theme_parts: list[tuple[ThemeDraft, _Part]] = []
    for t in themes:
        pieces = []
        for r in t.readings:
            s, shown = _pick(r, central[r.paper.paper_id], used, probs=probs[r.paper.paper_id], **as_lead)
            used.add(s)
            pieces.append(_cite(shown, index[r.paper.paper_id] + 1))
        theme_parts.append((t, _Part(check(" ".join(pieces), all_papers, emb, require_citations=False))))
    overview = _Part(check(" ".join(quoted), all_papers, emb, require_citations=False))
    summary, out_themes, refs = _assemble(overview, theme_parts)
    summary = f"{overview_lead(topic, themes, out_themes, more)} {summary}".strip()
    if on_token:
        on_token(summary)
    return Summary(topic=topic, summary=summary, themes=out_themes, citations=refs, mode="extractive",
                   flags=_flags([overview] + [p for _, p in theme_parts]))


# -- LLM


def write_llm(topic: str, themes: list[ThemeDraft], settings: Settings, model, emb: CachedEmbedder,
              on_token, more: int = 0) -> Summary:
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
    overview = _Part(cited_only(check(strip_title(overview_draft), sources, emb, require_citations=True)))
    summary, out_themes, refs = _assemble(overview, theme_parts)
    summary = f"{overview_lead(topic, themes, out_themes, more)} {summary}".strip()  # as extractive
    if on_token:
        on_token(summary)
    return Summary(topic=topic, summary=summary, themes=out_themes, citations=refs, mode="llm",
                   flags=flags + _flags([overview] + [p for _, p in theme_parts]))


def cited_only(checked: CheckedAnswer) -> CheckedAnswer:
    """The overview without its sentences that carry no valid citation (none, or only numbers that
    resolve to no paper): the model's claims about the area stand only on papers the reader can open.
    Each sentence dropped is named in the flags."""
    kept = [(s, nums) for s, nums in checked.sentences if nums]
    dropped = [s for s, nums in checked.sentences if not nums and s.strip()]
    if not dropped:
        return checked
    flags = [f for f in checked.flags if not f.startswith("uncited: ")]
    flags += [f"dropped from the overview (no valid citation): “{s}”" for s in dropped]
    text = " ".join(f"{_no_end(s)} {_marks(nums)}." for s, nums in kept)
    return CheckedAnswer(text=text, citations=checked.citations, flags=flags, sentences=kept)


def _split_title(draft: str) -> tuple[str, str]:
    """'Title: X' on the first line (as the map prompt asks) -> (X, rest); else ('', draft)."""
    lines = draft.strip().splitlines()
    if lines:
        m = re.match(r"^\s*(?:#+\s*)?(?:\*\*)?title(?:\*\*)?\s*:\s*(.+?)\s*$", lines[0], re.IGNORECASE)
        if m:
            title = strip_marks(m.group(1).strip("*# ")).strip()
            return snippet(title, 120), "\n".join(lines[1:]).strip()
    return "", draft.strip()


def strip_title(text: str) -> str:
    lines = text.strip().splitlines()
    if lines and re.match(r"^\s*(?:#+\s*)?(?:\*\*)?(overview|summary)(?:\*\*)?\s*:?\s*$", lines[0], re.IGNORECASE):
        lines = lines[1:]
    return "\n".join(lines).strip()
