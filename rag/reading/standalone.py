"""Whether a sentence can be quoted on its own: no connective or anaphor leaning on text the reader does not see.

Summaries (rag.tasks.summary_writers: stands_alone) and answers (rag.tasks.extractive: standing) quote abstracts
sentence by sentence; a quote opening "To address these challenges, ..." or "These results ..." reads as
a dangling reference.
"""

from __future__ import annotations

import re

# "this paper", "this retrospective study", "this randomised clinical trial", "this case report": the paper
# itself; "This case illustrates ..." too (a case report's own case), when a reporting verb follows.
_ITSELF = (r"(?:(?: [\w-]+){0,3}? (?:paper|work|study|article|survey|note|letter|thesis|position paper|manuscript|"
           r"trial|review|report|research|case series)\b|"
           r" case (?:illustrates|shows|reports|describes|highlights|demonstrates|presents|underscores|"
           r"emphasi[sz]es|suggests|documents|raises|adds)\b)")
# "Both X and Y ...": "both" opens a noun phrase joined by "and" and stands; "Both improve ... and ...",
# "Both of them ..." and "Both are ..." mean two things named before. A verb between "both" and the "and"
# says which: the list holds the verbs abstracts use there (stems, with their -e/-s/-ed forms; no -ing,
# which is mostly a noun there: "Both supervised learning and RLHF ...").
_BOTH_VERBS = (r"(?:is|are|was|were|be|been|have|has|had|can|could|may|might|must|should|would|will|do|does|did|"
               r"led|(?:achiev|improv|outperform|show|yield|reduc|increas|decreas|perform|lead|requir|suffer|fail|"
               r"converg|provid|exhibit|reach|obtain|produc|depend|differ|us|lack|offer|surpass|exceed|remain|"
               r"becom|generaliz|generalis|benefit|captur|involv|aim|seek|focus|ignor|assum|admit|allow|enabl|"
               r"rel|appear|seem|tend|contain|consist|includ|rais|giv|hav)(?:e|es|s|ed|ied|ies|y)?)")
_BOTH_STANDS = re.compile(r"^both\s+(?!(?:of|these|those|them|such)\b)"
                          r"(?:(?!" + _BOTH_VERBS + r"\b)[^\s,;:.]+\s+){1,8}?and\s+\S", re.IGNORECASE)
# "For (i), we analyze ...", "(ii) We show ...": an item of an enumeration given before.
_ENUMERATED = re.compile(r"^(?:(?:for|in|regarding|as for|concerning|on|under) )?\((?:[ivx]{1,4}|[a-h]|\d{1,2})\)",
                         re.IGNORECASE)
# A sentence that leans on text the reader does not see: it opens with a connective or an anaphor
# ("As a corollary, ...", "Building on this ...", "Then, ...", "These results ...", "To address this, ..."),
# not an adjective or an expletive that only looks like one ("Further studies ...", "It is clear that ...").
# "This paper ..." / "In this retrospective study, ..." name the paper itself and stand alone.
_LEANS = re.compile(
    r"^(?:as a (?:corollary|consequence|result)|building (?:on|upon)|based on (?:this|these|that|such)|"
    # "Motivated by this, we introduce X", "Inspired by these observations, …" (27 of mlqa's abstracts)
    r"(?:motivated|inspired|guided|driven|prompted|informed|encouraged) by (?:this|these|that|those|such|them|it|"
    r"the (?:above|aforementioned|former|latter))\b|"
    r"then|next|finally|lastly|moreover|furthermore|further(?=,)|additionally|besides|likewise|similarly|"
    r"however|nevertheless|nonetheless|yet|still|thus|therefore|hence|consequently|accordingly|"
    r"specifically|in particular|in addition|in contrast|by contrast|conversely|instead|on the other hand|"
    r"to (?:this|that|these) end|to do so|in doing so|doing so|(?:getting|to get|going|to go) there|for (?:this|these|that) (?:reason|purpose)s?|"
    r"to \w+ (?:this|these|that|those|such|both|them|it|the (?:above|aforementioned|former|latter))\b|"
    r"first(?:ly)?(?=,)|on the (?:\w+ )?(?:other )?(?:side|hand)|embracing|"
    r"(?:in|under|with|for|from|given|using) (?:this|these|that|those|such)\b(?!" + _ITSELF + r")|"
    r"(?:second|third|fourth)(?:ly)?|also|and|but|or|nor|both|that|those|such|its|they|their|together|overall|here we also|"
    # "It is clear that ..." / "It remains unknown whether ..." point at nothing; "It outperforms ..." does.
    r"it(?! (?:is|was|remains|seems|appears) (?!(?:a|an|the)\b)(?:[\w-]+ ){0,3}(?:that|to|whether)\b)|"
    r"this(?!" + _ITSELF + r")|these|"
    r"the (?:former|latter|above|aforementioned)|"
    r"(?:each|all|some|many|most|several|none|neither|either|any|one|two|three) of (?:these|those|them|the above)|"
    r"we (?:then|next|further|also|additionally|finally|thus|therefore|hence))\b", re.IGNORECASE)
_REFERS_BACK = re.compile(
    r"\b(?:the above|aforementioned|the former|the latter|as (?:mentioned|noted|shown) above|these|those|"
    r"such (?!as\b)|this\b(?!" + _ITSELF + r"))", re.IGNORECASE)
