"""dtr.profile(path): the Chrome trace of a run a person opens in
chrome://tracing or ui.perfetto.dev (docs/profiling.md), read back here as
a viewer would; and the wall times dtr.stats() gains."""
import json
import os
import tempfile
import unittest

import torch

import dtr


def _train_tanh_chain(budget, steps=2):
    """A tanh MLP under `budget` bytes: tight enough to evict and replay."""
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(128, 128), torch.nn.Tanh()]
    net = dtr.checkpoint(torch.nn.Sequential(*layers))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(64, 128)
    with dtr.budget(budget):
        for _ in range(steps):
            opt.zero_grad()
            net(x).pow(2).mean().backward()
            opt.step()


def _spans(events, cat):
    return [(e["ts"], e["ts"] + e["dur"], e) for e in events
            if e["ph"] == "X" and e["cat"] == cat]


class ProfileTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "p.json")

    def test_a_budgeted_run_shows_ops_replays_evictions_and_memory(self):
        budget = 200_000  # half the peak (64x128 floats are 32 KiB)
        before = dtr.stats()
        with dtr.profile(self.path):
            _train_tanh_chain(budget)
        after = dtr.stats()
        self.assertGreater(after["evictions"], before["evictions"])
        self.assertGreater(after["remat_ops"], before["remat_ops"])
        with open(self.path) as f:
            events = json.load(f)["traceEvents"]  # fails on invalid JSON

        ops = _spans(events, "op")
        replays = _spans(events, "replay")
        self.assertTrue(any(e["name"] == "aten::tanh" for _, _, e in ops))
        self.assertEqual(len(replays),
                         after["remat_ops"] - before["remat_ops"])
        # Spans nest: a replay overlapping an operator's span lies inside
        # it (the kernel's access caused it). A replay outside every span
        # is itself the access (a value read outside the kernel, e.g. by
        # decheckpoint); most replays come from kernel calls.
        inside = 0
        for begin, end, e in replays:
            for b, f, _ in ops:
                if b < end and begin < f:
                    self.assertTrue(b <= begin and end <= f, (e, b, f))
            inside += any(b <= begin and end <= f for b, f, _ in ops)
        self.assertGreater(inside, len(replays) // 2)

        evicts = [e for e in events if e["ph"] == "i" and e["name"] == "evict"]
        self.assertEqual(len(evicts), after["evictions"] - before["evictions"])
        for e in evicts:
            self.assertIsInstance(e["args"]["score"], (int, float), e)
            self.assertGreater(e["args"]["bytes"], 0)

        counters = {}
        for e in events:
            if e["ph"] == "C":
                counters.setdefault(e["name"], []).append(e["args"])
        for name in ("dtr bytes", "allocator bytes", "held bytes"):
            self.assertIn(name, counters)
        for args in counters["dtr bytes"]:
            self.assertLessEqual(args["dtr_bytes"], budget)

    def test_stats_gain_the_time_spent_choosing_and_replaying(self):
        before = dtr.stats()
        _train_tanh_chain(200_000, steps=1)
        after = dtr.stats()
        self.assertGreater(after["choose_wall_ns"], before["choose_wall_ns"])
        self.assertGreater(after["replay_wall_ns"], before["replay_wall_ns"])

    def test_an_unwritable_path_is_an_error_naming_it(self):
        missing = os.path.join(self.dir, "no-dir", "p.json")
        with self.assertRaisesRegex(RuntimeError, "no-dir/p.json"):
            with dtr.profile(missing):
                pass

    def test_one_profile_at_a_time(self):
        with dtr.profile(self.path):
            with self.assertRaisesRegex(RuntimeError, "profile is running"):
                with dtr.profile(self.path + ".2"):
                    pass
        with open(self.path) as f:
            json.load(f)


if __name__ == "__main__":
    unittest.main()
