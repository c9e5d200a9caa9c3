"""The probability that a retrieved paper belongs to a research area: a logistic regression over what a
reader weighs -- how close its contribution, background, title and whole text come to the area (MiniLM
cosine, also against the best candidate), where the area's words fall (title, contribution, background,
keywords; the whole phrase, its head and its modifier: "optimal transport" of "optimal transport in
machine learning"; a name with a setting is named by its head in a paper in that setting), its acronym,
a mention only as a test bed (rag.tasks.topicality.tested_on), BM25 and the retrieval rank. A second stage
adds a weight on how alike the paper is to the area's three most probable other papers (company()): one let
in by its rank and the setting's words alone sits apart from them.

Trained by bench/train_area_scorer.py on the train areas of ../shared/data/mlqa/topics.jsonl (papers judged
core are positives, related half, off and unjudged negatives; the second stage on top of the first's logit);
the weights, their standardisation and the two cut-offs (covered; related, not summarised) ship as
area_scorer.npz beside this file, run by numpy.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.reading.grades import RELEVANCE_FLOOR
from rag.reading.vector_kind import STANDALONE, vector_kind, weights_for
from rag.tasks.topicality import (ON_TOPIC, Reading, _acronym, _content, _parts, holds, naming,
                                  phrase_of, phrase_parts)

WEIGHTS = Path(__file__).with_name("area_scorer.npz")
FEATURES = ("contrib_cos", "background_cos", "title_cos", "paper_cos", "paper_cos_gap", "contrib_cos_gap",
            "whole_title", "whole_contrib", "whole_background", "named_share", "acronym", "head_any", "tail_any",
            "cover_title", "cover_abstract", "cover_keywords", "has_keywords", "whole_keywords", "tested_only",
            "bm25_share", "dense", "log_rank", "old_score")
# A modifier opens with one of these: "optimal transport in machine learning", "normalisation for training
# deep networks", "hallucination of large language models": the head is the area, the tail its setting.
_MODIFIER = re.compile(r"\s+(?:in|for|of|on|from|with|under|via|using|through|against|to|by)\s+", re.IGNORECASE)


def _pieces(topic: str) -> list[list[str]]:
    """Per part of the name ("X and Y"), its head and modifiers as text: "optimal transport in machine
    learning" -> [["optimal transport", "machine learning"]]."""
    return [[p.strip() for p in _MODIFIER.split(f" {part.strip()} ") if phrase_of(p)] for part in _parts(topic)]


def topic_forms(topic: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]], list[tuple[str, ...]], set[str]]:
    """(whole phrases of its parts, their heads, their tails, every content stem): "optimal transport in
    machine learning" -> [(optim, transport, machin, learn)], [(optim, transport)], [(machin, learn)]."""
    whole = phrase_parts(topic)
    with_setting = [p for p in _pieces(topic) if len(p) > 1]
    heads, tails = [phrase_of(p[0]) for p in with_setting], [phrase_of(p[-1]) for p in with_setting]
    words = {w for p in whole for w in p}
    return whole, heads or whole, tails, words


def split_name(topic: str) -> tuple[str, str]:
    """(head, setting) as text, the setting being the last modifier, as topic_forms' tails: "optimizers for
    training deep networks" -> ("optimizers", "training deep networks"); "pruning and quantization for model
    compression" -> ("pruning and quantization", "model compression"); a bare name -> (the name, "")."""
    pieces = [p for p in _pieces(topic) if p]
    tails = [p[-1] for p in pieces if len(p) > 1]
    return (" and ".join(p[0] for p in pieces), " and ".join(tails)) if tails else (topic, "")


def _holds(words: list[str], phrases: list[tuple[str, ...]]) -> bool:
    return any(holds(words, p) for p in phrases)


# A setting that names the whole field ("in machine learning", "with deep learning") restricts nothing: every
# paper of the library is in it, whether or not it writes the words.
FIELDS = ("machine learning", "deep learning")
_FIELD_PHRASES = {phrase_of(f) for f in FIELDS}


def without_field(topic: str) -> str | None:
    """The name less a last modifier that names the whole field ("reinforcement learning from human feedback in
    machine learning" -> "reinforcement learning from human feedback"); None when it has none."""
    cuts = list(_MODIFIER.finditer(topic))
    if not cuts or phrase_of(topic[cuts[-1].end():]) not in _FIELD_PHRASES:
        return None
    return topic[: cuts[-1].start()].strip() or None


def in_setting(stems: set[str], text: str, settings: list[tuple[str, ...]], acronyms: set[str]) -> bool:
    """Whether a paper (its content stems, its text) is in a name's setting: more than half of one setting's
    words ("large models" is in "large language models"), or its acronym ("LLMs")."""
    return (any(2 * len(set(t) & stems) > len(set(t)) for t in settings)
            or any(_acronym(a).search(text) for a in acronyms))


