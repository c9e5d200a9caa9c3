"""Summarise a research area: retrieve broadly with diversity, group the papers into themes, write a
cited paragraph per theme and an overview, and list the references (exportable: rag.exports.documents).

Both modes summarise the same papers -- those whose own contribution (objective, method and result
sentences) is on the topic; the others retrieved are listed as "related, not summarised" -- grouped
into the same themes (clusters of the papers' vectors, named from the phrases of their contributions).
Extractive mode (no LLM): each paragraph is made of its papers' own sentences that stand alone.
LLM mode: the same themes, then map (one paragraph per theme from its numbered sources) and reduce
(an overview from the theme paragraphs). Every paragraph goes through the citation check.

    topicality.py      which papers: a paper's contribution on the topic (rag.reading.roles, rag.reading.grades)
    themes.py          their order (MMR) and how they group (clustering by silhouette)
    theme_names.py     each theme's title: a noun phrase of its papers' contributions
    summary_writers.py the extractive and the LLM writer
    summary.py         the Summary record (JSON, text)
    rag.exports.documents        BibTeX and Markdown of the result
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rag.reading.citation_grades import grade_citations
from rag.reading.stems import american, as_most_write
from rag.library.library import Library
from rag.records import Hit
from rag.library.retrieval import Filters, search
from rag.settings import Settings, get_settings
from rag.tasks.summary import Summary, Theme, ThemeDraft
from rag.tasks.summary_writers import roles_read, write_extractive, write_llm
from rag.tasks.theme_names import name_themes
from rag.tasks.theme_phrases import acronym_key, spelled_out
from rag.tasks.area_scorer import on_topic
from rag.tasks.themes import CANDIDATES, MAX_PAPERS, cluster, depth, paper_text, select_papers, unit
from rag.tasks.topicality import read

__all__ = ["summarise", "no_papers_reason", "read_as", "Summary", "Theme", "NO_PAPERS_TEXT"]

NO_PAPERS_TEXT = "The library has no papers on this topic."


def summarise(topic: str, library: Library, settings: Settings | None = None, filters: Filters | None = None,
              model=None, k: int = MAX_PAPERS, on_token: Callable[[str], None] | None = None,
              overview_quotes: bool = True) -> Summary:
    """Summarise what the library holds on `topic`, at most k papers (those rag.tasks.area_scorer finds
    most probably in the area; how many more it found is `more`); `model` overrides the configured chat
    model (tests pass fakes). Extractive, without overview_quotes: the overview only says how the area
    divides and every paper is quoted by its clearest contribution on the topic, as the overview quotes a
    theme's lead (a list of the area's papers: rag.tasks.paper_lists; summary_writers.write_extractive)."""
    settings = settings or get_settings()
    use_llm = model is not None or settings.llm == "openai"
    if use_llm and model is None:
        from rag.tasks.llm import make_chat_model

        model = make_chat_model(settings)
    mode = "llm" if use_llm else "extractive"
    asked, topic = topic, read_as(topic, library, filters)
    hits = search(library, topic, depth(k), filters)
    emb = library.text_embedder
    readings, related = on_topic(topic, read(topic, hits, emb), emb)
    if not readings:  # the area scorer, not a cosine rule, decides that no paper is of the area
        return Summary(topic=asked, summary=f"{NO_PAPERS_TEXT} {no_papers_reason(related)}.", mode=mode,
                       abstained=True, nearest=[r.hit for r in related] or hits[:5])
    more = max(0, len(readings) - k)
    themes = group_into_themes(topic, readings, hits, emb, max_papers=k)
    near = [r.hit for r in related]
    if use_llm:
        res = write_llm(topic, themes, settings, model, emb, on_token, more)
    else:
        res = write_extractive(topic, themes, emb, on_token, overview_quotes, more)
    res.related = near
    res.more, res.k = more, k
    grade_summary(topic, res, readings, emb, settings)
    res.topic = asked  # the overview says how it was read ("… papers on “generative adversarial networks” …")
    return res


# How a request is framed around its area, not the area: "papers on X", "recent advances in X", "a survey of X",
# "What does the library say about X?". Read as part of the name, "papers" became its head and X its setting.
_FRAME = re.compile(
    r"^(?:(?:please|can you|could you)\s+)?(?:(?:summari[sz]e|compare|show(?: me)?|give me|find|list)\s+)?"
    r"(?:what (?:does|do) (?:the|my|this) library (?:say|hold|have|know) (?:on|about)|what (?:is|do we) know(?:n)? about|"
    r"tell me about|(?:an?|the) (?:overview|survey|review|summary) (?:of|on)|the state of the art (?:in|of|on)|"
    r"(?:(?:recent|current|latest|new)\s+)?(?:advances|progress|trends|developments|work|research|literature|papers|"
    r"studies|articles) (?:in|on|about|into|for))\s+", re.IGNORECASE)


def unframed(topic: str) -> str:
    """The area a request names, its framing words and end punctuation taken off ("papers on optimal
    transport?" -> "optimal transport"); the request itself when nothing would be left."""
    t = topic.strip().rstrip("?.!").strip()
    while (m := _FRAME.match(t)) and t[m.end():].strip():
        t = t[m.end():].strip()
    return t or topic


def read_as(topic: str, library: Library, filters: Filters | None = None) -> str:
    """The topic as summaries and tables read it: without the words that frame the request (unframed), each
    acronym in it ("GANs", "RLHF", "reasoning in LLMs") spelled out as the library's papers on it write it
    ("generative adversarial networks"), else as a common reading has it, a model's name its papers write as
    a name ("BERT") as typed; a British -ise word as most of the area's papers spell it ("generalisation" ->
    "generalization"); any other word as typed. An acronym reached too few of its papers to name the area
    (mlqa: "RLHF" summarised 1 paper where "reinforcement learning from human feedback" summarises 10;
    docs/quality.md, "An acronym typed alone")."""
    topic = unframed(topic)
    words = topic.split()
    area_texts: list[str] | None = None  # the topic's own papers, read for its spelling
    for i, w in enumerate(words):
        core = w.strip(",;:.()[]\"'")
        if acronym_key(core):
            hits = search(library, core, CANDIDATES, filters)
            if said := spelled_out(core, [paper_text(h.paper) for h in hits]):
                words[i] = w.replace(core, said)
        elif american(core) != core.lower():  # "generalisation": as most of the papers spell it
            if area_texts is None:
                area_texts = [paper_text(h.paper) for h in search(library, topic, CANDIDATES, filters)]
            words[i] = w.replace(core, as_most_write(core, area_texts))
    return " ".join(words) if words != topic.split() else topic


def grade_summary(topic: str, res: Summary, readings: list, emb, settings: Settings) -> None:
    """Grade every citation (the reference list's and each theme's) against the topic, as answers grade
    theirs against the question (rag.reading.citation_grades): how well the sentences quoted from a paper bear on
    what was asked to be summarised."""
    # the roles as the paragraphs read them (rag.reading.voice: "We propose X" is a contribution, a definition background)
    role_of = {(r.paper.paper_id, s): role for r in readings for s, role in zip(r.sentences, roles_read(r))}
    covered = {r.paper.paper_id for r in readings}
    for cs in [res.citations] + [t.citations for t in res.themes]:
        grade_citations(topic, cs, role_of, emb, settings.ask.floor, settings.ask.answers_at)
        # A paper the area scorer read as belonging to the area is quoted by its sentence most on it: graded
        # weak, its card would contradict the summary it stands in (the one RLHF paper of the seeds was
        # "weak 0.40" against its own topic). The score stays, so the card still says how close it is.
        for c in cs:
            if c.grade == "weak" and c.paper.paper_id in covered:
                c.grade = "related"


def group_into_themes(topic: str, readings: list, hits: list[Hit], emb, max_papers: int = MAX_PAPERS,
                      by_score: bool = True) -> list[ThemeDraft]:
    """The on-topic papers (rag.tasks.topicality.Readings) chosen by MMR, clustered into named themes; themes
    in order of their best paper's relevance to the topic, papers inside a theme likewise (with
    by_score=False, both keep the order the readings came in). Summaries and comparison tables group alike."""
    selected, vecs = select_papers(readings, emb, max_papers)
    given = {id(r): i for i, r in enumerate(readings)}
    rank = (lambda r: -r.score) if by_score else (lambda r: given[id(r)])
    groups = cluster(vecs)
    themes = [ThemeDraft([selected[i] for i in g], vecs[g]) for g in groups]
    for t in themes:
        order = sorted(range(len(t.readings)), key=lambda i: rank(t.readings[i]))
        t.readings = [t.readings[i] for i in order]
        t.vecs = t.vecs[order]
    themes.sort(key=lambda t: rank(t.readings[0]))
    if len(themes) == 1 and topic.strip():
        # The whole area is one theme: its name is the topic, written as the user wrote it. Naming it from
        # its papers' phrases would be thrown away, and reading every retrieved paper's phrases for that was
        # a one-theme summary's largest cost after retrieval (~0.2 s of a cold `summarise`, bench/cold_start.py).
        themes[0].title, themes[0].terms = topic.strip()[:1].upper() + topic.strip()[1:], [topic.strip()]
        return themes
    centroids = [unit(t.vecs.mean(axis=0)) for t in themes]
    names = name_themes([t.readings for t in themes], [h.paper for h in hits], topic, emb, centroids)
    for t, (title, terms) in zip(themes, names):
        t.title, t.terms = title, terms
    return themes


def no_papers_reason(related: list) -> str:
    """What an abstention says of the nearest papers: some the area scorer found close ('related'), or none.

    A cosine rule used to decide first whether the library covers a topic at all (best chunk at 0.36 with a
    shared word, or 0.45). It decided nothing on the mlqa library (all 34 judged areas passed it) and on the
    seeds it hid areas the scorer finds: "reasoning" (best chunk 0.35) was "no papers" although the seeds hold
    papers on LLM reasoning. The scorer alone keeps no paper for any of 18 areas the seeds do not hold
    (bench/topic_cover.py; docs/quality.md, "Whether the library covers a topic")."""
    if related:
        return "The nearest papers touch it only in passing; they are listed below, not summarised"
    return "The nearest papers are listed below"
