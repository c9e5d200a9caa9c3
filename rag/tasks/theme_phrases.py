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

_STOP = set("""
a about above across after again against all almost along also although always among an and another any are
around as at available be because been before being below between both but by can cannot could did do does
doing done due during each either enough especially even ever every few first for from further furthermore
get gets given has have having here hence how however if in into is it its itself just known large largely
less like made mainly make makes many may might more moreover most much must namely near nearly neither no nor
not notably now of off often on once one only onto or other others otherwise our ours out over own per
perhaps rather recently same several shall should show shows shown showed significantly since so some still
such than that the their theirs them themselves then there thereby therefore these they this those though
three through thus to too two under until up upon us use used uses using various very via was we well were
what whether when where which while who whom whose why will with within without would yet
paper papers work works study code github available consistently outperform outperforms enable enables
allow allows reveal reveals capture captures exhibit exhibits rely relies studies studied propose proposed proposes introduce introduced introduces
present presents presented approach approaches method methods framework frameworks result results new novel
demonstrate demonstrates demonstrated based provide provides provided existing prior previous recent address
addresses challenge challenges problem problems task tasks achieve achieves achieving remains remain key
including include includes across leading lead leads often particular particularly specifically
experiments experimental empirical empirically extensive state art significant improve improves improved
improvement performance effective effectively efficient efficiently simple wide range real world
theoretical theoretically theory analysis analyze analyse analyzed establish establishes established
prove proves proved yields yield obtain obtains obtained consider considers considered develop develops
developed well-known widely fundamental understanding understood poorly terms term setting settings
however still despite whereas compared respectively finally moreover additionally thereby first second
state-of-the-art sota
""".split())
# Words too general to name a theme alone, or together ("Labeled data", "Success rate", "Deep neural"):
# fine inside a phrase that has a word of its own ("graph neural networks").
GENERIC = set("""
network model data learning algorithm function system set distribution error bound loss training
performance structure parameter feature domain query stability extension sample space method task
representation generalization optimization analysis condition property rate complexity dimension
input output objective solution value class framework approach setting process dynamic regime
architecture mechanism effect behavior behaviour capability application evaluation accuracy efficiency
information knowledge signal target source scale level step order size number case type form
guarantee result finding evidence role impact factor aspect
deep neural language large labeled labelled unlabeled unlabelled success quality machine benchmark dataset
zero-shot few-shot one-shot state-of-the-art end-to-end agent environment baseline experiment image text video
word token sequence prediction inference robustness generation modeling modelling research survey
""".split())
# Fields too broad to title a paragraph of a summary on anything ("Reinforcement learning" in a
# meta-learning or a sim-to-real summary, "Language models", "Neural networks"): compared as concepts.
_BROAD = ("reinforcement learning", "deep reinforcement learning", "deep learning", "machine learning",
          "neural network", "deep neural network", "language model", "large language model", "computer vision",
          "natural language processing", "supervised learning", "transformer")
# Words a name never starts or ends with: prepositions, comparatives and adjectives that lead fragments
# such as "Faster and deviation", "Beyond and limit", "Similar and cost".
_NOT_EDGE = set("""
beyond toward towards versus across against among along amid within without upon onto
faster slower better worse larger smaller higher lower stronger weaker greater deeper wider longer shorter
similar different general specific common standard simple complex naive exact approximate arbitrary
constant important informative various respective sustained existing throughout
supporting leveraging using providing enabling making yielding allowing achieving exploiting simulate simulating
certain whole entire main major minor key core basic novel unified joint single multiple many
possible necessary sufficient able unable likely unlikely hard easy difficult
limit limits limited fail fails failing lack lacks achieve enables improving increasing reducing
deep neural generative adversarial discriminative probabilistic stochastic deterministic semantic dynamic
multi-modal multimodal visual spatial temporal robust accurate scalable efficient effective optimal
advanced current inherent recent modern traditional classical conventional typical prominent popular powerful
promising remarkable significant substantial strong good great crucial critical essential best
""".split())
# Verbs (terms are plural-folded: "requires" -> "require"): a phrase holding one is a clause cut short
# ("self-consistency requires", "GS-Pose operates", "Detect unlabeled errors").
_VERBS = {"way", "thing", "lot", "kind", "part", "use", "fact", "issue", "work", "learn", "train", "solve",
          "show", "find", "study", "prove", "apply", "compute", "predict", "estimate",
          "require", "remain", "provide", "yield", "achieve", "enable", "allow", "lead", "make", "depend",
          "emerge", "hold", "suggest", "imply", "need", "offer", "perform", "improve", "reduce", "outperform",
          "become", "seem", "appear", "exhibit", "capture", "match", "help", "fail", "rely", "ensure",
          "operate", "detect", "assess", "induce", "explore", "investigate", "examine", "evaluate", "build",
          "generate", "leverage", "exploit", "consist", "contain", "employ", "incorporate", "integrate",
          "introduce", "propose", "present", "develop", "design", "extend", "combine", "focus", "aim",
          "adapt", "obtain", "outline", "tackle", "handle", "mitigate", "overcome", "address", "boost", "fall",
          "revisit", "rethink", "bridge", "unify", "lift", "interpolate", "underpin", "admit", "gain", "rise"}
