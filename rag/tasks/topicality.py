"""Which retrieved papers a summary is about: those whose own contribution is on the topic.

A paper's contribution is what its objective, method and result sentences say (rag.reading.roles; an authored
title states it too); its background sentences do not count, so a bandit paper that mentions transport
costs in passing, or a solver paper whose introduction names state space models, stays out. Each
sentence's relevance to the topic is the MiniLM cosine plus OVERLAP_WEIGHT when it holds the topic's
phrase (of one part of "X and Y") with its words side by side (holds_phrase): a fragment of the phrase,
or its words scattered, say nothing ("graph ... networks" in a DAG-ReLU paper is not "graph neural
networks", "scaling tests" is not "test-time scaling"), which rag.reading.grades' per-word share rewarded. A
sentence that names the topic outright -- its phrase, or the acronym its authors write for it ("RLHF"),
which MiniLM does not read as the phrase -- scores at least NAMED. A sentence that names the topic only
as a test bed or application ("experiments on synthetic data", "applied to X", tested_on) is background,
whatever role it has. A Reading's `score` (its best contribution sentence, or title, or background
sentence less BACKGROUND_DISCOUNT) orders the quotes; which papers a summary covers is decided by
rag.tasks.area_scorer, which takes this score as one of its features (the fixed 0.6 cut it replaces lost
core papers of areas named with a modifier).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rag.reading.grades import _STOP, OVERLAP_WEIGHT
from rag.records import Hit
from rag.reading.roles import roles_of
from rag.reading.sentences import split_sentences
from rag.reading.stems import stem_words

CONTRIBUTION = frozenset({"objective", "method", "result"})
# The level a sentence naming the topic is raised to (below): the former on-topic cut, chosen on
# bench/summarise_topics.py's tuning half; now one feature's scale for rag.tasks.area_scorer.
ON_TOPIC = 0.6
# Background sentences count BACKGROUND_DISCOUNT less: an abstract often names its area only there
# ("Selective state space models such as Mamba have emerged ...") and then says "this paper develops a
# control-theoretic framework", but a bandit paper's passing "switching costs" should not carry it.
BACKGROUND_DISCOUNT = 0.2
# A sentence naming the topic (its whole phrase, or its acronym) scores at least NAMED = ON_TOPIC: a paper
# whose contribution names the topic is on it (the DPO paper's "a better RLHF/ML fit").
NAMED = ON_TOPIC


@dataclass
class Reading:
    """One retrieved paper as a summary reads it: its sentences, their roles and relevance to the topic."""

    hit: Hit
    sentences: list[str]
    roles: list[str]
    relevance: np.ndarray  # per sentence, relevance to the topic (topic_relevance)
    title_relevance: float = 0.0  # of an authored title (0 when the title is derived from the abstract)
    tested: frozenset[int] = frozenset()  # sentences naming the topic only as a test bed (tested_on)
    cosine: np.ndarray | None = field(default=None, repr=False)  # per sentence, the plain MiniLM cosine
    title_cosine: float = 0.0  # of an authored title, plain
    probability: float = 0.0  # that the paper belongs to the area (rag.tasks.area_scorer), set by on_topic
    vec: np.ndarray | None = field(default=None, repr=False)  # the paper's vector, set when it is selected

    @property
    def paper(self):
        return self.hit.paper

    def contribution(self, roles: list[str] | None = None) -> list[int]:
        """Indices of its objective, method and result sentences (all of them when no role is known,
        e.g. with the tests' hashing embedder, whose vectors say nothing about roles), less those that
        name the topic only as a test bed: "experiments on synthetic data" is not a contribution on it.
        `roles`: the sentences' roles as a reader takes them, when not the classifier's (rag.reading.voice)."""
        roles = self.roles if roles is None else roles
        idx = [i for i, r in enumerate(roles) if r in CONTRIBUTION] or list(range(len(self.sentences)))
        return [i for i in idx if i not in self.tested]

    @property
    def score(self) -> float:
        """How much its own contribution is about the topic: its best contribution sentence or authored
        title, or its best background sentence less BACKGROUND_DISCOUNT."""
        contrib = set(self.contribution())
        rel = [float(x) - (0.0 if i in contrib else BACKGROUND_DISCOUNT) for i, x in enumerate(self.relevance)]
        return max(rel + [self.title_relevance])


def read(topic: str, hits: list[Hit], emb) -> list[Reading]:
    """Every hit's sentences (as rag.reading.sentences cuts them), roles and relevance, in one embedding call."""
    papers = [h.paper for h in hits]
    sents = [split_sentences(p.abstract) or ([p.abstract] if p.abstract else []) for p in papers]
    roles = roles_of(papers, emb)  # stored with each paper at ingest, else computed now
    titles = [p.title if p.title and not p.title_derived else "" for p in papers]
    flat = [s for ss in sents for s in ss] + [t for t in titles if t]
    phrases, acronyms = naming(topic)
    parts = phrase_parts(topic)
    # a test bed is background, and naming it is no sign of the topic: neither overlap nor NAMED counts
    tested = [tested_on(s, parts, acronyms) for ss in sents for s in ss] + [False] * (len(flat) - sum(map(len, sents)))
    rel = topic_relevance(topic, flat, emb, lexical=[not t for t in tested])
    raw = topic_relevance(topic, flat, emb, lexical=[False] * len(flat))  # the same vectors, from the cache
    for j, text in enumerate(flat):
        if not tested[j] and names(text, phrases, acronyms):
            rel[j] = max(float(rel[j]), NAMED)
    out, i = [], 0
    for h, ss, rs in zip(hits, sents, roles):
        out.append(Reading(h, ss, list(rs) if len(rs) == len(ss) else ["other"] * len(ss), rel[i : i + len(ss)],
                           tested=frozenset(k for k in range(len(ss)) if tested[i + k]), cosine=raw[i : i + len(ss)]))
        i += len(ss)
    for r, t in zip(out, titles):
        if t:
            r.title_relevance, r.title_cosine = float(rel[i]), float(raw[i])
            i += 1
    return out


def topic_relevance(topic: str, texts: list[str], emb, lexical: list[bool] | None = None) -> np.ndarray:
    """Each text's MiniLM cosine to the topic, plus OVERLAP_WEIGHT when it holds the topic's phrase, or one
    of its parts' ("X and Y"), its words side by side (holds_phrase); only where `lexical` allows."""
    if not texts:
        return np.zeros(0, dtype=np.float32)
    vecs = emb.embed_array([topic] + list(texts))
    sims = (vecs[1:] @ vecs[0]).astype(np.float32)
    parts = phrase_parts(topic)
    if parts:
        held = [(lexical is None or lexical[j]) and any(holds_phrase(t, p) for p in parts) for j, t in enumerate(texts)]
        sims = sims + OVERLAP_WEIGHT * np.array(held, dtype=np.float32)
    return sims


def _parts(topic: str) -> list[str]:
    """"X and Y" has two parts, "X, Y or Z" three."""
    return re.split(r"\band\b|\bor\b|[,;/]", topic)


_WORD = re.compile(r"[A-Za-z0-9]+")


class Part(tuple):
    """A phrase's stemmed content words in order. `nominal`: two words, the second naming an action on the
    first ("uncertainty quantification", "knowledge distillation"), so a text also names it by the verb and
    its object ("quantifying uncertainty", "distilling knowledge"; _occurrences). `closed`: the same with
    each hyphenated word read as one ("multi-armed" -> "multiarm"; holds), when the phrase has one."""

    nominal = False
    closed: tuple[str, ...] = ()


class Words(list):
    """A text's stemmed content words (_content); `closed`: the same with each hyphenated word read as one
    ("auto-encoders" -> "autoencod"), when the text has one."""

    closed: list[str] | None = None


_HYPHENED = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+|[A-Za-z0-9]+")


def _closed(text: str) -> list[str]:
    """The text's content words stemmed, a hyphenated word closed up first ("auto-encoders" as
    "autoencoders")."""
    return stem_words([w.replace("-", "") for w in _HYPHENED.findall(text) if w.lower() not in _STOP])


_NOMINAL = re.compile(r"[A-Za-z]{3,}(?:tion|sion|ment)$", re.IGNORECASE)


def phrase_of(text: str) -> Part:
    """The text's content words (stop words dropped), stemmed, in order, and whether they are a nominal
    compound; empty when it has none."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOP]
    part = Part(stem_words(words))  # as rag.reading.grades and rag.library.lexical read words
    part.nominal = len(words) == 2 and bool(_NOMINAL.match(words[1]))
    part.closed = tuple(_closed(text)) if "-" in text else ()
    return part


def phrase_parts(topic: str) -> list[tuple[str, ...]]:
    """The topic's content phrases, each its stemmed content words in order: "equivariant neural networks"
    is one phrase of three words, "learning and reasoning" two of one ("X, Y or Z" three)."""
    return [p for p in map(phrase_of, _parts(topic)) if p]


def _content(text: str) -> tuple[Words, list[int]]:
    """The text's content words (stop words dropped), stemmed, and where each starts in the text."""
    found = [m for m in _WORD.finditer(text) if m.group().lower() not in _STOP]
    words = Words(stem_words([m.group() for m in found]))
    words.closed = _closed(text) if "-" in text else None
    return words, [m.start() for m in found]


def holds(words: list[str], part: tuple[str, ...]) -> bool:
    """Whether the (stemmed content) words hold the part side by side, a hyphenated word on either side also
    read as one: "variational auto-encoders" holds "variational autoencoders", "multiarmed bandits" holds
    "multi-armed bandits" (5 of the 25 core papers of mlqa's "variational autoencoders" write
    "auto-encoder"). Where the words stand: _occurrences."""
    closed = getattr(part, "closed", ())
    # as written; "multi-armed" asked, "multiarmed" written; "auto-encoders" written, asked either way
    if _occurrences(words, part) or (closed and _occurrences(words, closed)):
        return True
    return bool(getattr(words, "closed", None)) and bool(_occurrences(words.closed, closed or part))


def _occurrences(words: list[str], part: tuple[str, ...]) -> list[int]:
    """Where the part's words stand side by side in the (stemmed content) words: their first's index.
    Allowing one other word between two of them ("graph contrastive learning" for "graph learning") was
    tried on bench/summarise_topics' tuning half: 5 more on-topic papers for 18 more cited, so no."""
    n = len(part)
    found = [i for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == part] if n else []
    if getattr(part, "nominal", False):  # "quantifying uncertainty" for "uncertainty quantification"
        thing, act = part
        found += [i for i in range(len(words) - 1) if words[i + 1] == thing and _same_root(words[i], act)]
    return sorted(found)


def _same_root(a: str, b: str) -> bool:
    """Two stems of one word family, the verb's and the noun's: "quantifi" (quantifying) and "quantif"
    (quantification), "estim" and "estim"."""
    return min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))


