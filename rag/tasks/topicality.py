"""Which retrieved papers a summary is about: those whose own contribution is on the topic.

A paper's contribution is what its objective, method and result sentences say (rag.roles; an authored
title states it too); its background sentences do not count, so a bandit paper that mentions transport
costs in passing, or a solver paper whose introduction names state space models, stays out. Each
sentence's relevance to the topic is rag.grades' score (MiniLM cosine plus a share for the topic's
content words), the same score the answers use -- raised to NAMED for a sentence that names the topic
outright: its phrase ("reinforcement learning from human feedback"), or the acronym its authors write
for it ("RLHF"), which MiniLM does not read as the phrase (the DPO paper's only tie to RLHF is "a better
RLHF/ML fit", 0.14 by cosine). Papers retrieved but not on the topic are near misses: listed apart as
"related, not summarised".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..grades import _STOP, FLOOR, relevance
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
# A sentence naming the topic (its whole phrase, or its acronym) scores at least NAMED: above ON_TOPIC, so
# a paper whose contribution names the topic is in unless far below the best paper (RELATIVE still cuts).
# On the seeds any value from 0.55 to 0.7 keeps the DPO paper in "reinforcement learning from human
# feedback" and changes no other labelled area (/tmp analysis of 13 areas, see the README).
NAMED = 0.6
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
    phrases, acronyms = naming(topic)
    for j, text in enumerate(flat):
        if names(text, phrases, acronyms):
            rel[j] = max(float(rel[j]), NAMED)
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


_WORD = re.compile(r"[A-Za-z0-9]+")


def _stems(words: list[str]) -> list[str]:
    import Stemmer  # PyStemmer, as rag.grades and rag.lexical use

    global _STEMMER
    _STEMMER = _STEMMER or Stemmer.Stemmer("english")
    return _STEMMER.stemWords([w.lower() for w in words])


_STEMMER = None


def naming(topic: str) -> tuple[list[tuple[str, ...]], set[str]]:
    """How a sentence can name the topic outright: the stemmed content words of each part of it ("X and Y"
    has two parts) that has two or more, and each such part's acronym of three letters or more (the
    initials of its words, a hyphenated word giving one per piece: "in-context learning" -> ICL)."""
    phrases, acronyms = [], set()
    for part in re.split(r"\band\b|\bor\b|[,;/]", topic):
        words = [w for w in _WORD.findall(part) if w.lower() not in _STOP]
        if len(words) < 2:
            continue
        phrases.append(tuple(_stems(words)))
        initials = "".join(p[0] for w in re.findall(r"[A-Za-z0-9-]+", part) if w.lower() not in _STOP
                           for p in w.split("-") if p)
        if len(initials) >= 3:
            acronyms.add(initials.upper())
    return phrases, acronyms


def names(text: str, phrases: list[tuple[str, ...]], acronyms: set[str]) -> bool:
    """Whether the text names the topic: one of its phrases word for word (stop words aside, stemmed), or
    an acronym as written (upper case, a plural 's' allowed: "GNNs")."""
    if any(re.search(r"(?<![A-Za-z0-9])" + a + r"s?(?![A-Za-z0-9])", text) for a in acronyms):
        return True
    if not phrases:
        return False
    words = _stems([w for w in _WORD.findall(text) if w.lower() not in _STOP])
    return any(tuple(words[i : i + len(p)]) == p for p in phrases for i in range(len(words) - len(p) + 1))
