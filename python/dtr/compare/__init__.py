"""dtr beside PyTorch's own memory tools, on your model:

    python -m dtr.compare MODULE:FUNCTION [--steps N] [--out DIR]

FUNCTION() returns (model, optimizer, make_batch, loss_fn): make_batch(step)
gives a step's batch, loss_fn(model, batch) its loss. A fifth element, a
list of modules, names the blocks that per-block checkpointing wraps (by
default the model's top-level children). The function must build the same
model every time it is called (it is called once per run, after
torch.manual_seed(0)).

Each method trains the model from that same start, in a process of its
own: plain PyTorch (twice: the second run tells whether the program is
deterministic at all), torch.utils.checkpoint around each block
(non-reentrant), selective checkpointing that saves matrix products
(sac), torch.compile under torch._functorch.config.activation_memory_budget
at each --compile-budgets fraction, and dtr with a process budget at each
--dtr-budgets fraction of plain's peak (dtr-stage, not run by default:
the same with staging). Every run is measured by the same
counter, the process's CPU tensor allocator: its peak over the run
(parameters, gradients and optimizer state included), the median time of a
training step after --warmup steps, and whether every loss and the final
parameters, buffers and optimizer state are bitwise equal to plain's.

Writes DIR/results.csv (method,setting,peak_bytes,step_ms,identical;
setting: the compile fraction, dtr's budget in bytes, or "-"),
DIR/failures.txt (runs that stopped, with their last error line) and
DIR/pareto.png (time per step against peak memory; needs matplotlib)."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

from . import spec
from .methods import DEFAULT_METHODS, METHODS

__all__ = ["main", "METHODS"]

# "torch.utils.checkpoint.CheckpointError: ...", "RuntimeError: ..."
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exceeded):")


def _fractions(text):
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 0.8,0.5; "
                                         f"got {text!r}")
    if not values or any(not 0 < v <= 1 for v in values):
        raise argparse.ArgumentTypeError(f"fractions must be in (0, 1]; "
                                         f"got {text!r}")
    return values


def _at_least(low, kind=int):
    def check(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got "
                                             f"{text!r}")
        if not value >= low or (kind is float and value == low):
            raise argparse.ArgumentTypeError(
                f"must be {'>' if kind is float else '>='} {low}, got {text}")
        return value
    return check


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m dtr.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("function", metavar="MODULE:FUNCTION")
    p.add_argument("--steps", type=_at_least(1), default=5,
                   help="timed training steps per run (default 5)")
    p.add_argument("--warmup", type=_at_least(0), default=2,
                   help="untimed steps first (default 2; compile happens "
                        "there)")
    p.add_argument("--out", default="compare-out", help="output folder")
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                   help="which of " + ",".join(METHODS) + " (default: all "
                        "but dtr-stage; plain always runs: it is the "
                        "reference)")
    p.add_argument("--compile-budgets", type=_fractions,
                   default=[1.0, 0.5, 0.1],
                   help="activation_memory_budget fractions")
    p.add_argument("--dtr-budgets", type=_fractions,
                   default=[0.9, 0.8, 0.7, 0.6, 0.5],
                   help="dtr budgets as fractions of plain's peak")
    p.add_argument("--thrash-limit", type=_at_least(0.0, float), default=20.0,
                   help="dtr runs stop at this much recomputation per step "
                        "(default 20x their own compute)")
    p.add_argument("--repeats", type=_at_least(1), default=1,
                   help="run every method this many times, in rounds; "
                        "report the median step time (default 1)")
    p.add_argument("--timeout", type=_at_least(0.0, float), default=900.0,
                   help="seconds per run (default 900)")
    return p


def _run_one(args, method, setting):
    """The child's result dict, or a string saying why it has none."""
    cmd = [sys.executable, "-m", "dtr.compare.child", args.function, method,
           str(setting), str(args.steps), str(args.warmup),
           str(args.thrash_limit)]
    env = dict(os.environ)
    # The user's module is found as `python -m dtr.compare` found it.
    env["PYTHONPATH"] = os.pathsep.join(
        [os.getcwd()] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                         if p])
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {args.timeout:g} s"
    for line in done.stdout.splitlines():
        if line.startswith(spec.RESULT_TAG):
            return json.loads(line[len(spec.RESULT_TAG):])
    return _last_error(done.stderr) or f"exited with status {done.returncode}"


