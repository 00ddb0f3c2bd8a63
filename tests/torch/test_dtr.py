"""Python tests of the dtr package on PyTorch 2.x: semantics, and a
ResNet-18 built by transformers (a real client from outside this repository)
trained at 50% of its unbudgeted DTR peak, bitwise identical to plain PyTorch,
with the allocator's own peak (above the memory live when training starts:
parameters, data, earlier runs' results) at most the budget.
Run: PYTHONPATH=python DTR_TORCH_LIBRARY=.../libdtr_torch.so \
     .venv/bin/python -m unittest discover -s tests/torch -p 'test_*.py'"""
import os
import sys
import unittest

import torch

import dtr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_models  # noqa: E402


class SemanticsTest(unittest.TestCase):
    def tearDown(self):
        dtr.set_budget(dtr.UNLIMITED)

    def test_checkpoint_item_repr(self):
        x = torch.randn(8, 8)
        c = dtr.checkpoint(x)
        self.assertTrue(dtr.is_checkpoint(c))
        y = (c * 2).relu()
        self.assertEqual(y.sum().item(), (x * 2).relu().sum().item())
        self.assertIn("dtr.tensor", repr(y))
        self.assertTrue((y.numpy() == (x * 2).relu().numpy()).all())

    def test_dropout_replays_same_mask(self):
        torch.manual_seed(1)
        x = torch.ones(128, 128)
        c = dtr.checkpoint(x)
        d = torch.nn.functional.dropout(c * 1, 0.5, training=True)
        first = dtr.decheckpoint(d).clone()
        dtr.evict_all()
        self.assertTrue(torch.equal(dtr.decheckpoint(d * 1), first))
        self.assertGreater(dtr.stats()["remat_ops"], 0)
        torch.manual_seed(1)
        self.assertTrue(torch.equal(
            torch.nn.functional.dropout(x * 1, 0.5, training=True), first))

    def test_running_out_while_recomputing_an_input_says_so(self):
        x = dtr.checkpoint(torch.randn(1024))  # the program's: not counted
        z = x.exp().exp()
        dtr.evict_all()
        # Recomputing z needs its parent (4 KiB) and itself (4 KiB) at
        # once: above the budget, with nothing left to evict.
        with dtr.budget(6000):
            with self.assertRaisesRegex(
                    RuntimeError,
                    r"out of memory in aten::add\.Tensor while recomputing "
                    r"its inputs \(tensor \d+ \(op 'aten::exp'"):
                z + 1
        self.assertTrue(torch.equal(dtr.decheckpoint(z),
                                    dtr.decheckpoint(x).exp().exp()))

    def test_unsupported_op_is_named(self):
        c = dtr.checkpoint(torch.randn(4))
        with self.assertRaisesRegex(RuntimeError, "aten::set_"):
            c.set_(torch.randn(8))


