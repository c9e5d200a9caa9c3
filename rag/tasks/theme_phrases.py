"""The phrases a theme can be named by: noun phrases cut from its papers' sentences, and what each means.

    terms(text)            (normalised, written) unigrams to trigrams that do not cross punctuation or stop words
    is_name(term, written) whether a phrase can title a theme: a noun phrase, no verb, no adjective at its end
    acronyms(texts)        acronym -> the words it stands for, as its papers write them ("GAN" -> generative ...)
    concept(term, acr)     the phrase's stemmed content words, acronyms spelled out: how names are compared
    holds(text, key)       whether a paper's text holds every word of a concept (or its acronym)
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from rag.reading.stems import stem_word
from rag.tasks.topicality import _acronym
from rag.tasks.theme_words import (ADJ_ONLY, ADJ_PIECE, ADJ_SUFFIX, BROAD, DETERMINERS, GENERIC, ING_NOUNS, KNOWN_ACRONYMS,
                          NAMING_WORDS, NOT_EDGE, NOT_PROPER_ADJ, NOUN_AR, NOUN_ENDINGS_OK, PLURAL_MODIFIERS,
                          SECTION_WORDS, STOP, VAGUE_HEADS, VERBS)

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


def terms(text: str, title: bool = False) -> list[tuple[str, str, bool]]:
    """(normalised, surface, cut short) n-grams of one to four words that do not cross punctuation or stop
    words. "Cut short" when the phrase is the start of a longer one (the next word is an adjective:
    "Multi-Channel Graph" of "Multi-Channel Graph Neural Networks"), a piece of a Title-Case compound in a
    sentence ("Neural Networks" of "... uses Graph Neural Networks", "Human Feedback" of "Reinforcement
    Learning from Human Feedback"; a title's Title Case is no compound: title=True), or ends in a verb
    ("model capacity couples" of "model capacity couples the depth")."""
    out: list[tuple[str, str, bool]] = []
    for segment in re.split(r"[.,;:!?()\[\]{}\"“”]|\s[-–—]\s", clean(text)):
        tokens = _TOKEN.findall(segment)
        start = 0
        for j, w in enumerate(tokens + [""]):
            if w and _word_ok(w):
                continue
            run = [(norm(x.lower()), x) for x in tokens[start:j]]
            for i in range(len(run)):
                for n in (1, 2, 3, 4):
                    if i + n <= len(run):
                        part = run[i : i + n]
                        cut = (i + n < len(run) and adjective_like(run[i + n][1])) or \
                            (not title and _in_compound(tokens, start + i, start + i + n)) or \
                            (i + n == len(run) and _verb_before(run[-1][1], w))
                        out.append((" ".join(x for x, _ in part), " ".join(y for _, y in part), cut))
            start = j + 1
    return out


def _titled(w: str) -> bool:
    """Written with a capital and small letters after it (Graph, Multi-Channel, LoRA), not an acronym (GNN)."""
    return w[:1].isupper() and any(c.islower() for c in w)


def proper_adjective(w: str) -> bool:
    """An adjective from a name, capitalised wherever it stands: Bayesian, Gaussian, Hamiltonian, Euclidean."""
    return _titled(w) and w.lower().endswith(("ian", "ean")) and len(w) >= 6 and w.lower() not in NOT_PROPER_ADJ


_LINKS = {"of", "from"}  # inside a Title-Case name: "Mixture of Experts", "Learning from Human Feedback"


def _in_compound(tokens: list[str], a: int, b: int) -> bool:
    """Whether tokens[a:b] is a piece of a longer Title-Case name: a capitalised word next to its first or
    last, directly or across a small word ("Learning from Human Feedback"). The segment's first word may
    be capitalised only as a sentence's first: it joins no proper adjective ("Sparse Gaussian processes")."""
    def joined(x: int, y: int) -> bool:  # tokens x < y, adjacent or one link apart
        if not (0 <= x and y < len(tokens) and _titled(tokens[x]) and _titled(tokens[y])):
            return False
        if tokens[x].lower() in STOP or tokens[y].lower() in STOP:
            return False  # "We", "The", "Recent" open a sentence
        if y - x == 2 and (tokens[x + 1] not in _LINKS or proper_adjective(tokens[y])):
            return False  # "Learning from Human Feedback", not "Networks with Bayesian message passing"
        return not (x == 0 and proper_adjective(tokens[y]))
    return any(joined(a - d, a) or joined(b - 1, b - 1 + d) for d in (1, 2))


def _verb_before(w: str, following: str) -> bool:
    """A word ending in -s before a determiner is a verb ("couples the", "encapsulates a")."""
    lw = w.lower()
    return following.lower() in DETERMINERS and lw.endswith("s") and not lw.endswith(("ss", "us", "is", "ics")) and \
        sum(c.isupper() for c in w) < 2 and lw not in PLURAL_MODIFIERS


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
    # "possesses", "matches" fold to "possesse", "matche": the verb is without the -e
    if w in VERBS or (w.endswith(("sse", "she", "che", "xe")) and w[:-1] in VERBS):
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
    than after "the", "of", "our" … ("we identify", "which encodes", "is called": not the start of a name),
    or end in -s before a determiner ("capacity couples the depth")."""
    as_verb: dict[str, int] = {}
    as_noun: dict[str, int] = {}
    for text in texts:
        # the word after, within the clause: "Networks. The generator" is no verb before a determiner
        marked = re.findall(r"[A-Za-z][A-Za-z-]*|[^\sA-Za-z0-9-]", text)
        after = {}
        for k, (a, b) in enumerate(zip(marked, marked[1:] + [""])):
            after[k] = b if b[:1].isalpha() else ""
        words, nexts = [], []
        for k, x in enumerate(marked):
            if x[:1].isalpha():
                words.append(x)
                nexts.append(after[k])
        for prev, w, nxt in zip(words, words[1:], nexts[1:]):
            prev, raw, w = prev.lower(), w, norm(w.lower())
            if prev in _AFTER_VERB or (prev in _BE and w.endswith("ed")) or \
                    (prev not in _AFTER_NOUN and _verb_before(raw, nxt)):  # "model capacity couples the"
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
    if any(_verb_like(w, i == 0, len(words)) or w in verbs or w in NAMING_WORDS for i, w in enumerate(words)):
        return False
    if any(w.endswith("ly") and w not in NOUN_ENDINGS_OK for w in words):
        return False  # an adverb: a clause cut short ("linear attention fundamentally falls")
    if vague(term):
        return False
    shown = surface.split() if surface and len(surface.split()) == len(words) else []
    last = shown[-1] if shown else words[-1]
    if len(words) >= 2 and shown and _plural_opening(shown[0]):
        return False  # "encapsulates surface geometry": a verb, or a plural no name opens with
    if len(words) >= 2:
        adverb = words[0].endswith("ly") and words[0] not in NOUN_ENDINGS_OK  # not "anomaly detection"
        return words[0] not in NOT_EDGE and not adverb and not adjective_like(last) and last.lower() not in ADJ_ONLY
    w = surface or term
    if "-" in w and (adjective_like(w) or adjective_like(w.split("-")[0])):
        return False  # "Zero-Shot", "graph-based", "single-location" (of "single-location regression")
    return (w[:1].isupper() and not w.isupper() and w.lower() not in NOT_EDGE and w[1:] != w[1:].lower()) or \
        (sum(c.isupper() for c in w) >= 2) or ("-" in w and not adjective_like(term))


def vague(name: str) -> bool:
    """A name too vague to title a paragraph: its head says only what kind of thing it is ("Computational
    strategies", "A Bayesian approach", "Future directions"), or it holds a section heading ("Introduction")."""
    words = [norm(w) for w in re.findall(r"[a-z][a-z0-9-]*", name.lower())]
    return bool(words) and (words[-1] in VAGUE_HEADS or any(w in SECTION_WORDS for w in words))


def _plural_opening(w: str) -> bool:
    lw = w.lower()
    return (w[:1].islower() and lw.endswith("s") and not lw.endswith(("ss", "us", "is", "ics", "ous"))
            and "-" not in lw and lw not in PLURAL_MODIFIERS)


# -- concepts: how two names, a name and the topic, or a name and a paper are compared

_WORD = re.compile(r"[A-Za-z0-9]+")


@lru_cache(maxsize=100_000)
def stem(w: str) -> str:
    w = w.lower()  # stem_word reads regularised as regularized, as every lexical comparison does
    if len(w) > 2 and w.endswith("s") and w[:-1] in KNOWN_ACRONYMS:
        w = w[:-1]  # "gans" -> "gan"
    return stem_word(w)


def acronym_key(w: str) -> str:
    """The acronym a word is, lower-case and without its plural ("GANs" -> "gan"), or ''."""
    core = w[:-1] if w.endswith("s") and sum(c.isupper() for c in w[:-1]) >= 2 else w
    if sum(c.isupper() for c in core) >= 2 and core.replace("-", "").isalnum() and len(core) <= 6:
        return core.lower()
    return ""


_LINK_WORDS = {"of", "from", "for", "the", "and", "to", "in", "with", "on", "by", "via"}


def definitions(text: str) -> dict[str, str]:
    """The acronyms a text defines, each with the words it stands for, as written before it in brackets:
    "generative adversarial networks (GANs)" -> {"gan": "generative adversarial networks"} (as written); small
    words inside may go without a letter ("reinforcement learning from human feedback (RLHF)")."""
    out: dict[str, str] = {}
    for m in re.finditer(r"((?:[A-Za-z][A-Za-z0-9-]*\s+){1,7})\((\w[\w-]{1,7})\)", text):
        key = acronym_key(m.group(2))
        if not key or key in out:
            continue
        words = m.group(1).split()
        for n in range(1, min(len(words), len(key) + 2) + 1):  # the fewest words whose initials spell it
            tail = words[-n:]
            if tail[0].lower() in _LINK_WORDS:
                continue
            pieces = [p[0].lower() for w in tail for p in w.split("-") if p]
            initials = "".join(w[0].lower() for w in tail)
            content = "".join(w[0].lower() for w in tail if w.lower() not in _LINK_WORDS)
            if key in (initials, "".join(pieces), content):
                out[key] = " ".join(tail)
                break
    return out


def acronyms(texts: list[str]) -> dict[str, str]:
    """Acronym -> the words it stands for: written out before it in brackets in one of the texts
    ("generative adversarial networks (GANs)"), else a common one (RL, LLM, GNN)."""
    out: dict[str, str] = {}
    for text in texts:
        for key, words in definitions(text).items():
            out.setdefault(key, words.lower())
    return {**KNOWN_ACRONYMS, **out}


def spelled_out(name: str, texts: list[str]) -> str | None:
    """What an acronym ("GANs", "RLHF", "DP") stands for in these texts: the words most of those that define it
    write (plural or not), when at least two of the texts and a quarter as many as write the acronym use those
    words too; else a common reading (KNOWN_ACRONYMS); None when the name is not an acronym alone or nothing
    spells it out. A model's name its papers define once and then write as a name stays a name ("BERT": 1 of
    the 4 papers writing it also writes "Bidirectional Encoder Representations from Transformers")."""
    key = acronym_key(name.strip())
    if not key or " " in name.strip():
        return None
    written = Counter(d[key] for d in map(definitions, texts) if key in d)
    if not written:
        return KNOWN_ACRONYMS.get(key)
    folded = Counter()
    for words, n in written.items():
        folded[_folded(words)] += n
    best = folded.most_common(1)[0][0]
    using = sum(1 for t in texts if f" {best} " in f" {_folded(t)} ")
    writing = sum(1 for t in texts if _acronym(name.strip().rstrip("s")).search(t))
    if using < 2 or 4 * using < writing:
        return KNOWN_ACRONYMS.get(key)
    # The spelling most of the texts write, hyphen or not: papers define "variational auto-encoders" but more
    # write "variational autoencoders" (13 of 30 against 7 on mlqa), and BM25 and the word features read the two
    # apart. Then as written mid-sentence: the fewest capitals ("Markov chain Monte Carlo", not a sentence's
    # "Generative ...").
    forms = [w for w in written if _folded(w) == best]
    forms += [w.replace("-", "") for w in forms if "-" in w]
    plain = [f" {_plain(t)} " for t in texts]
    writes = {f: sum(1 for t in plain if f" {_plain(f)} " in t) for f in set(forms)}
    return min(forms, key=lambda w: (-writes[w], sum(c.isupper() for c in w), -written[w]))


def _plain(text: str) -> str:
    """Lower-case words, plurals folded, hyphens kept: "auto-encoders" and "autoencoder" read apart."""
    return " ".join(norm(w) for w in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower()))


def _folded(text: str) -> str:
    """Lower-case words, plurals folded, hyphens closed up, other marks as spaces: "Variational Auto-Encoders"
    and "variational autoencoder" read alike."""
    return " ".join(norm(w) for w in re.sub(r"[^a-z0-9]+", " ", text.lower().replace("-", "")).split())


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



def broad(key: frozenset[str], acr: dict[str, str] | None = None) -> bool:
    """A field too broad to title a paragraph ("Reinforcement learning", "LLMs", "Neural networks")."""
    return any(key == concept(b, acr or {}) for b in BROAD)
