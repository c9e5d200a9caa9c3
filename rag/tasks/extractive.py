"""The no-LLM answerer: the sentences of the retrieved abstracts that answer the question, each cited.

It adds no words of its own beyond the citation marks, so it cannot claim what the papers do not.
What it quotes (pick):
- every sentence must clear the absolute relevance floor on its own (rag.reading.grades.FLOOR); when none does,
  nothing is quoted and the caller says the library does not answer;
- among those, the sentences whose rhetorical role answers the question's kind are preferred
  (rag.reading.questions: method for "how", result for "what was found" and "why", ...);
- the best sentence leads; its paper may add one more sentence that is nearly as good; another paper is
  quoted only when its own best sentence answers the question (its relevance alone reaches the `answers`
  grade) about as well as the lead -- never to reach a length;
- every quote stands alone (rag.reading.standalone): a sentence whose opening clause leans on the sentence before
  ("To address these challenges, we propose X") is quoted from its main clause ("We propose X"); one that
  leans throughout ("These results show ...") gives way to the next sentence that stands alone. Only when
  no sentence above the floor stands alone is the best quoted as it is (rather than not answering).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rag.reading.citations import quote
from rag.reading.grades import ANSWERS_AT, FLOOR, ROLE_BONUS, relevance
from rag.records import Hit, Paper, normalise_text
from rag.reading.roles import Role
from rag.reading.sentences import split_sentences
from rag.reading.standalone import standing

SAME_PAPER_RATIO = 0.85  # a lead paper's second sentence: at least this share of the lead's rank
OTHER_PAPER_RATIO = 0.85  # another paper: its best sentence 'answers' and ranks at least this share


@dataclass
class Quote:
    """A candidate sentence: which hit, where in its abstract, its relevance and its role."""

    hit: int
    position: int
    sentence: str
    score: float  # relevance to the question (rag.reading.grades): what the floor applies to
    role: Role = "other"
    rank: float = 0.0  # score plus the role bonus when the role fits: what orders the candidates and is graded
    text: str = ""  # what the answer quotes: the sentence, or its main clause when its opening leans (pick)

    @property
    def shown(self) -> str:
        return self.text or self.sentence


def sentences_of(paper: Paper) -> list[str]:
    return split_sentences(paper.abstract) or ([paper.abstract] if paper.abstract else [])


def candidates(question: str, hits: list[Hit], embedder, roles: list[list[Role]] | None = None,
               preferred: tuple[Role, ...] = (), role_bonus: float = ROLE_BONUS) -> list[Quote]:
    """Every sentence of every hit scored for the question, best (rank) first."""
    sents = [sentences_of(h.paper) for h in hits]
    flat = [s for ss in sents for s in ss]
    if not flat:
        return []
    scores = relevance(question, flat, embedder)
    out, k = [], 0
    for i, ss in enumerate(sents):
        rs = roles[i] if roles and i < len(roles) and len(roles[i]) == len(ss) else ["other"] * len(ss)
        for j, s in enumerate(ss):
            sc = float(scores[k])
            out.append(Quote(i, j, s, sc, rs[j], sc + (role_bonus if rs[j] in preferred else 0.0)))
            k += 1
    out.sort(key=lambda q: (-q.rank, q.hit, q.position))
    return out


def pick(cands: list[Quote], max_sentences: int = 4, floor: float = FLOOR, answers_at: float = ANSWERS_AT,
         same_ratio: float = SAME_PAPER_RATIO, other_ratio: float = OTHER_PAPER_RATIO) -> list[Quote]:
    """What answers (see the module docstring), in reading order: lead paper first, each paper's sentences
    in text order. Empty when no sentence clears the floor."""
    ok = [q for q in cands if q.score >= floor]
    if not ok:
        return []
    lead = ok[0]
    chosen = [lead]
    said = normalise_text(lead.sentence).lower()  # an abstract repeating a sentence is quoted once
    second = next((q for q in ok[1:] if q.hit == lead.hit and q.rank >= same_ratio * lead.rank
                   and normalise_text(q.sentence).lower() != said), None)
    bar = {id(lead): lambda q: True}  # what a stand-in for each chosen quote must clear (see _stand_alone)
    if second is not None and max_sentences > 1:
        chosen.append(second)
        bar[id(second)] = lambda q: q.rank >= same_ratio * lead.rank
    seen = {lead.hit}
    for q in ok[1:]:
        if len(chosen) >= max_sentences:
            break
        if q.hit in seen or any(normalise_text(q.sentence).lower() == normalise_text(c.sentence).lower() for c in chosen):
            continue
        seen.add(q.hit)  # a paper is judged by its best sentence only
        # Relevance alone must reach `answers_at` (as tuned): counting the role bonus here let other papers'
        # method or result sentences through (PubMedQA: 23 % of quoted sentences from other abstracts, not 14 %).
        if q.score >= answers_at and q.rank >= other_ratio * lead.rank:
            chosen.append(q)
            bar[id(q)] = lambda c: c.score >= answers_at and c.rank >= other_ratio * lead.rank
    chosen = _stand_alone(chosen, ok, bar)
    order: dict[int, int] = {}
    for q in chosen:
        order.setdefault(q.hit, len(order))
    return sorted(chosen, key=lambda q: (order[q.hit], q.position))


def _stand_alone(chosen: list[Quote], ok: list[Quote], bar: dict[int, Callable[[Quote], bool]]) -> list[Quote]:
    """The chosen quotes as they can be read alone (rag.reading.standalone): each one itself or its main clause;
    one that leans throughout gives way to its paper's best other sentence that stands alone and clears
    the same bar, or -- when its paper is quoted otherwise, or has none -- is dropped. The papers stay
    the ones chosen; when nothing would remain, the lead is quoted as it is."""
    out: list[Quote] = []
    taken = {(q.hit, q.position) for q in chosen}
    for q in chosen:
        alt = q if standing(q.sentence) else None
        if alt is None and not any(c.hit == q.hit for c in chosen if c is not q):
            alt = next((c for c in ok if c.hit == q.hit and (c.hit, c.position) not in taken
                        and standing(c.sentence) and bar[id(q)](c)), None)
        if alt is not None:
            alt.text = standing(alt.sentence) or ""
            taken.add((alt.hit, alt.position))
            out.append(alt)
    if not out:
        chosen[0].text = ""
        return chosen[:1]
    return out


def render(quotes: list[Quote], number: Callable[[int], int] = lambda i: i + 1) -> str:
    """The quotes as an answer, each ending with its citation mark ([1] is hits[0] by default)."""
    # Only the marks written here are citations: any the abstract held are neutralised (citations.quote).
    return " ".join(f"{_no_end(quote(q.shown))} [{number(q.hit)}]." for q in quotes)


def compose(query: str, hits: list[Hit], embedder, max_sentences: int = 4, roles: list[list[Role]] | None = None,
            preferred: tuple[Role, ...] = ()) -> str:
    """An answer citing hits by their 1-based position in `hits` ("" when nothing clears the floor)."""
    return render(pick(candidates(query, hits, embedder, roles, preferred), max_sentences))


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


def _no_end(sentence: str) -> str:
    s = sentence.rstrip()
    return s[:-1] if s and s[-1] in ".!?" else s


def central_sentences(texts: list[str], embedder, n: int = 1) -> list[str]:
    """The sentence(s) of a text closest to the text as a whole (used to summarise a paper)."""
    out = []
    for t in texts:
        ss = split_sentences(t) or [t]
        v = embedder.embed_array([t] + ss)
        sims = v[1:] @ v[0]
        idx = sorted(np.argsort(-sims)[:n].tolist())
        out.append(" ".join(ss[i] for i in idx))
    return out
