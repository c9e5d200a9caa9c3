"""The no-LLM answerer: the sentences of the retrieved abstracts that answer the question, each cited.

It adds no words of its own beyond the citation marks, so it cannot claim what the papers do not.
What it quotes (pick), every choice on one score: the answer scorer's probability that the sentence answers
the question (rag.reading.answer_scorer, learned from marked answer sentences; it weighs similarity, what
the sentence adds beyond the question's words, position, role and wording, so the sentence that restates
the question no longer beats the one that answers it):
- a sentence is quoted only when its probability reaches the floor (settings.ask.floor); when none does,
  nothing is quoted and the caller says the library does not answer;
- the most probable sentence of the best-retrieved paper that has one above the floor leads (lead_of; a
  joint choice weighing each paper's best probability against its retrieval place measured lower on mlqa
  train, as a learned choice did before: docs/quality.md). When it answers (probability >=
  settings.ask.answers_at) it is a complete answer, quoted alone from its paper; a lead that does not answer
  is joined by its paper's next sentences (SAME_PAPER_MORE at most) that reach SAME_PAPER_RATIO of its
  probability, never the sentence posing the study ("In this work, we study X": NOT_THE_STUDY). Another
  paper is quoted only when its own best sentence answers beyond doubt (OTHER_PAPER_AT) -- never to reach a
  length;
- every quote stands alone (rag.reading.standalone): a sentence whose opening clause leans on the sentence before
  ("To address these challenges, we propose X") is quoted from its main clause ("We propose X"), and an opening
  connective alone is cut ("And in experiments on Y, we show X" -> "In experiments on Y, we show X"); one that
  leans throughout ("These results show ...") is quoted right after the sentence it leans on when that one,
  its abstract's previous sentence, is quoted too (AFTER_ITS_OWN), else gives way to its paper's next sentence
  that stands alone and clears the same bar. Only when no sentence above the floor stands alone is the best
  quoted as it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from rag.reading.answer_scorer import poses_the_study, probabilities
from rag.reading.citations import quote
from rag.reading.grades import ANSWERS_AT, FLOOR, relevance
from rag.records import Hit, Paper, normalise_text
from rag.reading.roles import Role
from rag.reading.sentences import split_sentences
from rag.reading.standalone import standing_in_answer as standing  # as answers read a sentence

# A lead that does not answer may be joined by its paper's next most probable sentences, at most
# SAME_PAPER_MORE of them, each at this share of its probability (chosen on mlqa train end to end, each train
# question scored by the fold model that did not see it: bench/tune_answer_pick.py --folds; two at 0.3 hit
# 0.711 there, three at 0.1 0.767, own-paper share 0.929 -> 0.940, with ALONE_AT 0.99 0.811 and 0.946;
# docs/quality.md, "Answers: the pick"). Re-chosen out of fold 2026-12-05 (docs/quality.md, "The pick re-chosen
# out of fold"): 0.1 and 0.2 tie on hits (0.818), 0.2 quotes fewer sentences (own-paper share 0.969 -> 0.970).
# The scorer is least sure exactly where a researcher most needs the paper's own words, so an unsure lead
# comes with the rest of what its paper says on the question (never beyond settings.ask.max_sentences).
SAME_PAPER_RATIO = 0.2
SAME_PAPER_MORE = 3
# Requiring those sentences to follow the lead in the abstract (the sentence posing the question comes before
# its answer) cost mlqa train hits (0.044 in-sample before; out of fold too): off.
AFTER_LEAD = False
# A quote that leans throughout could be quoted after the sentence it leans on instead of swapped for another
# sentence of its paper (the swap loses the answer for some mlqa train questions): +0.037 of train hits out of
# fold (0.748 vs 0.711), but `answers` grades fell to 0.840 right (the sentences added for it were often not
# the answer), and the seed contract then had every answer sentence read alone: off (docs/quality.md).
WITH_CONTEXT = False
# A quote that leans throughout but whose abstract's previous sentence is quoted too (on its own merits) is kept,
# right after that sentence: the reader sees what it leans on ("... treat each example as the privacy unit [1].
# This leads to uneven user privacy guarantees ... [1]."). Nothing is added to reach it, unlike WITH_CONTEXT:
# mlqa train out of fold hit 0.818 -> 0.830 (bench/tune_answer_pick.py --former-standalone for before).
AFTER_ITS_OWN = True
# The sentence posing the study is not the second sentence beside a lead: it restates the question (issue 30's
# attention-heads case); it cost 1 of 159 mlqa train questions out of fold when measured (one sentence at 0.5).
NOT_THE_STUDY = True
# Which paper leads: each paper's best sentence is weighed by its log-odds of answering minus LEAD_RANK_COST
# per place it stands below the best-retrieved paper (only the first LEAD_DEPTH papers with a sentence above
# the floor compete). Every finite cost tried (1-4) led with the question's own paper less often on mlqa
# train out of fold than the best-retrieved paper (infinite cost): the scorer reads a sentence against its
# own abstract, so its probabilities do not rank papers (docs/quality.md, "Answers: the pick").
LEAD_RANK_COST = float("inf")
LEAD_DEPTH = 3
# A lead at or above this probability is quoted alone (None: from answers_at, where it is graded `answers`).
# Out of fold on mlqa train a lead graded `answers` (0.95-0.99) was still often not the marked sentence of its
# paper: quoting the lead alone only from 0.99 hit 0.811 of train questions, from 0.95 0.767 (both with three
# more at 0.1); `answers` grades stay right 0.931 of the time (29 graded). Re-measured out of fold 2026-12-05:
# from 0.99 0.818, from 0.97 0.792, never 0.830 -- never is not taken: one sentence that answers is a complete
# answer (issue 30), and without a bar even a lead at 0.999 comes with up to three more of its paper's sentences.
ALONE_AT: float | None = 0.99
# Another paper's sentence is quoted beside the lead only at this probability (at least answers_at): at 0.95
# such quotes were the wrong paper's often enough that `answers` grades were right 0.75 of the time on mlqa
# train out of fold; at 0.99 0.955, with hits up (0.704 -> 0.711 at the former same-paper setting).
OTHER_PAPER_AT = 0.99


@dataclass
class Quote:
    """A candidate sentence: which hit, where in its abstract, its probability of answering, its role."""

    hit: int
    position: int
    sentence: str
    score: float  # the answer scorer's probability: what orders, clears the floor and is graded
    role: Role = "other"
    text: str = ""  # what the answer quotes: the sentence, or its main clause when its opening leans (pick)

    @property
    def shown(self) -> str:
        return self.text or self.sentence

    @property
    def rank(self) -> float:  # the order of candidates (kept for callers that read it)
        return self.score


def sentences_of(paper: Paper) -> list[str]:
    return split_sentences(paper.abstract) or ([paper.abstract] if paper.abstract else [])


def candidates(question: str, hits: list[Hit], embedder, roles: list[list[Role]] | None = None) -> list[Quote]:
    """Every sentence of every hit scored for the question (answer probability), best first."""
    sents = [sentences_of(h.paper) for h in hits]
    rs = [roles[i] if roles and i < len(roles) and len(roles[i]) == len(ss) else ["other"] * len(ss)
          for i, ss in enumerate(sents)]
    out = [Quote(i, j, s, float(p), rs[i][j])
           for i, (ss, ps) in enumerate(zip(sents, probabilities(question, sents, embedder, rs)))
           for j, (s, p) in enumerate(zip(ss, ps))]
    out.sort(key=lambda q: (-q.score, q.hit, q.position))
    return out


def lead_of(ok: list[Quote], rank_cost: float = LEAD_RANK_COST, depth: int | None = None) -> Quote:
    """The lead: the best sentence of the paper whose best sentence's log-odds, less rank_cost per place below
    the best-retrieved paper with a sentence above the floor, is highest (ties: the better-retrieved paper)."""
    best: dict[int, Quote] = {}
    for q in ok:  # best first
        best.setdefault(q.hit, q)
    papers = sorted(best)[: max(1, LEAD_DEPTH if depth is None else depth)]
    if rank_cost == float("inf") or len(papers) == 1:
        return best[papers[0]]

    def worth(place: int) -> float:
        p = min(max(best[papers[place]].score, 1e-6), 1 - 1e-6)
        return math.log(p / (1 - p)) - rank_cost * place

    return best[papers[max(range(len(papers)), key=lambda i: (worth(i), -i))]]


def pick(cands: list[Quote], max_sentences: int = 4, floor: float = FLOOR, answers_at: float = ANSWERS_AT,
         same_ratio: float = SAME_PAPER_RATIO, after_lead: bool = AFTER_LEAD,
         rank_cost: float = LEAD_RANK_COST, other_at: float | None = None,
         alone_at: float | None = None) -> list[Quote]:
    """What answers (see the module docstring): the lead first, then its paper's other sentence, then the other
    papers' (each paper's in text order). Empty when no sentence clears the floor."""
    ok = [q for q in cands if q.score >= floor]
    if not ok:
        return []
    # The lead comes from the best-retrieved paper with a sentence above the floor: the scorer reads each
    # sentence against its own abstract, so across papers retrieval knows better which paper is about the
    # question (it ranks the question's paper first for 0.91 of mlqa questions; leading with the most
    # probable sentence of any paper measured lower, docs/quality.md, "Answers: the answer-sentence scorer").
    lead = lead_of(ok, rank_cost)
    chosen = [lead]
    said = {_key(lead.sentence)}  # an abstract repeating a sentence is quoted once
    alone = max(answers_at, (ALONE_AT or 0.0) if alone_at is None else alone_at)

    def second_ok(q: Quote) -> bool:  # one sentence that answers is a complete answer
        # ... and the sentence that poses the question comes before its answer (AFTER_LEAD); the sentence
        # posing the study ("In this work, we study X") is not quoted beside its answer (NOT_THE_STUDY)
        return (lead.score < alone and q.score >= same_ratio * lead.score
                and (not after_lead or q.position > lead.position)
                and not (NOT_THE_STUDY and poses_the_study(q.sentence)))

    bar = {id(lead): lambda q: True}  # what a stand-in for each chosen quote must clear (see _stand_alone)
    for q in ok:
        if q is lead:
            continue
        if len(chosen) > SAME_PAPER_MORE or len(chosen) >= max_sentences:
            break
        if q.hit == lead.hit and second_ok(q) and _key(q.sentence) not in said:
            chosen.append(q)
            said.add(_key(q.sentence))
            bar[id(q)] = second_ok
    other_at = max(answers_at, OTHER_PAPER_AT if other_at is None else other_at)
    seen = {lead.hit}
    for q in ok:
        if len(chosen) >= max_sentences:
            break
        if q.hit in seen or _key(q.sentence) in said:
            continue
        seen.add(q.hit)  # a paper is judged by its best sentence only
        if q.score >= other_at:  # another paper only when its own sentence answers
            chosen.append(q)
            said.add(_key(q.sentence))
            bar[id(q)] = lambda c: c.score >= other_at
    kept = _after_its_own(chosen) if AFTER_ITS_OWN else set()
    return _in_reading_order(_stand_alone(chosen, ok, bar, cands, kept), kept)


def _in_reading_order(quotes: list[Quote], kept: set[int]) -> list[Quote]:
    """The lead first, then the rest of its paper, then the other papers (each paper's in text order); a quote kept
    after the sentence it leans on (AFTER_ITS_OWN) comes right after it. When the lead itself is such a quote, it
    opens the answer with the quotes around it that follow one another in its abstract, in the abstract's order:
    the sentence it leans on may itself refer back ("To the best of our knowledge, this constitutes ...")."""
    if not quotes:
        return quotes
    at = {(q.hit, q.position): q for q in quotes}

    def after(q: Quote) -> int:  # where the quotes it is kept after begin
        while id(q) in kept and (q.hit, q.position - 1) in at:
            q = at[(q.hit, q.position - 1)]
        return q.position

    lead = quotes[0]
    first = {lead.position}
    if id(lead) in kept:  # its run of consecutive quotes
        p = lead.position
        while (lead.hit, p - 1) in at:
            p -= 1
        while (lead.hit, p) in at:
            first.add(p)
            p += 1
    order: dict[int, int] = {}
    for q in quotes:
        order.setdefault(q.hit, len(order))

    def key(q: Quote) -> tuple:
        opens = q.hit == lead.hit and (q.position in first or after(q) in first)
        return order[q.hit], not opens, min(first) if opens else after(q), q.position

    return sorted(quotes, key=key)


def _stand_alone(chosen: list[Quote], ok: list[Quote], bar: dict[int, Callable[[Quote], bool]],
                 every: list[Quote] | None = None, kept: set[int] | None = None) -> list[Quote]:
    """The chosen quotes as they can be read alone (rag.reading.standalone): each one itself or its main clause;
    one that leans throughout ("It learns to ...", "However, these studies ...") is quoted whole when the
    sentence it leans on, just before it in the abstract, is chosen too (AFTER_ITS_OWN), or after that sentence
    added for it when it stands alone (WITH_CONTEXT, off); otherwise
    it gives way to its paper's best other sentence that stands alone and clears the same bar, or -- when its
    paper is quoted otherwise, or has none -- is dropped. The papers stay the ones chosen; when nothing would
    remain, the lead is quoted as it is."""
    out: list[Quote] = []
    taken = {(q.hit, q.position) for q in chosen}
    at = {(q.hit, q.position): q for q in (every or ok)}
    kept = kept or set()
    for q in chosen:
        alt = q if standing(q.sentence) or id(q) in kept else None
        lone = not any(c.hit == q.hit for c in chosen if c is not q)  # a second of its paper is dropped
        before = at.get((q.hit, q.position - 1)) if WITH_CONTEXT and alt is None else None
        if before is not None and (before.hit, before.position) not in taken and standing(before.sentence):
            before.text = standing(before.sentence) or ""
            q.text = ""
            taken.add((before.hit, before.position))
            out += [before, q]
            continue
        if alt is None and lone:
            alt = next((c for c in ok if c.hit == q.hit and (c.hit, c.position) not in taken
                        and standing(c.sentence) and bar[id(q)](c)), None)
        if alt is not None:
            alt.text = "" if id(alt) in kept else standing(alt.sentence) or ""
            taken.add((alt.hit, alt.position))
            out.append(alt)
    if not out:
        chosen[0].text = ""
        return chosen[:1]
    return out


def _after_its_own(chosen: list[Quote]) -> set[int]:
    """The chosen quotes that lean throughout but follow, in their abstract, a chosen sentence that is quoted
    (one that stands alone, or one itself kept this way): quoted whole, right after it (pick's order)."""
    at = {(q.hit, q.position): q for q in chosen}
    kept: set[int] = set()
    for q in sorted(chosen, key=lambda q: (q.hit, q.position)):
        before = at.get((q.hit, q.position - 1))
        if not standing(q.sentence) and before is not None and (standing(before.sentence) or id(before) in kept):
            kept.add(id(q))
    return kept


def render(quotes: list[Quote], number: Callable[[int], int] = lambda i: i + 1) -> str:
    """The quotes as an answer, each ending with its citation mark ([1] is hits[0] by default)."""
    # Only the marks written here are citations: any the abstract held are neutralised (citations.quote).
    return " ".join(f"{_no_end(quote(q.shown))} [{number(q.hit)}]." for q in quotes)


def rank_sentences(query: str, hits: list[Hit], embedder) -> list[list[tuple[float, str]]]:
    """Each hit's sentences scored against the query (rag.reading.grades.relevance), best first."""
    sents = [sentences_of(h.paper) for h in hits]
    flat = [s for ss in sents for s in ss]
    if not flat:
        return [[] for _ in hits]
    sims = relevance(query, flat, embedder)
    out, i = [], 0
    for ss in sents:
        out.append(sorted(zip(sims[i : i + len(ss)].tolist(), ss), key=lambda x: -x[0]))
        i += len(ss)
    return out


def _key(sentence: str) -> str:
    return normalise_text(sentence).lower()


def _no_end(sentence: str) -> str:
    s = sentence.rstrip()
    return s[:-1] if s and s[-1] in ".!?" else s
