"""Ask: retrieve, answer (extractive or LLM), check and grade every citation. One function for CLI, UI and tests.

Coverage is decided before anything is written (both modes): the library must cover the question (its
best chunk clears `ask.abstain_below`) and some sentence must clear the relevance floor (rag.reading.grades).
Otherwise the answer says the library does not answer -- under a filter, whether papers outside it do.
A follow-up that refers back ("they", "this paper") is answered from the papers the previous answer
cited first; when they do not answer it, the answer says so before quoting any other paper.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from rag.reading.citations import check, strip_marks
from rag.reading.citation_grades import grade_citations as grade_all
from rag.tasks.extractive import Quote, candidates, pick, render, sentences_of
from rag.tasks.numbered_sources import format_sources  # noqa: F401 (callers and tests import it from here too)
from rag.tasks.paper_lists import list_answer
from rag.tasks.compare_cells import column_cell, column_probabilities, read_alone
from rag.tasks.themes import MAX_PAPERS
from rag.library.library import Library
from rag.prompts import load_prompt
from rag.reading.questions import (cited_sources, column_asked, compared, defined, kind, papers_on, refers_back,
                                   to_each)
from rag.records import Answer, Citation, Hit
from rag.library.retrieval import Filters, search
from rag.reading.roles import roles_of
from rag.settings import Settings, get_settings

# (question, answer) of an earlier turn, optionally with the paper ids that answer cited
Turn = tuple[str, str] | tuple[str, str, Sequence[str]]
ABSTAIN_TEXT = "The library does not answer this question."
PREVIOUS_DO_NOT_TEXT = "The papers cited in the previous answer do not answer this."
_ROLE_TAG = re.compile(r"\[(?:background|objective|method|result|other)\]\s*", re.IGNORECASE)


def is_follow_up(question: str) -> bool:
    return refers_back(question)


def covers(hits: list[Hit], settings: Settings) -> bool:
    """Whether the library covers the question at all (threshold chosen on data, see docs/design.md)."""
    return bool(hits) and hits[0].dense >= settings.ask.abstain_below


def _turn(t) -> tuple[str, str, list[str]]:
    return (t[0], t[1], list(t[2]) if len(t) > 2 and t[2] else [])


def _history_text(history: Sequence[Turn]) -> str:
    return "\n".join(f"User: {q}\nAssistant: {strip_marks(a)}" for q, a, _ in map(_turn, history[-3:]))


def retrieval_query(question: str, history: Sequence[Turn], settings: Settings, model=None) -> str:
    """A standalone query: LLM rewriting from history, or (extractive) the previous question's topic carried over."""
    if not history:
        return question
    if model is not None:
        from langchain_core.output_parsers import StrOutputParser
        from langchain_core.prompts import ChatPromptTemplate

        prompt = ChatPromptTemplate.from_messages([("user", load_prompt("rewrite_question", settings.prompts_dir))])
        rewritten = (prompt | model | StrOutputParser()).invoke(
            {"history": _history_text(history), "question": question}).strip()
        return rewritten.splitlines()[0] if rewritten else question
    if is_follow_up(question):
        return f"{_turn(history[-1])[0]} {question}"
    return question


def filter_phrase(filters: Filters) -> str:
    """"No ICLR paper", "No paper from 2020–2022", "No ICLR paper from 2024": what a filter admits."""
    years = ""
    if filters.year_from is not None or filters.year_to is not None:
        a, b = filters.year_from, filters.year_to
        years = (f" from {a}" if a == b else f" from {a}–{b}" if a is not None and b is not None
                 else f" from {a} on" if a is not None else f" up to {b}")
    return f"No {filters.venue + ' ' if filters.venue else ''}paper{years}"


def _ref(p) -> str:
    pub = " ".join(str(x) for x in (p.venue, p.year) if x)
    return f"{p.title or p.paper_id}" + (f" ({pub})" if pub else "")


