"""Derived titles for abstracts that come without one (the seed lists).

The title is the method the abstract introduces ("we propose Manifold-Constrained Hyper-Connections
(mHC), ...") -- found only right after an introducing verb, so prior work named earlier ("studies
exemplified by Hyper-Connections (HC)") is passed over -- with what the abstract says it does or is
for, when it says so in the same sentence ("..., a general framework that projects the residual
connection space ..." -> "mHC: Projecting the residual connection space of HC onto a specific
manifold"); else a short form of the first sentence.

TITLES_VERSION counts changes to these rules: a library whose titles were derived under an earlier
version re-derives them on open (rag.library.retitle), rewriting records' metadata only, never re-embedding.
"""

from __future__ import annotations

import re

from rag.reading.sentences import split_sentences

MAX_WORDS = 12
TITLES_VERSION = 2  # 2: "Name: what it does" (issue 17)
TITLE_WORDS = 14  # name and description together

# --- markup: names set in bold/typewriter/italics become «name»; other markup is dropped -------------
_NAME_CMDS = r"textbf|texttt|textit|textsc|emph|operatorname|mathrm|mathsf|mathtt|mathbf|mathit|boldsymbol"
_LATEX_NAME = re.compile(r"\\(?:%s)\{([^{}]*)\}" % _NAME_CMDS)
_LATEX_PLAIN = re.compile(r"\\(?:underline|text|mbox)\{([^{}]*)\}")
_SIMPLE_MATH = re.compile(r"\$(«?[^$\\\s]{1,30}»?)\$")
_MD_LINK = re.compile(r"\[([^\[\]]+)\]\((?:https?://|www\.)[^)\s]*\)")
_MD_BOLD_INWORD = re.compile(r"\*\*([^*\s]{1,3})\*\*(?=\w)")  # **R**ate--**D**istortion
_MD_BOLD = re.compile(r"\*\*([^*]{1,120}?)\*\*")
_MD_ITALIC = re.compile(r"(?<![*\w])\*([^*\s][^*]{0,80}?)\*(?![*\w])")
_CITATION = re.compile(r"\s*[(\[][^()\[\]]{0,200}?\b(?:19|20)\d\d[a-z]?\b[^()\[\]]{0,200}[)\]]")


_GREEK = {name: chr(code) for name, code in [
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4), ("epsilon", 0x3B5),
    ("varepsilon", 0x3B5), ("theta", 0x3B8), ("kappa", 0x3BA), ("lambda", 0x3BB), ("mu", 0x3BC),
    ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4), ("phi", 0x3C6), ("psi", 0x3C8),
    ("omega", 0x3C9), ("ell", 0x2113), ("Omega", 0x3A9), ("Theta", 0x398), ("Delta", 0x394),
]}
_GREEK_MATH = re.compile(r"\$\\(%s)\$" % "|".join(_GREEK))


def _mark(text: str) -> str:
    text = _GREEK_MATH.sub(lambda m: _GREEK[m.group(1)], _MD_LINK.sub(r"\1", text))
    for _ in range(3):  # nested commands, innermost first
        text = _LATEX_NAME.sub(r"«\1»", _LATEX_PLAIN.sub(r"\1", text))
    text = _SIMPLE_MATH.sub(r"\1", text)
    text = _MD_BOLD.sub(r"«\1»", _MD_BOLD_INWORD.sub(r"\1", text))
    text = _MD_ITALIC.sub(r"«\1»", text)
    text = text.replace("``", "\u201c").replace("''", "\u201d")
    return re.sub(r"\s+", " ", text).strip()


def _unmark(text: str) -> str:
    return text.replace("«", "").replace("»", "")


