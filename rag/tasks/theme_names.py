"""Naming themes: a noun phrase of each group's own contribution sentences, distinctive against the other groups."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

from ..records import Paper
from .themes import paper_text

_STOP = set("""
a about above across after again against all almost along also although always among an and another any are
around as at available be because been before being below between both but by can cannot could did do does
doing done due during each either enough especially even ever every few first for from further furthermore
get gets given has have having here hence how however if in into is it its itself just known large largely
less like made mainly make makes many may might more moreover most much must namely near nearly neither no nor
not notably now of off often on once one only onto or other others otherwise our ours out over own per
perhaps rather recently same several shall should show shows shown showed significantly since so some still
such than that the their theirs them themselves then there thereby therefore these they this those though
three through thus to too two under until up upon us use used uses using various very via was we well were
what whether when where which while who whom whose why will with within without would yet
paper papers work works study code github available consistently outperform outperforms enable enables
allow allows reveal reveals capture captures exhibit exhibits rely relies studies studied propose proposed proposes introduce introduced introduces
present presents presented approach approaches method methods framework frameworks result results new novel
demonstrate demonstrates demonstrated based provide provides provided existing prior previous recent address
addresses challenge challenges problem problems task tasks achieve achieves achieving remains remain key
including include includes across leading lead leads often particular particularly specifically
experiments experimental empirical empirically extensive state art significant improve improves improved
improvement performance effective effectively efficient efficiently simple wide range real world
theoretical theoretically theory analysis analyze analyse analyzed establish establishes established
prove proves proved yields yield obtain obtains obtained consider considers considered develop develops
developed well-known widely fundamental understanding understood poorly terms term setting settings
however still despite whereas compared respectively finally moreover additionally thereby first second
""".split())
# Unigrams ending like adjectives or adverbs make poor names on their own ("optimal", "fast"); in a
# phrase they are fine ("optimal transport").
_NOT_NOUN = ("al", "ic", "ous", "ive", "ed", "able", "ible", "ful", "less", "ary", "ly", "est", "ent", "ant",
             "fast", "slow", "strong", "weak", "high", "low", "small", "large", "require", "allow", "enable")
# Words too general to name a theme alone (fine inside a phrase: "graph neural networks").
_GENERIC = set("""
network model data learning algorithm function system set distribution error bound loss training
performance structure parameter feature domain query stability extension sample space method task
representation generalization optimization analysis condition property rate complexity dimension
input output objective solution value class framework approach setting process dynamic regime
architecture mechanism effect behavior behaviour capability application evaluation accuracy efficiency
information knowledge signal target source scale level step order size number case type form
guarantee result finding evidence role impact factor aspect
""".split())
# Words a name never starts or ends with: prepositions, comparatives and adjectives that lead fragments
# such as "Faster and deviation", "Beyond and limit", "Similar and cost".
_NOT_EDGE = set("""
beyond toward towards versus across against among along amid within without upon onto
faster slower better worse larger smaller higher lower stronger weaker greater deeper wider longer shorter
similar different general specific common standard simple complex naive exact approximate arbitrary
constant important informative various respective sustained existing throughout
supporting leveraging using providing enabling making yielding allowing achieving exploiting simulate simulating
certain whole entire main major minor key core basic novel unified joint single multiple many
possible necessary sufficient able unable likely unlikely hard easy difficult
limit limits limited fail fails failing lack lacks achieve enables improving increasing reducing
""".split())
# A second phrase joins the first ("A and B") only when it describes the group nearly as well: two phrases
# that each fit half the group read as a fragment ("Federated hypergradient estimation and convergence
# guarantees", "Learnable optimizers and optimization behaviors" at 0.6 on the seeds; at 0.8 one phrase each).
SECOND = 0.8
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-\u2011][A-Za-z0-9]+)*")


def _clean_for_terms(text: str) -> str:
    text = re.sub(r"(?:https?://|www\.)\S+|\S+\.(?:com|org|io|net)\S*", " . ", text)  # links, code pointers
    text = re.sub(r"\$[^$]*\$", " . ", text)  # math
    text = re.sub(r"\\[A-Za-z]+\{([^{}]*)\}", r"\1", text)  # \emph{x} -> x
    text = re.sub(r"\\[A-Za-z]+", " ", text)
    return text.replace("*", "").replace("`", "")


def _word_ok(w: str) -> bool:
    lw = w.lower()
    if lw in _STOP or lw.isdigit() or not any(c.isalpha() for c in lw):
        return False
    # Short words only as acronyms (ICL, GNN); "len", "b" and the like are fragments.
    return len(lw) >= 4 or sum(c.isupper() for c in w) >= 2


def _terms(text: str) -> list[tuple[str, str]]:
    """(normalised, surface) unigrams, bigrams and trigrams; n-grams do not cross punctuation or stop words."""
    out: list[tuple[str, str]] = []
    for segment in re.split(r"[.,;:!?()\[\]{}\"“”]|\s[-–—]\s", _clean_for_terms(text)):
        run: list[tuple[str, str]] = []
        for w in _TOKEN.findall(segment) + [""]:
            if w and _word_ok(w):
                run.append((_norm(w.lower()), w))
                continue
            for i in range(len(run)):
                for n in (1, 2, 3):
                    if i + n <= len(run):
                        part = run[i : i + n]
                        out.append((" ".join(x for x, _ in part), " ".join(y for _, y in part)))
            run = []
    return out


def _norm(w: str) -> str:
    """A light plural fold so 'models' and 'model' count as one term."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _noun_like(w: str) -> bool:
    """Could end a noun phrase: not a preposition, comparative or adjective by its ending ("-ous",
    "-ive", "-able", "-ful", "-less", "-ly", "-ed"); "-al", "-ent" and "-ic" words are often nouns
    (signal, gradient, logic) and pass."""
    return w not in _NOT_EDGE and w not in _STOP and not w.endswith(("ous", "ive", "able", "ible", "ful", "less",
                                                                       "ly", "ed"))


