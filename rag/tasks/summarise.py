"""Summarise a research area: retrieve broadly with diversity, group the papers into themes, write a
cited paragraph per theme and an overview, and list the references (exportable as BibTeX).

Extractive mode (no LLM): themes are clusters of the papers' vectors, named from each cluster's
distinctive terms; each paragraph is made of its papers' own most central, on-topic sentences.
LLM mode: the same themes, then map (one paragraph per theme from its numbered sources) and reduce
(an overview from the theme paragraphs). Every paragraph goes through the citation check.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..citations import CheckedAnswer, check, strip_marks
from ..embcache import CachedEmbedder
from ..library import Library
from ..prompts import load_prompt
from ..records import Citation, Hit, Paper, text_hash
from ..retrieval import Filters, search
from ..sentences import split_sentences
from ..settings import Settings, get_settings
from .ask import format_sources

# Chosen on 28 hand-labelled research areas of the seeds (18 phrases, 10 one- or two-word topics; 69
# area-paper pairs), with z-score fusion and 500-character chunks: a retrieved paper joins the summary when
# its retrieval score is at least FUSED_FLOOR times the best paper's, and it either matches the topic's
# words (BM25 > 0) or the cosine of its best chunk to the topic is at least RELATIVE_FLOOR times the best
# paper's and at least RELEVANCE_FLOOR. Macro recall 0.90 / precision 0.55 on the phrases, 0.98 / 0.66 on
# the short topics (at 0.45: 0.85 / 0.70 and 0.96 / 0.80 — recall is what a reader misses, so the looser won).
CANDIDATES = 30
FUSED_FLOOR = 0.3
RELEVANCE_FLOOR = 0.25
RELATIVE_FLOOR = 0.5
# Whether the library covers the topic at all: one of the 10 best papers matches the topic's words (BM25 > 0)
# with its best chunk at COVER_LEXICAL cosine or more, or reaches COVER_DENSE without sharing a word.
# Chosen on the seeds: the 28 labelled areas reach 0.38-0.72 (one-word topics like "GNN" lowest); 10 areas
# the seeds do not cover reach at most 0.35 with a word in common ("the stock market") and 0.38 without
# ("speech recognition"). A topic's cosines run lower than a question's, so ask's threshold is not reused.
COVER_DENSE = 0.45
COVER_LEXICAL = 0.36
MAX_PAPERS = 15  # after MMR: a summary longer than this stops being one
MMR_LAMBDA = 0.7
MAX_THEMES = 6
NO_PAPERS_TEXT = "The library has no papers on this topic."

_MARKS = re.compile(r"\[(\d+)\]")


# ----------------------------------------------------------------------------------------- results


class Theme(BaseModel):
    title: str
    text: str
    citations: list[Citation] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)  # the distinctive terms the title came from

    def as_json(self) -> dict:
        return {"title": self.title, "text": self.text, "citations": [c.as_json() for c in self.citations],
                "terms": self.terms}


class Summary(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    topic: str
    summary: str  # the overview paragraph
    themes: list[Theme] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)  # the reference list, numbered as cited
    mode: str = "extractive"
    abstained: bool = False
    nearest: list[Hit] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "topic": self.topic,
            "summary": self.summary,
            "themes": [t.as_json() for t in self.themes],
            "citations": [c.as_json() for c in self.citations],
            "mode": self.mode,
            "abstained": self.abstained,
            "nearest": [h.as_json() for h in self.nearest],
            "flags": self.flags,
        }

    def render_text(self) -> str:
        out = [f"Summary: {self.topic}", "", self.summary]
        if self.abstained:
            if self.nearest:
                out += ["", "Nearest papers:"]
                out += [f"  - {_ref_line(h.paper)}" for h in self.nearest]
            return "\n".join(out)
        for i, t in enumerate(self.themes, 1):
            out += ["", f"{i}. {t.title}", t.text]
        if self.citations:
            out += ["", "References"]
            for c in self.citations:
                mark = "" if c.supported else "  (not supported by the abstract)"
                out.append(f"[{c.n}] {_ref_line(c.paper)}{mark}")
            if any(c.paper.title_derived for c in self.citations):
                out.append("* title derived from the abstract")
        return "\n".join(out)


def _ref_line(p: Paper) -> str:
    where = f" ({p.source}:{p.position})" if p.source else ""
    authors = ""
    if p.authors:
        authors = p.authors[0] + (" et al." if len(p.authors) > 1 else "") + ". "
    pub = f"{p.venue} {p.year or ''}".strip()
    return f"{authors}{p.title}{'*' if p.title_derived else ''}" + (f" — {pub}" if pub else "") + where


# ----------------------------------------------------------------------------------------- entry


def summarise(topic: str, library: Library, settings: Settings | None = None, filters: Filters | None = None,
              model=None, k: int = CANDIDATES, on_token: Callable[[str], None] | None = None) -> Summary:
    """Summarise what the library holds on `topic`; `model` overrides the configured chat model (tests pass fakes)."""
    settings = settings or get_settings()
    use_llm = model is not None or settings.llm == "openai"
    if use_llm and model is None:
        from ..llm import make_chat_model

        model = make_chat_model(settings)
    mode = "llm" if use_llm else "extractive"
    hits = search(library, topic, k, filters)
    if not covers_topic(hits):
        return Summary(topic=topic, summary=f"{NO_PAPERS_TEXT} The nearest papers are listed below.",
                       mode=mode, abstained=True, nearest=hits[:5])
    emb = library.text_embedder
    selected, vecs = select_papers(topic, hits, emb)
    groups = cluster(vecs)
    themes = [_ThemeDraft([selected[i] for i in g], vecs[g]) for g in groups]
    # Themes in order of their best paper's relevance (retrieval score); papers inside a theme likewise.
    for t in themes:
        order = sorted(range(len(t.hits)), key=lambda i: -t.hits[i].score)
        t.hits = [t.hits[i] for i in order]
        t.vecs = t.vecs[order]
    themes.sort(key=lambda t: -t.hits[0].score)
    background = [h.paper for h in hits]
    centroids = [_unit(t.vecs.mean(axis=0)) for t in themes]
    names = name_themes([[h.paper for h in t.hits] for t in themes], background, topic, emb, centroids)
    for t, (title, terms) in zip(themes, names):
        t.title, t.terms = title, terms
    if len(themes) == 1:  # the whole area is one theme: its name is the topic
        themes[0].title = topic.strip()[:1].upper() + topic.strip()[1:]
    if use_llm:
        return _summarise_llm(topic, themes, library, settings, model, emb, on_token)
    return _summarise_extractive(topic, themes, library, emb, on_token)


def covers_topic(hits: list[Hit]) -> bool:
    return any(h.dense >= COVER_DENSE or (h.lexical > 0 and h.dense >= COVER_LEXICAL) for h in hits[:10])


class _ThemeDraft:
    def __init__(self, hits: list[Hit], vecs: np.ndarray):
        self.hits = hits
        self.vecs = vecs
        self.title = ""
        self.terms: list[str] = []




def _unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-12)


def paper_text(p: Paper) -> str:
    return f"{p.title}. {p.abstract}" if p.title and not p.title_derived else p.abstract


# ----------------------------------------------------------------------------------------- selection


def select_papers(topic: str, hits: list[Hit], emb: CachedEmbedder, max_papers: int = MAX_PAPERS,
                  floor: float = RELEVANCE_FLOOR, relative: float = RELATIVE_FLOOR, fused: float = FUSED_FLOOR,
                  lam: float = MMR_LAMBDA) -> tuple[list[Hit], np.ndarray]:
    """Papers above the relevance floor, in MMR order (relevance against redundancy), at most max_papers."""
    top = max(h.dense for h in hits)
    rel_score = _relative_scores(hits)
    idx = [i for i, (h, r) in enumerate(zip(hits, rel_score))
           if r >= fused and (h.lexical > 0 or h.dense >= max(floor, relative * top))] or [0]
    keep = [hits[i] for i in idx]
    vecs = emb([paper_text(h.paper) for h in keep])
    rel = np.array([rel_score[i] for i in idx])  # retrieval relevance: the better signal here (see above)
    chosen: list[int] = []
    rest = list(range(len(keep)))
    while rest and len(chosen) < max_papers:
        if not chosen:
            j = max(rest, key=lambda i: rel[i])
        else:
            red = (vecs[rest] @ vecs[chosen].T).max(axis=1)
            scores = lam * rel[rest] - (1 - lam) * red
            j = rest[int(np.argmax(scores))]
        chosen.append(j)
        rest.remove(j)
    return [keep[i] for i in chosen], vecs[chosen]


def _relative_scores(hits: list[Hit]) -> list[float]:
    """Retrieval scores as a share of the best one (min-max when the best is not positive), so the floor
    does not depend on the fusion method's scale (z-scores, min-max or RRF)."""
    s = np.array([h.score for h in hits], dtype=float)
    if s.size == 0:
        return []
    if s.max() > 0:
        return (np.clip(s, 0, None) / s.max()).tolist()
    span = s.max() - s.min()
    return ((s - s.min()) / span if span > 0 else np.ones_like(s)).tolist()