# --- the introduced method ----------------------------------------------------------------------------
_TRIGGER = re.compile(
    r"\b(?:(?:we|paper|work|study|article)\s+(?:(?:then|first|further|also|here|now|thus|therefore|hence|"
    r"newly|instead)\s+)?(?:propose|introduce|present|develop|design|devise|call|term|name|dub)s?"
    r"|by\s+(?:proposing|introducing|developing)"
    r"|(?P<called>called|named|dubbed|termed|coined))\s+",
    re.IGNORECASE,
)
# A phrase starting with these is a description ("a new framework"), not a name.
_NOT_A_NAME = (
    r"(?!(?:a|an|the|our|this|these|that|those|its|their|his|her|one|two|three|four|five|several|some|"
    r"many|new|novel|to|how|what|when|why|whether|both|each|such|results?|evidence|experiments?|"
    r"theoretical|empirical|first|further)\b)"
)
_W = r"[^\s()«»,;:.]+"  # a word of a name (keeps hyphens, en dashes, U+2011, '+', digits)
_ABBR = r"«?([A-Za-z][\w\-+.\u2011]{0,15})»?"
_MARKED = re.compile(r"(?:the\s+)?«([^«»]{1,80})»(?:\s*\(([^()]{2,120})\))?")
_NAME_ABBR = re.compile(_NOT_A_NAME + r"((?:%s\s+){0,7}%s)\s*\(%s\)" % (_W, _W, _ABBR), re.IGNORECASE)
_TOKEN_EXPANSION = re.compile(r"(%s)\s*\(([A-Z][^()]{3,120})\)" % _W)
_APPOSITION = re.compile(
    _NOT_A_NAME + r"((?:%s\s+){0,5}%s)\s*(?:,|\s—|\s--|:)\s*(?:a|an|the|which|whose|that)\b" % (_W, _W),
    re.IGNORECASE,
)
_CALLED = re.compile(r"(%s(?:\s+[A-Z][^\s()«»,;:.]*){0,3})" % _W)


def _is_abbr(s: str) -> bool:
    return any(c.isupper() for c in s) and " " not in s


def _named_after(rest: str, called: bool) -> tuple[str, int]:
    """The name at the start of `rest` (the text after an introducing verb) and where it ends, or ('', 0)."""
    if m := _MARKED.match(rest):
        name, paren = m.group(1).strip(), (m.group(2) or "").strip()
        if paren and "(" not in name and (_is_abbr(paren) or len(paren.split()) >= 2):
            return f"{name} ({_unmark(paren)})", m.end()
        return name, m.end(1) + 1
    if m := _NAME_ABBR.match(rest):
        return f"{m.group(1)} ({m.group(2)})", m.end()
    if (m := _TOKEN_EXPANSION.match(rest)) and re.search(r"[A-Z0-9]", m.group(1)) and len(m.group(2).split()) >= 2:
        return f"{m.group(1)} ({m.group(2)})", m.end()
    if m := _APPOSITION.match(rest):
        return m.group(1), m.end(1)
    if called and (m := _CALLED.match(rest)):
        return m.group(1), m.end()
    return "", 0


def _introduction(abstract: str) -> tuple[str, str, str]:
    """(name, what follows it in its sentence, the noun phrase before 'called NAME') of the method the
    abstract introduces, or ('', '', '')."""
    text = _mark(abstract)
    for m in _TRIGGER.finditer(text):
        raw, end = _named_after(text[m.end():], bool(m.group("called")))
        name = _unmark(raw).strip(" -—")
        if name and len(name) <= 160:
            after = _unmark(text[m.end() + end:])
            after = re.split(r"(?<=[.!?])\s+(?=[A-Z(])", after, maxsplit=1)[0]
            before = ""
            if m.group("called"):
                np_ = re.search(r"\b(?:an?|the)\s+([^,;:.()«»$]{3,80}?)\s*$", _unmark(text[: m.start()]))
                before = np_.group(1) if np_ else ""
            return _capitalise(name), after, before
    return "", "", ""


# What a method is or does, as the abstract says right after naming it.
_HEAD = (r"(?:(?:novel|new|simple|general|principled|unified|efficient|effective|lightweight|practical|"
         r"and|yet|,)\s+)*")
_DOES = re.compile(r"^\s*,?\s*(?:(?:an?|the)\s+" + _HEAD + r"(?P<head>[^,;:()]{2,80}?)\s+)?"
                   r"(?:(?:that|which)\s+(?:(?:directly|also|then|first|jointly|dynamically|explicitly|"
                   r"efficiently|effectively)\s+)?(?P<verb>[a-z]+s)\b(?P<obj>.*)"
                   r"|(?:designed|built|developed|tailored)\s+to\s+(?P<inf>[a-z]+)\b(?P<obj2>.*))", re.IGNORECASE)