class _Answerable:
    """Hits with their roles and the quotes that clear the floor, for one question."""

    def __init__(self, question: str, hits: list[Hit], library: Library, settings: Settings):
        emb = library.text_embedder
        a = settings.ask
        self.question = question  # what its sentences were scored against, and its citations are graded by
        self.hits, self.floor = hits, a.floor
        self.roles = roles_of([h.paper for h in hits], emb)
        self.cands: list[Quote] = candidates(question, hits, emb, self.roles)
        self.quotes = pick(self.cands, a.max_sentences, a.floor, a.answers_at)
        # quotes chosen by their role, for a question with no words of its own ("What do they find?"): the answer
        # scorer, which grades a citation, cannot read such a question (it rates every finding near 0)
        self.by_role = False

    def __bool__(self) -> bool:
        return bool(self.quotes)

    def answering_hits(self) -> list[int]:
        """The sources an LLM is given, in that order: the papers the extractive answer quotes (its lead
        first), then every other hit with a sentence above the floor, by its best sentence's answer
        probability. Hits with none are cut."""
        out = list(dict.fromkeys(q.hit for q in self.quotes))
        for q in self.cands:
            if q.score >= self.floor and q.hit not in out:
                out.append(q.hit)
        return out


def ask(question: str, library: Library, settings: Settings | None = None, filters: Filters | None = None,
        history: Sequence[Turn] = (), on_token: Callable[[str], None] | None = None, model=None,
        k: int = MAX_PAPERS) -> Answer:
    """Answer a question from the library; `model` overrides the configured chat model (tests pass fakes); `k`:
    the most papers a question asking for papers lists (as `summarise --k`)."""
    settings = settings or get_settings()
    use_llm = model is not None or settings.llm == "openai"
    if use_llm and model is None:
        from rag.tasks.llm import make_chat_model

        model = make_chat_model(settings)
    mode = "llm" if use_llm else "extractive"
    base = dict(question=question, mode=mode, question_kind=kind(question))
    lead = ""  # said before the answer: the previous papers do not answer this follow-up

    # A follow-up that refers back is answered from the papers the previous answer cited, when they answer it.
    prev_ids = _turn(history[-1])[2] if history else []
    about = question  # what the previous papers are asked: "What does [2] find?" asks source 2 "What does this paper find?"
    named = cited_sources(question) if prev_ids else None
    if named:
        if missing := [x for x in named[0] if x > len(prev_ids)]:  # "What does [5] find?" after two sources
            n = len(prev_ids)
            return Answer(**base, abstained=True, coverage="not_answered",
                          answer=f"The previous answer cites {n} paper{'s' if n > 1 else ''}: it has no source {missing[0]}.")
        prev_ids = list(dict.fromkeys(prev_ids[x - 1 if x > 0 else -1] for x in named[0]))
        about = named[1]
    if prev_ids and refers_back(about):
        got = library.get_papers(prev_ids)
        prev = [Hit(paper=got[i], score=1.0, text="", dense=1.0) for i in prev_ids if i in got]
        found = _Answerable(about, prev, library, settings)
        if column := column_asked(about):
            # "What do they find?" asks each previous paper for its finding, as a comparison table's column
            if cells := column_quotes(found, column, library.text_embedder):
                found.quotes, found.by_role = cells, True
                return _answer(about, found, library, settings, model, on_token, base, "answered", "")
        if not found and _turn(history[-1])[0]:
            # "What do they find?" holds no word of what "they" did: read with the question it follows (after
            # it, so that its own kind, a finding, is what is asked for); the scorer found nothing by it alone
            found = _Answerable(f"{about} {_turn(history[-1])[0]}", prev, library, settings)
        if found:
            if len(prev) > 1 and to_each(about):
                # "What did these papers find?" after a list: each paper's own answer, not the best one's
                found.quotes = each_paper(found, settings)
            return _answer(about, found, library, settings, model, on_token, base, "answered", "")
        if named:  # "What dataset does [2] use?" asks that paper: no other paper's sentence answers it
            n = [x if x > 0 else len(_turn(history[-1])[2]) for x in named[0]]
            which = f"Source {n[0]}" if len(n) == 1 else "Sources " + ", ".join(map(str, n[:-1])) + f" and {n[-1]}"
            return Answer(**base, abstained=True, coverage="not_answered", nearest=prev,
                          answer=f"{which} of the previous answer {'does' if len(n) == 1 else 'do'} not answer this.")
        lead = PREVIOUS_DO_NOT_TEXT

    # "Which papers study X?" asks for the area's papers: listed as a summary of X covers them; "Compare A
    # and B" for the papers on each, side by side.
    listed, sides = None, compared(question)
    if not lead and (area := papers_on(question) or sides):
        listed = list_answer(area, library, settings, filters, model,
                             {**base, "question_kind": "compare" if sides else "papers"}, k)
        # a comparison one paper holds ("How does RMNP differ from Muon?": RMNP's own against Muon) is answered
        # from that paper, as any question; its list stands only when nothing answers
        if listed and (len(listed.citations) > 1 or not sides):
            return _streamed(listed, on_token)

    query = retrieval_query(question, history, settings, model if use_llm else None)
    # Extractive: retrieval used the carried-over topic, the sentences are picked for what the question asks;
    # LLM: the rewritten question stands alone.
    asked = query if use_llm else question
    scored = defined(asked) or asked  # "What is RMNP?" as its subject, "RMNP" (questions.defined)
    hits = search(library, query, settings.ask.sources, filters, settings.ask.dense_weight)
    if not hits and len(library) == 0:
        return Answer(**base, abstained=True, coverage="not_answered",
                      answer="The library is empty: add abstract lists first (paperchat ingest seeds/).")
    found = _Answerable(scored, hits, library, settings) if covers(hits, settings) else None
    if not found and listed:
        return _streamed(listed, on_token)
    if not found:
        if filters:
            wide = search(library, query, settings.ask.sources, None, settings.ask.dense_weight)
            wide_found = _Answerable(scored, wide, library, settings) if covers(wide, settings) else None
            if wide_found:
                return _outside_filter(question, filters, wide_found, base, lead)
        text = (f"{lead} " if lead else "") + f"{ABSTAIN_TEXT} The nearest papers are listed below."
        return Answer(**base, answer=text, abstained=True, coverage="not_answered", nearest=hits)
    return _answer(asked, found, library, settings, model, on_token, base,
                   "answered_elsewhere" if lead else "answered", lead)


