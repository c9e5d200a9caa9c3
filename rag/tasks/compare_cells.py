"""Which of a paper's sentences fills each column of a comparison table, by its rhetorical role.

    Problem   an objective or background sentence (rag.reading.roles): what the paper sets out to solve
    Approach  a method sentence
    Finding   a result sentence
    Setting   a sentence naming the data, the model class or the assumptions: not a role, so found by
              its words (SETTING_CUES: "dataset", "benchmark", ImageNet, "two-layer networks", "LLMs",
              "assume", "Lipschitz", "regime", ...) among the sentences that are not background (those
              describe other work) and are not in another cell; else the cell is `not stated`

Within a column the sentence most relevant to the topic wins (rag.reading.grades' score, which
rag.tasks.topicality already computed per sentence), blended for Problem and Finding with the answer
scorer's probability for the column asked as a question (COLUMN_QUESTIONS, COLUMN_SCORER_WEIGHT). A column
whose role no sentence carries is `not stated`: a cell never borrows a sentence of another role. Within its role a cell prefers a sentence
that stands alone (rag.reading.standalone.standing, the check answers use): "Getting there requires reworking
..." leans on the sentence before it, and a table cell has no sentence before it. A sentence whose opening
clause alone leans ("To address this, we propose X") is shown as its main clause; one that leans
throughout fills the cell only when no sentence of the role stands. A long sentence is shown as its clause
most relevant to the topic when that clause carries nearly all of the sentence's relevance (the span
that reads as a phrase); the whole sentence stays in `Cell.sentence` (what the UI highlights).
"""

from __future__ import annotations

import re

import numpy as np

from rag.reading.answer_scorer import contribution_opening, probabilities
from rag.reading.citations import quote
from rag.reading.grades import relevance
from rag.reading.standalone import leans, standing
from rag.tasks.comparison import Cell
from rag.tasks.themes import paper_text
from rag.tasks.topicality import Reading, read

ROLE_COLUMNS = {"problem": ("objective", "background"), "approach": ("method",), "finding": ("result",)}
# A problem statement more often says what is hard or missing than what the field is.
_PROBLEM_CUES = re.compile(r"\b(?:challeng\w*|problem\w*|however|remain\w*|limit\w*|fail\w*|lack\w*|costly|"
                           r"expensive|difficult\w*|open question|gap|bottleneck|suffer\w*|unclear|unknown|"
                           r"poorly understood|address\w*|we (?:study|investigate|ask|consider))\b", re.IGNORECASE)
PROBLEM_CUE_BONUS = 0.05
# Where in the abstract a column's sentence tends to sit, as a lead per relative position (0 first, 1
# last). On CSAbstruct dev (bench/compare_roles.py --tune) a problem sentence is right more often the
# earlier it sits: 0.864 of filled cells with no lead, 0.898 with 0.2, 0.922 with 0.5; past 0.2 the
# position would outweigh the topic (relevance scores spread about 0.3), so 0.2. A finding gains
# nothing worth it (0.665 -> 0.669 at 0.2): none.
POSITION_LEAD = {"problem": -0.2, "finding": 0.0}
# The column as the question to the answer scorer (rag.reading.answer_scorer; each reads as its question kind:
# problem, how, finding), the table's topic in it when there is one. Within the column's role a sentence's
# score is (1 - w) * the rule above (relevance, cue, position) + w * the scorer's probability, w per column
# chosen on CSAbstruct dev (bench/compare_roles.py --tune: the share of filled cells whose sentence carries
# the column's gold label, read per column) and kept only where CSAbstruct test agrees:
# - Finding 1.0 (the scorer alone): dev 0.662 -> 0.694, test 0.686 -> 0.711;
# - Problem 0.6: dev 0.905 and test 0.933 either way (the position lead does this column's work; at 1.0
#   dev falls to 0.854);
# - Approach 0 (the rule stays): dev 0.579 -> 0.597 at 0.6-0.8, but test 0.695 -> 0.675.
COLUMN_QUESTIONS = {"problem": ("What problem does this paper address?", "What problem in {topic} does it address?"),
                    "approach": ("How does this paper approach it?", "How does it approach {topic}?"),
                    "finding": ("What did this paper find?", "What did it find about {topic}?")}