# ----------------------------------------------------------------------------------------- clustering


def _silhouette(d: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette over points (a point alone in its cluster scores 0)."""
    n = len(labels)
    s = np.zeros(n)
    ks = np.unique(labels)
    for i in range(n):
        same = labels == labels[i]
        if same.sum() <= 1:
            continue
        a = d[i, same].sum() / (same.sum() - 1)
        b = min(d[i, labels == k].mean() for k in ks if k != labels[i])
        s[i] = (b - a) / max(a, b) if max(a, b) > 0 else 0.0
    return float(s.mean())


def cluster(vecs: np.ndarray, max_themes: int = MAX_THEMES) -> list[np.ndarray]:
    """Index groups: average-linkage agglomerative clustering on cosine distance of the centred paper
    vectors, the number of groups (2..6) chosen by silhouette. Fewer than 4 papers make one theme."""
    n = len(vecs)
    if n < 4:
        return [np.arange(n)]
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    # Centring removes what every paper shares (the topic itself), so the differences drive the grouping.
    c = vecs - vecs.mean(axis=0, keepdims=True)
    c = c / np.clip(np.linalg.norm(c, axis=1, keepdims=True), 1e-12, None)
    d = np.clip(1.0 - c @ c.T, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    d = (d + d.T) / 2
    z = linkage(squareform(d, checks=False), method="average")
    best, best_labels = -2.0, None
    # Silhouettes of abstract vectors are low and flat (0.05-0.2 on the seeds), so k is kept where
    # themes read well: about 2-5 papers each, then the silhouette picks within that range.
    lo, hi = max(2, math.ceil(n / 5)), max(2, min(max_themes, n // 2))
    for k in range(lo, hi + 1):
        labels = fcluster(z, k, criterion="maxclust")
        if len(np.unique(labels)) < 2:
            continue
        s = _silhouette(d, labels)
        if s > best + 1e-9:
            best, best_labels = s, labels
    if best_labels is None:
        return [np.arange(n)]
    return [np.flatnonzero(best_labels == k) for k in np.unique(best_labels)]


# ----------------------------------------------------------------------------------------- naming

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


def name_themes(groups: list[list[Paper]], background: list[Paper], topic: str, emb=None,
                centroids: list[np.ndarray] | None = None, n_terms: int = 2) -> list[tuple[str, list[str]]]:
    """For each group a title from its distinctive terms.

    Candidates are the group's terms that are frequent in its papers and rare in the other groups' and in
    the wider set of retrieved papers (tf-idf style). With an embedder they are then ranked by how close
    the term's vector is to the group's centroid and how far from the other groups' — which prefers
    meaningful phrases ("linear attention", "optimal transport") over frequent fragments."""
    docs = {p.paper_id: p for p in background}
    for g in groups:
        for p in g:
            docs[p.paper_id] = p
    doc_terms: dict[str, Counter] = {}
    surface: dict[str, Counter] = {}
    for pid, p in docs.items():
        ts = _terms(paper_text(p))
        doc_terms[pid] = Counter(t for t, _ in ts)
        for t, s in ts:
            surface.setdefault(t, Counter())[s] += 1
    n_docs = len(docs)
    df = Counter(t for c in doc_terms.values() for t in c)
    topic_words = {w for t, _ in _terms(topic) for w in t.split()}
    out = []
    for gi, g in enumerate(groups):
        ids = [p.paper_id for p in g]
        others = [p.paper_id for gj, h in enumerate(groups) if gj != gi for p in h]
        in_group = Counter(t for pid in ids for t in doc_terms[pid])
        scores: dict[str, float] = {}
        for need in ((2, 1) if len(g) > 1 else (1,)):
            for t, dfc in in_group.items():
                if dfc < need or set(t.split()) <= topic_words:
                    continue
                p_in = dfc / len(ids)
                p_out = sum(1 for pid in others if t in doc_terms[pid]) / max(1, len(others))
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
            if any(words & set(c.split()) for c in chosen) or (
                    " " not in t and (t.endswith(_NOT_NOUN) or t in _GENERIC)):
                continue
            if chosen and rank[t] < 0.6 * rank[chosen[0]]:
                break  # a second label only when it describes the group nearly as well as the first
            chosen.append(t)
            if len(chosen) >= n_terms:
                break
        if len(g) == 1 and g[0].title and len(g[0].title.split()) <= 8:
            out.append((g[0].title, []))  # one paper: its own (short) title names it best
            continue
        if not chosen:  # no good label: the best phrase, else the lead paper's title if short, else the best word
            phrases = [t for t in cands if " " in t]
            lead = g[0].title if g else ""
            if phrases:
                chosen = phrases[:1]
            elif lead and len(lead.split()) <= 6:
                out.append((lead, []))
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


def _title(labels: list[str], papers: list[Paper]) -> str:
    if not labels:
        return papers[0].title if papers else "Other"
    text = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return text[0].upper() + text[1:]


# ----------------------------------------------------------------------------------------- assembly


class _Part:
    """A checked piece of text whose [n] refer to its own source list."""

    def __init__(self, checked: CheckedAnswer):
        self.checked = checked
        self.local = {c.n: c for c in checked.citations}


def _assemble(overview: _Part | None, themes: list[tuple[_ThemeDraft, _Part]]) -> tuple[str, list[Theme], list[Citation]]:
    """Number the references by first use (overview first, then themes in order) and rewrite the marks."""
    parts = ([overview] if overview else []) + [p for _, p in themes]
    number: dict[str, int] = {}
    best: dict[str, Citation] = {}
    for part in parts:
        for n in sorted(part.local):
            c = part.local[n]
            pid = c.paper.paper_id
            if pid not in number:
                number[pid] = len(number) + 1
            if pid not in best or c.score > best[pid].score:
                best[pid] = c

    def rewrite(part: _Part) -> str:
        return _MARKS.sub(lambda m: f"[{number[part.local[int(m.group(1))].paper.paper_id]}]"
                          if int(m.group(1)) in part.local else "", part.checked.text)

    def renum(part: _Part) -> list[Citation]:
        cs = [c.model_copy(update={"n": number[c.paper.paper_id]}) for c in part.local.values()]
        return sorted(cs, key=lambda c: c.n)

    out_themes = [Theme(title=t.title, text=rewrite(p), citations=renum(p), terms=t.terms) for t, p in themes]
    refs = sorted((c.model_copy(update={"n": number[pid]}) for pid, c in best.items()), key=lambda c: c.n)
    return (rewrite(overview) if overview else ""), out_themes, refs


def _flags(parts: list[_Part]) -> list[str]:
    out: list[str] = []
    for p in parts:
        for f in p.checked.flags:
            # Local numbers mean nothing to the reader once renumbered; keep the message, drop the number.
            out.append(re.sub(r"\[\d+\]", "[?]", f) if f.startswith("not supported") else f)
    return list(dict.fromkeys(out))


def _no_end(s: str) -> str:
    """The sentence without its final punctuation, so a citation mark can go before it. A sentence that
    ends inside brackets or quotes ("... length correction,...)") loses the stop inside them too, or the
    sentence splitter would cut the mark off into a sentence of its own."""
    s = s.rstrip()
    m = re.search(r"[.!?]+([\"'”’)\]]+)$", s)
    if m:
        return s[: m.start()] + m.group(1)
    return s[:-1] if s and s[-1] in ".!?" else s


_CONNECTIVE = re.compile(
    r"^(?:next|then|finally|moreover|furthermore|additionally|importantly|however|thus|therefore|hence|"
    r"consequently|specifically|in particular|in addition|to (?:this|that) end|to address (?:this|these)|"
    r"as a result|building on|second(?:ly)?|third(?:ly)?|also|this|these|such|it|they)\b", re.IGNORECASE)


_SETUP = re.compile(r"^(?:OBJECTIVES?|BACKGROUND|METHODS?|DESIGN|SETTING|PARTICIPANTS|INTRODUCTION|AIMS?|PURPOSE)\b")


def _has_marks(s: str) -> bool:
    # Sentences with bracketed numbers ("the box $[0,1]^n$") would be read as citations by the check.
    return bool(re.search(r"\[\s*\d", s))


# ----------------------------------------------------------------------------------------- extractive


def _sentence_table(topic: str, papers: list[Paper], paper_vecs: np.ndarray, emb: CachedEmbedder):
    """Per paper: its sentences, their cosine to the topic and to the paper as a whole."""
    sents = [split_sentences(p.abstract) or [p.abstract] for p in papers]
    flat = [s for ss in sents for s in ss]
    v = emb([topic] + flat)
    tv, sv = v[0], v[1:]
    table, i = [], 0
    for j, ss in enumerate(sents):
        block = sv[i : i + len(ss)]
        table.append((ss, block @ tv, block @ paper_vecs[j]))
        i += len(ss)
    return table


def _pick(ss: list[str], topical: np.ndarray, central: np.ndarray, avoid: set[str]) -> tuple[str, float]:
    """The paper's sentence that is both central to it and on the topic; skips what is already used,
    fragments, run-ons and sentences the citation check would misread."""
    best, best_s = ss[0], -9.0
    for s, a, b in zip(ss, topical, central):
        score = 0.5 * float(a) + 0.5 * float(b)
        if s in avoid:
            score -= 2.0
        if _has_marks(s):
            score -= 1.0
        if len(s) < 40 or len(s) > 450:
            score -= 0.3
        if _CONNECTIVE.match(s):  # leans on the sentence before it, which the reader does not see
            score -= 0.15
        if _SETUP.match(s):  # a structured abstract's aim or method, not what it found
            score -= 0.1
        if score > best_s:
            best, best_s = s, score
    return best, best_s


def _summarise_extractive(topic: str, themes: list[_ThemeDraft], library: Library, emb: CachedEmbedder,
                          on_token) -> Summary:
    all_papers = [h.paper for t in themes for h in t.hits]
    index = {p.paper_id: i for i, p in enumerate(all_papers)}
    all_vecs = np.concatenate([t.vecs for t in themes]) if themes else np.zeros((0, 1))
    table = _sentence_table(topic, all_papers, all_vecs, emb)
    used: set[str] = set()
    theme_parts: list[tuple[_ThemeDraft, _Part]] = []
    for t in themes:
        pieces = []
        for h in t.hits:
            i = index[h.paper.paper_id]
            ss, topical, central = table[i]
            s, _ = _pick(ss, topical, central, used)
            used.add(s)
            pieces.append(f"{_no_end(s)} [{i + 1}].")
        text = " ".join(pieces)
        theme_parts.append((t, _Part(check(text, all_papers, emb, require_citations=False))))
    # Overview: how the area divides, then each leading theme's most on-topic sentence not used yet.
    counts = ", ".join(f"{' and '.join(t.terms) if t.terms else t.title} ({len(t.hits)})" for t in themes)
    n = len(all_papers)
    lead = (f"The library holds {n} paper{'s' if n != 1 else ''} on “{topic}”"
            + (f", in {len(themes)} themes: {counts}." if len(themes) > 1 else "."))
    pieces = [lead]
    # Each theme's lead paper first, then the next papers of the first themes, up to three sentences.
    order_papers = [t.hits[0] for t in themes[:3]] + [h for t in themes for h in t.hits[1:]]
    for h in order_papers[: max(1, min(3, len(all_papers) - 1 if len(all_papers) > 1 else 1))]:
        i = index[h.paper.paper_id]
        ss, topical, _ = table[i]
        order = np.argsort(-topical)
        fresh = [ss[j] for j in order if ss[j] not in used and not _has_marks(ss[j]) and not _CONNECTIVE.match(ss[j])]
        cand = fresh or [ss[int(order[0])]]
        used.add(cand[0])
        pieces.append(f"{_no_end(cand[0])} [{i + 1}].")
    overview = _Part(check(" ".join(pieces), all_papers, emb, require_citations=False))
    summary, out_themes, refs = _assemble(overview, theme_parts)
    if on_token:
        on_token(summary)
    return Summary(topic=topic, summary=summary, themes=out_themes, citations=refs, mode="extractive",
                   flags=_flags([overview] + [p for _, p in theme_parts]))


# ----------------------------------------------------------------------------------------- LLM


def _summarise_llm(topic: str, themes: list[_ThemeDraft], library: Library, settings: Settings, model,
                   emb: CachedEmbedder, on_token) -> Summary:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    pd = settings.prompts_dir
    map_chain = ChatPromptTemplate.from_messages([
        ("system", load_prompt("summarise_system", pd)),
        ("user", load_prompt("summarise_map", pd)),
    ]) | model | StrOutputParser()
    inputs = [{"topic": topic, "hint": ", ".join(t.terms) or t.title,
               "sources": format_sources(t.hits, pd)} for t in themes]
    drafts = map_chain.batch(inputs, config={"max_concurrency": 4})
    flags: list[str] = []
    theme_parts: list[tuple[_ThemeDraft, _Part]] = []
    for t, draft in zip(themes, drafts):
        title, body = _split_title(draft)
        if title:
            t.title = title
        part = _Part(check(body, [h.paper for h in t.hits], emb, require_citations=True))
        if not part.checked.citations:
            flags.append(f"theme “{t.title}”: the model cited none of its sources; the paragraph is shown unverified")
        theme_parts.append((t, part))
        if on_token:
            on_token(f"{t.title}\n{part.checked.text}\n\n")
    # Reduce: the overview sees the theme paragraphs with provisional global numbers.
    _, provisional, refs = _assemble(None, theme_parts)
    sources = [c.paper for c in refs]
    paragraphs = "\n\n".join(f"Theme {i}: {th.title}\n{th.text}" for i, th in enumerate(provisional, 1))
    reduce_chain = ChatPromptTemplate.from_messages([
        ("system", load_prompt("summarise_system", pd)),
        ("user", load_prompt("summarise_reduce", pd)),
    ]) | model | StrOutputParser()
    overview_draft = reduce_chain.invoke({"topic": topic, "themes": paragraphs}) if sources else ""
    overview = _Part(check(strip_title(overview_draft), sources, emb, require_citations=True))
    summary, out_themes, refs = _assemble(overview, theme_parts)
    if on_token:
        on_token(summary)
    return Summary(topic=topic, summary=summary, themes=out_themes, citations=refs, mode="llm",
                   flags=flags + _flags([overview] + [p for _, p in theme_parts]))


def _split_title(draft: str) -> tuple[str, str]:
    """'Title: X' on the first line (as the map prompt asks) -> (X, rest); else ('', draft)."""
    lines = draft.strip().splitlines()
    if lines:
        m = re.match(r"^\s*(?:#+\s*)?(?:\*\*)?title(?:\*\*)?\s*:\s*(.+?)\s*$", lines[0], re.IGNORECASE)
        if m:
            title = strip_marks(m.group(1).strip("*# ")).strip()
            return title[:120], "\n".join(lines[1:]).strip()
    return "", draft.strip()


def strip_title(text: str) -> str:
    lines = text.strip().splitlines()
    if lines and re.match(r"^\s*(?:#+\s*)?(?:\*\*)?(overview|summary)(?:\*\*)?\s*:?\s*$", lines[0], re.IGNORECASE):
        lines = lines[1:]
    return "\n".join(lines).strip()


# ----------------------------------------------------------------------------------------- BibTeX


def _ascii(s: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii")


_KEY_SKIP = {"a", "an", "the", "on", "of", "for", "in", "and", "to", "with", "towards", "toward", "via", "we"}


def bibtex_key(p: Paper) -> str:
    """Stable: first author's surname (else the title's first significant word), year, and a short
    hash of the paper id, so the same paper always gets the same key."""
    base = ""
    if p.authors:
        name = p.authors[0].strip()
        surname = name.split(",")[0] if "," in name else (name.split()[-1] if name.split() else "")
        base = re.sub(r"[^A-Za-z]", "", _ascii(surname)).lower()
    if not base:
        for w in re.findall(r"[A-Za-z]+", _ascii(p.title or p.abstract)):
            if w.lower() not in _KEY_SKIP and len(w) > 1:
                base = w.lower()
                break
    return f"{base or 'paper'}{p.year or ''}{text_hash(p.paper_id, 4)}"


def _balance(text: str) -> str:
    """Replace braces that do not pair up (BibTeX counts braces, escaped or not)."""
    out: list[str] = []
    open_at: list[int] = []
    for ch in text:
        if ch == "{":
            open_at.append(len(out))
            out.append(ch)
        elif ch == "}":
            if open_at:
                open_at.pop()
                out.append(ch)
            else:
                out.append(r"\textbraceright{}")
        else:
            out.append(ch)
    for i in open_at:
        out[i] = r"\textbraceleft{}"
    return "".join(out)


def bibtex_escape(text: str) -> str:
    """LaTeX-safe field text: math ($...$) kept as written, & % # _ ~ ^ escaped outside it, braces balanced."""
    text = re.sub(r"\s+", " ", text or "").strip()
    pieces = re.split(r"(\$[^$]+\$)", text)
    out = []
    for i, piece in enumerate(pieces):
        if i % 2 == 1:
            out.append(piece)
            continue
        piece = piece.replace("$", r"\$")
        piece = re.sub(r"(?<!\\)([&%#_])", r"\\\1", piece)
        piece = re.sub(r"(?<!\\)~", r"\\textasciitilde{}", piece)
        piece = re.sub(r"(?<!\\)\^", r"\\textasciicircum{}", piece)
        out.append(piece)
    return _balance("".join(out))