_SETUP = re.compile(r"^(?:OBJECTIVES?|BACKGROUND|METHODS?|DESIGN|SETTING|PARTICIPANTS|INTRODUCTION|AIMS?|PURPOSE)\b")


def _has_marks(s: str) -> bool:
    # Sentences with bracketed numbers ("the box $[0,1]^n$") would be read as citations by the check.
    return bool(re.search(r"\[\s*\d", s))


def stands_alone(s: str) -> bool:
    """Whether a sentence can be quoted on its own: no connective or anaphor leaning on the sentence
    before, no back-reference, not a fragment or a run-on, nothing the citation check would misread."""
    s = s.strip()
    return (40 <= len(s) <= 450 and not s.endswith("?") and not leans(s) and not _REFERS_BACK.search(s) and not _has_marks(s)
            and not _SETUP.match(s) and (s[:1].isupper() or s[:1].isdigit() or s[:1] in "$\"'(“"))


def leans(s: str) -> bool:
    """Whether a sentence opens by leaning on the one before: a connective or an anaphor first, or an
    enumeration's item ("For (i), ..."); "Both X and Y ..." names its two things and stands."""
    s = s.strip()
    return bool(_ENUMERATED.match(s)) or (bool(_LEANS.match(s)) and not _BOTH_STANDS.match(s))


# An opening clause that can be cut: up to the first comma, short, and the part that leans -- a phrase
# ("To address these challenges,"), not a clause with its own subject ("It also unveils riches for ML,
# chief among which ..."), and what follows it must be a main clause, not a relative one.
_OPENING = re.compile(r"^([^,;:()\[\]]{2,80}),\s+(?=\S)")
_SUBJECT = re.compile(r"^(?:it|they|this|these|those|such|both|its|their|that|he|she)\b"
                      # ... but "This being true, X ..." / "That said, X ..." are phrases: the cut is X
                      r"(?! (?:being|having|said|done|established|granted|noted|in mind)\b)", re.IGNORECASE)
# A connective word that only links to the sentence before, with more of the sentence's own phrase after it
# (no comma: "Finally, we ..." is cut whole as an opening clause below).
_CONNECTIVE = re.compile(r"^(?:and|but|also|then|next|finally|lastly|moreover|furthermore|additionally|besides|"
                         r"thus|hence|therefore|consequently|overall|in addition|in particular|specifically)\s+(?=\w)",
                         re.IGNORECASE)
_DANGLING = re.compile(r"^(?:(?:\S+\s+){0,2}(?:which|whom|whose)\b|(?:where|whereas|including|such as|leading|"
                       r"resulting|yielding|and|but|or|nor)\b)", re.IGNORECASE)


def standing(s: str, cut_connective: bool = False) -> str | None:
    """The sentence as an answer can quote it on its own: itself when its opening does not lean; its main
    clause when only an opening clause leans ("To address these challenges, we propose X ..." -> "We
    propose X ..."; the words are the abstract's own, only the first letter is raised); None otherwise.
    With cut_connective (answers), an opening connective word followed by more of the sentence's own phrase is
    cut alone ("And in experiments on X, we show Y" -> "In experiments on X, we show Y"; without, the whole
    opening clause goes, as summaries, tables and the answer scorer's trained feature read it). Only the
    opening counts here, and "These findings ..." / "Our results ..." (the cited study's own)
    read whole beside their citation: a summary's stricter test (stands_alone) also refuses "this" or
    "those" anywhere, which in an answer's conclusions is mostly a reference inside the sentence ("...
    than those who had not"), and refuses "These results ..."."""
    s = s.strip()
    if not _leans_in_answer(s):
        return s
    # "And in experiments on refusal suppression, we show X": only the connective leans; the phrase after it
    # says where X holds, so it stays ("In experiments on refusal suppression, we show X").
    c = _CONNECTIVE.match(s) if cut_connective else None
    if c and (rest := s[c.end():]) and rest[:1].islower() and not _DANGLING.match(rest):
        rest = rest[:1].upper() + rest[1:]
        o = _OPENING.match(rest)
        if not _leans_in_answer(rest) and not (o and _leans_in_answer(rest[o.end():])):
            return rest
    m = _OPENING.match(s)
    if not m or not leans(m.group(0)) or _SUBJECT.match(s):
        return None
    rest = s[m.end():]
    if _DANGLING.match(rest):
        return None
    rest = rest[:1].upper() + rest[1:]
    return rest if not _leans_in_answer(rest) else None


def standing_in_answer(s: str) -> str | None:
    """The sentence as an answer (and its citation card) quotes it: standing() with an opening connective word cut
    alone, so the phrase after it stays: "And in experiments on refusal suppression, we demonstrate X" is quoted
    as "In experiments on refusal suppression, we demonstrate X", not "We demonstrate X", which drops where X
    holds (summaries and tables still cut the whole opening clause: not measured there)."""
    return standing(s, cut_connective=True)


# "These findings suggest ...", "Our results show ...": in an answer the citation mark names the study
# whose findings these are, so the sentence reads whole there (a summary's paragraph is stricter).
_OWN_FINDINGS = re.compile(r"^(?:these|our|the) (?:\w+ )?(?:findings|results|data|observations|analyses)\b", re.IGNORECASE)


def _leans_in_answer(s: str) -> bool:
    return leans(s) and not _OWN_FINDINGS.match(s)
