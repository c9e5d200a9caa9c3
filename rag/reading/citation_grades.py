"""Every citation graded the same way, whatever cites it: an answer (against its question), a summary (its
topic) or an evidence list (its claim).

A citation's grade says how well its evidence answers what was asked of it: the best of its evidence
sentences' relevance (rag.reading.grades) plus the role bonus when the sentence's role is one the query's kind
wants (rag.reading.questions: method for "how", result for a finding, objective/method/result for a bare topic or
a claim), graded answers / related / weak. A sentence whose relevance alone is below the floor is `weak`
whatever its role. Separately, `quoted` says every sentence citing it is verbatim in the abstract.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.reading.citations import quote
from rag.reading.grades import ROLE_BONUS, Graded, graded, relevance
from rag.reading.questions import preferred_roles
from rag.records import Citation, normalise_text


def grade_scores(scores: Sequence[float], roles: Sequence[str], wanted: Sequence[str], floor: float,
                 answers_at: float, bonus: float = ROLE_BONUS) -> tuple[Graded, int | None]:
    """The grade of the best of some evidence sentences (their relevance `scores` and `roles`), and which
    one it is (None when there is none)."""
    if not scores:
        return graded(0.0, floor, answers_at), None
    ranks = [float(s) + (bonus if r in wanted else 0.0) for s, r in zip(scores, roles)]
    # Below the floor on its own, a sentence does not answer, whatever its role: the best of those that clear
    # it counts; when none does, the citation is weak (at its best rank).
    clear = [i for i in range(len(ranks)) if float(scores[i]) >= floor]
    best = max(clear or range(len(ranks)), key=lambda i: ranks[i])
    g = graded(ranks[best], floor, answers_at)
    return (g if clear else Graded(grade="weak", score=g.score)), best


def is_quoted(abstract: str, citing: Sequence[str]) -> bool:
    """Whether every sentence citing a paper is verbatim in its abstract (its [n] marks and final stop
    aside; a main clause quoted without its leaning opening starts with a raised letter and counts)."""
    texts = (normalise_text(abstract), normalise_text(quote(abstract)))
    sents = [normalise_text(s).rstrip(".!? ") for s in citing]
    return bool(sents) and all(any(s in t or s[:1].lower() + s[1:] in t for t in texts) for s in sents)


def grade_citations(query: str, citations: Sequence[Citation], role_of: dict[tuple[str, str], str], embedder,
                    floor: float, answers_at: float, citing: Sequence[tuple[str, Sequence[int]]] | None = None) -> None:
    """Set each citation's grade, score and evidence role (in place) against `query` (the question, topic or
    claim); with `citing` ((sentence, its citation numbers) of the text that cites them), also `quoted`.
    `role_of` maps (paper id, sentence) to the sentence's role."""
    wanted = preferred_roles(query)
    for c in citations:
        ev = [e for e in dict.fromkeys([c.evidence, *c.more_evidence]) if e]
        scores = [float(x) for x in relevance(query, ev, embedder)] if ev else []
        g, _ = grade_scores(scores, [role_of.get((c.paper.paper_id, e), "") for e in ev], wanted, floor, answers_at)
        c.grade, c.grade_score = g.grade, g.score
        c.role = role_of.get((c.paper.paper_id, c.evidence), "")
        if citing is not None:
            c.quoted = is_quoted(c.paper.abstract, [s for s, nums in citing if c.n in nums])