def holds_phrase(sentence: str, part: tuple[str, ...]) -> bool:
    """Whether the sentence holds the part (of phrase_parts) with its words side by side, stop words aside
    and stemmed ("equivariant networks" is not "equivariant neural networks"; "GNN layers on graphs with
    neural features" is not "graph neural networks"); a plural or inflection counts as the word."""
    return holds(_content(sentence)[0], part)


def naming(topic: str) -> tuple[list[tuple[str, ...]], set[str]]:
    """How a sentence can name the topic outright: each of its phrase_parts of two words or more, and each
    such part's acronym of three letters or more (the initials of its words, a hyphenated word giving one
    per piece: "in-context learning" -> ICL)."""
    acronyms = set()
    for part in _parts(topic):
        if len([w for w in _WORD.findall(part) if w.lower() not in _STOP]) < 2:
            continue
        initials = "".join(p[0] for w in re.findall(r"[A-Za-z0-9-]+", part) if w.lower() not in _STOP
                           for p in w.split("-") if p)
        if len(initials) >= 3:
            acronyms.add(initials.upper())
    return [p for p in phrase_parts(topic) if len(p) >= 2], acronyms


def _acronym(a: str) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(a) + r"s?(?![A-Za-z0-9])")


def names(text: str, phrases: list[tuple[str, ...]], acronyms: set[str]) -> bool:
    """Whether the text names the topic: one of its phrases word for word (holds_phrase), or an acronym as
    written (upper case, a plural 's' allowed: "GNNs")."""
    if any(_acronym(a).search(text) for a in acronyms):
        return True
    words = _content(text)[0] if phrases else []
    return any(holds(words, p) for p in phrases)


