"""Cite: the abstracts that bear on a claim, best first, each with its evidence sentence(s), a score and a
stance (supports / contradicts / related).

The claim is searched like any query; each candidate's sentences are ranked against the claim
(rank_sentences; the sentence quoted also weighs the answer scorer's probability and the claim's rare
words), the candidates re-ranked by retrieval score and best sentence, and a paper counts as
evidence when its absolute evidence score (best sentence and best chunk) reaches the threshold chosen on
SciFact train. Evidence passes the same citation check as ask's answers.

Stance: an LLM judges it with prompts/cite_stance.txt; without one every paper is `related` — similarity
cannot tell support from contradiction (a negated claim scores as high as the claim itself, and a
negation-word mismatch is no honest signal either), so the extractive mode does not pretend to.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, Field

from rag.exports.terminal import readable
from rag.reading.answer_scorer import probabilities
from rag.reading.citation_grades import grade_scores, is_quoted
from rag.reading.grades import content_stems
from rag.reading.citations import check, strip_marks
from rag.tasks.extractive import rank_sentences, sentences_of
from rag.library.library import Library
from rag.prompts import load_prompt
from rag.records import Hit, Paper
from rag.library.retrieval import Filters, check_k, search
from rag.reading.roles import roles_of
from rag.settings import Settings, get_settings

NOT_FOUND_TEXT = "no supporting abstract found"
STANCES = ("supports", "contradicts", "related")

# Chosen on the 505 SciFact train claims with evidence (bench/scifact_cite.py --tune; z-score fusion,
# 500-character chunks) and checked on 16 claims reworded from seed abstracts:
# - candidates: the CANDIDATES best retrieval hits (10 rank as well as 20 or 30, and embed a third);
# - order: RANK_FUSED * retrieval score (min-max over the candidates) + (1 - RANK_FUSED) * the best
#   sentence's score from rank_sentences (cosine plus a share for repeated content words). On train:
#   R@3 0.910 / nDCG@10 0.905, retrieval order 0.909 / 0.904, sentences alone 0.861 / 0.852 -- retrieval
#   already does nearly all of it; the sentence share only breaks near-ties;
# - found: a paper is evidence when its evidence score, 0.5 * best sentence + 0.5 * best chunk cosine (both
#   absolute, unlike the retrieval score), reaches FOUND_THRESHOLD, the highest threshold at which 98 % of
#   train claims whose annotated abstract is in the library still find evidence. On the seeds all 16
#   reworded claims find theirs, and 10 of 12 claims the seeds do not hold find none. Claims whose annotated
#   abstracts are taken out of SciFact still find some 89 % of the time: its corpus is built around the
#   claims' topics, so a neighbouring abstract nearly always bears on them (the stance, not this
#   threshold, says whether it supports). Balanced accuracy on that split peaks (0.72) at a threshold of
#   0.72, where a fifth of the claims whose abstract is present would be told "no supporting abstract found".
# - the quoted sentence: the best by (1 - EVIDENCE_SCORER_WEIGHT) * (that score + a prior by its role,
#   EVIDENCE_ROLE_PRIOR: a claim is borne out or refuted by what a paper found, seldom by its background)
#   + EVIDENCE_SCORER_WEIGHT * the answer scorer's probability (rag.reading.answer_scorer, the claim as the
#   question) + RARE_TERM_WEIGHT * the share of the claim's rare words it holds + NUMBER_WEIGHT when it
#   repeats a number of the claim (rare_terms: a word few of the abstract's sentences hold -- a gene, a
#   drug, a cohort -- singles out the sentence that reports on it, which cosine and the plain word share
#   blur). Chosen on the 564 pairs of a SciFact train claim and its annotated abstract (bench/cite_sentence.py;
#   the share of quoted sentences that are labelled rationale sentences): relevance + prior 0.631,
#   the scorer alone 0.598, the blend 0.649, with the rare words and numbers 0.670; on dev (209 pairs, never
#   tuned on) 0.598, 0.545, 0.627 and 0.646. The paper's scores (order, found) use none of it; the grade is
#   the scorer's probability for the quoted sentence.
EVIDENCE_ROLE_PRIOR = {"result": 0.02, "method": 0.02, "background": -0.15}
EVIDENCE_SCORER_WEIGHT = 0.3
RARE_TERM_WEIGHT = 0.1
NUMBER_WEIGHT = 0.05
CANDIDATES = 10
RANK_FUSED = 0.8
EVIDENCE_SENTENCE_WEIGHT = 0.5
FOUND_THRESHOLD = 0.54
# A second evidence sentence is shown when it is nearly as close to the claim as the first.
SECOND_SENTENCE_GAP = 0.05


class Evidence(BaseModel):
    n: int
    paper: Paper
    sentence: str  # the best evidence sentence, as the citation check found it
    sentences: list[str] = Field(default_factory=list)  # one or two, best first
    roles: list[str] = Field(default_factory=list)  # each evidence sentence's rhetorical role (rag.reading.roles)
    score: float  # the ranking score (best first)
    evidence_score: float = 0.0  # absolute: what the found threshold is applied to
    stance: str = "related"
    supported: bool = False  # the citation check's verdict for the evidence sentence
    # How well the evidence bears on the claim, graded as answers' citations are (rag.reading.citation_grades).
    grade: Literal["answers", "related", "weak"] | None = None
    grade_score: float = 0.0
    quoted: bool = False  # every evidence sentence is verbatim in the abstract
    sentence_score: float = 0.0
    retrieval_score: float = 0.0

    def as_json(self) -> dict:
        p = self.paper
        return {
            "n": self.n, "paper_id": p.paper_id, "title": p.title, "title_derived": p.title_derived,
            "venue": p.venue, "year": p.year, "source": p.source, "position": p.position, "url": p.url,
            "sentence": self.sentence, "sentences": self.sentences, "roles": self.roles,
            "score": round(self.score, 6),
            "evidence_score": round(self.evidence_score, 6), "stance": self.stance, "supported": self.supported,
            "grade": self.grade, "grade_score": round(self.grade_score, 4), "quoted": self.quoted,
        }


class CiteResult(BaseModel):
    claim: str
    found: bool
    evidence: list[Evidence] = Field(default_factory=list)
    nearest: list[Evidence] = Field(default_factory=list)  # when nothing passes the threshold
    mode: str = "extractive"
    message: str = ""
    flags: list[str] = Field(default_factory=list)

    def as_json(self) -> dict:
        out = {
            "claim": self.claim,
            "found": self.found,
            "evidence": [e.as_json() for e in self.evidence],
            "mode": self.mode,
            "flags": self.flags,
        }
        if not self.found:
            out["message"] = self.message
            out["nearest"] = [e.as_json() for e in self.nearest]
        return out

    def render_text(self) -> str:
        """The evidence for a terminal: emphasis plain and TeX as Unicode (rag.exports.terminal); as_json keeps it raw."""
        lines = [f"Claim: {self.claim}", ""]
        if not self.found:
            lines.append(self.message[:1].upper() + self.message[1:] + ".")
            if self.nearest:
                lines += ["", "Nearest papers:"]
                for e in self.nearest:
                    lines.append(f"  - [{e.score:.2f}] {_ref(e.paper)}")
                    lines.append(f"      “{readable(e.sentence)}”")
            return "\n".join(lines)
        for e in self.evidence:
            grade = f"  [{e.grade} {e.grade_score:.2f}]" if e.grade else ""
            lines.append(f"[{e.n}] {e.stance.upper():11} {e.score:.2f}  {_ref(e.paper)}{grade}")
            for s in e.sentences or [e.sentence]:
                lines.append(f"      “{readable(s)}”")
        if self.mode == "extractive":
            lines += ["", "(stance is `related` without a language model: similarity cannot tell support from "
                          "contradiction; set PAPERCHAT_LLM=openai to judge it)"]
        return "\n".join(lines)


def _ref(p: Paper) -> str:
    where = f" ({p.source}:{p.position})" if p.source else ""
    pub = f"{p.venue} {p.year or ''}".strip()
    return f"{readable(p.title)}{'*' if p.title_derived else ''}" + (f" — {pub}" if pub else "") + where


def clean_claim(claim: str) -> str:
    """The claim as searched: a draft's own citation marks removed, whitespace folded."""
    return re.sub(r"\s+", " ", strip_marks(claim)).strip()


