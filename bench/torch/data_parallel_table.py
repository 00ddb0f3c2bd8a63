"""Data-parallel step time and per-rank memory (docs/data-parallel.md):
DDP over Gloo on loopback with 1, 2 and 4 processes, plain and under DTR at
0.5 of the unbudgeted DTR peak (largest over ranks), a fixed shard per rank
(weak scaling: the global batch grows with the processes).

Run (from the repository root):
  PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \
  .venv/bin/python bench/torch/data_parallel_table.py [--model cnn] [--steps 6]
Prints a Markdown table: median step time over steps 2.. (the first step
builds DDP's buckets), the slowdown of DTR, and per rank the allocator's
peak above the baseline (parameters and data) next to the budget."""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "torch"))

import ddp_worker  # noqa: E402


def _median_step(res):
    return max(statistics.median(x["step_s"][1:]) for x in res)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="cnn")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--nproc", default="1,2,4")
    p.add_argument("--ratio", type=float, default=0.5)
    a = p.parse_args()
    out = tempfile.mkdtemp(prefix="dtr_ddp_table_")
    print("| processes | plain step (ms) | DTR unbudgeted peak/rank (B) "
          "| budget/rank (B) | DTR step (ms) | slowdown "
          "| allocator peak above baseline / budget, per rank "
          "| plain allocator peak above baseline / budget | identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(v) for v in a.nproc.split(",")):
        def job(name, **kw):
            return ddp_worker.launch(n, os.path.join(out, "%s%d" % (name, n)),
                                     model=a.model, steps=a.steps, **kw)
        plain = job("plain")
        free = job("free", mode="dtr")
        peak = max(x["stats"]["dtr_peak_bytes"] for x in free)
        budget = int(a.ratio * peak)
        got = job("budget", mode="dtr", budget=budget)
        same = all(
            all(ddp_worker.torch.equal(u, v) for u, v in
                zip(r["losses"], g["losses"])) and
            all(ddp_worker.torch.equal(r["final"][k], g["final"][k])
                for k in r["final"])
            for r, g in zip(plain, got))
        tp, td = _median_step(plain), _median_step(got)
        print("| %d | %.1f | %d | %d | %.1f | %.2fx | %s | %.2f | %s |" % (
            n, 1e3 * tp, peak, budget, 1e3 * td, td / tp,
            " ".join("%.2f" % (x["stats"]["allocator_peak_above_baseline"] /
                               budget) for x in got),
            max(x["stats"]["allocator_peak_above_baseline"]
                for x in plain) / budget,
            "yes" if same else "NO"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
