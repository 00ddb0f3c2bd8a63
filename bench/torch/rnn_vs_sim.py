"""nn.LSTM / nn.GRU under DTR next to the simulator's prediction
(docs/torch.md, "Recurrent modules: runtime next to the simulator").

Trains plain, then under DTR unbudgeted (for its peak, recording step 1
whole), then at RATIO of that peak from step 1 on while recording step 1;
prints whether the budgeted run is bitwise identical, step 1's wall time
next to plain and unbudgeted DTR with its replays and time spent choosing
victims, the same for step 2 (budgeted, not recorded: the recorder's own
cost left out), and `dtr sim TRACE --budget-bytes B` on step 1's trace
(the unbudgeted run's, if the budgeted run stopped), with the same fixed
heuristic and cost model on both sides (`auto` could pick differently).

    PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \\
        .venv/bin/python bench/torch/rnn_vs_sim.py lstm 0.75 \\
        [--dtr build/dtr/cli/dtr] [--heuristic dtr] [--cost-model bytes]
"""
import argparse
import collections
import os
import subprocess
import tempfile
import time

import torch

import dtr

RECORDED = 1  # the step recorded, the first budgeted one
UNRECORDED = 2  # the next one: the same work without the recorder's cost
Run = collections.namedtuple(
    "Run", "losses params wall peak replays step_wall step_replays "
           "step_choose_ns next_wall next_replays next_choose_ns")


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
    first = dtr.stats()
    losses, start, step = [], time.perf_counter(), {}
    try:
        for i, (x, y) in enumerate(data):
            if use_dtr and i == RECORDED and budget:
                dtr.set_budget(budget)
            rec = dtr.record(record) if record and i == RECORDED else None
            if rec:
                rec.__enter__()
            before, began = dtr.stats(), time.perf_counter()
            opt.zero_grad()
            out, _ = rnn(x)
            loss = torch.nn.functional.cross_entropy(head(out[-1]), y)
            loss.backward()
            opt.step()
            if i in (RECORDED, UNRECORDED):
                s = dtr.stats()
                key = "step" if i == RECORDED else "next"
                step[key + "_wall"] = time.perf_counter() - began
                step[key + "_replays"] = s["remat_ops"] - before["remat_ops"]
                step[key + "_choose_ns"] = (s["choose_wall_ns"] -
                                            before["choose_wall_ns"])
            if rec:
                rec.__exit__(None, None, None)
            losses.append(loss.item())
    finally:
        dtr.set_budget(dtr.UNLIMITED)
    wall = time.perf_counter() - start
    last = dtr.stats()
    return Run(losses, [p.detach().clone() for p in params], wall,
               last["dtr_peak_bytes"],
               last["remat_ops"] - first["remat_ops"], **step)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("lstm", "gru"))
    ap.add_argument("ratio", type=float)
    ap.add_argument("--dtr", default="build/dtr/cli/dtr")
    ap.add_argument("--heuristic", default="dtr")
    # Measured op times make the simulator's overhead a time ratio, as the
    # wall slowdown is; "bytes" makes both sides' choices deterministic.
    ap.add_argument("--cost-model", default="measured",
                    choices=("measured", "bytes"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    dtr.set_cost_model(a.cost_model)
    dtr.set_heuristic(a.heuristic)
    folder = tempfile.mkdtemp()
    trace = os.path.join(folder, a.kind + ".log")
    whole = os.path.join(folder, a.kind + "-unbudgeted.log")
    plain = train(a.kind, False)
    free = train(a.kind, True, record=whole)
    budget = int(free.peak * a.ratio)
    try:
        run = train(a.kind, True, budget, record=trace)
        same = run.losses == plain.losses and all(
            torch.equal(p, q) for p, q in zip(run.params, plain.params))
        print("runtime: budget %d, identical %s, wall %.2fx plain (DTR "
              "unbudgeted %.2fx), %d replays in %d steps"
              % (budget, same, run.wall / plain.wall, free.wall / plain.wall,
                 run.replays, len(run.losses)))
        print("recorded step: %.1f ms plain, %.1f ms DTR unbudgeted, %.1f ms "
              "budgeted (%.2fx plain, of it %.1f ms choosing victims), "
              "%d replays" % (plain.step_wall * 1e3, free.step_wall * 1e3,
                              run.step_wall * 1e3,
                              run.step_wall / plain.step_wall,
                              run.step_choose_ns / 1e6, run.step_replays))
        print("next step (not recorded): %.1f ms plain, %.1f ms DTR "
              "unbudgeted, %.1f ms budgeted (%.2fx plain, of it %.1f ms "
              "choosing victims), %d replays"
              % (plain.next_wall * 1e3, free.next_wall * 1e3,
                 run.next_wall * 1e3, run.next_wall / plain.next_wall,
                 run.next_choose_ns / 1e6, run.next_replays))
    except RuntimeError as e:
        print("runtime: budget %d, %s" % (budget, str(e).splitlines()[0]))
        # The budgeted trace stops where the runtime did: simulate the
        # same step recorded whole in the unbudgeted run instead.
        print("(simulating the step as the unbudgeted run recorded it)")
        trace = whole
    sim = subprocess.run([a.dtr, "sim", trace, "--budget-bytes", str(budget),
                          "--heuristic", a.heuristic, "--thrash-limit",
                          "1000"], capture_output=True, text=True)
    print("simulator:", " ".join(sim.stdout.splitlines()[2:6]))


if __name__ == "__main__":
    main()