def is_name(term: str, surface: str = "") -> bool:
    """Whether a term can name a theme: a noun phrase of two or more words that neither starts nor ends
    with a preposition, comparative or adjective ("regularised optimal transport", "preference
    optimisation"), or one word its authors write as a name ("Mamba", "LoRA", "hyper-connections")."""
    words = term.split()
    if len(words) >= 2:
        return (words[0] not in _NOT_EDGE and not words[0].endswith("ly") and _noun_like(words[-1])
                and words[-1] not in _GENERIC_END)
    w = surface or term
    return (w[:1].isupper() and not w.isupper() and w.lower() not in _NOT_EDGE and w[1:] != w[1:].lower()) or \
        (sum(c.isupper() for c in w) >= 2) or ("-" in w and _noun_like(term) and term not in _GENERIC)


# A phrase ending in these says little on its own ("linear convergence rate" is fine, "high rate" is not).
_GENERIC_END = {"way", "thing", "lot", "kind", "part", "use", "fact", "issue", "work", "learn", "train", "solve",
                "show", "find", "study", "prove", "apply", "compute", "predict", "estimate",
                # verbs (terms are plural-folded: "requires" -> "require"): "self-consistency requires"
                "require", "remain", "provide", "yield", "achieve", "enable", "allow", "lead", "make", "depend",
                "emerge", "hold", "suggest", "imply", "need", "offer", "perform", "improve", "reduce", "outperform",
                "become", "seem", "appear", "exhibit", "capture", "match", "help", "fail", "rely", "ensure"}


def contribution_text(r) -> str:
    """What a paper did, in its own words: its authored title and objective and method sentences (all of
    its contribution sentences when it has no objective or method; its whole text when no role is known)."""
    p = r.paper
    idx = [i for i, role in enumerate(r.roles) if role in ("objective", "method")] or r.contribution()
    title = f"{p.title}. " if p.title and not p.title_derived else ""
    return title + " ".join(r.sentences[i] for i in idx)


