"""The phrases a theme can be named by: noun phrases cut from its papers' sentences, and what each means.

    terms(text)            (normalised, written) unigrams to trigrams that do not cross punctuation or stop words
    is_name(term, written) whether a phrase can title a theme: a noun phrase, no verb, no adjective at its end
    acronyms(texts)        acronym -> the words it stands for, as its papers write them ("GAN" -> generative ...)
    concept(term, acr)     the phrase's stemmed content words, acronyms spelled out: how names are compared
    holds(text, key)       whether a paper's text holds every word of a concept (or its acronym)
"""

from __future__ import annotations

import re
from functools import lru_cache

from .theme_words import (ADJ_PIECE, ADJ_SUFFIX, BROAD, GENERIC, ING_NOUNS, KNOWN_ACRONYMS, NOT_EDGE, NOUN_AR,
                          NOUN_ENDINGS_OK, STOP, VERBS)

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-\u2011][A-Za-z0-9]+)*")


def clean(text: str) -> str:
    text = re.sub(r"(?:https?://|www\.)\S+|\S+\.(?:com|org|io|net)\S*", " . ", text)  # links, code pointers
    text = re.sub(r"\$[^$]*\$", " . ", text)  # math
    text = re.sub(r"\\[A-Za-z]+\{([^{}]*)\}", r"\1", text)  # \emph{x} -> x
    text = re.sub(r"\\[A-Za-z]+", " ", text)
    return text.replace("*", "").replace("`", "")


def _word_ok(w: str) -> bool:
    lw = w.lower()
    if lw in STOP or lw.isdigit() or not any(c.isalpha() for c in lw):
        return False
    # Short words only as acronyms (ICL, GNN); "len", "b" and the like are fragments.
    return len(lw) >= 4 or sum(c.isupper() for c in w) >= 2


def terms(text: str) -> list[tuple[str, str, bool]]:
    """(normalised, surface, cut short) n-grams of one to four words that do not cross punctuation or stop
    words; "cut short" when the next word is an adjective, so the phrase is the start of a longer one
    ("Multi-Channel Graph" of "Multi-Channel Graph Neural Networks")."""
    out: list[tuple[str, str, bool]] = []
    for segment in re.split(r"[.,;:!?()\[\]{}\"“”]|\s[-–—]\s", clean(text)):
        run: list[tuple[str, str]] = []
        for w in _TOKEN.findall(segment) + [""]:
            if w and _word_ok(w):
                run.append((norm(w.lower()), w))
                continue
            for i in range(len(run)):
                for n in (1, 2, 3, 4):
                    if i + n <= len(run):
                        part = run[i : i + n]
                        cut = i + n < len(run) and adjective_like(run[i + n][1])
                        out.append((" ".join(x for x, _ in part), " ".join(y for _, y in part), cut))
            run = []
    return out


def norm(w: str) -> str:
    """A light plural fold so 'models' and 'model' count as one term."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def adjective_like(w: str) -> bool:
    """Reads as an adjective, adverb, participle or preposition by its ending or by name ("neural",
    "probabilistic", "graph-based", "zero-shot"); nouns that end alike (signal, metric, gradient) pass."""
    w = w.lower()
    if w in NOT_EDGE or w in STOP:
        return True
    if w in NOUN_ENDINGS_OK:
        return False
    piece = w.split("-")[-1]
    if "-" in w and (piece in ADJ_PIECE or piece in NOT_EDGE):
        return True
    if piece in NOUN_ENDINGS_OK or norm(piece) in NOUN_ENDINGS_OK:
        return False
    return piece.endswith(ADJ_SUFFIX) or (piece.endswith("ar") and piece not in NOUN_AR)


def _verb_like(w: str, first: bool, n_words: int) -> bool:
    if w in VERBS:
        return True
    # an -ing word opening a phrase of several words acts on the rest ("Exploring adversarial robustness"),
    # and after its first word it is a participle ("decomposition comprising RKHS")
    ing = w.endswith("ing") and w not in ING_NOUNS and w.split("-")[-1] not in ING_NOUNS
    return ing and (not first or n_words > 1)


_AFTER_VERB = {"we", "to", "can", "could", "will", "may", "might", "which", "that", "it", "also", "not", "they", "who",
               "then", "further", "first", "often", "must", "should"}
_BE = {"is", "are", "was", "were", "be", "been"}  # before a participle ("is called"), or an adjective
_AFTER_NOUN = {"the", "a", "an", "of", "our", "this", "these", "its", "their", "each", "such", "any", "with", "for",
               "in", "on", "and", "by", "from"}


def verbs_of(texts: list[str]) -> set[str]:
    """Words the texts use as verbs more than as nouns: found after "we", "to", "which", "is" … more often
    than after "the", "of", "our" … ("we identify", "which encodes", "is called": not the start of a name)."""
    as_verb: dict[str, int] = {}
    as_noun: dict[str, int] = {}
    for text in texts:
        words = re.findall(r"[A-Za-z][A-Za-z-]*", text)
        for prev, w in zip(words, words[1:]):
            prev, w = prev.lower(), norm(w.lower())
            if prev in _AFTER_VERB or (prev in _BE and w.endswith("ed")):
                as_verb[w] = as_verb.get(w, 0) + 1
            elif prev in _AFTER_NOUN:
                as_noun[w] = as_noun.get(w, 0) + 1
    return {w for w, n in as_verb.items() if n > as_noun.get(w, 0) and w not in ING_NOUNS and w not in STOP}


def is_name(term: str, surface: str = "", verbs: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether a term can name a theme: a noun phrase of two or more words that neither starts with a
    verb, preposition or comparative nor ends in an adjective, and holds no verb ("regularised optimal
    transport", "preference optimisation"); or one word its authors write as a name ("Mamba", "LoRA",
    "hyper-connections"). Names made only of generic words ("Labeled data", "Deep neural") are not names."""
    words = term.split()
    if not words or all(w in GENERIC or norm(w) in GENERIC for w in words):
        return False
    if any(_verb_like(w, i == 0, len(words)) or w in verbs for i, w in enumerate(words)):
        return False
    if any(w.endswith("ly") and w not in NOUN_ENDINGS_OK for w in words):
        return False  # an adverb: a clause cut short ("linear attention fundamentally falls")
    last = surface.split()[-1] if surface and len(surface.split()) == len(words) else words[-1]
    if len(words) >= 2:
        adverb = words[0].endswith("ly") and words[0] not in NOUN_ENDINGS_OK  # not "anomaly detection"
        return words[0] not in NOT_EDGE and not adverb and not adjective_like(last)
    w = surface or term
    if "-" in w and (adjective_like(w) or adjective_like(w.split("-")[0])):
        return False  # "Zero-Shot", "graph-based", "single-location" (of "single-location regression")
    return (w[:1].isupper() and not w.isupper() and w.lower() not in NOT_EDGE and w[1:] != w[1:].lower()) or \
        (sum(c.isupper() for c in w) >= 2) or ("-" in w and not adjective_like(term))


