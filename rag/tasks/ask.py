"""Ask: retrieve, answer (extractive or LLM), check every citation. One function for CLI, UI and tests."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..citations import check, quote, strip_marks
from ..extractive import compose
from ..library import Library
from ..prompts import load_prompt
from ..records import Answer, Hit
from ..retrieval import Filters, search
from ..settings import Settings, get_settings

Turn = tuple[str, str]  # (question, answer) of an earlier turn
ABSTAIN_TEXT = "The library does not answer this question."

_FOLLOW_UP = re.compile(
    r"^(and|also|what about|how about|but|so|then|why|how so)\b|\b(they|their|them|it|its|this|that|these|those|the same)\b",
    re.IGNORECASE)


def is_follow_up(question: str) -> bool:
    return bool(_FOLLOW_UP.search(question.strip()))


def covers(hits: list[Hit], settings: Settings) -> bool:
    """Whether the library covers the question at all (threshold chosen on data, see README)."""
    return bool(hits) and hits[0].dense >= settings.ask.abstain_below


def format_sources(hits: list[Hit], prompts_dir=None) -> str:
    tpl = load_prompt("source", prompts_dir)
    # Escape our own delimiter inside abstracts so a hostile abstract cannot close its source early, and
    # neutralise the abstract's own [n] marks so the model cannot copy one as if it were its citation.
    clean = lambda s: quote(s.replace("</source", "</ source").replace("<source", "< source"))  # noqa: E731
    return "\n".join(tpl.format(n=i, title=clean(h.paper.title), venue=h.paper.venue, year=h.paper.year or "",
                                abstract=clean(h.paper.abstract)) for i, h in enumerate(hits, 1))


def _history_text(history: Sequence[Turn]) -> str:
    return "\n".join(f"User: {q}\nAssistant: {strip_marks(a)}" for q, a in history[-3:])


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
        return f"{history[-1][0]} {question}"
    return question


def ask(question: str, library: Library, settings: Settings | None = None, filters: Filters | None = None,
        history: Sequence[Turn] = (), on_token: Callable[[str], None] | None = None, model=None) -> Answer:
    """Answer a question from the library; `model` overrides the configured chat model (tests pass fakes)."""
    settings = settings or get_settings()
    use_llm = model is not None or settings.llm == "openai"
    if use_llm and model is None:
        from ..llm import make_chat_model

        model = make_chat_model(settings)
    query = retrieval_query(question, history, settings, model if use_llm else None)
    hits = search(library, query, settings.ask.sources, filters)
    mode = "llm" if use_llm else "extractive"
    if not hits and len(library) == 0:
        return Answer(question=question, mode=mode, abstained=True,
                      answer="The library is empty: add abstract lists first (paperchat ingest seeds/).")
    if not covers(hits, settings):
        return Answer(question=question, answer=f"{ABSTAIN_TEXT} The nearest papers are listed below.",
                      mode=mode, abstained=True, nearest=hits)
    if use_llm:
        draft = _llm_draft(question if query == question else query, hits, settings, model, on_token)
        if ABSTAIN_TEXT.lower().rstrip(".") in draft.lower():
            return Answer(question=question, answer=f"{ABSTAIN_TEXT} The nearest papers are listed below.",
                          mode=mode, abstained=True, nearest=hits)
    else:
        # Retrieval used the carried-over topic; the sentences are picked for what the follow-up asks.
        draft = compose(question, hits, library.text_embedder, settings.ask.max_sentences)
        if on_token:
            for s in re.split(r"(?<=\]\.) ", draft):
                on_token(s + " ")
    checked = check(draft, [h.paper for h in hits], library.text_embedder, require_citations=use_llm)
    if use_llm and not checked.citations:
        checked.flags.append("the model cited none of the sources; its answer is shown unverified")
    return Answer(question=question, answer=checked.text, mode=mode, citations=checked.citations,
                  flags=checked.flags)


def _llm_draft(question: str, hits: list[Hit], settings: Settings, model, on_token) -> str:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    prompt = ChatPromptTemplate.from_messages([
        ("system", load_prompt("ask_system", settings.prompts_dir)),
        ("user", load_prompt("ask_user", settings.prompts_dir)),
    ])
    chain = prompt | model | StrOutputParser()
    inputs = {"sources": format_sources(hits, settings.prompts_dir), "question": question}
    parts: list[str] = []
    for tok in chain.stream(inputs):
        parts.append(tok)
        if on_token:
            on_token(tok)
    return "".join(parts)
