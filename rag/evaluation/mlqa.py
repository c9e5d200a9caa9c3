"""The answer and summary yardstick of ../shared/data/mlqa/README.md, as pure functions over plain records.

An answer **hits** when one of its sentences, citation marks removed, contains a marked answer sentence
(both normalised to lower-case alphanumerics) or covers at least 80 % of that sentence's words -- the same
rule whether the answerer quotes (extractive) or restates (a model). Besides the hit: the share of the
answer's cited sentences that cite the question's own paper, and the share of its citations graded
`answers` that quote an answer or partial sentence of the right paper.

A summary's **precision** is the share of its cited papers judged core or related (papers nobody judged
count as off); its **core recall** the core papers it cites over min(core papers, max(papers it cites, 10));
a summary that says the library has no papers on an area with two or more core papers is a failure,
counted apart.

`rag.evaluation.answers` and `rag.evaluation.summaries` run the answerer and feed these; a bench script or
another scorer's experiment calls them the same way (`score_answer(question, answer.as_json())`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from rag.errors import UserError
from rag.reading.citations import find_marks, parse_numbers, strip_marks
from rag.reading.sentences import split_sentences

HIT_SHARE = 0.8  # of a marked sentence's words an answer sentence must hold (README: "at least 80 %")
RECALL_FLOOR = 10  # core recall counts against min(core, max(cited, 10))
FAILURE_CORE = 2  # an empty summary of an area with this many core papers or more is a failure

_WORD = re.compile(r"[^\W_]+")
# A citation written after the full stop ("... works. [2]") belongs to the sentence before it.
_TRAILING = re.compile(r"([.!?])\s*((?:\[\s*\d[^\]]*\]\s*)+)(?=\s|$)")


class EvalQuestion(BaseModel):
    """One question of questions.jsonl: `id` is the paper that answers it."""

    id: str
    q: str
    type: str = "other"
    answer_sentences: list[str]
    partial: list[str] = Field(default_factory=list)
    split: str = ""


class Topic(BaseModel):
    """One research area of topics.jsonl with its judged papers."""

    topic: str
    core: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    off: list[str] = Field(default_factory=list)
    split: str = ""


def _read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        raise UserError(f"{path.parent} is not an mlqa folder: {path.name} is missing")
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UserError(f"{path}:{i} is not JSON ({exc.msg})") from None
    return out


def _of_split(rows: list, split: str | None, path: Path) -> list:
    if split in (None, "", "all"):
        return rows
    picked = [r for r in rows if r.split == split]
    if not picked:
        have = sorted({r.split for r in rows})
        raise UserError(f"no rows of split {split!r} in {path} (it has: {', '.join(have) or 'no splits'})")
    return picked


def load_questions(folder: Path, split: str | None = "test") -> list[EvalQuestion]:
    """The questions of `folder`/questions.jsonl in file order, of one split (None or "all": every one)."""
    path = Path(folder) / "questions.jsonl"
    return _of_split([EvalQuestion(**r) for r in _read_jsonl(path)], split, path)


def load_topics(folder: Path, split: str | None = "test", path: Path | None = None) -> list[Topic]:
    """The research areas of `folder`/topics.jsonl, or of `path`: areas judged over the same library in that
    shape (e.g. bench/areas/natural_names.jsonl), of one split (None or "all": every one)."""
    if path is not None and not Path(path).is_file():
        raise UserError(f"{path} does not exist: give a file of research areas in topics.jsonl's shape")
    path = Path(path) if path is not None else Path(folder) / "topics.jsonl"
    return _of_split([Topic(**r) for r in _read_jsonl(path)], split, path)


# --- sentences --------------------------------------------------------------------------------------------

def words(text: str) -> list[str]:
    """The text's words, lower-case alphanumerics (punctuation, math delimiters and marks dropped)."""
    return _WORD.findall(text.lower())


def normalise(text: str) -> str:
    return " ".join(words(text))