def rank_evidence(claim: str, library: Library, k: int = 5, filters: Filters | None = None,
                  candidates: int = CANDIDATES, rank_fused: float = RANK_FUSED,
                  settings: Settings | None = None) -> list[Evidence]:
    """Every candidate paper scored for the claim, best first, at most k (no threshold, no stance)."""

    text = clean_claim(claim)
    hits = search(library, text, max(k, candidates), filters)
    if not hits:
        return []
    emb = library.text_embedder
    emb.prime([h.paper for h in hits])  # sentence vectors pooled in their chunks (rag.library.embcache)
    ranked = rank_sentences(text, hits, emb)
    retrieval = minmax([h.score for h in hits])  # the fusion's own scale (z-scores, RRF...) made 0..1
    scored: list[tuple[float, Hit, list[tuple[float, str]]]] = []
    for h, r, f in zip(hits, ranked, retrieval):
        best = r[0][0] if r else 0.0
        scored.append((rank_fused * f + (1 - rank_fused) * best, h, r))
    scored.sort(key=lambda x: (-x[0], x[1].paper.paper_id))
    scored = scored[: max(k, 1)]
    # The citation check: the claim cites every candidate; it resolves each and finds its evidence sentence.
    marks = "".join(f"[{i}]" for i in range(1, len(scored) + 1))
    checked = check(" ".join(f"{s} {marks}." for s in _claim_sentences(text)), [h.paper for _, h, _ in scored],
                    emb, require_citations=True)
    by_paper = {c.paper.paper_id: c for c in checked.citations}
    papers = [h.paper for _, h, _ in scored]
    abstracts = [sentences_of(p) for p in papers]
    roles = roles_of(papers, emb)
    # The grade: the answer scorer's probability with the claim as the question (trained on SciFact train
    # claims and their rationale sentences among others; rag.reading.answer_scorer).
    probs = probabilities(text, abstracts, emb, roles)
    out: list[Evidence] = []
    w, sw = EVIDENCE_SENTENCE_WEIGHT, EVIDENCE_SCORER_WEIGHT
    a = (settings or get_settings()).ask
    floor, answers_at = a.floor, a.answers_at
    for i, ((score, h, r), ss, rs, ps) in enumerate(zip(scored, abstracts, roles, probs), 1):
        c = by_paper.get(h.paper.paper_id)
        if c is None or not c.evidence:
            continue  # nothing in the abstract to show: not evidence
        best = r[0][0] if r else 0.0
        role_of = dict(zip(ss, rs))
        prob = dict(zip(ss, (float(p) for p in ps)))
        # rank_sentences' score (it also weighs the rare names a claim repeats, which MiniLM under-rates)
        # leaning to findings by role, blended with the answer scorer's probability; the runner-up too when
        # it is nearly as high.
        terms = dict(zip(ss, rare_terms(text, ss)))
        lean = sorted((((1 - sw) * (sim + EVIDENCE_ROLE_PRIOR.get(role_of.get(x, ""), 0.0))
                        + sw * prob.get(x, 0.0) + _terms_score(terms.get(x, (0.0, False))), x) for sim, x in r),
                      key=lambda t: -t[0])
        top = lean[0][0] if lean else 0.0
        sentences = [x for sim, x in lean[:2] if sim >= top - SECOND_SENTENCE_GAP] or [c.evidence]
        g, _ = grade_scores([prob.get(x, 0.0) for x in sentences], floor, answers_at)
        out.append(Evidence(n=i, paper=h.paper, sentence=sentences[0], sentences=sentences,
                            roles=[role_of.get(x, "") for x in sentences], score=score,
                            evidence_score=w * best + (1 - w) * h.dense, supported=c.supported,
                            grade=g.grade, grade_score=g.score, quoted=is_quoted(h.paper.abstract, sentences),
                            sentence_score=best, retrieval_score=h.score))
    return out


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def rare_terms(claim: str, sentences: list[str]) -> list[tuple[float, bool]]:
    """Per sentence of one abstract: the share of the claim's words that it holds, each word weighted by how
    rare it is among the abstract's sentences (log((n + 1) / (sentences holding it + 0.5))), and whether it
    repeats a number of the claim."""
    q = content_stems(claim)
    stems = [content_stems(x) for x in sentences]
    n = len(stems)
    idf = {t: math.log((n + 1) / (df + 0.5)) for t in q if (df := sum(t in x for x in stems))}
    total = sum(idf.values()) or 1.0
    numbers = set(_NUMBER.findall(claim))
    return [(sum(idf.get(t, 0.0) for t in q & x) / total, bool(numbers & set(_NUMBER.findall(sentence))))
            for x, sentence in zip(stems, sentences)]


