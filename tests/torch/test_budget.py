"""Budgets under threads and at the edges (Note [Concurrent budgets])."""
import threading
import unittest

import torch

import dtr


def _train(seed, steps=3):
    """A small tanh chain trained with SGD; its losses and parameters."""
    torch.manual_seed(seed)
    layers = []
    for _ in range(6):
        layers += [torch.nn.Linear(64, 64), torch.nn.Tanh()]
    net = torch.nn.Sequential(*layers)
    return net, torch.randn(32, 64), steps


def _run(net, x, steps, use_dtr):
    if use_dtr:
        dtr.checkpoint(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(dtr.decheckpoint(loss).detach().clone())
    return losses, [p.detach().clone() for p in net.parameters()]


class BudgetTest(unittest.TestCase):

    def tearDown(self):
        dtr.set_budget(dtr.UNLIMITED)

    def test_overlapping_blocks_on_two_threads_end_in_any_order(self):
        entered, a_left = threading.Barrier(2), threading.Event()
        seen = {}

        def a():
            with dtr.budget(100_000):
                entered.wait()
                entered.wait()  # b has read the sum
            a_left.set()

        def b():
            entered.wait()
            with dtr.budget(200_000):
                seen["both"] = dtr.stats()["budget_bytes"]
                entered.wait()
                a_left.wait()
                seen["b alone"] = dtr.stats()["budget_bytes"]
        # b enters after a and leaves after it: a's exit must not restore
        # what a saw on entry, nor b's the value a set.
        threads = [threading.Thread(target=f) for f in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(seen, {"both": 300_000, "b alone": 200_000})
        self.assertEqual(dtr.stats()["budget_bytes"], dtr.UNLIMITED)

    def test_two_models_train_concurrently_under_their_budgets(self):
        # One intra-op thread: with two training threads competing for the
        # pool, PyTorch's own reductions split differently from run to run
        # (plain PyTorch in two threads differs from itself in the last
        # bits), so bitwise comparison needs deterministic kernels.
        threads_before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self._two_models_train_concurrently()
        finally:
            torch.set_num_threads(threads_before)

    def _two_models_train_concurrently(self):
        net, x, steps = _train(0)
        expect = _run(net, x, steps, use_dtr=False)
        net, x, steps = _train(0)
        dtr.reset_peak()
        _run(net, x, 1, use_dtr=True)
        peak = dtr.stats()["dtr_peak_bytes"]
        results, errors = [None, None], []
        start = threading.Barrier(2)
        # Built here: torch.manual_seed and randn share one generator, so
        # two threads building at once would draw each other's numbers.
        programs = [_train(0), _train(0)]

        def worker(k):
            try:
                net, x, steps = programs[k]
                start.wait()
                # The blocks' sum (0.9 of one model's peak) binds even
                # when the threads' steps never overlap: a step between
                # another thread's steps has both blocks to itself.
                with dtr.budget(int(peak * 0.45)):
                    results[k] = _run(net, x, steps, use_dtr=True)
            except Exception as e:  # reported below, with the thread
                errors.append(f"thread {k}: {e}")
        before = dtr.stats()["evictions"]
        threads = [threading.Thread(target=worker, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertGreater(dtr.stats()["evictions"], before)
        for losses, params in results:
            for u, v in zip(expect[0] + expect[1], losses + params):
                self.assertTrue(torch.equal(u, v))
        self.assertEqual(dtr.stats()["budget_bytes"], dtr.UNLIMITED)

    def test_concurrent_blocks_must_agree_on_the_scope(self):
        inside, done = threading.Event(), threading.Event()

        def hold():
            with dtr.budget(1 << 30, scope="process"):
                inside.set()
                done.wait()
        t = threading.Thread(target=hold)
        t.start()
        inside.wait()
        try:
            with self.assertRaisesRegex(RuntimeError, "different scope"):
                with dtr.budget(1 << 30):
                    pass
        finally:
            done.set()
            t.join()
        self.assertEqual(dtr.stats()["budget_bytes"], dtr.UNLIMITED)

    def test_set_budget_inside_a_block_changes_that_block(self):
        with dtr.budget(1000):
            self.assertEqual(dtr.set_budget(2000), 1000)
            self.assertEqual(dtr.stats()["budget_bytes"], 2000)
        self.assertEqual(dtr.stats()["budget_bytes"], dtr.UNLIMITED)

    def test_absurd_budgets(self):
        dtr.set_budget(2 ** 63)
        self.assertEqual(dtr.stats()["budget_bytes"], dtr.UNLIMITED)
        dtr.set_budget(float("inf"))
        self.assertEqual(dtr.stats()["budget_bytes"], dtr.UNLIMITED)
        with self.assertRaisesRegex(ValueError, "negative budget"):
            dtr.set_budget(-5)
        with self.assertRaises(ValueError):
            dtr.set_budget(float("nan"))
        with self.assertRaisesRegex(ValueError, "negative budget"):
            with dtr.budget(-1):
                pass
        self.assertEqual(dtr.stats()["budget_bytes"], dtr.UNLIMITED)

    def test_bad_budgets_are_refused_by_every_entry_point(self):
        # Each bad value is refused before it reaches the library, by
        # set_budget() and by budget() alike, naming the function and the
        # value; the budget in force is unchanged.
        bad = [(-0.5, ValueError, "negative budget, nbytes=-0.5"),
               (-1e-9, ValueError, "negative budget"),
               (float("-inf"), ValueError, "negative budget, nbytes=-inf"),
               (float("nan"), ValueError, "nbytes.*nan"),
               ("100", TypeError, "str '100'"),
               (True, TypeError, "bool True"),
               (False, TypeError, "bool False"),
               (None, TypeError, "NoneType None"),
               (1 + 2j, TypeError, "complex"),
               (torch.tensor(100), TypeError, "Tensor")]
        dtr.set_budget(12345)
        for value, error, message in bad:
            with self.subTest(value=value):
                with self.assertRaisesRegex(error, r"dtr\.set_budget: .*"
                                            + message):
                    dtr.set_budget(value)
                with self.assertRaisesRegex(error, r"dtr\.budget: .*" + message):
                    with dtr.budget(value):
                        self.fail("the block ran under a refused budget")
                self.assertEqual(dtr.stats()["budget_bytes"], 12345)

    def test_good_budgets_of_every_documented_kind(self):
        import numpy
        for value, expect in [(0, 0), (1000, 1000), (1000.9, 1000),
                              (0.0, 0), (-0.0, 0), (numpy.int64(7), 7),
                              (numpy.float32(8.5), 8),
                              (float("inf"), dtr.UNLIMITED),
                              (2 ** 70, dtr.UNLIMITED),
                              (1e300, dtr.UNLIMITED)]:
            with self.subTest(value=value):
                with dtr.budget(value):
                    self.assertEqual(dtr.stats()["budget_bytes"], expect)
                dtr.set_budget(value)
                self.assertEqual(dtr.stats()["budget_bytes"], expect)


if __name__ == "__main__":
    unittest.main()
