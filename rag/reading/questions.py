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


# A follow-up asking about each of several papers, not one: "What did these papers find?", "What do they
# propose?", "How do their methods differ?", "What data do both use?".
_TO_EACH = re.compile(r"\b(they|their|theirs|them|these|those|each|both|the papers|the authors)\b", re.I)


def to_each(question: str) -> bool:
    """A follow-up whose words point at several papers ("these papers", "they", "each"): after an answer
    citing several, each is quoted (rag.tasks.ask)."""
    return bool(_TO_EACH.search(question.strip()))


# A follow-up that names nothing but what it asks of the previous papers: "What do they find?", "What did they
# propose?", "What are their main results?", "What problem do they address?". The answer scorer has no word of
# it to read (it rated every sentence of two papers under the floor after "Compare RMNP and BAS"), but the
# comparison table's column of that name has each paper's sentence (rag.tasks.compare_cells, by role).
# Each column's words; a question holding any other content word ("What datasets do they use?") is left to
# the scorer.
_COLUMN_WORDS = {
    "finding": r"find|finds|found|findings?|show|shows|showed|shown|results?|conclude[sd]?|conclusions?|prove[sd]?|"
               r"demonstrate[sd]?|discover(?:ed|ies|y)?|learn(?:ed|t)?|observe[sd]?|outcomes?|takeaways?|report(?:s|ed)?|"
               r"claims?|claimed|achieve[sd]?",
    "approach": r"methods?|approach(?:es)?|techniques?|algorithms?|work|works",
    "proposal": r"propose[sd]?|proposals?|introduce[sd]?|present(?:s|ed)?|develop(?:s|ed)?|contributions?|ideas?|"
                r"build|built|design(?:s|ed)?|doing|done|offer(?:s|ed)?",
    "problem": r"problems?|address(?:es|ed)?|tackle[sd]?|solve[sd]?|goals?|aims?|motivation|motivated?|stud(?:y|ies|ied)|"
               r"investigate[sd]?|questions?|challenges?|try|trying|tried|purpose",
    # "Tell me more about it", "Describe the second paper", "Compare [1] and [3]": what it proposes, then finds
    "overview": r"tell|more|describe|explain|summari[sz]e|summary|details?|overview|elaborate|expand|"
                r"compare|contrast|differ|differences?",
}
_COLUMN_RES = {c: re.compile(rf"^(?:{w})$", re.I) for c, w in _COLUMN_WORDS.items()}
# Words that ask nothing of their own in such a follow-up: pronouns, the papers, question and helper words.
_NOTHING_ASKED = re.compile(
    r"^(?:what|which|how|and|but|so|then|also|now|ok|okay|they|their|theirs|them|it|its|this|that|these|those|each|"
    r"both|the|a|an|of|in|on|by|to|for|about|from|with|paper|papers|authors?|article|is|are|was|were|"
    r"do|does|did|can|could|has|have|had|will|would|should|main|key|overall|exactly|actually|really|basically|"
    r"central|principal|core|primary|new|novel|briefly|mainly|most|important|there|here|please|me|us|you|"
    r"again|one|ones|respective|respectively|specifically|s|t|d|m|re|ve|ll)$", re.I)  # "What's", "they've"


def column_asked(question: str) -> str | None:
    """What a follow-up asks of each previous paper when it asks nothing else: a comparison column ("finding",
    "approach", "problem"), the paper's "proposal", or an "overview" of both proposal and finding ("What do they
    find?" -> "finding", "How does it work?" -> "approach", "What did they propose?" -> "proposal", "Tell me
    more about it" -> "overview"), else None."""
    words = re.findall(r"[A-Za-z]+", question)
    asked = [{c for c, r in _COLUMN_RES.items() if r.match(w)} for w in words if not _NOTHING_ASKED.match(w)]
    if not all(asked):
        return None  # a word of its own: the scorer reads it
    columns = set().union(*asked)
    for c in ("finding", "approach", "proposal", "problem", "overview"):  # "What does this study find?": the narrower asks
        if c in columns:
            return c
    if asked or not words:
        return None
    # only helper words: its kind or its last word says what it asks ("How?" the method, "What do they do?",
    # "What is it about?" the contribution)
    last = words[-1].lower()
    if last in ("do", "doing") and len(words) > 2 or last == "about":
        return "proposal"
    if re.search(r"\bthis paper\b", question, re.I):  # "And this paper?", "What about this paper?"
        return "overview"
    return "approach" if kind(question) == "how" else None


