"""Citation check: parse [n] markers, drop the ones that resolve to no source, find each citation's
evidence sentence in the cited abstract and say whether it supports the sentence that cites it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rag.records import Citation, Paper
from rag.reading.sentences import split_sentences

_MARK = re.compile(r"\[\s*(\d+(?:\s*(?:[-–,;]|and)\s*\d+)*)\s*\]")
# A citation written after the full stop ("... works. [2]") belongs to the sentence before it.
_TRAILING = re.compile(r"([.!?])\s*((?:\[\s*\d[^\]]*\]\s*)+)(?=\s|$)")

# Cosine (MiniLM) at or above which a cited abstract's best sentence is taken to support a sentence;
# a verbatim quote scores 1.0, a faithful paraphrase 0.6-0.9, an unrelated claim on the same topic < 0.5.
SUPPORT_THRESHOLD = 0.55


def parse_numbers(inner: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*(?:[,;]|and)\s*", inner):
        m = re.match(r"^(\d+)\s*[-–]\s*(\d+)$", part.strip())
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if 0 < b - a < 20:
                out.extend(range(a, b + 1))
                continue
        if part.strip().isdigit():
            out.append(int(part.strip()))
    return out


_MATH = re.compile(r"\$[^$]{1,400}\$")


def find_marks(text: str) -> list[re.Match]:
    """Citation marks outside $...$ math (where "[0,1]" is an interval, not sources 0 and 1)."""
    math = [m.span() for m in _MATH.finditer(text)]
    return [m for m in _MARK.finditer(text) if not any(a <= m.start() < b for a, b in math)]


def strip_marks(text: str) -> str:
    for m in reversed(find_marks(text)):
        text = text[: m.start()] + text[m.end():]
    return re.sub(r"\s+([.,;:!?])", r"\1", text).strip()


def quote(text: str) -> str:
    """Source text made safe to quote in an answer: a `[n]` the abstract itself holds (its own reference
    list, or one planted to borrow another paper's authority) must never read as the answer's citation.
    Reference-like marks ("[2]", "[3-5]") are dropped; ones holding a 0 are intervals ("[0, 1]") and
    keep their numbers in parentheses. Math ($...$) is left alone, as find_marks does."""
    marks = find_marks(text)
    if not marks:
        return text
    for m in reversed(marks):
        nums = re.findall(r"\d+", m.group(1))
        repl = f"({m.group(1)})" if any(int(n) == 0 for n in nums) else ""
        text = text[: m.start()] + repl + text[m.end():]
    return re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


@dataclass
class CheckedAnswer:
    text: str
    citations: list[Citation] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    sentences: list[tuple[str, list[int]]] = field(default_factory=list)  # (sentence, citation numbers)


def _similarities(embedder, claims: list[str], papers: list[Paper]) -> tuple[list[list[str]], list[np.ndarray]]:
    """For each paper, its sentences and a (claims x sentences) cosine matrix."""
    sents = [split_sentences(p.abstract) or [p.abstract] for p in papers]
    flat = [s for ss in sents for s in ss]
    vecs = embedder.embed_array(claims + flat) if (claims and flat) else None
    mats = []
    if vecs is None:
        return sents, [np.zeros((len(claims), len(ss))) for ss in sents]
    cv, sv = vecs[: len(claims)], vecs[len(claims):]
    i = 0
    for ss in sents:
        mats.append(cv @ sv[i : i + len(ss)].T)
        i += len(ss)
    return sents, mats


def check(text: str, sources: list[Paper], embedder, require_citations: bool,
          threshold: float = SUPPORT_THRESHOLD) -> CheckedAnswer:
    """Rewrite an answer so that only resolvable citations remain, renumbered 1..m in order of use."""
    flags: list[str] = []
    text = _TRAILING.sub(lambda m: f" {m.group(2).strip()}{m.group(1)}", text.strip())
    raw_sentences = split_sentences(text)
    parsed: list[tuple[str, list[int]]] = []
    for s in raw_sentences:
        nums: list[int] = []
        for m in find_marks(s):
            for n in parse_numbers(m.group(1)):
                if 1 <= n <= len(sources):
                    if n not in nums:
                        nums.append(n)
                else:
                    flags.append(f"removed citation [{n}]: there is no source {n}")
        parsed.append((strip_marks(s), nums))

    # Renumber: the first source cited becomes [1], and so on.
    order: list[int] = []
    for _, nums in parsed:
        for n in nums:
            if n not in order:
                order.append(n)
    renum = {src: i + 1 for i, src in enumerate(order)}
    cited_papers = [sources[n - 1] for n in order]
    claims = [s for s, _ in parsed]
    sents, mats = _similarities(embedder, claims, cited_papers)

    best: dict[int, tuple[float, str]] = {}
    supporting: dict[int, list[str]] = {}  # every supporting sentence per citation (several answer sentences may cite one paper)
    out_sentences: list[tuple[str, list[int]]] = []
    pieces: list[str] = []
    for ci, (s, nums) in enumerate(parsed):
        new = [renum[n] for n in nums]
        for n in nums:
            j = order.index(n)
            row = mats[j][ci] if mats[j].size else np.zeros(0)
            if row.size:
                k = int(np.argmax(row))
                sim, ev = float(row[k]), sents[j][k]
            else:
                sim, ev = 0.0, ""
            if sim < threshold:
                flags.append(f"not supported by [{renum[n]}]: “{s}”")
            if renum[n] not in best or sim > best[renum[n]][0]:
                best[renum[n]] = (sim, ev)
            if sim >= threshold and ev:
                supporting.setdefault(renum[n], []).append(ev)
        if not nums and require_citations:
            flags.append(f"uncited: “{s}”")
        out_sentences.append((s, new))
        marks = "".join(f"[{n}]" for n in new)
        if marks:
            body = s.rstrip()
            end = body[-1] if body and body[-1] in ".!?" else ""
            body = body[:-1] if end else body
            pieces.append(f"{body} {marks}{end or '.'}")
        else:
            pieces.append(s)
    citations = [
        Citation(n=renum[src], paper=sources[src - 1], evidence=best[renum[src]][1],
                 supported=best[renum[src]][0] >= threshold, score=best[renum[src]][0],
                 more_evidence=[e for e in dict.fromkeys(supporting.get(renum[src], [])) if e != best[renum[src]][1]])
        for src in order
    ]
    return CheckedAnswer(text=" ".join(pieces), citations=citations, flags=flags, sentences=out_sentences)