def word_cover(sentence: str, marked: str) -> float:
    """The share of `marked`'s words (counted with repeats) that `sentence` holds."""
    need = Counter(words(marked))
    if not need:
        return 0.0
    have = Counter(words(sentence))
    return sum(min(c, have[w]) for w, c in need.items()) / sum(need.values())


def covers(sentence: str, marked: str, share: float = HIT_SHARE) -> bool:
    """The README's hit rule for one pair: `sentence` contains `marked` (normalised) or holds at least
    `share` of its words. A restatement by a model passes on the second arm."""
    m = normalise(marked)
    if not m:
        return False
    return f" {m} " in f" {normalise(sentence)} " or word_cover(sentence, marked) >= share


def quotes(evidence: str, marked: str) -> bool:
    """Whether a citation's evidence sentence is the marked one: either holds the other (as covers() says).
    Both ways, because paperchat's splitter may cut a marked sentence in two, or join two."""
    return covers(evidence, marked) or covers(marked, evidence)


def cited_sentences(answer_text: str) -> list[tuple[str, list[int]]]:
    """The answer's sentences, citation marks removed, each with the citation numbers it carries."""
    text = _TRAILING.sub(lambda m: f" {m.group(2).strip()}{m.group(1)}", answer_text.strip())
    out = []
    for s in split_sentences(text):
        nums: list[int] = []
        for m in find_marks(s):
            nums += [n for n in parse_numbers(m.group(1)) if n not in nums]
        out.append((strip_marks(s), nums))
    return out


# --- answers ----------------------------------------------------------------------------------------------

class AnswerScore(BaseModel):
    """One answer against its question."""

    id: str
    type: str
    hit: bool  # a sentence quotes or restates a marked answer sentence (the README rule)
    hit_sentence: str = ""  # that sentence of the answer
    hit_cites_own: bool = False  # ... and it cites the question's paper
    cites_own: bool = False  # some citation is the question's paper
    cited_sentences: int = 0  # answer sentences carrying a citation mark
    own_cited_sentences: int = 0  # of them, those citing the question's paper
    answers_citations: int = 0  # citations graded `answers`
    right_answers_citations: int = 0  # of them, the question's paper quoting an answer or partial sentence
    abstained: bool = False
    seconds: float | None = None  # how long the answerer took (None: not timed)



def score_answer(question: EvalQuestion, answer: Mapping, seconds: float | None = None) -> AnswerScore:
    """Score an answer given as `Answer.as_json()` (text with [n] marks; citations with n, paper_id, grade,
    evidence, more_evidence) against its question."""
    if hasattr(answer, "as_json"):
        answer = answer.as_json()
    paper_of = {int(c["n"]): c.get("paper_id") for c in answer.get("citations", [])}
    sents = cited_sentences(answer.get("answer", ""))
    own = question.id
    hit = None
    hit_own = False
    for s, nums in sents:
        if any(covers(s, m) for m in question.answer_sentences):
            hit = hit or s
            hit_own = hit_own or any(paper_of.get(n) == own for n in nums)
    cited = [nums for _, nums in sents if nums]
    marked = [*question.answer_sentences, *question.partial]
    graded = [c for c in answer.get("citations", []) if c.get("grade") == "answers"]
    right = [c for c in graded if c.get("paper_id") == own and any(
        quotes(e, m) for e in [c.get("evidence", ""), *c.get("more_evidence", [])] if e for m in marked)]
    return AnswerScore(id=question.id, type=question.type, hit=hit is not None, hit_sentence=hit or "",
                       hit_cites_own=hit_own, cites_own=own in paper_of.values(),
                       cited_sentences=len(cited), own_cited_sentences=sum(any(paper_of.get(n) == own for n in ns)
                                                                           for ns in cited),
                       answers_citations=len(graded), right_answers_citations=len(right),
                       abstained=bool(answer.get("abstained")), seconds=seconds)