def each_paper(found: _Answerable, settings: Settings) -> list[Quote]:
    """Each paper's most probable sentence above the floor, as its own answer is picked (standing alone), in
    the order the papers were cited; a paper with none is left out. The pick across papers quotes another
    paper only when its sentence answers beyond doubt, so a follow-up about a list quoted one of its papers."""
    a = settings.ask
    out: list[Quote] = []
    for i in range(len(found.hits)):
        out += pick([q for q in found.cands if q.hit == i], 1, a.floor, a.answers_at)
    return out


def column_quotes(found: _Answerable, column: str, emb) -> list[Quote]:
    """Each paper's sentence in a comparison table's `column` (rag.tasks.compare_cells.column_cell: its finding,
    approach, problem or proposal, by role; the paper read for itself, as `compare --papers` reads it), in the
    order the papers were cited; a paper whose abstract states none is left out."""
    readings = read_alone(found.hits, emb)
    out = []
    columns = ("proposal", "finding") if column == "overview" else (column,)  # an overview: what it does, finds
    for i, (r, probs) in enumerate(zip(readings, column_probabilities(readings, "", emb))):
        for cell in {c.sentence: c for c in (column_cell(r, c, probs) for c in columns) if c.stated}.values():
            cand = next((q for q in found.cands if q.hit == i and q.sentence == cell.sentence), None)
            if cand is not None:
                out.append(replace(cand, text=cell.text))
    return out


