"""Quotes that stand alone (rag.reading.standalone): what an answer may quote of a sentence that leans on the one before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag.reading.standalone import leans, stands_alone, standing


def test_an_opening_clause_that_leans_is_cut_and_the_main_clause_quoted():
    s = ("To address these challenges, we propose Manifold-Constrained Hyper-Connections (mHC), a general framework "
         "that projects the residual connection space of HC onto a specific manifold.")
    assert standing(s) == ("We propose Manifold-Constrained Hyper-Connections (mHC), a general framework that "
                           "projects the residual connection space of HC onto a specific manifold.")
    assert standing("However, the model fails to converge when the batch is small and the step is large.") == \
        "The model fails to converge when the batch is small and the step is large."
    assert standing("Further, we show that the bound is tight.") == "We show that the bound is tight."
    # "Motivated by this, …" leans as "Building on this, …" does (the seeds' spiking-network answer opened so)
    assert standing("Motivated by this, we introduce the notion of spectral simplicity.") == \
        "We introduce the notion of spectral simplicity."
    assert standing("Inspired by these observations, we propose cascade adversarial training.") == \
        "We propose cascade adversarial training."
    assert standing("Motivated by recent results on sparse recovery, we propose a new estimator.") == \
        "Motivated by recent results on sparse recovery, we propose a new estimator."


def test_a_sentence_that_leans_throughout_cannot_be_quoted_alone():
    for s in ("This diversification fundamentally compromises the identity mapping property of the residual.",
              "Furthermore, it outperforms every baseline on the long-context retrieval benchmarks we consider.",
              "It outperforms every baseline on the long-context retrieval benchmarks we consider.",
              "Then these models fail to bind colours to objects.",
              "Each of these methods improves accuracy on every benchmark of the suite we consider.",
              "None of them reaches the accuracy of the dense model at the same number of parameters."):
        assert standing(s) is None, s


def test_what_names_the_paper_or_its_own_findings_is_quoted_whole():
    for s in ("In this paper, we show that LoRA converges when its adapters are initialised asymmetrically.",
              "In this retrospective study, women with asymptomatic recurrence had a better clinical outcome.",
              "It is clear that additional interventions will be needed to maintain adherence to mammography.",
              "Further studies should examine how physicians perceive prompts for family history risk.",
              "Patients over 70 fare worse than those who are younger."):
        assert standing(s) == s, s
    # Beside its citation mark, "these findings" are the cited study's: whole in an answer, not in a summary.
    s = "These findings indicate that a relationship between multiple sclerosis and streptococcal infections may exist."
    assert standing(s) == s and not stands_alone(s)


WORDS = st.sampled_from("to address these challenges however we propose a method that this paper shows results "
                        "the model in particular thus it first further is clear findings".split()
                        + ["X,", "Y,", "(Z)", "these,", "further,"])


@given(st.lists(WORDS, min_size=1, max_size=40).map(" ".join))
def test_what_is_quoted_is_the_abstracts_own_words_and_stands_alone(s):
    got = standing(s)
    if got is not None:
        assert got == s.strip() or got[:1].lower() + got[1:] in s or got in s
        assert standing(got) == got  # nothing left to cut


# -- "Both X and Y", a case report's "This case ...", an enumeration's "For (i), ..."

NOUNS = st.sampled_from(["supervised fine-tuning", "RLHF", "the encoder", "the decoder", "dense retrieval",
                         "sparse attention", "convolutional networks", "human raters", "GPT-4", "linear probes",
                         "pretraining data", "the teacher model", "children", "adults with diabetes"])
PREDICATES = st.sampled_from(["improve the helpfulness of language models on every benchmark we consider",
                              "are trained jointly on a parallel corpus of two million sentence pairs",
                              "fail to generalise beyond the lengths seen during training",
                              "benefit from a larger learning rate early in training"])
VERBS = st.sampled_from(["achieve", "improve", "outperform", "are", "were", "have", "show", "yield", "reduce",
                         "fail", "rely", "converge", "require", "exhibit"])


@given(NOUNS, NOUNS, PREDICATES)
def test_both_opening_a_noun_phrase_joined_by_and_stands_alone(x, y, rest):
    s = f"Both {x} and {y} {rest}."
    assert not leans(s) and standing(s) == s and stands_alone(s), s


@given(VERBS, NOUNS, NOUNS)
def test_both_as_the_subject_of_a_verb_leans_on_the_two_things_named_before(verb, x, y):
    # "Both achieve X and Y": the two are named earlier, so the sentence cannot be quoted alone.
    for s in (f"Both {verb} better accuracy on {x} and {y} than the baselines do.",
              f"Both of them {verb} better accuracy on {x} and {y} than the baselines do.",
              f"Both these methods {verb} better accuracy on {x} and {y} than the baselines."):
        assert leans(s) and standing(s) is None and not stands_alone(s), s


def test_a_case_report_naming_its_own_case_stands_alone():
    for s in ("This case illustrates the importance of early diagnosis of streptococcal infection in children.",
              "This case report describes a rare complication of laparoscopic cholecystectomy in an adult.",
              "In this case report, we describe a rare complication of laparoscopic cholecystectomy."):
        assert not leans(s) and stands_alone(s) and standing(s) == s, s
    # "In this case, ..." is the case the sentence before set up: only its main clause can be quoted.
    s = "In this case, the bound is tight and matches the lower bound up to logarithmic factors."
    assert leans(s) and not stands_alone(s)
    assert standing(s) == "The bound is tight and matches the lower bound up to logarithmic factors."


ENUM = st.sampled_from(["(i)", "(ii)", "(iii)", "(iv)", "(a)", "(b)", "(1)", "(2)"])


@given(ENUM, st.sampled_from(["For", "In", "Regarding", "As for", ""]), PREDICATES)
def test_an_item_of_an_enumeration_given_before_does_not_stand_alone(item, lead, rest):
    s = f"{lead} {item}, we show that the methods {rest}.".strip() if lead else f"{item} We show that they {rest}."
    assert leans(s) and standing(s) is None and not stands_alone(s), s
    # an enumeration the sentence itself makes stands
    s = f"We show {item} that the methods {rest} and (v) that they scale."
    assert not leans(s) and standing(s) == s


def test_a_clause_after_a_comma_is_not_quoted_as_if_it_opened_the_sentence():
    # "Both methods converge, and the first is faster": cutting the opening would quote "And the first ...".
    assert standing("Both methods converge, and the first is faster in wall-clock time on every benchmark.") is None


def test_an_opening_with_its_own_subject_is_not_cut_to_a_fragment():
    # The DPO abstract: cutting "It also unveils unexpected riches for ML," would quote "Chief among which ...".
    s = ("It also unveils unexpected riches for ML, chief among which the support for non-convex losses and a "
         "normative framework wide enough to safeguard DPO's extensions.")
    assert standing(s) is None
    assert standing("These models, however, fail to bind colours to objects in scenes with several of them.") is None
    assert standing("Moreover, which of the two wins depends on the batch size and on the learning rate.") is None
    # an absolute phrase is an opening, not a clause: its main clause is quoted
    assert standing("This being true, the inverse of the correlation might indicate the quality of care.") == \
        "The inverse of the correlation might indicate the quality of care."


def test_an_answer_cuts_only_the_connective_and_keeps_where_a_finding_holds():
    s = ("And in experiments on refusal suppression, we demonstrate that one-shot optimized SVs can transfer "
         "across inputs, yielding a Harmbench attack success rate of 96.9%.")
    # an answer keeps the setting of the 96.9 % (mlqa's marked sentence); summaries and tables cut the opening
    assert standing(s, cut_connective=True) == s[4:5].upper() + s[5:]
    assert standing(s) == "We demonstrate" + s[s.index(" that one-shot"):]
    assert standing("Thus the model learns the task from few examples.", cut_connective=True) == \
        "The model learns the task from few examples."
    # what is left must not lean either: then the whole opening goes, as before
    assert standing("But in practice, such methods fail on long inputs.", cut_connective=True) is None
    assert standing("Moreover in this setting, we show the bound is tight.", cut_connective=True) == \
        "We show the bound is tight."


def test_an_answer_shows_a_sentence_that_leans_right_after_the_one_it_leans_on():
    from rag.tasks.extractive import Quote, pick

    abstract = ["Differential privacy protects each training example of a language model.",
                "Current evaluations treat every text record as the privacy unit.",
                "This leads to uneven user privacy guarantees when contributions per user vary.",
                "We propose user-level DP fine-tuning."]
    scores = [0.05, 0.60, 0.55, 0.30]
    cands = sorted((Quote(0, i, s, p) for i, (s, p) in enumerate(zip(abstract, scores))), key=lambda q: -q.score)
    shown = [q.shown for q in pick(cands, 4, 0.1, 0.95)]
    # kept (it was dropped for leaning), and right after the sentence it leans on, in the abstract's order
    assert shown == abstract[1:4], shown
    # without the sentence it leans on, it is not quoted
    shown = [q.shown for q in pick([q for q in cands if q.position != 1], 4, 0.1, 0.95)]
    assert abstract[2] not in shown and abstract[3] in shown