_FOR = re.compile(r"^\s*,?\s*(?:(?:an?|the)\s+)?[^,;:()]{0,60}?\bfor\s+(?P<goal>[^;:]{6,})", re.IGNORECASE)
_IS = re.compile(r"^\s*,\s*(?:an?|the)\s+" + _HEAD + r"(?P<what>[^;:()]{6,})", re.IGNORECASE)
_NOT_VERBS = {"is", "was", "has", "does", "as", "its", "this", "thus", "plus", "across", "us", "less", "was"}
_VAGUE = re.compile(r"\b(?:this|these|that|those|it|its|they|their|such)\b", re.IGNORECASE)


def _gerund(verb: str) -> str:
    """'projects' -> 'projecting', 'provides' -> 'providing', 'maps' -> 'mapping'."""
    v = verb.lower()
    v = v[:-2] if v.endswith(("sses", "shes", "ches", "xes", "zzes")) else v[:-1] if v.endswith("s") else v
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    if len(v) <= 4 and re.search(r"[^aeiou][aeiou][bdgmnprt]$", v):
        return v + v[-1] + "ing"
    return v + "ing"


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def described(after: str, before: str, max_words: int) -> str:
    """What the method does or is for, from the words after its name (or the noun phrase that 'called'
    it), in at most `max_words` words; '' when the abstract says nothing that stands alone."""
    if max_words < 4:
        return ""
    candidates = []
    if (m := _DOES.match(after)) and (m.group("verb") or "").lower() not in _NOT_VERBS:
        verb, obj = (m.group("verb"), m.group("obj")) if m.group("verb") else (m.group("inf"), m.group("obj2"))
        candidates.append(f"{_gerund(verb) if m.group('verb') else _gerund(verb + 's')}{obj}")
    if m := _FOR.match(after):
        candidates.append(m.group("goal"))
    if before:
        candidates.append(before)
    if m := _IS.match(after):
        candidates.append(m.group("what"))
    shorts = [short_form(_CITATION.sub("", text.strip()), max_words) for text in candidates]
    shorts = [t for t in shorts if len(t.split()) >= 2 and not _VAGUE.search(" ".join(t.split()[:4]))
              and len(re.findall(r"(?<!\\)\$", t)) % 2 == 0]
    # Words before formulas: a title is read at a glance ("Qkmeans: Fast seeding method").
    return _upper_first(next((t for t in shorts if "$" not in t), shorts[0] if shorts else ""))


def _capitalise(name: str) -> str:
    first = name.split()[0]
    return name[0].upper() + name[1:] if first.isalpha() and first.islower() else name


# --- a short form of the first sentence --------------------------------------------------------------
_LEADIN = re.compile(
    r"^(?:(?:in|with)\s+this\s+(?:paper|work|study|article|note)\s*,\s*)?"
    r"(?:(?:this|the|our)\s+(?:paper|work|study|article)\s+|we\s+)(?:(?:first|here|then|now|also)\s+)?"
    r"(?:stud(?:y|ies)|investigates?|explores?|considers?|examines?|analy[sz]es?|proposes?|introduces?|"
    r"presents?|develops?|revisits?|proves?|shows?|establish(?:es)?|provides?|describes?|address(?:es)?)\s+"
    r"(?:that\s+)?",
    re.IGNORECASE,
)
_STRONG = {"by", "which", "where", "while", "whereas", "because", "since", "although", "who", "whose",
           "thereby", "thus"}
_DASHES = {"\u2014", "\u2013", "--", "-"}
# A comma ends a phrase only if a new clause or phrase starts after it ("scenes, an ability ..."),
# not between adjectives ("different, non-overlapping subsets").
_CLAUSE_START = {"the", "a", "an", "we", "which", "and", "but", "while", "where", "it", "this", "these",
                 "our", "its", "their", "thus", "i.e.", "e.g.", "such", "yet", "so", "whereas", "as", "in", "that"}
_REPORTING = {"show", "prove", "demonstrate", "establish", "find"}
_WEAK = {"of", "for", "in", "on", "with", "to", "from", "under", "over", "across", "at", "and", "or", "as",
         "into", "between", "among", "within", "without", "against", "toward", "towards", "beyond", "is",
         "through", "via", "using", "when", "that",
         "are", "was", "were", "has", "have", "can", "may", "remains", "remain", "such", "due"}
