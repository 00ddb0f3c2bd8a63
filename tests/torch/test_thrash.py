"""The thrash limit (Note [Thrash limit]): a step that recomputes past it
fails with a message that says why, the state stays usable, and without a
limit one warning names the step that thrashed."""
import contextlib
import math
import os
import tempfile
import unittest

import torch

import dtr

# Under the bytes cost model an operator costs its output's bytes (+1), so
# the times the limit compares are exact: each link of the chain is two
# operators of 4 MB each, against the guard's floor of 10 ms (10 MB).
_LINKS = 12
_ELEMS = 1 << 20


def _chain(x):
    values = [x]
    for i in range(_LINKS):
        values.append(torch.sin(values[-1]) + i)
    return values


@contextlib.contextmanager
def _stderr_to(path):
    """Sends file descriptor 2 (C++'s stderr) to `path` for the block."""
    saved = os.dup(2)
    with open(path, "w") as f:
        os.dup2(f.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class ThrashLimitTest(unittest.TestCase):

    def setUp(self):
        dtr.set_cost_model("bytes")
        dtr.set_thrash_limit(None)

    def tearDown(self):
        dtr.set_thrash_limit(None)
        dtr.set_cost_model("measured")
        dtr.set_budget(dtr.UNLIMITED)

    def _step_that_replays_the_chain(self, x):
        """Step 1 computes the chain; step 2 evicts it and reads its end,
        which replays every link: recomputation of 12 links against 12."""
        dtr.begin_step()
        values = _chain(dtr.checkpoint(x))
        last = values[-1]
        del values
        dtr.begin_step()
        dtr.evict_all()
        return last

    def test_a_step_past_the_limit_fails_and_can_go_on_with_a_higher_one(self):
        x = torch.randn(_ELEMS)
        want = _chain(x)[-1]
        last = self._step_that_replays_the_chain(x)
        self.assertIsNone(dtr.set_thrash_limit(0.5))  # 6 links of 12
        with self.assertRaisesRegex(RuntimeError,
                                    r"thrashing: this step recomputed .* "
                                    r"past the thrash limit of 0\.5x"):
            dtr.decheckpoint(last)
        self.assertEqual(dtr.set_thrash_limit(2), 0.5)
        # The replays already done are kept; the rest go through.
        self.assertTrue(torch.equal(dtr.decheckpoint(last), want))

    def test_a_limit_the_step_stays_under_changes_nothing(self):
        x = torch.randn(_ELEMS)
        want = _chain(x)[-1]
        dtr.set_thrash_limit(1.5)
        last = self._step_that_replays_the_chain(x)
        replays = dtr.stats()["remat_ops"]
        self.assertTrue(torch.equal(dtr.decheckpoint(last), want))
        self.assertEqual(dtr.stats()["remat_ops"] - replays, 2 * _LINKS)

    def test_an_operator_whose_inputs_thrash_is_named(self):
        x = torch.randn(_ELEMS)
        want = _chain(x)[-1].sum()
        last = self._step_that_replays_the_chain(x)
        dtr.set_thrash_limit(0.5)
        with self.assertRaisesRegex(RuntimeError,
                                    r"thrashing in aten::sum"):
            last.sum()
        dtr.set_thrash_limit(None)
        self.assertTrue(torch.equal(dtr.decheckpoint(last.sum()), want))

    def test_the_limit_is_checked_before_it_is_set(self):
        for bad, error in [(0, ValueError), (-1.0, ValueError),
                           (math.nan, ValueError), (True, TypeError),
                           ("2", TypeError)]:
            with self.subTest(bad=bad), self.assertRaises(error):
                dtr.set_thrash_limit(bad)
        self.assertIsNone(dtr.set_thrash_limit(math.inf))

    def test_without_a_limit_one_warning_names_the_thrashing_step(self):
        x = torch.randn(_ELEMS)
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "stderr")
            with _stderr_to(log):
                for _ in range(2):  # two thrashing steps, one warning
                    last = self._step_that_replays_the_chain(x)
                    last.sum()  # 4 bytes of its own; replays 12 links
                    dtr.begin_step()  # ends the step that replayed
            with open(log) as f:
                lines = [l for l in f if "recomputed for" in l]
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("dtr.set_thrash_limit(R)", lines[0])


if __name__ == "__main__":
    unittest.main()