# -- concepts: how two names, a name and the topic, or a name and a paper are compared

_WORD = re.compile(r"[A-Za-z0-9]+")


@lru_cache(maxsize=100_000)
def stem(w: str) -> str:
    import Stemmer  # PyStemmer, as rag.grades and rag.lexical use

    global _STEMMER
    _STEMMER = _STEMMER or Stemmer.Stemmer("english")
    w = w.lower()
    w = re.sub(r"is(ation|e|ed|ing|er)$", r"iz\1", w) if len(w) > 5 else w  # regularised -> regularized
    if len(w) > 2 and w.endswith("s") and w[:-1].isupper() is False and w[:-1] in KNOWN_ACRONYMS:
        w = w[:-1]  # "gans" -> "gan"
    return _STEMMER.stemWord(w)


_STEMMER = None


def acronym_key(w: str) -> str:
    """The acronym a word is, lower-case and without its plural ("GANs" -> "gan"), or ''."""
    core = w[:-1] if w.endswith("s") and sum(c.isupper() for c in w[:-1]) >= 2 else w
    if sum(c.isupper() for c in core) >= 2 and core.replace("-", "").isalnum() and len(core) <= 6:
        return core.lower()
    return ""


def acronyms(texts: list[str]) -> dict[str, str]:
    """Acronym -> the words it stands for: written out before it in brackets in one of the texts
    ("generative adversarial networks (GANs)"), else a common one (RL, LLM, GNN)."""
    out: dict[str, str] = {}
    for text in texts:
        for m in re.finditer(r"((?:[A-Za-z][A-Za-z0-9-]*\s+){1,6})\((\w[\w-]{1,7})\)", text):
            key = acronym_key(m.group(2))
            if not key or key in out:
                continue
            words = m.group(1).split()
            for n in range(len(key), 0, -1):  # the fewest words whose initials spell it
                tail = words[-n:]
                pieces = [p[0].lower() for w in tail for p in w.split("-") if p]
                initials = "".join(w[0].lower() for w in tail)
                if initials == key or "".join(pieces) == key:
                    out[key] = " ".join(tail).lower()
                    break
    return {**KNOWN_ACRONYMS, **out}


def concept(text: str, acr: dict[str, str] | None = None) -> frozenset[str]:
    """The stemmed content words of a phrase, an acronym replaced by the words it stands for:
    "Offline RL" and "offline reinforcement learning" are one concept."""
    acr = KNOWN_ACRONYMS if acr is None else acr
    out: set[str] = set()
    for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", text):
        key = acronym_key(w)
        if key and key in acr:
            out |= concept(acr[key], {})
            continue
        for piece in w.split("-"):
            if piece.lower() not in STOP and len(piece) > 1:
                out.add(stem(piece))
    return frozenset(out)


def text_key(text: str, acr: dict[str, str]) -> frozenset[str]:
    """Every stem a paper's text holds, with the stems of the acronyms it uses spelled out."""
    return concept(text, acr) | frozenset(stem(w) for w in _WORD.findall(text))


def holds(paper_key: frozenset[str], key: frozenset[str]) -> bool:
    return bool(key) and key <= paper_key


def broad(key: frozenset[str], acr: dict[str, str] | None = None) -> bool:
    """A field too broad to title a paragraph ("Reinforcement learning", "LLMs", "Neural networks")."""
    return any(key == concept(b, acr or {}) for b in BROAD)
