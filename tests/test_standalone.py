"""Quotes that stand alone (rag.standalone): what an answer may quote of a sentence that leans on the one before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag.standalone import stands_alone, standing


def test_an_opening_clause_that_leans_is_cut_and_the_main_clause_quoted():
    s = ("To address these challenges, we propose Manifold-Constrained Hyper-Connections (mHC), a general framework "
         "that projects the residual connection space of HC onto a specific manifold.")
    assert standing(s) == ("We propose Manifold-Constrained Hyper-Connections (mHC), a general framework that "
                           "projects the residual connection space of HC onto a specific manifold.")
    assert standing("However, the model fails to converge when the batch is small and the step is large.") == \
        "The model fails to converge when the batch is small and the step is large."
    assert standing("Further, we show that the bound is tight.") == "We show that the bound is tight."


def test_a_sentence_that_leans_throughout_cannot_be_quoted_alone():
    for s in ("This diversification fundamentally compromises the identity mapping property of the residual.",
              "Furthermore, it outperforms every baseline on the long-context retrieval benchmarks we consider.",
              "It outperforms every baseline on the long-context retrieval benchmarks we consider.",
              "Then these models fail to bind colours to objects."):
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