_TRAILING_JUNK = {"a", "an", "the", "of", "and", "or", "for", "to", "in", "on", "with", "by", "from", "as",
                  "at", "its", "their", "our", "can", "is", "are", "be", "that", "which"}


def _counted(token: str) -> bool:
    return not (token.startswith("(") and token.endswith(")"))  # "(LLMs)" rides along with its phrase


def _break_kind(tokens: list[str], j: int, n: int) -> int:
    """How well a phrase ends before tokens[j], n words kept: 1 clause punctuation, 2 a clause word
    ("by", "which"), 3 a preposition or verb (weak), 0 not at all."""
    nxt = tokens[j].lower()
    if nxt in _DASHES:
        return 1 if n >= 2 else 0
    if tokens[j - 1][-1] in ";:":
        return 1 if n >= 4 else 0
    if tokens[j - 1][-1] == ",":
        if n >= 4 and (nxt in _CLAUSE_START or tokens[j][0] in "(ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
            return 1
        if n >= 6 and nxt.endswith(("ing", "ed")):  # ", analyzed within ..." but not ", non-overlapping"
            return 1
    if n >= 4 and (nxt in _STRONG or (nxt == "and" and j + 1 < len(tokens) and tokens[j + 1].lower() in _REPORTING)):
        return 2
    return 3 if n >= 5 and nxt in _WEAK else 0


def short_form(sentence: str, max_words: int = MAX_WORDS) -> str:
    """At most `max_words` words of a sentence, cut at a phrase boundary, no trailing punctuation."""
    tokens = sentence.split()
    counts = [0]
    for t in tokens:
        counts.append(counts[-1] + _counted(t))
    if counts[-1] > max_words:
        kinds = {j: _break_kind(tokens, j, counts[j]) for j in range(1, len(tokens)) if counts[j] <= max_words}
        cut = next((j for j in sorted(kinds) if kinds[j] == 1), None)
        cut = cut or next((j for j in sorted(kinds) if kinds[j] == 2), None)
        cut = cut or max((j for j in kinds if kinds[j] == 3), default=None)
        if cut is None:
            cut = counts.index(max_words) if max_words in counts else len(tokens)
            while cut < len(tokens) and not _counted(tokens[cut]):
                cut += 1
        tokens = tokens[:cut]
    while len(tokens) > 1 and tokens[-1].lower().strip(",;:.") in _TRAILING_JUNK:
        tokens.pop()
    out = " ".join(tokens).rstrip(" ,;:.!?\u2014\u2013-\"'\u201c\u201d")
    if out.count("(") > out.count(")"):
        out = out[: out.rfind("(")].rstrip(" ,;:")
    return out


_SUBORDINATE = re.compile(
    r"^(?:despite|although|though|while|unlike|given)\b[^,]{3,120},\s+(?!(?:we|they|it|this|these)\b)(.+)$",
    re.IGNORECASE,
)


def first_sentence_title(abstract: str) -> str:
    text = _CITATION.sub("", _unmark(_mark(abstract)))
    sentences = split_sentences(text)
    if not sentences:
        return ""
    first = sentences[0]
    # "Despite X, <main clause>": the main clause says what the paper is about.
    if (m := _SUBORDINATE.match(first)) and len(m.group(1).split()) >= 5:
        first = m.group(1)[0].upper() + m.group(1)[1:]
    rest = _LEADIN.sub("", first)
    if rest != first and len(rest.split()) >= 2:
        revisit = re.match(r"(?:we\s+)?revisit", first, re.IGNORECASE)
        first = "Revisiting " + rest if revisit else rest[0].upper() + rest[1:]
    return short_form(first)


SCAN_CHARS = 6000  # the method is named early; a bound keeps pathological abstracts cheap


def derive_title(abstract: str) -> str:
    """'Name: what it does' for an abstract that introduces a method by name (the name alone when it says
    nothing more in that sentence), else a short form of its first sentence."""
    head = abstract[:SCAN_CHARS]
    name, after, before = _introduction(head)
    if not name:
        return first_sentence_title(head)
    what = described(after, before, min(MAX_WORDS - 3, TITLE_WORDS - len(name.split())))
    return f"{name}: {what}" if what else name
