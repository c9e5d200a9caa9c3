"""Training of the sequence role model (rag.reading.role_sequence) for bench/train_roles.py, with PyTorch.

Kept apart so train_roles.py runs its logistic model without PyTorch. Each of SEEDS trains one
bidirectional GRU with Adam, in batches of 16 abstracts, for EPOCHS epochs, and keeps the epoch with the
best dev accuracy; the ensemble averages their probabilities. Settings are the first ones tried in the
study (2026-12-03, docs/quality.md "Sentence roles"), except the hashed words, 1,024 buckets rather than 4,096:
on dev 0.6797 against 0.6851, inside its noise, for a file of 1.2 MB rather than 3.3.
"""

from __future__ import annotations

import numpy as np

from rag.reading.role_sequence import SequenceRoleModel, sequence_inputs
from rag.reading.roles import ROLES

SEEDS = (0, 1, 2, 3, 4)
EPOCHS = 12
LEXICAL = 1024
PROJ, HIDDEN = 64, 64
BATCH = 16


def available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _net(d: int):
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.5)
            self.p = nn.Linear(d, PROJ)
            self.g = nn.GRU(PROJ, HIDDEN, batch_first=True, bidirectional=True)
            self.o = nn.Linear(2 * HIDDEN, len(ROLES))

        def forward(self, x, lens):
            h = torch.tanh(self.p(self.drop(x)))
            pk = nn.utils.rnn.pack_padded_sequence(h, torch.tensor(lens), batch_first=True, enforce_sorted=False)
            g, _ = self.g(pk)
            g, _ = nn.utils.rnn.pad_packed_sequence(g, batch_first=True, total_length=h.shape[1])
            return self.o(self.drop(g))

    return Net()


def _tensors(rows: list[dict], vecs: list[np.ndarray]):
    import torch

    return [(torch.tensor(sequence_inputs(v, r["sentences"], LEXICAL)),
             torch.tensor([ROLES.index(lab) for lab in r["labels"]])) for r, v in zip(rows, vecs)]


def _accuracy(nets, data) -> float:
    import torch

    right = total = 0
    with torch.no_grad():
        for x, y in data:
            p = sum(torch.softmax(n(x[None], [len(y)])[0], 1) for n in nets)
            right += int((p.argmax(1) == y).sum())
            total += len(y)
    return right / max(total, 1)


def train(rows: dict[str, list[dict]], vecs: dict[str, list[np.ndarray]], vectors: str,
          log=print) -> tuple[SequenceRoleModel, float]:
    """The ensemble trained on train (each member stopped on dev), as numpy weights, and its dev accuracy."""
    import torch
    import torch.nn as nn

    torch.set_num_threads(1)  # one thread: the same weights on every machine
    train_d, dev_d = _tensors(rows["train"], vecs["train"]), _tensors(rows["dev"], vecs["dev"])
    nets = []
    for seed in SEEDS:
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        net = _net(train_d[0][0].shape[1])
        opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
        best, best_state, best_epoch = -1.0, None, 0
        for epoch in range(EPOCHS):
            net.train()
            order = rng.permutation(len(train_d))
            for b in range(0, len(order), BATCH):
                items = [train_d[i] for i in order[b:b + BATCH]]
                x = nn.utils.rnn.pad_sequence([x for x, _ in items], batch_first=True)
                y = nn.utils.rnn.pad_sequence([y for _, y in items], batch_first=True, padding_value=-100)
                out = net(x, [len(y) for _, y in items])
                loss = nn.functional.cross_entropy(out.reshape(-1, len(ROLES)), y.reshape(-1), ignore_index=-100)
                opt.zero_grad()
                loss.backward()
                opt.step()
            net.eval()
            acc = _accuracy([net], dev_d)
            if acc > best:
                best, best_state, best_epoch = acc, {k: v.clone() for k, v in net.state_dict().items()}, epoch
        net.load_state_dict(best_state)
        net.eval()
        nets.append(net)
        log(f"gru seed {seed}: dev accuracy {best:.4f} (epoch {best_epoch + 1} of {EPOCHS})")
    return _as_numpy(nets, vectors), _accuracy(nets, dev_d)


def _as_numpy(nets, vectors: str) -> SequenceRoleModel:
    def stack(name: str) -> np.ndarray:
        return np.stack([n.state_dict()[name].detach().numpy() for n in nets])

    return SequenceRoleModel(
        LEXICAL, vectors, proj_w=stack("p.weight"), proj_b=stack("p.bias"),
        ih_f=stack("g.weight_ih_l0"), hh_f=stack("g.weight_hh_l0"), bih_f=stack("g.bias_ih_l0"),
        bhh_f=stack("g.bias_hh_l0"), ih_b=stack("g.weight_ih_l0_reverse"), hh_b=stack("g.weight_hh_l0_reverse"),
        bih_b=stack("g.bias_ih_l0_reverse"), bhh_b=stack("g.bias_hh_l0_reverse"), out_w=stack("o.weight"),
        out_b=stack("o.bias"))
