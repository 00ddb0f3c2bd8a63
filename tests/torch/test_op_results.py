"""Operators whose results need more than "wrap every new value": metadata
results (Note [Metadata results]) and sparse results."""
import unittest

import torch
from torch.nn.utils.rnn import pack_padded_sequence

import dtr


class _Packed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 16, batch_first=True)
        self.head = torch.nn.Linear(16, 3)

    def forward(self, x, lengths):  # packs inside forward, a common habit
        packed = pack_padded_sequence(x, lengths, batch_first=True)
        _, (h, _) = self.rnn(packed)
        return self.head(h[-1])


def _grads(model):
    return [p.grad.clone() for p in model.parameters()]


class OpResultsTest(unittest.TestCase):

    def tearDown(self):
        dtr.set_budget(dtr.UNLIMITED)

    def test_packing_inside_forward_keeps_batch_sizes_plain(self):
        def run(use_dtr):
            torch.manual_seed(0)
            m = _Packed()
            if use_dtr:
                dtr.checkpoint(m)
            x, lengths = torch.randn(4, 7, 8), torch.tensor([7, 5, 3, 2])
            loss = m(x, lengths).pow(2).sum()
            loss.backward()
            return dtr.decheckpoint(loss).detach(), _grads(m)
        (l0, g0), (l1, g1) = run(False), run(True)
        self.assertTrue(torch.equal(l0, l1))
        for u, v in zip(g0, g1):
            self.assertTrue(torch.equal(u, v))
        packed = pack_padded_sequence(dtr.checkpoint(torch.randn(2, 3, 4)),
                                      torch.tensor([3, 2]), batch_first=True)
        self.assertTrue(dtr.is_checkpoint(packed.data))
        self.assertFalse(dtr.is_checkpoint(packed.batch_sizes))

    def test_sparse_embedding_gradients_are_plain_sparse_tensors(self):
        def run(use_dtr):
            torch.manual_seed(0)
            m = torch.nn.Sequential(
                torch.nn.Embedding(100, 16, sparse=True), torch.nn.Flatten(),
                torch.nn.Linear(16 * 5, 3))
            if use_dtr:
                dtr.checkpoint(m)
            idx = torch.randint(0, 100, (8, 5))
            y = torch.randint(0, 3, (8,))
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for _ in range(2):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(m(idx), y).backward()
                opt.step()
            return m[0].weight.grad, [p.detach().clone() for p in m.parameters()]
        (g0, p0), (g1, p1) = run(False), run(True)
        self.assertEqual(g1.layout, torch.sparse_coo)
        self.assertFalse(dtr.is_checkpoint(g1))
        self.assertTrue(torch.equal(g0.to_dense(), g1.to_dense()))
        for u, v in zip(p0, p1):
            self.assertTrue(torch.equal(u, v))


if __name__ == "__main__":
    unittest.main()
