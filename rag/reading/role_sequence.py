"""The sentence-role classifier read as a sequence: a few small bidirectional GRUs over an abstract's sentences.

Each sentence enters as its MiniLM vector, its position (rag.reading.role_features.position) and its hashed
words (role_features.lexical, 1,024 buckets); a linear layer and tanh bring that to a small state,
a GRU runs over the abstract in each direction, and a linear layer reads the role from both directions'
states. The GRU sees the whole abstract, where the two logistic passes of roles.RoleModel saw two
neighbours on each side; several GRUs trained from different seeds are averaged (their probabilities).
Trained by `bench/train_roles.py` with PyTorch (bench only); inference here is numpy, the equations of
torch.nn.GRU, checked against it when the weights are written.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rag.reading.role_features import ROLES, Role, lexical, position


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _gru(x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray) -> np.ndarray:
    """One direction of torch.nn.GRU over x of shape (abstracts, steps, inputs), gates ordered r, z, n: the
    hidden states after each step. Abstracts shorter than `steps` are padded at the end, so their padding comes
    after every state that counts."""
    h_size = w_hh.shape[1]
    gi = (x.reshape(-1, x.shape[2]) @ w_ih.T + b_ih).reshape(x.shape[0], x.shape[1], -1)  # all steps at once
    h = np.zeros((x.shape[0], h_size), dtype=np.float32)
    out = np.zeros((x.shape[0], x.shape[1], h_size), dtype=np.float32)
    for t in range(x.shape[1]):
        gh = h @ w_hh.T + b_hh
        r = _sigmoid(gi[:, t, :h_size] + gh[:, :h_size])
        z = _sigmoid(gi[:, t, h_size:2 * h_size] + gh[:, h_size:2 * h_size])
        n = np.tanh(gi[:, t, 2 * h_size:] + r * gh[:, 2 * h_size:])
        h = (1.0 - z) * n + z * h
        out[:, t] = h
    return out


def sequence_inputs(vectors: np.ndarray, sentences: list[str], lexical_size: int) -> np.ndarray:
    """What the GRUs read of each sentence of one abstract: its vector, its position, its hashed words."""
    v = np.asarray(vectors, dtype=np.float32)
    return np.hstack([v, position(len(v)), lexical(sentences, lexical_size)])


class SequenceRoleModel:
    """K bidirectional GRUs (weights stacked on a leading axis of K); RoleModel's interface."""

    KEYS = ("proj_w", "proj_b", "ih_f", "hh_f", "bih_f", "bhh_f", "ih_b", "hh_b", "bih_b", "bhh_b", "out_w", "out_b")

    def __init__(self, lexical_size: int, vectors: str = "standalone", **weights: np.ndarray):
        self.lexical_size = int(lexical_size)
        self.vectors = vectors
        self.w = {k: np.asarray(weights[k], dtype=np.float32) for k in self.KEYS}

    @property
    def dimension(self) -> int:
        return self.w["proj_w"].shape[2] - position(0).shape[1] - self.lexical_size

    @classmethod
    def load(cls, path: Path) -> "SequenceRoleModel":
        with np.load(path) as z:
            return cls(int(z["lexical_size"]), str(z["vectors"]), **{k: z[k] for k in cls.KEYS})

    def save(self, path: Path) -> None:
        np.savez_compressed(path, kind=np.array("gru"), lexical_size=np.int32(self.lexical_size),
                            vectors=np.array(self.vectors), **{k: v.astype(np.float16) for k, v in self.w.items()})

    def inputs(self, vectors: np.ndarray, sentences: list[str]) -> np.ndarray:
        return sequence_inputs(vectors, sentences, self.lexical_size)

    def proba(self, vectors: np.ndarray, sentences: list[str]) -> np.ndarray:
        """Each sentence's role probabilities (columns in ROLES order), averaged over the K GRUs."""
        return self.proba_many([(vectors, sentences)])[0]

    def proba_many(self, abstracts: list[tuple[np.ndarray, list[str]]]) -> list[np.ndarray]:
        """proba() for several abstracts at once: one step of each GRU serves them all (ingest's batches)."""
        xs = [self.inputs(v, s) for v, s in abstracts]
        lengths = [len(x) for x in xs]
        steps = max(lengths, default=0)
        if steps == 0:
            return [np.zeros((0, len(ROLES)), dtype=np.float32) for _ in xs]
        w = self.w
        flat = np.vstack(xs)
        # each abstract padded at its end (with its first sentence: past its last step nothing it holds is
        # read); the backward pass reads it reversed within its own length
        where = np.zeros((len(xs), steps), dtype=np.int64)
        where_r = np.zeros_like(where)
        start = 0
        for b, n in enumerate(lengths):
            where[b, :n] = np.arange(start, start + n)
            where_r[b, :n] = where[b, :n][::-1]
            start += n
        total = np.zeros((len(xs), steps, len(ROLES)), dtype=np.float32)
        for k in range(len(w["proj_w"])):
            h = np.tanh(flat @ w["proj_w"][k].T + w["proj_b"][k])  # each sentence once
            fwd = _gru(h[where], w["ih_f"][k], w["hh_f"][k], w["bih_f"][k], w["bhh_f"][k])
            bwd_r = _gru(h[where_r], w["ih_b"][k], w["hh_b"][k], w["bih_b"][k], w["bhh_b"][k])
            bwd = np.zeros_like(bwd_r)
            for b, n in enumerate(lengths):
                bwd[b, :n] = bwd_r[b, :n][::-1]
            z = (np.concatenate([fwd, bwd], axis=2).reshape(-1, 2 * fwd.shape[2]) @ w["out_w"][k].T
                 + w["out_b"][k]).reshape(len(xs), steps, -1)
            z = np.exp(z - z.max(axis=2, keepdims=True))
            total += z / z.sum(axis=2, keepdims=True)
        return [total[b, :n] / len(w["proj_w"]) for b, n in enumerate(lengths)]

    def predict(self, vectors: np.ndarray, sentences: list[str]) -> list[Role]:
        return self.predict_many([(vectors, sentences)])[0]

    def predict_many(self, abstracts: list[tuple[np.ndarray, list[str]]]) -> list[list[Role]]:
        return [[ROLES[i] for i in p.argmax(axis=1)] for p in self.proba_many(abstracts)]
