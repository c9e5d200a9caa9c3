"""Naming themes: the noun phrase most of a group's papers share, from their own contribution sentences.

A name is what a researcher would title the group's paragraph in a related-work section. Candidates
are the noun phrases of the group's contribution sentences (rag.tasks.theme_phrases: no verb, no
adjective at the end, not only generic words, not a phrase cut short). Each is scored by how many of
the group's papers hold it (its stemmed words, an acronym counting as its expansion, in their title or
abstract) against how many of the other papers do; a phrase most of the group shares comes first, and
with an embedder, closeness to the group's mean vector breaks near ties. A name is never the topic
itself, a field too broad to title a paragraph ("Reinforcement learning"), nor the name of another
theme (acronyms spelled out: "Offline RL" and "offline reinforcement learning" are one name).
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

from rag.records import Paper
from rag.tasks.theme_phrases import (_TOKEN, GENERIC, acronyms, broad, clean, concept, is_name, proper_adjective, stem,
                                     terms, text_key, vague, verbs_of)
from rag.tasks.themes import paper_text

# A second phrase joins the first ("A and B") only when it describes the group nearly as well, and most
# of the group's papers hold both: two phrases that each fit half the group read as a fragment
# ("Federated hypergradient estimation and convergence guarantees" at 0.6 on the seeds).
SECOND = 0.8
MAJORITY = 0.5  # a name should be held by at least this share of its group's papers
OUTSIDE = 0.7  # how much holding a phrase outside the group counts against it
SHORTLIST = 60  # candidates per group scored on coverage (by tf-idf first: a map's regions have thousands)
_LENGTH = {1: 0.0, 2: 0.06, 3: 0.08}  # two- and three-word phrases read as names; four or more as clauses
_GENERIC_STEMS = frozenset(stem(w) for w in GENERIC) | {stem("learner")}


def contribution_text(r, title: bool = True) -> str:
    """What a paper did, in its own words: its authored title and objective and method sentences (all of
    its contribution sentences when it has no objective or method; its whole text when no role is known)."""
    p = r.paper
    idx = [i for i, role in enumerate(r.roles) if role in ("objective", "method")] or r.contribution()
    title = f"{p.title}. " if title and p.title and not p.title_derived else ""
    return title + " ".join(r.sentences[i] for i in idx)


class _Corpus:
    """The retrieved papers' phrases, written forms and stems, shared by every group's naming."""

    def __init__(self, groups: list[list], background: list[Paper]):
        full = {p.paper_id: paper_text(p) for p in background}
        body = {p.paper_id: p.abstract for p in background}
        titles = {p.paper_id: p.title for p in background if p.title and not p.title_derived}
        for g in groups:
            for r in g:
                # A map's Paper is named from all of it; a summary's Reading from its contribution. Told
                # apart by type: Papers carry `roles` too since roles are stored with records.
                p = r if isinstance(r, Paper) else r.paper
                full.setdefault(p.paper_id, paper_text(p))
                body[p.paper_id] = p.abstract if isinstance(r, Paper) else contribution_text(r, title=False)
                if p.title and not p.title_derived:
                    titles[p.paper_id] = p.title
        self.acr = acronyms(list(full.values()))
        titles = {pid: calm(t, self.acr) for pid, t in titles.items()}
        self.casing = Casing(list(full.values()))
        self.verbs = verbs_of(list(full.values()))
        self.doc_terms: dict[str, Counter] = {}
        self.surface: dict[str, Counter] = {}
        title_forms: dict[str, Counter] = {}
        self.cut: Counter = Counter()
        self.seen: Counter = Counter()
        for pid in full:
            ts = terms(body.get(pid, ""))
            tt = terms(titles.get(pid, ""), title=True)
            self.doc_terms[pid] = Counter(t for t, _, _ in ts + tt)
            for t, s, cut in ts:
                self.surface.setdefault(t, Counter())[s] += 1
            for t, s, cut in tt:  # a title's Title Case is not how the phrase is written in a sentence
                title_forms.setdefault(t, Counter())[_unshout(s, casing=self.casing)] += 1
            for t, _, cut in ts + tt:
                self.cut[t] += cut
                self.seen[t] += 1
        for t, forms in title_forms.items():
            self.surface.setdefault(t, forms)
        self.df = Counter(t for c in self.doc_terms.values() for t in c)
        # which papers hold each stem (their whole text): a phrase's papers are an intersection
        self.postings: dict[str, set[str]] = {}
        for pid, text in full.items():
            for st in text_key(text, self.acr):
                self.postings.setdefault(st, set()).add(pid)
        self.all_ids = set(full)

    def written(self, term: str) -> str:
        forms = self.surface.get(term)
        if not forms:
            return term
        # The most common written form; lower-case unless the authors write it otherwise (LoRA, Mamba),
        # and an adjective from a name capitalised ("Bayesian optimization").
        best = forms.most_common(1)[0][0]
        lower = sum(n for f, n in forms.items() if all(w == w.lower() or proper_adjective(w) for w in f.split()))
        return _unshout(best, lower=True) if lower * 2 >= sum(forms.values()) else best

    def holders(self, key: frozenset[str]) -> set[str]:
        sets = [self.postings.get(s, set()) for s in key]
        return set.intersection(*sets) if sets else set()


def calm(title: str, acr: dict[str, str]) -> str:
    """A title written all in capitals ("DOUBLY STOCHASTIC ADVERSARIAL AUTOENCODER", 29 of mlqa's 3,000) in
    sentence case: its words lower-case but acronyms the texts define or we know ("GANs") and adjectives from a
    name ("Bayesian"); any other title as it is. A theme named from it no longer shouts."""
    words = title.split()
    if len([w for w in words if any(c.isalpha() for c in w)]) < 2 or any(c.islower() for c in title):
        return title

    def word(w: str) -> str:
        bare = w.strip(".,:;!?()[]\"'")
        if bare.lower() in acr:
            return w
        if bare.endswith("S") and bare[:-1].lower() in acr:
            return w.replace(bare, bare[:-1] + "s")
        low = w.lower()
        return low.capitalize() if proper_adjective(low.capitalize()) else low
    out = " ".join(word(w) for w in words)
    return out[:1].upper() + out[1:]


class Casing:
    """How the papers write words inside their sentences (not as a sentence's first word): a title's "Monte
    Carlo" or "Thompson" is a name where the sentences write it so and never in small letters; its
    "Non-Convex" is no name where they write "non-convex"."""

    def __init__(self, texts: list[str]):
        self.small: set[str] = set()
        self.capital: Counter = Counter()  # in how many texts
        for text in texts:
            capital = set()
            for sentence in re.split(r"(?<=[.!?])\s+", clean(text)):
                tokens = _TOKEN.findall(sentence)
                for i in range(1, len(tokens)):
                    for part in {tokens[i], *tokens[i].split("-")}:
                        if part.islower():
                            self.small.add(part)
                        elif _TITLE.fullmatch(part) and any(t.islower() for t in tokens[i - 1 : i + 2 : 2]):
                            capital.add(part.lower())  # beside small words: not a piece of a Title-Case name
            self.capital.update(capital)

    def name(self, w: str) -> bool:
        """Written with a capital beside small words ("Markov chain Monte Carlo methods") in the sentences of two
        papers or more, never in small letters. A Title-Case name ("Proximity Divergence Minimization (PDM)")
        makes no name of its words."""
        return self.capital[w.lower()] >= 2 and w.lower() not in self.small

    def common(self, w: str) -> bool:
        """Written in small letters in the sentences."""
        return w.lower() in self.small


_TITLE = re.compile(r"[A-Z][a-z]+")


def _unshout(s: str, lower: bool = False, casing: Casing | None = None) -> str:
    """Title Case words as they would read in a sentence ("Regularized Generative Adversarial" ->
    "regularized generative adversarial"); acronyms, inner capitals (GS-Pose, LoRA) and adjectives from a
    name (Bayesian, Gaussian) stay. With `casing` (how the papers' sentences write their words), a word they
    write only with a capital stays (Monte Carlo), and a hyphenated Title-Case word whose every part they
    write in small letters is lowered ("Non-Convex" -> "non-convex"). With lower=True, every word but
    those adjectives is lower-cased."""
    def word(w: str) -> str:
        if proper_adjective(w):
            return w
        if lower:
            return w.lower()
        if w[:1].isupper() and w[1:] == w[1:].lower():
            return w if casing and casing.name(w) else w.lower()
        parts = w.split("-")
        if casing and len(parts) > 1 and all(_TITLE.fullmatch(x) and casing.common(x) for x in parts):
            return w.lower()
        return w
    return " ".join(word(w) for w in s.split())


def name_themes(groups: list[list], background: list[Paper], topic: str, emb=None,
                centroids: list[np.ndarray] | None = None, n_terms: int = 2) -> list[tuple[str, list[str]]]:
    """For each group of papers (rag.tasks.topicality.Readings for a summary, Papers for a map's region)
    a title and the phrases it is made of, in the groups' order; earlier groups choose first."""
    corpus = _Corpus(groups, background)
    papers = [[r if isinstance(r, Paper) else r.paper for r in g] for g in groups]
    topic_key = concept(topic, corpus.acr)
    group_df = [Counter(t for p in g for t in corpus.doc_terms[p.paper_id]) for g in papers]
    used: list[frozenset[str]] = []
    out = []
    for gi, g in enumerate(papers):
        ranked = _ranked(gi, g, group_df[gi], corpus, topic_key, emb, centroids)
        chosen: list[tuple[str, frozenset[str], set[str], float]] = []
        for t, key, held, rank in ranked:
            if any(key <= u or u <= key for u in used) or any(key & k for _, k, _, _ in chosen):
                continue
            if chosen:
                first = chosen[0]
                words = len(corpus.written(first[0]).split()) + len(corpus.written(t).split())
                if len(g) == 1 or words > 5:
                    continue
                if len(first[2]) / len(g) >= MAJORITY:  # a shared name: another only as shared and as good
                    if len(first[2] & held) / len(g) < MAJORITY or first[3] <= 0 or rank < SECOND * first[3]:
                        continue
                elif not held - first[2]:
                    continue  # no phrase most share: the two subjects of the group's papers, "A and B"
            chosen.append((t, key, held, rank))
            if len(chosen) >= n_terms:
                break
        lead = g[0] if g else None
        short = calm(_short_title(lead), corpus.acr)
        if len(g) == 1 and short:
            out.append((short, []))  # one paper: its own (short) title names it best
            used.append(concept(short, corpus.acr))
            continue
        if not chosen:  # no phrase of its own: the lead paper's short title, else its first noun phrase
            if short:
                out.append((short, []))
                continue
            own = [(t, s) for t, s, cut in terms(paper_text(lead)) if " " in t and not cut and is_name(t, s, corpus.verbs)
                   and not concept(s, corpus.acr) <= topic_key]
            label = corpus.written(own[0][0]) if own else ((lead.title if lead else "") or "Other")
            out.append((label[:1].upper() + label[1:], [label]))
            continue
        used.extend(k for _, k, _, _ in chosen)
        labels = [corpus.written(t) for t, *_ in chosen]
        text = " and ".join(labels)
        out.append((text[:1].upper() + text[1:], labels))
    return out


def _short_title(p: Paper | None) -> str:
    """A paper's authored title when it can name a theme: six words at most, not vague ("A Bayesian
    approach", "Introduction")."""
    if not p or not p.title or p.title_derived or len(p.title.split()) > 6 or vague(p.title):
        return ""
    return p.title.rstrip(". ")


def _ranked(gi: int, g: list[Paper], in_group: Counter, corpus: _Corpus, topic_key: frozenset[str], emb,
            centroids) -> list[tuple[str, frozenset[str], set[str], float]]:
    """The group's name candidates, best first: (term, concept, ids of the group's papers holding it, rank).
    Those most of the group holds come before the rest, whatever their rank."""
    ids = {p.paper_id for p in g}
    n_docs = len(corpus.doc_terms)
    scored = _scored(g, in_group, corpus, topic_key, n_docs, ids)
    if emb is not None and centroids is not None and scored:
        top = scored[:25]
        tv = emb([corpus.written(t) for t, *_ in top])
        own = tv @ centroids[gi]
        rest = [tv @ c for j, c in enumerate(centroids) if j != gi]
        other = np.max(np.stack(rest), axis=0) if rest else np.zeros(len(top))
        scored = [(t, k, h, s + 0.3 * float(own[i] - 0.5 * other[i]), c) for i, (t, k, h, s, c) in enumerate(top)]
    scored.sort(key=lambda x: (-(x[4] >= MAJORITY or len(g) == 1), -x[3], x[0]))
    return [(t, k, h, s) for t, k, h, s, _ in scored]


def _scored(g, in_group: Counter, corpus: _Corpus, topic_key, n_docs: int, ids: set[str]) -> list:
    """(term, concept, holders in the group, score, coverage) of the phrases of the group's contribution
    texts, shortlisted by tf-idf (how many of those texts hold it, how rare it is elsewhere)."""
    pre: dict[str, float] = {}
    for t, dfc in in_group.items():
        if corpus.cut[t] * 2 > corpus.seen[t]:
            continue  # "Multi-Channel Graph" (of "... Graph Neural Networks") is cut short
        idf = math.log((1 + n_docs) / (1 + corpus.df[t])) + 1.0
        pre[t] = dfc / len(g) * idf * (1.2 if " " in t else 1.0)
    scored = []
    for t in sorted(pre, key=lambda t: (-pre[t], t)):
        written = corpus.written(t)
        if not is_name(t, written, corpus.verbs):
            continue
        key = concept(written, corpus.acr)
        if not key or key <= topic_key | _GENERIC_STEMS or broad(key, corpus.acr):
            continue  # the topic itself, "Offline RL" in offline RL, "Language models", "LLMs"
        holders = corpus.holders(key)
        held = holders & ids
        if not held:
            continue
        cov = len(held) / len(g)
        outside = len(holders - ids) / max(1, len(corpus.all_ids - ids))
        score = cov - OUTSIDE * outside + _LENGTH.get(len(key), -0.05) + 0.02 * math.log(pre[t] + 1)
        scored.append((t, key, held, score, cov))
        if len(scored) >= SHORTLIST:
            break
    return scored