def vectors(topic: str, readings: list[Reading], emb) -> np.ndarray:
    """The area's unit vector, then each paper's (title and abstract), in one batch."""
    from rag.tasks.themes import paper_text  # themes imports topicality too: read it here, not at the top

    return emb.embed_array([topic] + [paper_text(r.paper) for r in readings])


def features(topic: str, readings: list[Reading], emb, vecs: np.ndarray | None = None) -> np.ndarray:
    """One row of FEATURES per reading (rag.tasks.topicality.read, in retrieval order); `vecs`: vectors()
    when already computed."""
    if not readings:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    # A setting naming the whole field restricts nothing: the name's words are read as if it were not typed
    # ("convergence of stochastic gradient descent in machine learning" as "convergence of stochastic gradient
    # descent", itself a head in its setting); the cosines still read the name as typed.
    named_as = without_field(topic) or topic
    whole, heads, tails, words = topic_forms(named_as)
    _, acronyms = naming(named_as)
    head_name, setting = split_name(named_as)
    # A name with a setting is named where its head is, in a paper in that setting (most of the setting's
    # words, or its acronym): "in-context learning" / "ICL" in an abstract on large language models names
    # "in-context learning of large language models", though no abstract writes the whole name. Not in
    # another setting: "reinforcement learning" alone does not name "reinforcement learning from human
    # feedback". Measured in docs/quality.md ("Names with a setting read by their head").
    by_head = (whole + heads, acronyms | naming(head_name)[1]) if setting else None
    setting_acronyms = naming(setting)[1] if setting else set()
    vecs = vectors(topic, readings, emb) if vecs is None else vecs
    paper_cos = vecs[1:] @ vecs[0]
    lexical = max((r.hit.lexical for r in readings), default=0.0) or 1.0
    rows = []
    for rank, (r, pc) in enumerate(zip(readings, paper_cos)):
        cos = r.cosine if r.cosine is not None and len(r.cosine) == len(r.sentences) else r.relevance
        contrib = set(r.contribution())
        c = [float(cos[i]) for i in contrib] or [0.0]
        b = [float(cos[i]) for i in range(len(r.sentences)) if i not in contrib] or [0.0]
        stems = [_content(s)[0] for s in r.sentences]
        title = _content(r.paper.title)[0] if r.paper.title and not r.paper.title_derived else []
        kw = _content(" ; ".join(r.paper.keywords))[0] if r.paper.keywords else []
        abstract = {w for ss in stems for w in ss}
        phrases, acr = whole, acronyms
        if by_head and in_setting(set(title) | abstract, f"{r.paper.title} {r.paper.abstract}", tails,
                                  setting_acronyms):
            phrases, acr = by_head
        named = [_holds(ss, phrases) or any(_acronym(a).search(s) for a in acr) for ss, s in zip(stems, r.sentences)]
        untested = [i for i in range(len(r.sentences)) if i not in r.tested]
        rows.append([
            max(c), max(b), r.title_cosine, float(pc), 0.0, 0.0,
            float(_holds(title, phrases)),
            float(any(named[i] for i in contrib)),
            float(any(named[i] for i in untested if i not in contrib)),
            sum(named) / max(len(named), 1),
            float(any(_acronym(a).search(r.paper.abstract + " " + r.paper.title) for a in acr)),
            float(_holds(title, heads) or any(_holds(stems[i], heads) for i in untested)),
            float(bool(tails) and (_holds(title, tails) or any(_holds(ss, tails) for ss in stems))),
            len(words & set(title)) / max(len(words), 1),
            len(words & abstract) / max(len(words), 1),
            len(words & set(kw)) / max(len(words), 1),
            float(bool(kw)),
            float(_holds(kw, phrases)),
            float(bool(r.tested) and not any(named[i] for i in untested)),
            r.hit.lexical / lexical, r.hit.dense, float(np.log1p(rank)), r.score,
        ])
    x = np.asarray(rows, dtype=np.float32)
    # A paper with no authored title (derived from its abstract, as the seeds' are) is read by its best
    # contribution sentence instead: the mlqa papers it was trained on all have titles, and a zero there read
    # as "the title is off the area" dropped the seeds' papers.
    untitled = np.array([not (r.paper.title and not r.paper.title_derived) for r in readings])
    for title_f, stand_in in (("title_cos", "contrib_cos"), ("whole_title", "whole_contrib"),
                              ("cover_title", "cover_abstract")):
        x[untitled, FEATURES.index(title_f)] = x[untitled, FEATURES.index(stand_in)]
    x[:, 4] = x[:, 3] - x[:, 3].max()  # against the best candidate: how central to what was retrieved
    x[:, 5] = x[:, 0] - x[:, 0].max()
    return x


