"""Long-run check: per-step time, process RSS and the runtime's live graph
over many training steps, plain PyTorch and DTR under a budget, with the
least-squares slope of each per 1,000 steps (docs/torch.md, "Long runs").

    PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \\
        .venv/bin/python bench/torch/long_run.py [--steps 10000] [--every 500]
"""
import argparse
import os
import time

import torch

import dtr


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def slope_per_1000(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return 1000 * sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var


def run(use_dtr, steps, every, budget_ratio):
    torch.manual_seed(0)
    layers = []  # a chain whose activations dominate its weights
    for _ in range(6):
        layers += [torch.nn.Linear(32, 32), torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(32, 10))
    if use_dtr:
        dtr.checkpoint(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(256, 32), torch.randint(0, 10, (256,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    step()
    if use_dtr:
        dtr.reset_peak()
        step()
        dtr.set_budget(int(dtr.stats()["dtr_peak_bytes"] * budget_ratio))
    rows, t0 = [], time.perf_counter()
    try:
        for i in range(1, steps + 1):
            step()
            if i % every == 0:
                now = time.perf_counter()
                st = dtr.stats()
                rows.append((i, (now - t0) / every * 1e3, rss_bytes(),
                             st["graph_tensors"] if use_dtr else 0,
                             st["remat_ops"]))
                t0 = now
    finally:
        dtr.set_budget(dtr.UNLIMITED)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--every", type=int, default=500)
    ap.add_argument("--budget-ratio", type=float, default=0.6)
    a = ap.parse_args()
    torch.set_num_threads(1)
    print("| run | step ms (first → last window) | ms / 1000 steps | RSS MB "
          "(first → middle → last) | RSS KB / 1000 steps (whole run; "
          "second half) | live graph tensors (first → last) | per 1000 "
          "steps | replays |")
    print("|---|---|---|---|---|---|---|---|")
    for use_dtr in (False, True):
        rows = run(use_dtr, a.steps, a.every, a.budget_ratio)
        rows = rows[1:]  # the first window includes warm-up
        xs = [r[0] for r in rows]
        name = ("DTR at %.1f of its peak" % a.budget_ratio) if use_dtr \
            else "plain PyTorch"
        half = rows[len(rows) // 2:]
        print("| %s | %.3f → %.3f | %+.4f | %.1f → %.1f → %.1f | %+.1f; %+.1f "
              "| %d → %d | %+.2f | %d |" % (
                  name, rows[0][1], rows[-1][1],
                  slope_per_1000(xs, [r[1] for r in rows]),
                  rows[0][2] / 2**20, half[0][2] / 2**20, rows[-1][2] / 2**20,
                  slope_per_1000(xs, [r[2] / 1024 for r in rows]),
                  slope_per_1000([r[0] for r in half],
                                 [r[2] / 1024 for r in half]),
                  rows[0][3], rows[-1][3],
                  slope_per_1000(xs, [r[3] for r in rows]),
                  rows[-1][4]))


if __name__ == "__main__":
    main()
