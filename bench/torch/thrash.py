"""A recurrent program that thrashes under a tight budget, with and without
the thrash limit (docs/torch.md, "When the budget is too tight").

An nn.LSTMCell unrolled over 80 time steps per truncated-BPTT window (batch
32, hidden 256), trained with SGD. Measures the unbudgeted DTR peak, then
trains plain and at RATIO of that peak with `dtr.set_thrash_limit(LIMIT)`
(`none`: no limit), and prints the wall time of each, whether the budgeted
run matched plain bit for bit or how it stopped, and its replays. With
--record PATH it instead writes two windows of the unbudgeted run as a
trace for `dtr sim PATH --budget-ratio R --heuristic H`, under the bytes
cost model, so that the simulator's results do not depend on the timing
noise of one recording.

    PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \\
        .venv/bin/python bench/torch/thrash.py 0.3 5 [--timeout 300]
"""
import argparse
import os
import threading
import time

import torch

import dtr

BATCH, INPUT, HIDDEN, CLASSES = 32, 64, 256, 10
STEPS, WINDOW, WINDOWS = 240, 80, 3


def make():
    torch.manual_seed(0)
    cell = torch.nn.LSTMCell(INPUT, HIDDEN)
    head = torch.nn.Linear(HIDDEN, CLASSES)
    data = torch.randn(BATCH, STEPS, INPUT)
    target = torch.randint(0, CLASSES, (BATCH, STEPS))
    return cell, head, data, target


def train(use_dtr, windows=WINDOWS, on_window=None):
    """Trains `windows` windows; returns the losses and parameters."""
    cell, head, data, target = make()
    params = list(cell.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    wrap = dtr.checkpoint if use_dtr else (lambda t: t)
    h = tuple(wrap(torch.zeros(BATCH, HIDDEN)) for _ in range(2))
    losses = []
    for k in range(windows):
        if on_window:
            on_window(k)
        if use_dtr:
            dtr.begin_step()
        loss = 0
        for t in range(k * WINDOW % STEPS, k * WINDOW % STEPS + WINDOW):
            h = cell(wrap(data[:, t]), h)
            loss = loss + torch.nn.functional.cross_entropy(
                head(h[0]), target[:, t])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(dtr.decheckpoint(loss).detach().clone())
        h = tuple(v.detach() for v in h)
    return losses, [p.detach().clone() for p in params]


def same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a[0] + a[1], b[0] + b[1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ratio", type=float, nargs="?", default=0.3)
    parser.add_argument("limit", nargs="?", default="5")
    parser.add_argument("--timeout", type=int, default=300,
                        help="stop the budgeted run after this many seconds")
    parser.add_argument("--record", help="write a trace of two windows")
    args = parser.parse_args()
    if args.record:
        def record(k):
            if k == 1:
                ctx.__enter__()
        ctx = dtr.record(args.record)
        dtr.set_cost_model("bytes")
        train(True, windows=3, on_window=record)
        dtr.begin_step()
        ctx.__exit__(None, None, None)
        print(f"wrote {args.record}")
        return
    train(True, windows=1)
    peak = dtr.stats()["dtr_peak_bytes"]
    start = time.perf_counter()
    want = train(False)
    plain = time.perf_counter() - start
    dtr.set_budget(int(peak * args.ratio))
    dtr.set_thrash_limit(None if args.limit == "none" else float(args.limit))
    replays = dtr.stats()["remat_ops"]
    start = time.perf_counter()
    # A thrashing backward() is one long C++ call that no Python signal
    # interrupts: a watchdog thread reports and ends the process.
    watchdog = threading.Timer(args.timeout, lambda: (
        print(f"ratio {args.ratio} limit {args.limit}: plain {plain:.2f} s, "
              f"dtr still running after {args.timeout} s", flush=True),
        os._exit(3)))
    watchdog.daemon = True
    watchdog.start()
    try:
        outcome = "identical" if same(train(True), want) else "DIFFERENT"
    except RuntimeError as e:
        outcome = str(e).splitlines()[0][:160]
    finally:
        watchdog.cancel()
    took = time.perf_counter() - start
    print(f"ratio {args.ratio} limit {args.limit}: plain {plain:.2f} s, "
          f"dtr {took:.2f} s ({took / plain:.1f}x), "
          f"{dtr.stats()['remat_ops'] - replays} replays: {outcome}")


if __name__ == "__main__":
    main()