COLUMN_SCORER_WEIGHT = {"problem": 0.6, "approach": 0.0, "finding": 0.5}
SETTING_CUES = re.compile(
    # data
    r"\b(?:data ?sets?|benchmarks?|corpus|corpora|real[- ]world data|synthetic data|simulations?|"
    r"(?:experiments?|evaluat\w+|tested|trained|validated) (?:on|across|using)|"
    r"ImageNet|CIFAR-?\d*|MNIST|COCO|GLUE|SuperGLUE|WikiText|MMLU|GSM8K|HumanEval|MATH|LibriSpeech|Atari|"
    r"MuJoCo|D4RL|OGB|SQuAD|"
    # model class
    r"two-layer|shallow|one-hidden-layer|single-layer|deep linear|linear models?|over-?parameteri[sz]ed|"
    r"infinite[- ]width|wide networks|(?:large )?language models?|LLMs?|transformers?|"
    # assumptions
    r"assum\w*|suppose|i\.i\.d|Lipschitz|smoothness|bounded|convex|non-?convex|regimes?|"
    r"setting where|finite[- ]sample|high-dimensional|mean[- ]field|Gaussian)\b", re.IGNORECASE)
SETTING_ROLES = ("method", "result", "objective", "other")
# Clauses: a long sentence (SPAN_FROM characters or more) is cut at semicolons, dashes and the commas
# that open a relative or consequence clause; a clause of at least SPAN_MIN_WORDS words carrying at
# least SPAN_SHARE of the whole sentence's relevance is shown instead of the sentence.
SPAN_FROM = 160
SPAN_MIN_WORDS = 6
SPAN_SHARE = 0.9
_CLAUSE = re.compile(r";\s+|\s+[—–]\s+|,\s+(?=(?:which|where|while|whereas|thereby|and thus|thus|so that|"
                     r"resulting in|leading to|yielding|achieving|enabling|allowing)\b)")


_SUBORDINATE = re.compile(r"^(?:which|where|while|whereas|thereby|and thus|thus|so that|resulting|leading|yielding|"
                          r"achieving|enabling|allowing)\b")


def clauses(sentence: str) -> list[str]:
    """The sentence's clauses (itself alone when it has none), as substrings of it."""
    parts = [p.strip(" ,;") for p in _CLAUSE.split(sentence)]
    return [p for p in parts if p]


def phrase_clauses(sentence: str) -> list[str]:
    """The clauses that read on their own: not a relative or consequence clause ("which ...", "thus ...")."""
    return [p for p in clauses(sentence) if not _SUBORDINATE.match(p)]


def column_question(column: str, topic: str = "") -> str:
    bare, about = COLUMN_QUESTIONS[column]
    return about.format(topic=topic) if topic else bare


def column_probabilities(readings: list[Reading], topic: str, emb) -> list[dict[str, np.ndarray]]:
    """Per reading, each role column's answer-scorer probability per sentence (the column as the question)."""
    if not any(COLUMN_SCORER_WEIGHT.values()) or not readings:
        return [{} for _ in readings]
    abstracts, roles = [r.sentences for r in readings], [r.roles for r in readings]
    by_column = {c: probabilities(column_question(c, topic), abstracts, emb, roles)
                 for c in ROLE_COLUMNS if COLUMN_SCORER_WEIGHT.get(c)}
    return [{c: p[i] for c, p in by_column.items()} for i in range(len(readings))]


def read_alone(hits: list, emb) -> list[Reading]:
    """Each hit's paper read for itself, with no topic: a sentence's relevance is its closeness to its own paper,
    so each cell holds the sentence most central to the paper (`compare --papers`, a follow-up's column)."""
    return [read(paper_text(h.paper), [h], emb)[0] for h in hits]


def _standing_first(r: Reading, idx: list[int]) -> list[int]:
    """Of these sentences, the ones that stand alone (rag.reading.standalone.standing), or all when none does."""
    return [i for i in idx if standing(r.sentences[i]) is not None] or idx


def _role_pick(r: Reading, column: str, used: set[int], probs: np.ndarray | None = None) -> int | None:
    roles = ROLE_COLUMNS[column]
    idx = [i for i, role in enumerate(r.roles) if role in roles]
    if not idx:
        return None
    fresh = [i for i in idx if i not in used] or idx
    fresh = _standing_first(r, fresh)

    n = max(1, len(r.sentences) - 1)

    def score(i: int) -> float:
        bonus = PROBLEM_CUE_BONUS if column == "problem" and _PROBLEM_CUES.search(r.sentences[i]) else 0.0
        rule = float(r.relevance[i]) + bonus + POSITION_LEAD.get(column, 0.0) * i / n
        if probs is None or len(probs) != len(r.sentences):
            return rule
        w = COLUMN_SCORER_WEIGHT.get(column, 0.0)
        return (1 - w) * rule + w * float(probs[i])

    return max(fresh, key=lambda i: (score(i), -i))


