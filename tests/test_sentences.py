"""Sentences as a reader cuts them: an abbreviation does not end one, a full stop does."""

from rag.reading.sentences import split_sentences


def test_letters_in_dots_do_not_end_a_sentence():
    # mlqa's nips2017:9237 opened an answer with "X taking its values in a feature space X ...".
    text = ("We formulate a supervised learning problem where a continuous label Y is assigned to an observable "
            "r.v. X taking its values in a feature space. Entries are i.i.d. Gaussian, taken w.r.t. Lebesgue "
            "measure, as in U.S. Senate speeches. We prove a bound.")
    assert split_sentences(text) == [
        "We formulate a supervised learning problem where a continuous label Y is assigned to an observable "
        "r.v. X taking its values in a feature space.",
        "Entries are i.i.d. Gaussian, taken w.r.t. Lebesgue measure, as in U.S. Senate speeches.",
        "We prove a bound.",
    ]


def test_a_sentence_ending_in_a_word_or_a_number_still_ends():
    assert split_sentences("Accuracy rises to 93.5. The model is small. See e.g. Smith et al. for more. We stop.") == [
        "Accuracy rises to 93.5.", "The model is small.", "See e.g. Smith et al. for more.", "We stop."]
