"""dtr.stage(): each training step (a forward() of the module given to
dtr.checkpoint()) replays the previous step's evictions with no heuristic
search; results stay bitwise identical to plain PyTorch."""
import copy
import unittest

import torch

import dtr


def make_model():
    torch.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [torch.nn.Linear(256, 256), torch.nn.Tanh()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(256, 10))


def train(model, steps, use_dtr, budget=None):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses, searches = [], []
    for step in range(steps):
        torch.manual_seed(100 + step)
        x, y = torch.randn(512, 256), torch.randint(0, 10, (512,))
        before = dtr.stats()["eviction_searches"]
        opt.zero_grad()
        if use_dtr:
            with dtr.budget(budget):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
        else:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
        opt.step()
        losses.append(loss.item())
        searches.append(dtr.stats()["eviction_searches"] - before)
    return losses, searches


class StageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        dtr.set_cost_model("bytes")  # deterministic decisions
        cls.addClassCleanup(dtr.set_cost_model, "measured")

    def test_staged_steps_search_nothing_and_match_plain(self):
        plain = make_model()
        model = dtr.checkpoint(copy.deepcopy(plain))
        plain_losses, _ = train(plain, 4, use_dtr=False)
        dtr.reset_peak()
        free_losses, _ = train(dtr.checkpoint(copy.deepcopy(make_model())),
                               1, use_dtr=True, budget=dtr.UNLIMITED)
        peak = dtr.stats()["dtr_peak_bytes"]
        before = dtr.stats()
        with dtr.stage():
            losses, searches = train(model, 4, use_dtr=True,
                                     budget=peak // 2)
            dtr.begin_step()  # closes the last step
        after = dtr.stats()
        self.assertEqual(losses, plain_losses)
        for p, q in zip(model.parameters(), plain.parameters()):
            self.assertTrue(torch.equal(p, q))
        self.assertGreater(searches[0], 0, "nothing was evicted")
        self.assertEqual(searches[-1], 0, searches)
        staged = after["staged_steps"] - before["staged_steps"]
        diverged = after["diverged_steps"] - before["diverged_steps"]
        self.assertGreaterEqual(staged, 2, (staged, diverged, searches))
        self.assertEqual(staged + diverged, 3)

    def test_stage_restores_the_previous_setting(self):
        with dtr.stage():
            with dtr.stage():
                pass
            self.assertTrue(dtr._ops.set_staging(True))
        self.assertFalse(dtr._ops.set_staging(False))


if __name__ == "__main__":
    unittest.main()
