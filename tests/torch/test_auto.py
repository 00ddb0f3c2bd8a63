"""`auto`, the default heuristic, from Python: dtr.checkpoint(model)'s
forward() begins a step, a dynamic model (a new sequence length) is decided
again, dtr.set_heuristic() turns auto off, and training under auto stays
bitwise identical to plain PyTorch.
Run: PYTHONPATH=python DTR_TORCH_LIBRARY=.../libdtr_torch.so \
     .venv/bin/python -m unittest tests/torch/test_auto.py"""
import copy
import os
import subprocess
import sys
import unittest

import torch

import dtr


class CellLoop(torch.nn.Module):
    """A recurrence as its own loop of nn.LSTMCell steps: as many operators
    per step as the sequence is long, so the graph changes shape with it."""

    def __init__(self):
        super().__init__()
        self.cell = torch.nn.LSTMCell(16, 64)

    def forward(self, x):
        h = c = x.new_zeros(x.size(1), 64)
        outs = []
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            outs.append(h)
        return torch.stack(outs), (h, c)


def train(model, lengths, budget=None):
    """SGD steps of an LSTM regression, one per sequence length; returns
    the losses."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for length in lengths:
        x = torch.randn(length, 8, 16, generator=torch.Generator().manual_seed(
            length))
        opt.zero_grad()
        if budget is None:
            out, _ = model(x)
            loss = out.pow(2).mean()
            loss.backward()
        else:
            with dtr.budget(budget):
                out, _ = model(x)
                loss = out.pow(2).mean()
                loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


class AutoTest(unittest.TestCase):
    def tearDown(self):
        dtr.set_heuristic("auto")
        dtr.set_cost_model("measured")
        dtr.set_budget(dtr.UNLIMITED)

    def test_auto_is_the_default_and_named_in_stats(self):
        self.assertEqual(dtr.heuristic(), "auto")
        s = dtr.stats()
        self.assertEqual(s["auto_heuristic"], 1)
        self.assertIn(s["heuristic"], dtr.heuristics(auto_only=True))
        self.assertIn("auto_decisions", s)

    def test_explicit_heuristic_turns_auto_off(self):
        dtr.set_heuristic("lru")
        self.assertEqual(dtr.heuristic(), "lru")
        self.assertEqual(dtr.stats()["heuristic"], "lru")
        self.assertEqual(dtr.stats()["auto_heuristic"], 0)
        with self.assertRaisesRegex(RuntimeError, "unknown heuristic 'best'"):
            dtr.set_heuristic("best")
        self.assertEqual(dtr.heuristic(), "lru")

    def test_heuristics_lists_what_set_heuristic_takes(self):
        names = dtr.heuristics()
        self.assertEqual(names[:7], ["dtr", "dtr-eq", "dtr-local", "msps",
                                     "lru", "size", "random"])
        self.assertEqual(dtr.heuristics(auto_only=True),
                         [n for n in names if n != "random"])
        for name in names:
            dtr.set_heuristic(name)
            self.assertEqual(dtr.stats()["heuristic"], name)

    def test_an_unknown_heuristic_in_the_environment_is_reported(self):
        code = ("import torch, dtr\n"
                "x = dtr.checkpoint(torch.ones(4)) + 1\n"
                "print(dtr.heuristic(), float(dtr.decheckpoint(x).sum()))\n")
        run = subprocess.run([sys.executable, "-c", code],
                             env={**os.environ, "DTR_HEURISTIC": "bogus"},
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.split(), ["auto", "8.0"])
        self.assertIn("DTR_HEURISTIC is ignored", run.stderr)
        self.assertIn("unknown heuristic 'bogus'", run.stderr)

    def test_forward_of_a_checkpointed_module_begins_a_step(self):
        model = dtr.checkpoint(torch.nn.Linear(4, 4))
        model(torch.ones(2, 4)).sum().backward()
        before = dtr.stats()["steps"]
        model(torch.ones(2, 4)).sum().backward()
        self.assertEqual(dtr.stats()["steps"], before + 1)
        dtr.begin_step()  # no operator since the boundary: the same one
        dtr.begin_step()
        self.assertEqual(dtr.stats()["steps"], before + 2)

    def test_dynamic_model_is_decided_again_and_stays_exact(self):
        dtr.set_cost_model("bytes")
        torch.manual_seed(0)
        plain = CellLoop()
        model = copy.deepcopy(plain)
        lengths = [12, 12, 20, 20, 20, 28, 28, 28, 28]
        expected = train(plain, lengths)
        probe = dtr.checkpoint(copy.deepcopy(plain))
        dtr.reset_peak()
        train(probe, [max(lengths)])
        budget = int(0.7 * dtr.stats()["dtr_peak_bytes"])
        dtr.checkpoint(model)
        before = dtr.stats()["auto_decisions"]
        got = train(model, lengths, budget=budget)
        dtr.begin_step()
        self.assertEqual(got, expected)
        for p, q in zip(model.parameters(), plain.parameters()):
            self.assertTrue(torch.equal(p, q))
        self.assertGreater(dtr.stats()["auto_decisions"] - before, 1,
                           dtr.stats())
        self.assertGreater(dtr.stats()["evictions"], 0)


if __name__ == "__main__":
    unittest.main()
