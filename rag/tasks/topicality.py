"""Which retrieved papers a summary is about: those whose own contribution is on the topic.

A paper's contribution is what its objective, method and result sentences say (rag.roles; an authored
title states it too); its background sentences do not count, so a bandit paper that mentions transport
costs in passing, or a solver paper whose introduction names state space models, stays out. Each
sentence's relevance to the topic is rag.grades' score (MiniLM cosine plus a share for the topic's
content words), the same score the answers use. Papers retrieved but not on the topic are near misses:
listed apart as "related, not summarised".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..grades import FLOOR, relevance
from ..records import Hit
from ..roles import roles_of
from ..sentences import split_sentences

CONTRIBUTION = frozenset({"objective", "method", "result"})
# A paper is on the topic when its score reaches ON_TOPIC (on rag.grades' scale: between its floor and
# the grade at which a sentence answers a question) and RELATIVE times the best paper's; near misses
# reach NEAR (rag.grades' floor).
# Background sentences count BACKGROUND_DISCOUNT less: an abstract often names its area only there
# ("Selective state space models such as Mamba have emerged ...") and then says "this paper develops a
# control-theoretic framework", but a bandit paper's passing "switching costs" should not carry it.
# Chosen on the seeds (the cases of issue 16: optimal transport, RLHF, diffusion models, Mamba, federated
# learning, graph neural networks, in-context learning, attention), not on the benchmark's topics.
ON_TOPIC = 0.55
RELATIVE = 0.75
NEAR = FLOOR
BACKGROUND_DISCOUNT = 0.2
MAX_RELATED = 5


@dataclass
class Reading:
    """One retrieved paper as a summary reads it: its sentences, their roles and relevance to the topic."""

    hit: Hit
    sentences: list[str]
    roles: list[str]
    relevance: np.ndarray  # per sentence, rag.grades.relevance to the topic
    title_relevance: float = 0.0  # of an authored title (0 when the title is derived from the abstract)
    vec: np.ndarray | None = field(default=None, repr=False)  # the paper's vector, set when it is selected

    @property
    def paper(self):
        return self.hit.paper

    def contribution(self) -> list[int]:
        """Indices of its objective, method and result sentences (all of them when no role is known,
        e.g. with the tests' hashing embedder, whose vectors say nothing about roles)."""
        idx = [i for i, r in enumerate(self.roles) if r in CONTRIBUTION]
        return idx or list(range(len(self.sentences)))

    @property
    def score(self) -> float:
        """How much its own contribution is about the topic: its best contribution sentence or authored
        title, or its best background sentence less BACKGROUND_DISCOUNT."""
        contrib = set(self.contribution())
        rel = [float(x) - (0.0 if i in contrib else BACKGROUND_DISCOUNT) for i, x in enumerate(self.relevance)]
        return max(rel + [self.title_relevance])


def read(topic: str, hits: list[Hit], emb) -> list[Reading]:
    """Every hit's sentences (as rag.sentences cuts them), roles and relevance, in one embedding call."""
    papers = [h.paper for h in hits]
    sents = [split_sentences(p.abstract) or ([p.abstract] if p.abstract else []) for p in papers]
    roles = roles_of(papers, emb)  # stored with each paper at ingest, else computed now
    titles = [p.title if p.title and not p.title_derived else "" for p in papers]
    flat = [s for ss in sents for s in ss] + [t for t in titles if t]
    rel = relevance(topic, flat, emb)
    out, i = [], 0
    for h, ss, rs in zip(hits, sents, roles):
        out.append(Reading(h, ss, list(rs) if len(rs) == len(ss) else ["other"] * len(ss), rel[i : i + len(ss)]))
        i += len(ss)
    for r, t in zip(out, titles):
        if t:
            r.title_relevance = float(rel[i])
            i += 1
    return out


def on_topic(readings: list[Reading], floor: float = ON_TOPIC, relative: float = RELATIVE,
             near: float = NEAR) -> tuple[list[Reading], list[Reading]]:
    """(papers whose contribution is on the topic, best first; near misses, best first, at most MAX_RELATED)."""
    if not readings:
        return [], []
    ranked = sorted(readings, key=lambda r: -r.score)
    top = ranked[0].score
    keep = [r for r in ranked if r.score >= floor and r.score >= relative * top]
    rest = [r for r in ranked if r not in keep and r.score >= near]
    return keep, rest[:MAX_RELATED]