# A test bed or application: an evaluation word, then "on", "to", "with", "using", "across" or "over" and at
# most four words before the topic ("we validate ... with experiments on both synthetic data", "applied to
# X"); or the topic followed by "benchmarks", "datasets", "tasks", at most three words after such a
# preposition ("outperforms baselines on three X benchmarks"). "results" is no cue: "results in X" is causal.
_CUE = (r"\b(?:evaluat|experiment|test|validat|appl(?:y|ie|ica)|benchmark|demonstrat|illustrat|simulat|empiric"
        r"|deploy)\w*")
# The topic as the last item of a list after such a preposition is tested on too: "validated across four
# domains: imaging, scientific computing, operations research, and LLM reasoning", "on tasks such as image
# classification, language modeling, and machine translation" (items of at most three words).
_LIST = r"(?:(?:\s*[:,]\s+|\s+(?:such\s+as|including)\s+)(?:(?:and|or)\s+)?[\w$-]+(?:\s+[\w$-]+){0,2})*"
_BED_BEFORE = re.compile(_CUE + r"(?:\W+\w+){0,6}?\W+(?:on|to|with|using|across|over)(?:\W+[\w$]+){0,4}?" + _LIST
                         + r"\W*$", re.IGNORECASE)
_BED_AFTER = re.compile(r"^\W*(?:benchmarks?|datasets?|data\s+sets?|tasks|environments|suites?)\b", re.IGNORECASE)
_PREP_BEFORE = re.compile(r"\b(?:on|across|using|with|over)(?:\W+[\w$]+){0,3}?\W*$", re.IGNORECASE)
_BED_WINDOW = 12  # words before the topic that are read for a cue
# A sentence that opens by saying where the work was tested: "Experiments on both synthetic and real-world
# datasets further validate ...", "We test our theory on linear and polynomial regression tasks".
_EVALUATION = re.compile(r"\W*(?:\w+\W+){0,4}?" + _CUE + r"(?:\W+\w+){0,4}?\W+(?:on|with|using|across|over)\b",
                         re.IGNORECASE)


