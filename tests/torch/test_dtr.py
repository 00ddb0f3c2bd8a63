"""Python tests of the dtr package on Debian's python3-torch: semantics,
and torchvision's resnet18 (a real client from outside this repository)
trained at 50% of its unbudgeted DTR peak, bitwise identical to plain PyTorch,
with the allocator's own peak (above the memory live when training starts:
parameters, data, earlier runs' results) at most the budget.
Run: PYTHONPATH=python DTR_TORCH_LIBRARY=.../libdtr_torch.so \
     /usr/bin/python3 -m unittest discover -s tests/torch -p 'test_*.py'"""
import unittest

import torch

import dtr


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

    def test_unsupported_op_is_named(self):
        c = dtr.checkpoint(torch.randn(4))
        with self.assertRaisesRegex(RuntimeError, "aten::set_"):
            c.set_(torch.randn(8))


def _train_resnet18(use_dtr, budget=None, steps=2):
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
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
        import torchvision
        grads = sum(p.numel() * p.element_size() for p in
                    torchvision.models.resnet18(num_classes=10).parameters())
        plain = self.plain[2]["allocator_peak_above_baseline"]
        dtr_peak = self.budgeted[2]["allocator_peak_above_baseline"]
        self.assertLessEqual(dtr_peak, self.budget + grads)
        self.assertLessEqual(dtr_peak, plain * 0.8)

if __name__ == "__main__":
    unittest.main()
