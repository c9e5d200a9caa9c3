"""Paraphrased questions about the seed abstracts (none copies the abstract's wording), with the
(file prefix, position) of the abstract that answers each, and how to find a seed abstract by that
address. Used by the retrieval, ask, cite and summarise tests."""


def seed(lib, where: str):
    """A seed paper by 'file prefix:position', e.g. '001:9' (the 9th abstract of seeds/001_*.txt)."""
    prefix, pos = where.split(":")
    for p in lib.papers():
        if p.source.startswith(prefix) and p.position == int(pos):
            return p
    raise KeyError(where)


QUESTIONS = [
    ("How many blocks does a Transformer need to approximate smooth Hölder functions to a given accuracy?", "000", 1),
    ("How can a widened residual stream keep the identity-mapping property so that large-scale training stays stable?", "000", 2),
    ("Can language models improve their reasoning from their own confidence signals without any external labels?", "000", 4),
    ("Why do CLIP-style models fail to tell which colour goes with which object in a scene?", "000", 8),
    ("Is k-fold model comparison with cross-validation reliable when the compared models are unstable?", "000", 10),
    ("How can forecasting models make use of covariates beyond the target series?", "000", 15),
    ("Why do diffusion networks trained on disjoint halves of a dataset produce near-identical images from the same noise?", "001", 9),
    ("What theory explains performance when the pretraining data mixes several domains?", "001", 3),
    ("Is there a tight margin generalization bound for majority-vote ensembles?", "001", 8),
    ("Do rational activation functions beat ReLU-style activations in expressiveness per parameter?", "001", 18),
    ("An optimizer between Adam and sign descent that saves memory by scaling signs per block", "003", 6),
    ("What can we say about the uniqueness of training-set reconstructions from the KKT equations of a trained network?", "003", 8),
    ("Which formal languages can recurrent networks actually recognise, given conflicting results about Turing completeness?", "003", 16),
    ("Can attention be computed faster than quadratic time in the sequence length, and when is that impossible?", "004", 11),
    ("Why does softmax work better than linear or element-wise attention activations?", "004", 6),
    ("How do spiking networks behave under perturbations: are they stable and robust?", "004", 16),
    ("Does the creativity of score-based generative models come from imperfectly learned scores?", "004", 19),
    ("Why are some problems, like step-by-step reasoning or physics simulation, impossible to parallelise?", "004", 17),
]

OFF_TOPIC = [
    "How long should I boil pasta for it to be al dente?",
    "Who won the football World Cup final in 2014?",
    "What is the maximum safe daily dose of paracetamol for an adult?",
    "What is a good recipe for sourdough bread with a crispy crust?",
]