def _setting_pick(r: Reading, used: set[int]) -> int | None:
    """The sentence index for the Setting column, or None (see the module docstring)."""
    cued = [i for i, role in enumerate(r.roles)
            if role in SETTING_ROLES and i not in used and SETTING_CUES.search(r.sentences[i])]
    cued = _standing_first(r, cued)
    return max(cued, key=lambda j: (float(r.relevance[j]), -j)) if cued else None


def pick_cells(r: Reading, probs: dict[str, np.ndarray] | None = None) -> dict[str, Cell]:
    """The paper's cell in each column (text shown = its sentence; see shorten for spans); `probs`: each role
    column's scorer probabilities (column_probabilities), when the scorer has a say."""
    pid = r.paper.paper_id
    out: dict[str, Cell] = {}
    used: set[int] = set()
    for column in ("approach", "finding", "problem"):  # the narrower roles choose first
        i = _role_pick(r, column, used, (probs or {}).get(column))
        if i is None:
            out[column] = Cell(column=column, paper_id=pid)
            continue
        used.add(i)
        out[column] = _quoted(r, column, i)
    i = _setting_pick(r, used)
    out["setting"] = Cell(column="setting", paper_id=pid) if i is None else _quoted(r, "setting", i)
    return {c: out[c] for c in ("problem", "approach", "finding", "setting")}


def column_cell(r: Reading, column: str, probs: dict[str, np.ndarray] | None = None) -> Cell:
    """The paper's sentence for one column, or for "proposal" (what a follow-up "What did they propose?" asks):
    its first sentence opening as a contribution ("In this work, we introduce X", "We study Y"), else its first
    objective sentence (standing alone first, both), else its Approach cell (bench/follow_up_roles.py)."""
    if column != "proposal":
        return pick_cells(r, probs)[column]
    opening = (_standing_first(r, [i for i, s in enumerate(r.sentences) if contribution_opening(s)])
               or _standing_first(r, [i for i, role in enumerate(r.roles) if role == "objective"]))
    return _quoted(r, "approach", opening[0]) if opening else pick_cells(r, probs)["approach"]


def _quoted(r: Reading, column: str, i: int) -> Cell:
    """Sentence i in the column: shown whole, or as its main clause when only its opening leans."""
    s = r.sentences[i]
    shown = standing(s)
    # the fallback says so (the UI's tooltip, --json): no sentence of the role stands alone in this abstract
    note = "" if shown else f"no {r.roles[i]} sentence of the abstract stands alone; this one leans on the one before"
    # The abstract's own [n] marks are dropped from what the cell shows (rag.reading.citations.quote, as every
    # task quotes a source): in a table whose rows are numbered, "[3]" would read as row 3.
    text = re.sub(r"(?<!\.)\.\.(?!\.)", ".", quote(shown or s))  # "et al. [5]." -> "et al.", not "et al.."
    return Cell(column=column, paper_id=r.paper.paper_id, text=text, sentence=s, role=r.roles[i],
                score=float(r.relevance[i]), position=i, source="quoted", note=note)


def shorten(cells: list[Cell], topics: list[str], emb) -> None:
    """Show each long sentence as its clause most relevant to its row's topic, where one carries nearly
    all of it (in place; one embedding call for every clause of the table). `topics[i]` is what cell i
    is relevant to: the table's topic, or its paper's own text when the table has none."""
    todo: list[tuple[Cell, list[str], str]] = []
    for c, t in zip(cells, topics):
        if c.source == "quoted" and len(c.sentence) >= SPAN_FROM:
            # clauses of what the cell shows (a leaning opening already cut), none that leans itself
            parts = [p for p in phrase_clauses(c.text) if len(p.split()) >= SPAN_MIN_WORDS and not leans(p)]
            if parts and parts != [c.text.strip(" ,;")]:
                todo.append((c, parts, t))
    if not todo:
        return
    by_topic: dict[str, list[int]] = {}
    flat: list[str] = []
    for c, parts, t in todo:
        for p in [c.text] + parts:
            by_topic.setdefault(t, []).append(len(flat))
            flat.append(p)
    scores = np.zeros(len(flat), dtype=np.float32)
    for t, idx in by_topic.items():
        scores[idx] = relevance(t, [flat[i] for i in idx], emb)
    k = 0
    for c, parts, _ in todo:
        whole, own = float(scores[k]), scores[k + 1 : k + 1 + len(parts)]
        k += 1 + len(parts)
        j = int(np.argmax(own))
        if whole > 0 and float(own[j]) >= SPAN_SHARE * whole:
            c.text = parts[j]