# A follow-up naming one of the previous answer's sources by its number or place: "What does [2] find?", "Tell me
# more about the second paper", "What does the first one propose?", "And source 3?".
_PLACES = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
           "ninth": 9, "tenth": 10, "last": -1}
_CITED = re.compile(
    r"\[(?P<mark>\d{1,2})\]|\b(?:paper|source|reference|citation)\s+(?:#\s*|no\.?\s*|number\s+)?(?P<num>\d{1,2})\b|"
    r"\bthe\s+(?P<place>%s)\s+(?:one|paper|source|reference|citation|work|study|article)\b" % "|".join(_PLACES),
    re.IGNORECASE)


def cited_sources(question: str) -> tuple[list[int], str] | None:
    """(the numbers of the sources the question names in the previous answer, 1-based, -1 for the last; the
    question with them read as "this paper" or "these papers") when it names any ("What does [2] find?" -> ([2],
    "What does this paper find?"), "Compare [1] and [3]" -> ([1, 3], "Compare these papers")), else None."""
    found = list(_CITED.finditer(question))
    numbers = []
    for m in found:
        number = m.group("mark") or m.group("num")
        numbers.append(int(number) if number else _PLACES[m.group("place").lower()])
    if not numbers or 0 in numbers:  # "[0]": no source is numbered so
        return None
    text = _CITED.sub("\x00", question)
    text = re.sub(r"\x00(?:\s*(?:,|and|&|or|vs\.?|versus|with|to)?\s*\x00)+", "\x00", text)  # "[1] and [3]": one mention
    return numbers, text.replace("\x00", "this paper" if len(numbers) == 1 else "these papers")


# A question asking for the papers on an area, not for what one paper says: "Which papers study Mamba?",
# "What work exists on scaling laws?", "Are there papers on optimal transport?", "List the papers about X",
# "What are the main approaches to X?".
# A question about what papers show or claim ("Which papers show that X?") is not one: that is evidence.
_PAPERS = r"(?:papers|works?|studies|articles|publications|research|literature)"
_VERB = r"(?:study|investigate|address|discuss|cover|deal with|focus on|look at|are about|is about|work on)"
_ON = r"(?:on|about|into|regarding|concerning|studying|investigating|addressing|discussing|covering|(?:that|which|who) %s)" % _VERB
_LIST_QUESTION = re.compile("|".join([
    # Which papers study X? / What work exists on X? / Which papers on X?
    r"^(?:which|what) (?:(?:other|recent|existing|relevant) )?%s(?: in (?:the|my|this) library)? "
    r"(?:%s|exists? (?:on|about)|(?:is|are) there (?:on|about)|%s)\s+" % (_PAPERS, _VERB, _ON),
    # Are there papers on X? / Is there a paper on X? / Does the library have any work about X?
    r"^(?:are there|is there|do (?:you|we|i) have|does (?:the|my|this) library (?:have|hold|contain)) (?:any |an? )?"
    r"(?:%s|paper|study|article|publication) %s\s+" % (_PAPERS, _ON),
    # List the papers on X / find papers about X
    r"^(?:please )?(?:list|show(?: me)?|find|give me|name)(?: (?:all|the|any|some))* %s %s\s+" % (_PAPERS, _ON),
    # What research is there on X?
    r"^what (?:work|research|literature) (?:exists|is there) (?:on|about)\s+",
    # What does the library say about X? (what a summary of X is)
    r"^what (?:does|do) (?:the|my|this|our) (?:library|papers|collection) (?:say|have|hold|know|contain) (?:on|about)\s+",
    # What are the main approaches to X? What methods exist for X? (a summary's themes are its approaches)
    r"^what (?:are|were) (?:the )?(?:(?:main|key|major|different|existing|common|known) )?(?:approaches|methods|"
    r"techniques|lines of (?:work|research)|directions|families of methods) (?:to|for|in|on|of)\s+",
    r"^what (?:approaches|methods|techniques|lines of (?:work|research)) (?:exist|are there) (?:to|for|in|on)\s+",
]), re.IGNORECASE)

