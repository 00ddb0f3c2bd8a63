"""Model-zoo differential test (tests/torch/zoo): ordinary PyTorch training
programs run in plain PyTorch and under DTR at 0.5 and 0.3 of their
unbudgeted DTR allocator peak above baseline, compared bitwise.

A run must be IDENTICAL (every loss, parameter, buffer and optimizer state
tensor torch.equal to plain PyTorch, with stats dtr_peak_bytes <= budget;
the allocator's peak above baseline / budget is reported, not asserted:
memory outside DTR -- parameters' .grad accumulation temporaries, autograd
bookkeeping, escapes -- has no agreed slack), or an OOM whose message
explains it (harness.oom_is_explained: a floor above the budget). ERROR
(any other exception) and DIFFERENT (silent mismatch) always fail.

Run:  PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \
      .venv/bin/python -m unittest discover -s tests/torch -p 'test_zoo.py' -v
One case:  ... -m unittest test_zoo.ZooTest.test_resnet18 (from tests/torch)
Set ZOO_CASES=a,b to restrict the cases (e.g. while debugging)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import dtr  # noqa: E402
from zoo import cases as zoo_cases  # noqa: E402
from zoo import harness  # noqa: E402

_ROWS = []


class ZooTest(unittest.TestCase):
    @classmethod
    def tearDownClass(cls):
        dtr.set_budget(dtr.UNLIMITED)
        if _ROWS:
            sys.stderr.write("\nzoo: case ratio outcome dtr_peak/budget "
                             "alloc_peak/budget wall evictions\n")
            for r in _ROWS:
                sys.stderr.write("zoo: %-18s %-4s %-9s %s %s %s %s %s\n" % (
                    r["case"], r["ratio"], r["outcome"],
                    "%.2f" % (r["dtr_peak"] / r["budget"])
                    if r["dtr_peak"] is not None and r["budget"] else "-",
                    "%.2f" % r["alloc_peak_over_budget"]
                    if r["alloc_peak_over_budget"] is not None else "-",
                    "%.2f" % r["wall_ratio"] if r["wall_ratio"] else "-",
                    r["evictions"], r["message"][:120]))

    def tearDown(self):
        dtr.set_budget(dtr.UNLIMITED)

    def _check(self, case):
        for ratio in harness.RATIOS:
            try:
                row = harness.run_case(case, ratio)
            finally:
                dtr.set_budget(dtr.UNLIMITED)
            _ROWS.append(row)
            ok, why = harness.acceptable(row)
            if row["message"].startswith("unbudgeted run:"):
                self.fail("%s (unbudgeted) %s" % (case.name, why))
            with self.subTest(ratio=ratio):
                self.assertTrue(ok, "%s at %s: %s" % (case.name, ratio, why))


def _add(case):
    def test(self):
        if not case.runnable():
            self.skipTest("%s does not import here" % case.requires)
        self._check(case)
    test.__doc__ = "%s (%s)" % (case.name, case.habits)
    setattr(ZooTest, "test_" + case.name, test)


_only = os.environ.get("ZOO_CASES")
for _case in zoo_cases.CASES:
    if not _only or _case.name in _only.split(","):
        _add(_case)

if __name__ == "__main__":
    unittest.main()
