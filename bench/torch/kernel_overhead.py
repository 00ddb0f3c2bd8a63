"""The kernel's added cost per small operator from Python: each op on plain
tensors and on checkpointed ones (unlimited budget), interleaved in one run,
median of the repetitions. CPU time of the process (one intra-op thread),
not wall time: on a shared machine the wall clock also counts the time the
process waited for a core. Usage:

    PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \\
        .venv/bin/python bench/torch/kernel_overhead.py [--iters N] [--reps R]
"""
import argparse
import statistics
import time

import torch

import dtr

OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "relu": lambda a, b: torch.relu(a),
    "mm": lambda a, b: torch.mm(a, b),
}


def per_op_us(op, a, b, iters):
    for _ in range(iters // 10):
        op(a, b)
    start = time.process_time()
    for _ in range(iters):
        op(a, b)
    return (time.process_time() - start) / iters * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--side", type=int, default=8,
                        help="square tensors of side x side elements")
    args = parser.parse_args()
    torch.set_num_threads(1)
    a = torch.randn(args.side, args.side)
    b = torch.randn(args.side, args.side)
    ca, cb = dtr.checkpoint(a), dtr.checkpoint(b)
    print(f"| op ({args.side}x{args.side}) | plain us | checkpointed us "
          "| added us |\n|---|---|---|---|")
    for name, op in OPS.items():
        plain, ckpt = [], []
        for _ in range(args.reps):  # interleaved: load drifts hit both
            plain.append(per_op_us(op, a, b, args.iters))
            ckpt.append(per_op_us(op, ca, cb, args.iters))
        p, c = statistics.median(plain), statistics.median(ckpt)
        print(f"| {name} | {p:.2f} | {c:.2f} | {c - p:.2f} |")


if __name__ == "__main__":
    main()