def _last_error(stderr):
    """The first line of the last exception a traceback printed (its
    message may go on for lines), else the last line."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if _EXCEPTION_LINE.match(line)]
    return (errors or lines or [""])[-1]


def _identical(result, reference):
    return (result["losses"] == reference["losses"]
            and result["state"] == reference["state"])


def _row(run, results, reference):
    """One row of results.csv from a run's repeats: the largest peak, the
    median step time, identical only if every repeat was."""
    method, setting, _ = run
    identical = all(_identical(r, reference) for r in results)
    return {"method": method, "setting": setting,
            "peak_bytes": max(r["peak_bytes"] for r in results),
            "step_ms": round(statistics.median(r["step_ms"] for r in results),
                             3),
            "identical": "yes" if identical else "no"}


def _runs(args, chosen, plain_peak):
    """(method, setting, label) of every run after the reference plain
    run; the label says what the setting means."""
    runs = [("plain", "-", "determinism")]  # plain again
    for method in ("checkpoint", "sac"):
        if method in chosen:
            runs.append((method, "-", "per block"))
    if "compile-budget" in chosen:
        runs += [("compile-budget", f, f"budget {f:g}")
                 for f in args.compile_budgets]
    for method in ("dtr", "dtr-stage"):
        if method in chosen:
            runs += [(method, int(f * plain_peak), f"{f:g} of plain")
                     for f in args.dtr_budgets]
    return runs


def main(argv=None):
    args = _parser().parse_args(argv)
    chosen = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(chosen) - set(METHODS))
    if unknown:
        sys.exit(f"dtr.compare: unknown method(s) {', '.join(unknown)}; "
                 f"choose from {', '.join(METHODS)}")
    try:
        spec.load(args.function)
    except Exception as e:  # the user's module may raise anything
        sys.exit(f"dtr.compare: cannot load {args.function}: "
                 f"{type(e).__name__}: {e}")
    os.makedirs(args.out, exist_ok=True)
    reference = _run_one(args, "plain", "-")
    if isinstance(reference, str):
        sys.exit(f"dtr.compare: plain PyTorch failed: {reference}")
    runs = _runs(args, chosen, reference["peak_bytes"])
    results = {run: [] for run in runs}
    failed = {}
    # Rounds, each run once per round: a slow spell of a shared machine
    # falls on every method alike.
    for round_ in range(args.repeats):
        for run in runs:
            if run in failed:
                continue
            method, setting, label = run
            result = _run_one(args, method, setting)
            if isinstance(result, str):
                failed[run] = result
                print(f"{method:15} {label:>13}  failed: {result}",
                      flush=True)
                continue
            results[run].append(result)
            print(f"{method:15} {label:>13}  peak "
                  f"{result['peak_bytes'] / 2**20:9.2f} MiB  step "
                  f"{result['step_ms']:9.2f} ms  identical "
                  f"{'yes' if _identical(result, reference) else 'no'}"
                  + (f"  (round {round_ + 1})" if args.repeats > 1 else ""),
                  flush=True)
    rows = [_row(run, results[run], reference) for run in runs
            if run not in failed]
    failures = [f"{m} {s} ({label}): {failed[(m, s, label)]}"
                for m, s, label in runs if (m, s, label) in failed]
    from . import report
    report.write_csv(os.path.join(args.out, "results.csv"), rows)
    report.write_text(os.path.join(args.out, "failures.txt"),
                      "".join(f + "\n" for f in failures))
    plotted = report.plot(os.path.join(args.out, "pareto.png"), rows,
                          title=args.function)
    if not plotted:
        print("dtr.compare: matplotlib is not installed; no pareto.png")
    return 0