def _terms_score(t: tuple[float, bool]) -> float:
    return RARE_TERM_WEIGHT * t[0] + NUMBER_WEIGHT * t[1]


def minmax(values: list[float]) -> list[float]:
    lo, hi = min(values, default=0.0), max(values, default=0.0)
    return [(v - lo) / (hi - lo) if hi > lo else 1.0 for v in values]


def _claim_sentences(text: str) -> list[str]:
    from rag.reading.sentences import split_sentences

    return [s.rstrip(".!? ") for s in split_sentences(text)] or [text.rstrip(".!? ")]


def cite(claim: str, library: Library, settings: Settings | None = None, filters: Filters | None = None,
         k: int = 5, model=None, threshold: float = FOUND_THRESHOLD) -> CiteResult:
    """Abstracts that bear on `claim`; `model` overrides the configured chat model (tests pass fakes)."""
    settings = settings or get_settings()
    use_llm = model is not None or settings.llm == "openai"
    if use_llm and model is None:
        from rag.tasks.llm import make_chat_model

        model = make_chat_model(settings)
    mode = "llm" if use_llm else "extractive"
    check_k(k)
    if not clean_claim(claim):
        return CiteResult(claim=claim, found=False, mode=mode, message=NOT_FOUND_TEXT)
    ranked = rank_evidence(claim, library, k, filters, settings=settings)
    passing = [e for e in ranked if e.evidence_score >= threshold][:k]
    if not passing:
        return CiteResult(claim=claim, found=False, nearest=ranked[:k], mode=mode,
                          message=f"{NOT_FOUND_TEXT} (no abstract reaches the evidence threshold "
                                  f"{threshold:.2f}); the nearest papers are listed below")
    for i, e in enumerate(passing, 1):
        e.n = i
    flags: list[str] = []
    if use_llm:
        stances = judge_stances(clean_claim(claim), passing, model, settings)
        for e, s in zip(passing, stances):
            if s is None:
                flags.append(f"[{e.n}]: the model's stance answer was not one of {', '.join(STANCES)}; shown as related")
                s = "related"
            e.stance = s
    return CiteResult(claim=claim, found=True, evidence=passing, mode=mode, flags=flags)


