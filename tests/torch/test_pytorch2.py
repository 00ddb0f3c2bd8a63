"""What PyTorch 2 programs contain, under DTR: inputs given as keyword
arguments and containers, and kernels whose results depend on grad mode.
Each test compares with plain PyTorch using torch.equal.
Run: PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \
     .venv/bin/python -m unittest tests/torch/test_pytorch2.py"""
import collections
import dataclasses
import unittest

import torch
import torch.nn as nn

import dtr


@dataclasses.dataclass
class _Batch:
    z: torch.Tensor
    note: str = "kept"


class _Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, extra=None, batch=None, seq=()):
        return (self.lin(x) * 2 + extra["y"] + batch.z
                + collections.OrderedDict(seq)["w"])


class KeywordAndContainerInputsTest(unittest.TestCase):
    def test_every_tensor_reaching_forward_is_checkpointed(self):
        seen = {}

        class Probe(_Mixer):
            def forward(self, x, extra=None, batch=None, seq=()):
                seen.update(x=x, y=extra["y"], z=batch.z, w=seq[0][1],
                            note=batch.note, kind=type(extra))
                return super().forward(x, extra, batch, seq)
        torch.manual_seed(0)
        plain = Probe()
        model = dtr.checkpoint(Probe())
        model.load_state_dict(plain.state_dict())

        def inputs():
            g = torch.Generator().manual_seed(1)
            r = lambda: torch.randn(4, 8, generator=g)  # noqa: E731
            return r(), collections.OrderedDict(y=r()), _Batch(r()), \
                [("w", r())]
        x, e, b, s = inputs()
        want = plain(x, extra=e, batch=b, seq=s)
        x, e, b, s = inputs()
        got = model(x, extra=e, batch=b, seq=s)
        for key in ("x", "y", "z", "w"):
            self.assertTrue(dtr.is_checkpoint(seen[key]), key)
        self.assertIs(seen["kind"], collections.OrderedDict)
        self.assertEqual(seen["note"], "kept")
        self.assertFalse(dtr.is_checkpoint(b.z))  # the caller's batch as is
        self.assertTrue(dtr.is_checkpoint(got))
        self.assertTrue(torch.equal(dtr.decheckpoint(got), want))


class ReplayGradModeTest(unittest.TestCase):
    def test_lstm_workspace_is_recomputed_inside_backward(self):
        # oneDNN's LSTM layer computes the workspace its backward reads only
        # with grad mode on; a replay inside backward (grad mode off) must
        # run the forward as it first ran.
        def run(use_dtr, budget=dtr.UNLIMITED):
            torch.manual_seed(0)
            lstm = nn.LSTM(8, 16, num_layers=2)
            x = torch.randn(12, 3, 8)
            if use_dtr:
                x = dtr.checkpoint(x)
            with dtr.budget(budget):
                out, _ = lstm(x)
                out.square().sum().backward()
            return [dtr.decheckpoint(p.grad).clone()
                    for p in lstm.parameters()]
        want = run(False)
        dtr.reset_peak()
        run(True)
        budget = int(dtr.stats()["dtr_peak_bytes"] * 0.75)
        before = dtr.stats()["remat_ops"]
        dtr.reset_peak()
        got = run(True, budget)
        self.assertGreater(dtr.stats()["remat_ops"], before)
        self.assertLessEqual(dtr.stats()["dtr_peak_bytes"], budget)
        for a, b in zip(got, want):
            self.assertTrue(torch.equal(a, b))


class RebindingTest(unittest.TestCase):
    def test_replay_refuses_a_parameter_given_another_buffer(self):
        # Evolution strategies: set the weights from a vector, run forward,
        # keep the output, repeat; score later. vector_to_parameters gives
        # each parameter a new buffer (`param.data = ...`), which bumps no
        # version counter: a replay of an evicted output must not compute
        # it from the new weights.
        from torch.nn.utils import (parameters_to_vector,
                                    vector_to_parameters)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1))
        x = dtr.checkpoint(torch.randn(32, 16))
        base = parameters_to_vector(model.parameters()).detach().clone()
        outs = []
        with torch.no_grad():
            for k in range(2):
                vector_to_parameters(base + k, model.parameters())
                outs.append(model(x))
        dtr.evict_all()
        with self.assertRaisesRegex(RuntimeError, "another buffer"):
            dtr.decheckpoint(outs[0])
        # The value computed from the current weights still replays.
        want = model(dtr.decheckpoint(x))
        self.assertTrue(torch.equal(dtr.decheckpoint(outs[1]), want))


if __name__ == "__main__":
    unittest.main()
