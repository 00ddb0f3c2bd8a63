"""python -m dtr.compare (python/dtr/compare): every method trains the same
model in a process of its own and is measured by one counter; dtr's runs
are bitwise identical to plain PyTorch and stay within their process
budget; runs that fail are listed, not lost; bad input is named."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


def small_mlp():
    """Blocks of Linear, GELU and dropout trained with AdamW: activations
    outweigh parameters, so checkpointing and dtr have room to save."""
    model = nn.Sequential(
        *[nn.Sequential(nn.Linear(128, 128), nn.GELU(), nn.Dropout(0.1))
          for _ in range(4)], nn.Linear(128, 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randn(256, 128, generator=gen),
             torch.randint(0, 10, (256,), generator=gen)) for _ in range(4)]
    return (model, optimizer, lambda step: data[step % len(data)],
            lambda m, b: nn.functional.cross_entropy(m(b[0]), b[1]))


def not_a_tuple():
    return nn.Linear(2, 2)


def compare(*args):
    out = tempfile.mkdtemp(prefix="dtr-compare-")
    done = subprocess.run(
        [sys.executable, "-m", "dtr.compare", *args, "--out", out,
         "--steps", "2", "--warmup", "1"],
        cwd=HERE, capture_output=True, text=True, timeout=600)
    return done, out


def rows_of(out):
    with open(os.path.join(out, "results.csv")) as f:
        return list(csv.DictReader(f))


class CompareTest(unittest.TestCase):
    def test_methods_run_and_dtr_is_identical_within_its_budget(self):
        done, out = compare("test_compare:small_mlp", "--methods",
                            "checkpoint,sac,dtr,dtr-stage", "--dtr-budgets",
                            "0.9,0.75")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(out, "results.csv")) as f:
            self.assertEqual(f.readline().strip(),
                             "method,setting,peak_bytes,step_ms,identical")
        rows = rows_of(out)
        self.assertEqual([r["method"] for r in rows],
                         ["plain", "checkpoint", "sac", "dtr", "dtr",
                          "dtr-stage", "dtr-stage"],
                         done.stdout)
        plain = rows[0]
        self.assertEqual(plain["identical"], "yes")  # deterministic
        for r in rows:
            self.assertEqual(r["identical"], "yes", r)
            self.assertGreater(float(r["step_ms"]), 0)
        for r in rows[3:]:  # dtr and dtr-stage
            # The process budget bounds the very counter that is reported.
            self.assertLessEqual(int(r["peak_bytes"]), int(r["setting"]), r)
        self.assertLess(int(rows[4]["peak_bytes"]), int(plain["peak_bytes"]))
        # Full recomputation per block keeps less than plain does.
        self.assertLess(int(rows[1]["peak_bytes"]), int(plain["peak_bytes"]))
        with open(os.path.join(out, "pareto.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        umask = os.umask(0)
        os.umask(umask)
        for name in ("results.csv", "failures.txt", "pareto.png"):
            mode = os.stat(os.path.join(out, name)).st_mode & 0o777
            self.assertEqual(mode, 0o666 & ~umask, name)
        self.assertEqual([f for f in os.listdir(out) if f.startswith(".")],
                         [])  # no temporary file left behind

    def test_a_run_below_the_floor_is_listed_as_failed(self):
        done, out = compare("test_compare:small_mlp", "--methods", "dtr",
                            "--dtr-budgets", "0.02,0.8", "--repeats", "2")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([r["method"] for r in rows_of(out)],
                         ["plain", "dtr"])
        # Two rounds of the runs that go on, none more of the failed one.
        self.assertEqual(done.stdout.count("(round 2)"), 2, done.stdout)
        self.assertEqual(done.stdout.count("failed"), 1, done.stdout)
        with open(os.path.join(out, "failures.txt")) as f:
            failures = f.read()
        self.assertIn("dtr ", failures)
        self.assertIn("out of memory", failures)
        self.assertIn("0.02 of plain", failures)

    def test_compile_budget_runs_or_says_why_not(self):
        done, out = compare("test_compare:small_mlp", "--methods",
                            "compile-budget", "--compile-budgets", "0.5")
        self.assertEqual(done.returncode, 0, done.stderr)
        compiled = [r for r in rows_of(out) if r["method"] == "compile-budget"]
        with open(os.path.join(out, "failures.txt")) as f:
            failures = f.read()
        self.assertTrue(compiled or failures.startswith("compile-budget 0.5"),
                        done.stdout + failures)
        for r in compiled:
            self.assertEqual(r["setting"], "0.5")

    def test_bad_input_is_named(self):
        done, _ = compare("no_such_module_here:f")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("cannot load no_such_module_here:f: ModuleNotFoundError",
                      done.stderr)
        done, _ = compare("test_compare:not_a_tuple")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("must return (model, optimizer, make_batch, loss_fn)",
                      done.stderr)
        done, _ = compare("test_compare:small_mlp", "--methods", "magic")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("unknown method(s) magic", done.stderr)
        done, _ = compare("test_compare:small_mlp", "--dtr-budgets", "1.5")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("fractions must be in (0, 1]", done.stderr)
        done, _ = compare("test_compare:small_mlp", "--timeout", "nan")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--timeout: must be > 0.0, got nan", done.stderr)


if __name__ == "__main__":
    unittest.main()
