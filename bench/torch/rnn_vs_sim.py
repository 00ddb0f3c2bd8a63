"""nn.LSTM / nn.GRU under DTR next to the simulator's prediction
(docs/torch.md, "Recurrent modules: runtime next to the simulator").

Trains plain, then under DTR unbudgeted (for its peak), then at RATIO of
that peak while recording the first budgeted step; prints whether the
budgeted run is bitwise identical, its wall time over plain, its replays,
and `dtr sim TRACE --budget-bytes B` on that very step's trace, with the
same fixed heuristic on both sides (`auto` could pick differently).

    PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \\
        /usr/bin/python3 bench/torch/rnn_vs_sim.py lstm 0.75 \\
        [--dtr build/dtr/cli/dtr]
"""
import argparse
import os
import subprocess
import tempfile
import time

import torch

import dtr


def train(kind, use_dtr, budget=None, record=None):
    torch.manual_seed(0)
    cell = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
    rnn, head = cell(16, 32, num_layers=2), torch.nn.Linear(32, 10)
    params = list(rnn.parameters()) + list(head.parameters())
    if use_dtr:
        dtr.checkpoint(rnn)
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randn(24, 64, 16, generator=gen),
             torch.randint(0, 10, (64,), generator=gen)) for _ in range(3)]
    dtr.reset_peak()
    before = dtr.stats()
    losses, start = [], time.perf_counter()
    try:
        for i, (x, y) in enumerate(data):
            if use_dtr and i == 1 and budget:
                dtr.set_budget(budget)
            rec = dtr.record(record) if record and i == 1 else None
            if rec:
                rec.__enter__()
            opt.zero_grad()
            out, _ = rnn(x)
            loss = torch.nn.functional.cross_entropy(head(out[-1]), y)
            loss.backward()
            opt.step()
            if rec:
                rec.__exit__(None, None, None)
            losses.append(loss.item())
    finally:
        dtr.set_budget(dtr.UNLIMITED)
    wall = time.perf_counter() - start
    after = dtr.stats()
    return (losses, [p.detach().clone() for p in params], wall,
            after["dtr_peak_bytes"], after["remat_ops"] - before["remat_ops"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("lstm", "gru"))
    ap.add_argument("ratio", type=float)
    ap.add_argument("--dtr", default="build/dtr/cli/dtr")
    ap.add_argument("--heuristic", default="dtr")
    a = ap.parse_args()
    torch.set_num_threads(1)
    dtr.set_cost_model("bytes")
    dtr.set_heuristic(a.heuristic)
    trace = os.path.join(tempfile.mkdtemp(), a.kind + ".log")
    plain = train(a.kind, False)
    free = train(a.kind, True)
    budget = int(free[3] * a.ratio)
    try:
        run = train(a.kind, True, budget, record=trace)
        same = run[0] == plain[0] and all(
            torch.equal(p, q) for p, q in zip(run[1], plain[1]))
        print("runtime: budget %d, identical %s, wall %.1fx plain, %d replays"
              % (budget, same, run[2] / plain[2], run[4]))
    except RuntimeError as e:
        print("runtime: budget %d, %s" % (budget, str(e).splitlines()[0]))
    if not os.path.exists(trace):
        return
    sim = subprocess.run([a.dtr, "sim", trace, "--budget-bytes", str(budget),
                          "--heuristic", a.heuristic, "--thrash-limit",
                          "1000"], capture_output=True, text=True)
    print("simulator:", " ".join(sim.stdout.splitlines()[2:6]))


if __name__ == "__main__":
    main()