def name_themes(groups: list[list], background: list[Paper], topic: str, emb=None,
                centroids: list[np.ndarray] | None = None, n_terms: int = 2) -> list[tuple[str, list[str]]]:
    """For each group of papers a title from its distinctive phrases. A summary's groups hold
    rag.tasks.topicality.Readings, named from their contribution sentences (objective and method); a
    map's hold Papers, named from their whole text.

    Candidates are the noun phrases of the group's contribution sentences that are
    frequent in its papers and rare in the other groups' and in the wider set of retrieved papers (tf-idf
    style). With an embedder they are then ranked by how close the phrase's vector is to the group's
    centroid and how far from the other groups' — which prefers meaningful phrases ("linear attention",
    "optimal transport") over frequent fragments."""
    docs = {p.paper_id: paper_text(p) for p in background}
    for g in groups:
        for r in g:
            # A map's Paper is named from all of it; a summary's Reading from its contribution. Told apart
            # by type: Papers carry `roles` too since roles are stored with records.
            if isinstance(r, Paper):
                docs.setdefault(r.paper_id, paper_text(r))
            else:
                docs[r.paper.paper_id] = contribution_text(r)
    groups = [[r if isinstance(r, Paper) else r.paper for r in g] for g in groups]
    doc_terms: dict[str, Counter] = {}
    surface: dict[str, Counter] = {}
    for pid, text in docs.items():
        ts = _terms(text)
        doc_terms[pid] = Counter(t for t, _ in ts)
        for t, s in ts:
            surface.setdefault(t, Counter())[s] += 1
    n_docs = len(docs)
    df = Counter(t for c in doc_terms.values() for t in c)
    topic_words = {w for t, _ in _terms(topic) for w in t.split()}
    # Per group, how many of its papers hold each term; a term's share among the other groups' papers
    # is then a subtraction, not a scan of them (a map names 36 regions of 40 papers each).
    group_df = [Counter(t for p in g for t in doc_terms[p.paper_id]) for g in groups]
    all_df = sum(group_df, Counter())
    n_all = sum(len(g) for g in groups)
    out = []
    for gi, g in enumerate(groups):
        ids = [p.paper_id for p in g]
        n_others = n_all - len(ids)
        in_group = group_df[gi]
        scores: dict[str, float] = {}
        for need in ((2, 1) if len(g) > 1 else (1,)):
            for t, dfc in in_group.items():
                if dfc < need or set(t.split()) <= topic_words or not is_name(t, _surface(t, surface)):
                    continue
                p_in = dfc / len(ids)
                p_out = (all_df[t] - dfc) / max(1, n_others)
                tf = sum(doc_terms[pid][t] for pid in ids)
                idf = math.log((1 + n_docs) / (1 + df[t])) + 1.0
                sc = (p_in - p_out) * idf * (1.0 + 0.15 * math.log(tf)) * (1.3 if " " in t else 1.0)
                if sc > 0:
                    scores[t] = sc
            if scores:
                break
        cands = sorted(scores, key=lambda t: (-scores[t], t))[:25]
        if emb is not None and centroids is not None and cands:
            tv = emb([_surface(t, surface) for t in cands])
            own = tv @ centroids[gi]
            rest = [tv @ c for j, c in enumerate(centroids) if j != gi]
            other = np.max(np.stack(rest), axis=0) if rest else np.zeros(len(cands))
            top = max(scores[t] for t in cands)
            rank = {t: float(own[i] - 0.5 * other[i]) + 0.1 * scores[t] / top + (0.03 if " " in t else 0.0)
                    for i, t in enumerate(cands)}
            cands = sorted(cands, key=lambda t: (-rank[t], t))
        else:
            rank = {t: scores[t] for t in cands}
        chosen: list[str] = []
        for t in cands:
            words = set(t.split())
            if any(words & set(c.split()) for c in chosen) or (" " not in t and t in _GENERIC):
                continue
            if chosen and (len(g) == 1 or len(words) + len(chosen[0].split()) > 5):
                continue  # "A and B" stays within six words, and a one-paper theme has one subject
            if chosen and rank[t] < SECOND * rank[chosen[0]]:
                break  # a second label only when it describes the group nearly as well as the first
            chosen.append(t)
            if len(chosen) >= n_terms:
                break
        lead = g[0] if g else None
        if len(g) == 1 and lead and lead.title and not lead.title_derived and len(lead.title.split()) <= 6:
            out.append((lead.title, []))  # one paper: its own (short) title names it best
            continue
        if not chosen:  # no phrase of its own: the best noun phrase of its lead paper's contribution
            own = [t for t, _ in _terms(docs[lead.paper_id])] if lead else []
            own = [t for t in dict.fromkeys(own) if " " in t and is_name(t) and not set(t.split()) <= topic_words]
            if own:
                chosen = own[:1]
            elif lead and lead.title and len(lead.title.split()) <= 6:
                out.append((lead.title, []))
                continue
            else:
                chosen = cands[:1]
        labels = [_surface(t, surface) for t in chosen]
        out.append((_title(labels, g), labels))
    return out


def _surface(term: str, surface: dict[str, Counter]) -> str:
    forms = surface.get(term)
    if not forms:
        return term
    # The most common written form; lower-case unless the authors write it otherwise (LoRA, Mamba).
    best = forms.most_common(1)[0][0]
    lower = sum(n for f, n in forms.items() if f == f.lower())
    if lower * 2 >= sum(forms.values()):
        return best.lower()
    return best


def _title(labels: list[str], papers: list) -> str:
    if not labels:
        return papers[0].title if papers else "Other"
    text = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return text[0].upper() + text[1:]