class OrdinaryProgramTest(unittest.TestCase):
    """What ordinary programs need from the package (tests/torch/
    ordinary_programs_test.cpp has the C++ side)."""

    def tearDown(self):
        dtr.set_budget(dtr.UNLIMITED)

    def test_gru_under_adam_matches_plain_pytorch_bit_for_bit(self):
        # A program from outside the repository's examples: nn.GRU with an
        # attention pooling, Adam(amsgrad, foreach). Its backward writes
        # gradients into [16, 24] views of [16, 25] buffers; a replay that
        # gives them contiguous strides makes the weights differ in the
        # last bits. The model is the zoo's
        # (test_zoo_heuristics.py runs it under more heuristics).
        from zoo.cases import AttentionPooledGRU

        def train(use_dtr, budget=None):
            torch.manual_seed(0)
            m = AttentionPooledGRU()
            opt = torch.optim.Adam(m.parameters(), lr=1e-3, amsgrad=True,
                                   foreach=True)
            if use_dtr:
                dtr.checkpoint(m)
            gen = torch.Generator().manual_seed(4)
            data = [(torch.randn(16, 20, 12, generator=gen),
                     torch.randint(0, 5, (16,), generator=gen))
                    for _ in range(3)]
            dtr.reset_peak()
            before = dtr.stats()["remat_ops"]
            if budget:
                dtr.set_budget(budget)
            losses = []
            try:
                for x, y in data:
                    opt.zero_grad()
                    loss = torch.nn.functional.cross_entropy(m(x), y)
                    loss.backward()
                    opt.step()
                    losses.append(loss.item())
            finally:
                dtr.set_budget(dtr.UNLIMITED)
            stats = dtr.stats()
            return (losses, m.state_dict(), opt.state_dict(),
                    stats["dtr_peak_bytes"], stats["remat_ops"] - before)

        previous = dtr.heuristic()
        dtr.set_cost_model("bytes")
        dtr.set_heuristic("dtr")
        try:
            plain = train(False)
            peak = train(True)[3]
            run = train(True, int(peak * 0.75))
        finally:
            dtr.set_heuristic(previous)
            dtr.set_cost_model("measured")
        self.assertGreater(run[4], 1000)  # replays
        self.assertEqual(run[0], plain[0])
        for k, v in plain[1].items():
            self.assertTrue(torch.equal(v, run[1][k]), k)
        for k, v in plain[2]["state"].items():
            for kk, t in v.items():
                if torch.is_tensor(t):
                    self.assertTrue(torch.equal(t, run[2]["state"][k][kk]),
                                    "%s %s" % (k, kk))

    def test_checkpoint_of_a_leaf_passes_its_gradient(self):
        w = torch.randn(8, 8, requires_grad=True)
        c = dtr.checkpoint(w)
        self.assertIsNotNone(c.grad_fn)
        (c * c).sum().backward()
        self.assertFalse(dtr.is_checkpoint(w.grad))
        self.assertTrue(torch.equal(w.grad, 2 * w.detach()))

    def test_values_can_be_read_out(self):
        import copy
        import io
        import pickle
        x = torch.randn(3, 4)
        c = dtr.checkpoint(x) * 1
        dtr.evict_all()
        self.assertEqual(c.tolist(), x.tolist())
        n = c.new_tensor([1.0, 2.0])
        self.assertTrue(dtr.is_checkpoint(n))
        self.assertTrue(torch.equal(dtr.decheckpoint(n),
                                    torch.tensor([1.0, 2.0])))
        d = copy.deepcopy(c)
        self.assertTrue(dtr.is_checkpoint(d))
        self.assertTrue(torch.equal(dtr.decheckpoint(d), x))
        self.assertTrue(torch.equal(pickle.loads(pickle.dumps(c)), x))
        buf = io.BytesIO()
        torch.save({"c": c}, buf)
        buf.seek(0)
        loaded = torch.load(buf)["c"]
        self.assertFalse(dtr.is_checkpoint(loaded))  # files open without dtr
        self.assertTrue(torch.equal(loaded, x))
        self.assertEqual(c.storage().size(), 12)

    def test_lstm_with_its_default_state_stays_in_dtr(self):
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(8, 16, num_layers=2)
        x = torch.randn(5, 3, 8)
        expect, _ = lstm(x)
        dtr.checkpoint(lstm)
        before = dtr.stats()["escapes"]
        out, (h, c) = lstm(x)
        self.assertTrue(dtr.is_checkpoint(out))
        self.assertEqual(dtr.stats()["escapes"], before)
        self.assertTrue(torch.equal(dtr.decheckpoint(out), expect))

    def test_user_gradient_hooks_still_run(self):
        def grads(use_dtr):
            torch.manual_seed(0)
            m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(),
                                    torch.nn.Linear(4, 1))
            for p in m.parameters():
                p.register_hook(lambda g: g * 0.5)
            if use_dtr:
                dtr.checkpoint(m)
            m(torch.randn(8, 4)).sum().backward()
            return [p.grad.clone() for p in m.parameters()]
        for a, b in zip(grads(False), grads(True)):
            self.assertTrue(torch.equal(a, b))

    def test_writes_into_the_programs_tensors_land_there(self):
        class KV(torch.nn.Module):
            def forward(self, k, cache, pos):
                cache[:, pos] = k
                return cache[:, :pos + 1].sum(1)

        def run(use_dtr):
            m, cache, outs = KV(), torch.zeros(2, 5, 3), []
            if use_dtr:
                dtr.checkpoint(m)
            with torch.no_grad():
                for p in range(4):
                    out = m(torch.full((2, 3), float(p + 1)), cache, p)
                    outs.append(dtr.decheckpoint(out).clone())
            return cache, outs
        (c0, o0), (c1, o1) = run(False), run(True)
        self.assertTrue(torch.equal(c0, c1))
        for a, b in zip(o0, o1):
            self.assertTrue(torch.equal(a, b))

    def test_numpy_writes_survive_eviction(self):
        x = dtr.checkpoint(torch.ones(3)) * 2
        x.numpy()[0] = 100.0
        dtr.evict_all()
        self.assertEqual((x + 1).tolist(), [101.0, 3.0, 3.0])

    def test_in_place_restriding_leaves_shallow_copies_alone(self):
        x = dtr.checkpoint(torch.randn(3, 3)) * 1
        y = x.data
        x.t_()
        self.assertEqual(list(y.shape), [3, 3])
        self.assertTrue(torch.equal(dtr.decheckpoint(y * 1).t(),
                                    dtr.decheckpoint(x * 1)))

    def test_recurrent_modules_accept_a_keyword_state(self):
        torch.manual_seed(0)
        gru = torch.nn.GRU(4, 6)
        x, h0 = torch.randn(5, 2, 4), torch.randn(1, 2, 6)
        expect, _ = gru(x, hx=h0)
        dtr.checkpoint(gru)
        out, _ = gru(x, hx=h0)
        self.assertTrue(torch.equal(dtr.decheckpoint(out), expect))

    def test_reentrant_utils_checkpoint_cuts_once_per_step(self):
        from torch.utils.checkpoint import checkpoint

        def grads(use_dtr):
            torch.manual_seed(0)
            a, b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)
            x = torch.randn(4, 8, requires_grad=True)
            if use_dtr:
                x = dtr.checkpoint(x)
            before = dtr.stats()["lineage_cuts"]
            # The segment comes last: its nested pass runs first.
            h = checkpoint(lambda t: torch.tanh(a(t)), b(x),
                           use_reentrant=True)
            h.pow(2).sum().backward()
            cuts = dtr.stats()["lineage_cuts"] - before
            return [p.grad for p in (*a.parameters(), *b.parameters())], cuts
        (g0, _), (g1, cuts) = grads(False), grads(True)
        for u, v in zip(g0, g1):
            self.assertTrue(torch.equal(u, v))
        # The nested pass's end is not an iteration boundary (Note [Nested
        # backward passes]): one cut, at the end of the outer pass.
        self.assertEqual(cuts, 1)

    def test_budget_scope_is_set_and_restored(self):
        self.assertEqual(dtr.budget_scope(), "checkpointed")
        with dtr.budget(1 << 40, scope="process"):
            self.assertEqual(dtr.budget_scope(), "process")
            self.assertEqual(dtr.stats()["budget_bytes"], 1 << 40)
        self.assertEqual(dtr.budget_scope(), "checkpointed")
        with self.assertRaisesRegex(RuntimeError, "unknown budget scope"):
            dtr.set_budget(1, scope="galaxy")

    def test_record_writes_a_trace(self):
        import os
        import tempfile
        path = os.path.join(tempfile.mkdtemp(), "t.log")
        with dtr.record(path):
            y = torch.tanh(dtr.checkpoint(torch.randn(4, 4)) * 2)
            del y
        with open(path) as f:
            text = f.read()
        self.assertIn("aten::tanh", text)
        self.assertIn("RELEASE", text)


