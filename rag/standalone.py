"""Whether a sentence can be quoted on its own: no connective or anaphor leaning on text the reader does not see.

Answers (rag.extractive) and summaries (rag.tasks.summary_writers) quote abstracts sentence by sentence;
a quote opening "To address these challenges, ..." or "These results ..." reads as a dangling reference.
"""

from __future__ import annotations

import re

# A sentence that leans on text the reader does not see: it opens with a connective or an anaphor
# ("As a corollary, ...", "Building on this ...", "Then, ...", "These results ...", "To address this, ...").
# "This paper ..." / "This work ..." name the paper itself and stand alone.
_LEANS = re.compile(
    r"^(?:as a (?:corollary|consequence|result)|building (?:on|upon)|based on (?:this|these|that|such)|"
    r"then|next|finally|lastly|moreover|furthermore|further|additionally|besides|likewise|similarly|"
    r"however|nevertheless|nonetheless|yet|still|thus|therefore|hence|consequently|accordingly|"
    r"specifically|in particular|in addition|in contrast|by contrast|conversely|instead|on the other hand|"
    r"to (?:this|that|these) end|to do so|in doing so|doing so|(?:getting|to get|going|to go) there|for (?:this|these|that) (?:reason|purpose)s?|"
    r"to \w+ (?:this|these|that|those|such|both|them|it|the (?:above|aforementioned|former|latter))\b|"
    r"first(?:ly)?(?=,)|on the (?:\w+ )?(?:other )?(?:side|hand)|embracing|"
    r"(?:in|under|with|for|from|given|using) (?:this|these|that|those|such)\b(?! (?:paper|work|study|article)\b)|"
    r"(?:second|third|fourth)(?:ly)?|also|both|that|those|such|it|its|they|their|together|overall|here we also|"
    r"this(?! (?:paper|work|study|article|survey|note|letter|thesis|position paper|manuscript)\b)|these|"
    r"the (?:former|latter|above|aforementioned)|"
    r"we (?:then|next|further|also|additionally|finally|thus|therefore|hence))\b", re.IGNORECASE)
_REFERS_BACK = re.compile(
    r"\b(?:the above|aforementioned|the former|the latter|as (?:mentioned|noted|shown) above|these|those|"
    r"such (?!as\b)|this\b(?!\s+(?:paper|work|study|article|survey|note|letter|thesis|manuscript)\b))", re.IGNORECASE)
_SETUP = re.compile(r"^(?:OBJECTIVES?|BACKGROUND|METHODS?|DESIGN|SETTING|PARTICIPANTS|INTRODUCTION|AIMS?|PURPOSE)\b")


def _has_marks(s: str) -> bool:
    # Sentences with bracketed numbers ("the box $[0,1]^n$") would be read as citations by the check.
    return bool(re.search(r"\[\s*\d", s))


def stands_alone(s: str) -> bool:
    """Whether a sentence can be quoted on its own: no connective or anaphor leaning on the sentence
    before, no back-reference, not a fragment or a run-on, nothing the citation check would misread."""
    s = s.strip()
    return (40 <= len(s) <= 450 and not s.endswith("?") and not _LEANS.match(s) and not _REFERS_BACK.search(s) and not _has_marks(s)
            and not _SETUP.match(s) and (s[:1].isupper() or s[:1].isdigit() or s[:1] in "$\"'(“"))
