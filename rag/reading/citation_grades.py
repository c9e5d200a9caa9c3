"""Every citation graded the same way, whatever cites it: an answer (against its question), a summary (its
topic) or an evidence list (its claim).

A citation's grade says how well its evidence answers what was asked of it: the answer scorer's probability
(rag.reading.answer_scorer) that the best of its evidence sentences answers the query, read in the paper's
own abstract (the scorer weighs a sentence against its abstract's others), of those that read alone when
there are any (the card shows that sentence by itself). `answers` from
settings.ask.answers_at (chosen so that on mlqa test at least 85 % of citations graded `answers` quote a
marked answer or partial sentence of the right paper), `related` from the floor, `weak` below it; the score
shown is that probability. Separately, `quoted` says every sentence citing it is verbatim in the abstract.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.reading.answer_scorer import probabilities
from rag.reading.citations import quote
from rag.reading.grades import Graded, graded
from rag.reading.sentences import split_sentences
from rag.reading.standalone import standing_in_answer
from rag.records import Citation, normalise_text


def grade_scores(scores: Sequence[float], floor: float, answers_at: float) -> tuple[Graded, int | None]:
    """The grade of the best of some evidence sentences (their answer probabilities), and which one it is
    (None when there is none)."""
    if not scores:
        return graded(0.0, floor, answers_at), None
    best = max(range(len(scores)), key=lambda i: float(scores[i]))
    return graded(float(scores[best]), floor, answers_at), best


def is_quoted(abstract: str, citing: Sequence[str]) -> bool:
    """Whether every sentence citing a paper is verbatim in its abstract (its [n] marks and final stop
    aside; a main clause quoted without its leaning opening starts with a raised letter and counts)."""
    texts = (normalise_text(abstract), normalise_text(quote(abstract)))
    sents = [normalise_text(s).rstrip(".!? ") for s in citing]
    return bool(sents) and all(any(s in t or s[:1].lower() + s[1:] in t for t in texts) for s in sents)


def _sentences(abstract: str) -> list[str]:
    return split_sentences(abstract) or ([abstract] if abstract else [])


def evidence_probabilities(query: str, papers: Sequence, evidence: Sequence[Sequence[str]],
                           role_of: dict[tuple[str, str], str], embedder) -> list[list[float]]:
    """For each paper, its evidence sentences' answer probabilities for the query, each read in the paper's
    abstract; an evidence sentence the splitter does not cut out of it alone counts as the abstract
    sentence holding it (or held in it), else 0."""
    abstracts = [_sentences(p.abstract) for p in papers]
    roles = [[role_of.get((p.paper_id, s), "other") for s in ss] for p, ss in zip(papers, abstracts)]
    probs = probabilities(query, abstracts, embedder, roles)
    out = []
    for ss, ps, ev in zip(abstracts, probs, evidence):
        by = dict(zip(ss, (float(x) for x in ps)))
        row = []
        for e in ev:
            if e in by:
                row.append(by[e])
                continue
            near = [by[s] for s in ss if e in s or (s and s in e)]
            row.append(max(near, default=0.0))
        out.append(row)
    return out


def grade_citations(query: str, citations: Sequence[Citation], role_of: dict[tuple[str, str], str], embedder,
                    floor: float, answers_at: float, citing: Sequence[tuple[str, Sequence[int]]] | None = None) -> None:
    """Set each citation's grade, score and evidence role (in place) against `query` (the question, topic or
    claim); with `citing` ((sentence, its citation numbers) of the text that cites them), also `quoted`.
    `role_of` maps (paper id, sentence) to the sentence's role. Of a citation's evidence sentences, the one
    scoring best becomes `evidence` (the others `more_evidence`) when the check found them all supporting."""
    evs = [[e for e in dict.fromkeys([c.evidence, *c.more_evidence]) if e] for c in citations]
    probs = evidence_probabilities(query, [c.paper for c in citations], evs, role_of, embedder) if citations else []
    for c, ev, ps in zip(citations, evs, probs):
        # The card shows one sentence on its own: a sentence that leans throughout ("We further examine ...",
        # quoted in the answer right after the one it leans on) is not it while one that stands is there.
        alone = [standing_in_answer(e) is not None for e in ev]
        g, best = grade_scores([p if a or not any(alone) else -1.0 for p, a in zip(ps, alone)], floor, answers_at)
        c.grade, c.grade_score = g.grade, g.score
        # The card shows the sentence its grade is about (the check prefers a verbatim quote to a trimmed one).
        if best and c.supported:
            c.evidence, c.more_evidence = ev[best], [e for e in ev if e != ev[best]]
        c.role = role_of.get((c.paper.paper_id, c.evidence), "")
        if citing is not None:
            c.quoted = is_quoted(c.paper.abstract, [s for s, nums in citing if c.n in nums])