def _train_resnet18(use_dtr, budget=None, steps=2):
    torch.manual_seed(0)
    model = real_models.resnet18()
    if use_dtr:
        dtr.checkpoint(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(5)
    data = [(torch.randn(32, 3, 112, 112, generator=gen),
             torch.randint(0, 10, (32,), generator=gen)) for _ in range(steps)]
    losses = []
    dtr.reset_peak()
    baseline = dtr.stats()["allocator_bytes"]  # parameters, data, caller's
    previous = dtr.set_budget(budget if budget else dtr.UNLIMITED)
    try:
        for x, y in data:
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    finally:
        dtr.set_budget(previous)
    params = [dtr.decheckpoint(p).detach().clone()
              for p in model.state_dict().values()]
    st = dtr.stats()
    st["allocator_peak_above_baseline"] = st["allocator_peak_bytes"] - baseline
    return losses, params, st


@unittest.skipUnless(real_models.HAVE_TRANSFORMERS,
                     real_models.NO_TRANSFORMERS)
class Resnet18Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Deterministic costs: measured op times would make eviction
        # decisions (and the margin under the budget) vary run to run.
        dtr.set_cost_model("bytes")
        cls.addClassCleanup(dtr.set_cost_model, "measured")
        cls.plain = _train_resnet18(False)
        cls.free = _train_resnet18(True)
        # Gradients of parameters are plain tensors outside the budget, so
        # the DTR peak is activations only; the floor (the first batch-norm
        # backward: four times the largest activation) is 53% of it.
        cls.budget = int(cls.free[2]["dtr_peak_bytes"] * 0.55)
        cls.budgeted = _train_resnet18(True, budget=cls.budget)
        print(f"\nresnet18: plain allocator peak above baseline "
              f"{cls.plain[2]['allocator_peak_above_baseline']}, unbudgeted "
              f"dtr peak {cls.free[2]['dtr_peak_bytes']}, budget "
              f"{cls.budget}: dtr peak {cls.budgeted[2]['dtr_peak_bytes']}, "
              f"allocator peak above baseline "
              f"{cls.budgeted[2]['allocator_peak_above_baseline']}, remats "
              f"{cls.budgeted[2]['remat_ops']}")

    def test_budgeted_run_is_bitwise_identical(self):
        losses, params, st = self.budgeted
        self.assertEqual(losses, self.plain[0])
        self.assertEqual(len(params), len(self.plain[1]))
        for a, b in zip(params, self.plain[1]):
            self.assertTrue(torch.equal(a, b))
        self.assertLessEqual(st["dtr_peak_bytes"], self.budget)
        self.assertGreater(st["remat_ops"], 0)

    def test_allocator_peak_falls_to_the_budget(self):
        # Everything allocated while training is under DTR's control but
        # the parameters' gradients (plain, like the parameters): the
        # allocator's peak above what was live when training started (the
        # parameters, the data, results the test keeps) stays within the
        # budget plus the gradients, and falls well below plain PyTorch's.
        grads = sum(p.numel() * p.element_size() for p in
                    real_models.resnet18().parameters())
        plain = self.plain[2]["allocator_peak_above_baseline"]
        dtr_peak = self.budgeted[2]["allocator_peak_above_baseline"]
        self.assertLessEqual(dtr_peak, self.budget + grads)
        self.assertLessEqual(dtr_peak, plain * 0.8)

if __name__ == "__main__":
    unittest.main()