def _streamed(answer: Answer, on_token) -> Answer:
    if on_token:
        on_token(answer.answer)
    return answer


def _outside_filter(question: str, filters: Filters, found: _Answerable, base: dict, lead: str) -> Answer:
    """Nothing under the filter answers; say which papers outside it do, quoting them (not as citations)."""
    shown: list[tuple[Hit, str]] = []
    for q in found.quotes:
        if all(h is not found.hits[q.hit] for h, _ in shown):
            shown.append((found.hits[q.hit], q.shown))
    parts = "; ".join(f"{_ref(h.paper)}: “{s}”" for h, s in shown)
    text = (f"{lead} " if lead else "") + f"{filter_phrase(filters)} answers this; without the filter, these do: {parts}"
    return Answer(**base, answer=text, abstained=True, coverage="outside_filter",
                  nearest=[h.model_copy(update={"text": s}) for h, s in shown])


def _answer(question: str, found: _Answerable, library: Library, settings: Settings, model, on_token,
            base: dict, coverage: str, lead: str) -> Answer:
    emb = library.text_embedder
    hits = found.hits
    if model is not None:
        # The model sees only the sources with a sentence above the floor, the ones the extractive answer
        # quotes first (answering_hits), keeping their numbers so its citations resolve against all hits;
        # each sentence marked with its role.
        keep = found.answering_hits()
        sources = format_sources([hits[i] for i in keep], settings.prompts_dir, [found.roles[i] for i in keep],
                                 [i + 1 for i in keep])
        # The role tags are ours, not the papers': drop any the model copied.
        draft = _ROLE_TAG.sub("", _llm_draft(question, sources, settings, model, on_token))
        if ABSTAIN_TEXT.lower().rstrip(".") in draft.lower():
            return Answer(**base, answer=f"{ABSTAIN_TEXT} The nearest papers are listed below.", abstained=True,
                          coverage="not_answered", nearest=hits)
    else:
        draft = render(found.quotes)
        if on_token:
            if lead:
                on_token(lead + " ")
            for s in re.split(r"(?<=\]\.) ", draft):
                on_token(s + " ")
    checked = check(draft, [h.paper for h in hits], emb, require_citations=model is not None)
    if model is not None and not checked.citations:
        checked.flags.append("the model cited none of the sources; its answer is shown unverified")
    grade_citations(found.question, checked.citations, checked.sentences, found, emb, settings)
    if found.by_role:  # ungraded, as a comparison table's cells are: the role chose the sentence, not the scorer
        for c in checked.citations:
            c.grade, c.grade_score = None, 0.0
    text = (f"{lead} " if lead else "") + checked.text
    return Answer(**base, answer=text, coverage=coverage, citations=checked.citations, flags=checked.flags)


def grade_citations(question: str, citations: list[Citation], sentences: list[tuple[str, list[int]]],
                    found: _Answerable, embedder, settings: Settings) -> None:
    """Each citation's grade against the question, whether the answer quotes the abstract verbatim, and the
    evidence sentence's role (rag.reading.citation_grades: summaries and evidence lists are graded alike)."""
    role_of = {}
    for h, rs in zip(found.hits, found.roles):
        for s, r in zip(sentences_of(h.paper), rs):
            role_of[(h.paper.paper_id, s)] = r
    grade_all(question, citations, role_of, embedder, settings.ask.floor, settings.ask.answers_at, sentences)


def _llm_draft(question: str, sources: str, settings: Settings, model, on_token) -> str:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    prompt = ChatPromptTemplate.from_messages([
        ("system", load_prompt("ask_system", settings.prompts_dir)),
        ("user", load_prompt("ask_user", settings.prompts_dir)),
    ])
    chain = prompt | model | StrOutputParser()
    inputs = {"sources": sources, "question": question}
    parts: list[str] = []
    for tok in chain.stream(inputs):
        parts.append(tok)
        if on_token:
            on_token(tok)
    return "".join(parts)