_CLAUSE = re.compile(r"\b(?:uses?|propose[sd]?|shows?|finds?|found|appl(?:y|ies)|combines?|compares?|achieves?|"
                     r"improves?|outperforms?|proves?|reports?|claims?|argues?|suggests?|demonstrates?)\b", re.I)


def papers_on(question: str) -> str | None:
    """The area a question asks the library's papers on ("Which papers study Mamba?" -> "Mamba"), or None
    when it asks something else, or leans on the conversation ("Which papers study this?")."""
    q = question.strip()
    m = _LIST_QUESTION.match(q)
    if not m or refers_back(q[m.end():]):
        return None
    if _CLAUSE.search(q[m.end():]):  # "Which papers on X use Y?": a question about what they do
        return None
    area = re.sub(r"\s+(?:in|from) (?:the|my|this) library$", "", q[m.end():].strip().rstrip("?.! ").strip(),
                  flags=re.IGNORECASE)
    return area or None


# Two things set side by side: "Compare RMNP and BAS", "RMNP vs BAS", "What is the difference between A and B?",
# "How does A differ from B?". Answered as the papers on "A and B" (a summary reads each part of "X and Y"), each
# quoted by its contribution: one best sentence of one paper answered for one side only.
_SIDES = r"(?P<a>[^?,;]{2,60}?)\s+(?:and|with|to|against|vs\.?|versus)\s+(?P<b>[^?,;]{2,60}?)"
_COMPARED = re.compile("(?:" + "|".join([
    r"^(?:please\s+)?compare\s+(?:the\s+)?" + _SIDES,
    r"^(?:what (?:is|are)|what's) the (?:main |key )?differences? between\s+(?P<a2>[^?,;]{2,60}?)\s+and\s+(?P<b2>[^?,;]{2,60}?)",
    r"^how (?:does|do)\s+(?P<a3>[^?,;]{2,60}?)\s+differ from\s+(?P<b3>[^?,;]{2,60}?)",
    r"^(?P<a4>[^?,;]{2,60}?)\s+(?:vs\.?|versus)\s+(?P<b4>[^?,;]{2,60}?)",
]) + r")\s*[?.!]?$", re.IGNORECASE)


def compared(question: str) -> str | None:
    """"A and B" for a question setting two things side by side ("Compare RMNP and BAS"), else None (also
    when a side leans on the conversation or is long: "How does X compare with Y …" is a question to one paper)."""
    m = _COMPARED.match(question.strip())
    if not m:
        return None
    a, b = (next(v for k, v in m.groupdict().items() if k.startswith(side) and v) for side in "ab")
    if refers_back(a) or refers_back(b) or len(a.split()) > 6 or len(b.split()) > 6:
        return None
    return f"{a.strip()} and {b.strip()}"


# "What is RMNP?", "What are diffusion models?", "What does LoRA do?": what a named thing is. The answer scorer
# learned from questions that ask what a paper found, how or why (mlqa has no such question): it read "What is
# RMNP?" as answered by no sentence of the RMNP paper (0.08 at best), where "RMNP" as a topic finds "In this
# paper, we introduce RMNP …" at 0.94. Such a question is scored as its subject.
_NOT_A_THING = (r"(?!(?:the|a|an|this|that|these|those|it|they|its|their|there|we|you|your|our|known|new|wrong|"
                r"special|unique|different|novel|missing|important|interesting|hard|difficult|best|left|needed|"
                r"required|proposed|done|meant)\b)")
_DEFINED = re.compile(
    r"^(?:(?:what (?:is|are)|what's|define)\s+" + _NOT_A_THING + r"(?P<x>[^?,;]{1,60}?)"
    r"|what (?:does|do)\s+" + _NOT_A_THING + r"(?P<y>[^?,;]{1,60}?)\s+(?:do|mean|stand for))\s*\??$", re.IGNORECASE)


def defined(question: str) -> str | None:
    """The thing a question asks to be defined ("What is RMNP?" -> "RMNP"), at most six words; else None."""
    m = _DEFINED.match(question.strip())
    x = m and (m.group("x") or m.group("y"))
    if not x or len(x.split()) > 6 or refers_back(x):
        return None
    return x.strip()