@lru_cache(maxsize=2)
def _load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def model(kind: str = STANDALONE) -> dict[str, np.ndarray]:
    """The shipped weights for sentence vectors of `kind` (rag.reading.vector_kind): area_scorer.npz for both
    kinds while no area_scorer.pooled.npz ships (one-pass vectors are read out to stand in for stand-alone ones),
    loaded once per file."""
    return _load(weights_for(WEIGHTS, kind))


def company(p: np.ndarray, vecs: np.ndarray, top: int) -> np.ndarray:
    """Each paper's mean cosine (unit `vecs`) to the `top` most probable other papers (by `p`). An area's
    papers are alike; one let in by its rank and the setting's words sits apart from them (an auction-price
    paper on "deep recurrent neural networks" among methods that explain networks' predictions)."""
    if len(p) < 2:  # no others to be like: the train areas' mean, so the stage adds only its bias
        return np.full(len(p), np.nan)
    cos = vecs @ vecs.T
    order = np.argsort(-p, kind="stable")
    return np.array([cos[i, [j for j in order if j != i][:top]].mean() for i in range(len(p))])


def logits(x: np.ndarray, m: dict[str, np.ndarray], vecs: np.ndarray | None = None) -> np.ndarray:
    """The scorer's logit per row of features; with `vecs` (the papers' unit vectors) and a second stage in
    `m`, plus its weight on company() by the first stage's probabilities."""
    z = ((x - m["mean"]) / m["std"]) @ m["w"] + float(m["b"])
    if vecs is None or "company_w" not in m:
        return z
    c = np.nan_to_num((company(1.0 / (1.0 + np.exp(-z)), vecs, int(m["company_top"])) - float(m["company_mean"]))
                      / float(m["company_std"]))
    return z + float(m["company_w"]) * c + float(m["company_b"])


def probabilities(topic: str, readings: list[Reading], emb, x: np.ndarray | None = None,
                  vecs: np.ndarray | None = None) -> np.ndarray:
    """P(the paper belongs to the area) per reading (`x`: its features, `vecs`: vectors(), when computed);
    also set on each reading's `probability`."""
    m = model(vector_kind(emb))
    vecs = vectors(topic, readings, emb) if vecs is None else vecs
    x = features(topic, readings, emb, vecs) if x is None else x
    if not len(x):
        return np.zeros(0)
    assert tuple(m["names"]) == FEATURES, "area_scorer.npz was trained on other features: rerun bench/train_area_scorer.py"
    p = 1.0 / (1.0 + np.exp(-logits(x, m, vecs[1:])))
    for r, q in zip(readings, p):
        r.probability = float(q)
    return p


def cut_offs(kind: str = STANDALONE) -> tuple[float, float]:
    """(covered at or above, related-not-summarised at or above), as trained on vectors of `kind`."""
    m = model(kind)
    return float(m["cover"]), float(m["near"])


MAX_RELATED = 5
CONFIDENT = 0.7  # a probability that needs no gate (on_topic)


def on_topic(topic: str, readings: list[Reading], emb) -> tuple[list[Reading], list[Reading]]:
    """(the papers that belong to the area, most probable first; 'related, not summarised': the next most
    probable, at most MAX_RELATED, above the lower cut-off or reaching rag.reading.grades' floor).

    A paper is covered when its probability reaches the cut-off and it names the area's head outside a test
    bed (its phrase, or the head of "X in Y") or its contribution reaches ON_TOPIC (the former rule). The
    second condition keeps the former rules as a gate: in the seeds' 76-paper library the probability,
    trained on 3,000 papers where the best-ranked candidates are mostly on the area, let in papers ranked
    first only for want of better ("feed-forward ReLU networks on DAGs" for "graph neural networks", a test
    bed's "synthetic data"). A paper at CONFIDENT or more needs no gate: an area whose papers name it in other
    words ("explanations" for "explaining predictions") kept its core papers. Chosen on the mlqa train areas
    (gate with CONFIDENT: precision 0.945, core recall 0.825; no gate 0.940 / 0.836) and the seeds' cases."""
    vecs = vectors(topic, readings, emb)  # once: the features and the company stage both read them
    x = features(topic, readings, emb, vecs)
    p = probabilities(topic, readings, emb, x, vecs)
    cover, near = cut_offs(vector_kind(emb))
    head = x[:, FEATURES.index("head_any")] > 0 if len(x) else np.zeros(0, bool)
    order = np.argsort(-p, kind="stable")
    keep = [readings[i] for i in order
            if p[i] >= CONFIDENT or p[i] >= cover and (head[i] or readings[i].score >= ON_TOPIC)]
    kept = {id(r) for r in keep}
    rest = [readings[i] for i in order if id(readings[i]) not in kept and (p[i] >= near or readings[i].score >= RELEVANCE_FLOOR)]
    return keep, rest[:MAX_RELATED]