_STANCE_WORDS = [
    ("contradicts", re.compile(r"\b(contradict\w*|refut\w*|disagree\w*)\b", re.I)),
    ("supports", re.compile(r"\b(support\w*|agree\w*|confirm\w*)\b", re.I)),
    ("related", re.compile(r"\b(related|neither|neutral|unrelated|not enough|insufficient)\b", re.I)),
]


def parse_stance(answer: str) -> str | None:
    """The first stance word in the model's answer (it was asked for one word); None if there is none."""
    text = answer.strip()
    if re.search(r"(?:\bnot|n't|\bneither)\b\W*(?:\w+\W+)?(?:support|contradict)", text, re.I):
        return "related"
    first: tuple[int, str] | None = None
    for stance, rx in _STANCE_WORDS:
        m = rx.search(text)
        if m and (first is None or m.start() < first[0]):
            first = (m.start(), stance)
    return first[1] if first else None


def judge_stances(claim: str, evidence: list[Evidence], model, settings: Settings) -> list[str | None]:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    prompt = ChatPromptTemplate.from_messages([("user", load_prompt("cite_stance", settings.prompts_dir))])
    chain = prompt | model | StrOutputParser()
    clean = lambda s: s.replace("</source", "</ source").replace("<source", "< source")  # noqa: E731
    inputs = [{"claim": claim, "title": clean(e.paper.title), "abstract": clean(e.paper.abstract),
               "sentence": e.sentence} for e in evidence]
    answers = chain.batch(inputs, config={"max_concurrency": 4})
    return [parse_stance(a) for a in answers]