def tested_on(sentence: str, parts: list[tuple[str, ...]], acronyms: set[str] = frozenset()) -> bool:
    """Whether the sentence names the topic (one of its parts, or an acronym) only as a test bed or an
    application: "we evaluate on X", "experiments on X benchmarks", "applied to X"; or, naming it not at
    all, opens by saying where the work was tested ("Experiments on both synthetic and real-world datasets
    validate ..."). Such a sentence is background to the topic, not the paper's contribution on it (a
    transformer paper "validates its theory with experiments on both synthetic data and real-world
    tasks" is not a paper on synthetic data)."""
    words, starts = _content(sentence)
    spans = []  # (start, end) of every place the sentence names the topic
    for p in parts:
        for i in _occurrences(words, p):
            last = starts[i + len(p) - 1]
            spans.append((starts[i], last + len(_WORD.match(sentence, last).group())))
    for a in acronyms:
        spans += [m.span() for m in _acronym(a).finditer(sentence)]
    if not spans:  # a sentence reporting where the work was tested says where, not what it is about
        return bool(_EVALUATION.match(sentence))
    for start, end in spans:
        while start > 1 and sentence[start - 1] == "-" and sentence[start - 2].isalnum():  # "in-context": from "in"
            start = _WORD_START.search(sentence[: start - 1]).start()
        before = " ".join(sentence[:start].split()[-_BED_WINDOW:])
        if not (_BED_BEFORE.search(before) or _BED_AFTER.search(sentence[end:]) and _PREP_BEFORE.search(before)):
            return False
    return True


_WORD_START = re.compile(r"[A-Za-z0-9]+$")
