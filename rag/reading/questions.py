"""What a question asks for: its kind, the sentence roles that answer that kind, and whether it refers back.

    how       "How can …", "How do they …"                    -> method, objective
    finding   "What did they find …", "Does X beat Y?", "How many …" -> result
    why       "Why does …", "What explains …"                 -> result (the finding that explains)
    problem   "What goes wrong …", "What limits …", "… fail …"  -> background, objective
    topic     a bare phrase ("sparse attention for long context") -> objective, method, result
    other     any other question ("What is …", "Which …")     -> objective, method, result
"""

from __future__ import annotations

import re
from typing import Literal

from rag.reading.roles import Role

Kind = Literal["how", "finding", "why", "problem", "topic", "other"]

PREFERRED: dict[Kind, tuple[Role, ...]] = {
    "how": ("method", "objective"),  # CSAbstruct labels a third of "we propose X that does Y" objective
    "finding": ("result",),  # also "How robust / stable / effective is X?": what was found
    "why": ("result",),
    "problem": ("background", "objective"),
    "topic": ("objective", "method", "result"),
    "other": ("objective", "method", "result"),
}

_PROBLEM = re.compile(r"\b(go(es)? wrong|problems?|limitations?|limits?|drawbacks?|challenges?|issues?|bottlenecks?|"
                      r"fail(s|ure|ures)?|weakness(es)?|shortcomings?|difficult(y|ies)|obstacles?|pitfalls?)\b", re.I)
_FINDING = re.compile(r"\b(find|found|findings?|show(n|s)?|results?|prove[sd]?|conclude[sd]?|report(ed|s)?|"
                      r"demonstrate[sd]?|outperform\w*|beat|improve\w*|better|worse|effect)\b", re.I)
_AUX = re.compile(r"^(is|are|was|were|does|do|did|can|could|has|have|had|will|would|should)\b", re.I)
_WH = re.compile(r"^(what|which|who|whom|whose|where|when|how|why|is|are|was|were|does|do|did|can|could|has|"
                 r"have|had|will|would|should|and|but|so)\b", re.I)


def kind(question: str) -> Kind:
    q = question.strip()
    # A follow-up's lead-in ("and", "but", "so", "then") says nothing about what is asked.
    body = re.sub(r"^(and|but|so|then|also|ok(ay)?|now)\b[\s,]*", "", q, flags=re.I)
    low = body.lower()
    if re.match(r"why\b", low) or re.match(r"what (explains|causes|drives|leads to)\b", low):
        return "why"
    if re.match(r"how (many|much|well|often|large|big|small|fast|long|accurate|good|robust|stable|sensitive|"
                r"effective|reliable|tight|close)\b", low):
        return "finding"
    if re.match(r"what (goes|went|can go) wrong\b", low) or (re.match(r"(what|which)\b", low) and _PROBLEM.search(low)):
        return "problem"
    if re.match(r"how\b", low):
        return "how"
    if _AUX.match(low) or (re.match(r"(what|which)\b", low) and _FINDING.search(low)):
        return "finding"
    if not q.endswith("?") and not _WH.match(low):
        return "topic"
    return "other"


def preferred_roles(question: str) -> tuple[Role, ...]:
    return PREFERRED[kind(question)]


_REFERS_BACK = re.compile(
    r"^(and|also|what about|how about|but|so|then|why|how so)\b|"
    r"\b(they|their|theirs|them|it|its|this|that|these|those|the same|the paper|the papers|the authors|"
    r"this paper|these papers|this work|this method|the method|the approach)\b",
    re.I)


def refers_back(question: str) -> bool:
    """A follow-up that leans on the conversation ("they", "their method", "this paper", "and what …?")."""
    return bool(_REFERS_BACK.search(question.strip()))