# "-ing" words that are nouns at the head of a phrase ("learning rate", "rendering quality"); any other
# "-ing" word opening a phrase is a verb ("Assessing generative adversarial", "Inducing grammars").
_ING_NOUNS = set("""
learning training rendering clustering embedding planning reasoning splatting fine-tuning sampling
pruning matching hashing pooling boosting encoding forecasting tracking labeling labelling modeling modelling
computing processing editing grounding mapping routing scheduling ranking prompting programming engineering
understanding answering captioning parsing tagging filtering denoising inpainting dubbing driving grasping
manufacturing teaching reading writing meta-learning pretraining pre-training self-training morphing
scaling thinking caching batching masking smoothing shaping clipping checkpointing merging steering unlearning
watermarking reranking forgetting coloring colouring partitioning coding decoding indexing imaging sensing
""".split())
# Nouns that end like adjectives; any other word so ending is read as an adjective ("clouds neural",
# "semi-supervised probabilistic", "Multi-Channel Graph" is fine, "Deep neural" is not).
_NOUN_ENDINGS_OK = set("""
signal interval potential proposal retrieval removal arrival trial tutorial journal animal capital approval
rival manual terminal material individual survival denial appraisal rehearsal disposal renewal reversal
referral withdrawal portal principal total mineral crystal metal pedal goal deal mammal petal
metric logic topic heuristic music arithmetic graphic clinic epidemic rhetoric mechanic critic traffic
fabric magic panic mimic dynamic dynamics physic physics tactic tactics
objective derivative alternative incentive initiative primitive narrative representative directive
perspective detective archive motive relative adjective collective positive negative
speed seed need feed bed embed shed hundred
agent gradient component segment element treatment environment assessment statement moment argument
experiment instrument document equipment alignment adjustment management deployment fragment student
patient client content parent talent event intent extent percent accent descent
variant assistant participant quadrant plant grant tenant pendant
boundary summary library dictionary vocabulary glossary adversary commentary
test interest request forest contest quest harvest
anomaly family assembly supply reply monopoly drive five table variable cable robotics
""".split())
_NOUN_AR = set("scalar bar car star year radar seminar calendar grammar pillar collar dollar sugar war lidar".split())
_ADJ_SUFFIX = ("ous", "ive", "able", "ible", "ful", "less", "ly", "ed", "al", "ic", "ent", "ant", "ary", "est")
# The last piece of a hyphenated adjective ("graph-based", "data-driven", "zero-shot", "first-order").
_ADJ_PIECE = set("""
based driven aware free invariant specific shot level wise agnostic guided efficient like scale grained
order time step modal dimensional supervised trained tuned conditioned constrained dependent independent
art end oriented centric related informed inspired augmented enhanced preserving consistent sensitive
""".split())
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-\u2011][A-Za-z0-9]+)*")
# Acronyms common enough that a paper need not spell them out
_KNOWN_ACRONYMS = {
    "rl": "reinforcement learning", "llm": "large language model", "lm": "language model",
    "gnn": "graph neural network", "gan": "generative adversarial network", "cnn": "convolutional neural network",
    "rnn": "recurrent neural network", "nlp": "natural language processing", "icl": "in-context learning",
    "fl": "federated learning", "dp": "differential privacy", "nmt": "neural machine translation",
    "3dgs": "3d gaussian splatting", "gs": "gaussian splatting", "rlhf": "reinforcement learning from human feedback",
    "ot": "optimal transport", "ssm": "state space model", "vae": "variational autoencoder",
    "dnn": "deep neural network", "kg": "knowledge graph", "qa": "question answering", "mt": "machine translation",
}