def _bib_authors(authors: list[str]) -> str:
    return " and ".join(bibtex_escape(a) for a in authors)


def to_bibtex(citations: list[Citation]) -> str:
    """The reference list as BibTeX: @inproceedings when the venue is known, else @misc."""
    entries: list[str] = []
    seen: set[str] = set()
    for c in citations:
        p = c.paper
        key = bibtex_key(p)
        if key in seen:  # two papers, same surname, year and 4-hex hash: keep both, keys still stable
            key = f"{key}-{text_hash(p.paper_id, 8)}"
        seen.add(key)
        fields: list[tuple[str, str]] = [("title", "{" + bibtex_escape(p.title or p.paper_id) + "}")]
        if p.authors:
            fields.append(("author", _bib_authors(p.authors)))
        if p.venue:
            fields.append(("booktitle", bibtex_escape(p.venue)))
        if p.year:
            fields.append(("year", str(p.year)))
        if p.url:
            fields.append(("url", _balance(p.url.replace("%", r"\%").replace("#", r"\#"))))
        if p.abstract:
            fields.append(("abstract", bibtex_escape(p.abstract)))
        notes = []
        if p.title_derived:
            notes.append("title derived from the abstract")
        if p.source:
            notes.append(f"{bibtex_escape(p.source)}, record {p.position}")
        if notes:
            fields.append(("note", "; ".join(notes)))
        kind = "inproceedings" if p.venue else "misc"
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        entries.append(f"@{kind}{{{key},\n{body}\n}}\n")
    return "\n".join(entries)