def percentile(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile, linear between ranks (numpy's default); None of nothing."""
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _share(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def answer_figures(scores: Sequence[AnswerScore]) -> dict:
    """The figures of some answers: rates over questions; the two citation shares pooled over sentences and
    citations (None when there are none); latency percentiles in seconds."""
    n = len(scores)
    secs = [s.seconds for s in scores if s.seconds is not None]
    p50, p95 = percentile(secs, 50), percentile(secs, 95)
    return {
        "questions": n,
        "hit": _share(sum(s.hit for s in scores), n),
        "hit_cites_own": _share(sum(s.hit_cites_own for s in scores), n),
        "cites_own": _share(sum(s.cites_own for s in scores), n),
        "own_paper_share": _share(sum(s.own_cited_sentences for s in scores), sum(s.cited_sentences for s in scores)),
        "answers_right": _share(sum(s.right_answers_citations for s in scores), sum(s.answers_citations for s in scores)),
        "answers_citations": sum(s.answers_citations for s in scores),
        "abstained": _share(sum(s.abstained for s in scores), n),
        "p50_seconds": None if p50 is None else round(p50, 3),
        "p95_seconds": None if p95 is None else round(p95, 3),
    }


def figures_by_type(scores: Sequence[AnswerScore]) -> dict:
    """{"overall": answer_figures(all), "by_type": {type: answer_figures(its)}} (types in first-seen order)."""
    types = list(dict.fromkeys(s.type for s in scores))
    return {"overall": answer_figures(scores),
            "by_type": {t: answer_figures([s for s in scores if s.type == t]) for t in types}}


# --- summaries --------------------------------------------------------------------------------------------

class SummaryScore(BaseModel):
    topic: str
    cited: int  # distinct papers the summary cites
    judged_ok: int  # of them, judged core or related
    core_cited: int
    core: int  # core papers of the area
    precision: float | None  # None for an empty summary
    core_recall: float | None  # None for an area without core papers
    empty: bool  # cites nothing (says the library has no papers on it)
    failure: bool  # empty on an area with FAILURE_CORE core papers or more
    seconds: float | None = None


def score_summary(topic: Topic, cited_ids: Sequence[str], abstained: bool = False,
                  seconds: float | None = None) -> SummaryScore:
    """Score a summary by the papers it cites (its reference list) against the area's judgments."""
    cited = list(dict.fromkeys(cited_ids))
    ok = set(topic.core) | set(topic.related)
    core = set(topic.core)
    k_core = sum(p in core for p in cited)
    wanted = min(len(core), max(len(cited), RECALL_FLOOR))
    empty = abstained or not cited
    return SummaryScore(topic=topic.topic, cited=len(cited), judged_ok=sum(p in ok for p in cited),
                        core_cited=k_core, core=len(core),
                        precision=round(sum(p in ok for p in cited) / len(cited), 4) if cited else None,
                        core_recall=round(k_core / wanted, 4) if wanted else None,
                        empty=empty, failure=empty and len(core) >= FAILURE_CORE, seconds=seconds)


def summary_figures(scores: Sequence[SummaryScore]) -> dict:
    """Mean precision over the summaries that cite something, pooled precision, mean core recall over the
    areas with core papers (an empty summary counts 0), empty summaries and failures."""
    prec = [s.precision for s in scores if s.precision is not None]
    rec = [s.core_recall for s in scores if s.core_recall is not None]
    secs = [s.seconds for s in scores if s.seconds is not None]
    p50, p95 = percentile(secs, 50), percentile(secs, 95)
    return {
        "areas": len(scores),
        "precision": round(sum(prec) / len(prec), 4) if prec else None,
        "pooled_precision": _share(sum(s.judged_ok for s in scores), sum(s.cited for s in scores)),
        "core_recall": round(sum(rec) / len(rec), 4) if rec else None,
        "empty": sum(s.empty for s in scores),
        "failures": sum(s.failure for s in scores),
        "cited_per_summary": round(sum(s.cited for s in scores) / len(scores), 2) if scores else None,
        "p50_seconds": None if p50 is None else round(p50, 3),
        "p95_seconds": None if p95 is None else round(p95, 3),
    }