def clean(text: str) -> str:
    text = re.sub(r"(?:https?://|www\.)\S+|\S+\.(?:com|org|io|net)\S*", " . ", text)  # links, code pointers
    text = re.sub(r"\$[^$]*\$", " . ", text)  # math
    text = re.sub(r"\\[A-Za-z]+\{([^{}]*)\}", r"\1", text)  # \emph{x} -> x
    text = re.sub(r"\\[A-Za-z]+", " ", text)
    return text.replace("*", "").replace("`", "")


def _word_ok(w: str) -> bool:
    lw = w.lower()
    if lw in _STOP or lw.isdigit() or not any(c.isalpha() for c in lw):
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
    if w in _NOT_EDGE or w in _STOP:
        return True
    if w in _NOUN_ENDINGS_OK:
        return False
    piece = w.split("-")[-1]
    if "-" in w and (piece in _ADJ_PIECE or piece in _NOT_EDGE):
        return True
    if piece in _NOUN_ENDINGS_OK or norm(piece) in _NOUN_ENDINGS_OK:
        return False
    return piece.endswith(_ADJ_SUFFIX) or (piece.endswith("ar") and piece not in _NOUN_AR)


def _verb_like(w: str, first: bool, n_words: int) -> bool:
    if w in _VERBS:
        return True
    # an -ing word opening a phrase of several words acts on the rest ("Exploring adversarial robustness"),
    # and after its first word it is a participle ("decomposition comprising RKHS")
    ing = w.endswith("ing") and w not in _ING_NOUNS and w.split("-")[-1] not in _ING_NOUNS
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
    return {w for w, n in as_verb.items() if n > as_noun.get(w, 0) and w not in _ING_NOUNS and w not in _STOP}


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
    if any(w.endswith("ly") and w not in _NOUN_ENDINGS_OK for w in words):
        return False  # an adverb: a clause cut short ("linear attention fundamentally falls")
    last = surface.split()[-1] if surface and len(surface.split()) == len(words) else words[-1]
    if len(words) >= 2:
        adverb = words[0].endswith("ly") and words[0] not in _NOUN_ENDINGS_OK  # not "anomaly detection"
        return words[0] not in _NOT_EDGE and not adverb and not adjective_like(last)
    w = surface or term
    if "-" in w and (adjective_like(w) or adjective_like(w.split("-")[0])):
        return False  # "Zero-Shot", "graph-based", "single-location" (of "single-location regression")
    return (w[:1].isupper() and not w.isupper() and w.lower() not in _NOT_EDGE and w[1:] != w[1:].lower()) or \
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
    if len(w) > 2 and w.endswith("s") and w[:-1].isupper() is False and w[:-1] in _KNOWN_ACRONYMS:
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
    return {**_KNOWN_ACRONYMS, **out}


def concept(text: str, acr: dict[str, str] | None = None) -> frozenset[str]:
    """The stemmed content words of a phrase, an acronym replaced by the words it stands for:
    "Offline RL" and "offline reinforcement learning" are one concept."""
    acr = _KNOWN_ACRONYMS if acr is None else acr
    out: set[str] = set()
    for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", text):
        key = acronym_key(w)
        if key and key in acr:
            out |= concept(acr[key], {})
            continue
        for piece in w.split("-"):
            if piece.lower() not in _STOP and len(piece) > 1:
                out.add(stem(piece))
    return frozenset(out)


def text_key(text: str, acr: dict[str, str]) -> frozenset[str]:
    """Every stem a paper's text holds, with the stems of the acronyms it uses spelled out."""
    return concept(text, acr) | frozenset(stem(w) for w in _WORD.findall(text))


def holds(paper_key: frozenset[str], key: frozenset[str]) -> bool:
    return bool(key) and key <= paper_key


def broad(key: frozenset[str], acr: dict[str, str] | None = None) -> bool:
    """A field too broad to title a paragraph ("Reinforcement learning", "LLMs", "Neural networks")."""
    return any(key == concept(b, acr or {}) for b in _BROAD)
