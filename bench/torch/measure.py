#!/usr/bin/env python3
"""Measures the LibTorch layer against plain LibTorch and the simulator.

Writes three Markdown tables (stdout, or --out FILE):
  1. overhead at an unlimited budget versus plain LibTorch, per model;
  2. slowdown at budget ratios 0.8 / 0.6 / 0.4 / 0.3 next to the
     simulator's prediction for the trace recorded in the same run;
  3. the largest batch that trains within a fixed memory limit, DTR versus
     plain LibTorch.
Every figure is a ratio of two runs made side by side in one process or
one script run (this machine is shared and noisy: read them as such).

  .venv/bin/python bench/torch/measure.py --dtr build/dtr/cli/dtr \
      --out docs/torch-measured.md
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

MODELS = ["mlp", "resnet32", "densenet", "unet", "lstm", "treelstm",
          "transformer"]
RATIOS = [0.8, 0.6, 0.4, 0.3]
# The goal: wall slowdown within 1.25x the simulator's predicted
# overhead plus 0.1, wherever the simulator trains.
GOAL_FACTOR, GOAL_SLACK = 1.25, 0.1


def run(cmd, timeout=600):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout
    return p.returncode, p.stdout + p.stderr


def field(text, line_prefix, name):
    for line in text.splitlines():
        if line.startswith(line_prefix):
            m = re.search(r"\b" + name + r" ([0-9.e+-]+)", line)
            if m:
                return float(m.group(1))
    return None


def train(dtr, model, steps, extra):
    cmd = [dtr, "train", "--model", model, "--steps", str(steps)] + extra
    rc, out = run(cmd)
    return rc, out


def overhead_table(dtr, repeats, steps):
    rows = ["| model | DTR unlimited / plain wall (median of %d) | runs |"
            % repeats, "|---|---|---|"]
    for m in MODELS:
        ratios = []
        for _ in range(repeats):
            rc, out = train(dtr, m, steps, ["--check", "--warmup"])
            d = field(out, "summary:", "wall_ms")
            p = field(out, "check:", "wall_ms")
            if rc == 0 and d and p:
                ratios.append(d / p)
        med = "%.3f" % statistics.median(ratios) if ratios else "failed"
        rows.append("| %s | %s | %s |" % (
            m, med, " ".join("%.2f" % r for r in ratios)))
        print(rows[-1], file=sys.stderr)
    return "\n".join(rows)


def sim_json(text):
    """The JSON object `dtr sim --json` printed, also when it exited
    non-zero (out of memory), then followed by its error line."""
    try:
        return json.loads(text[:text.rindex("}") + 1])
    except ValueError:
        return {}


def goal_cell(wall, sim):
    if sim.get("status") != "ok":
        return "n/a (simulator: %s)" % sim.get("status", "failed")
    bound = GOAL_FACTOR * sim["overhead"] + GOAL_SLACK
    return "%s (<= %.2f)" % ("met" if wall <= bound else "MISSED", bound)


def sweep_table(dtr, steps, models):
    rows = ["| model | ratio | budget bytes | allocator peak DTR / plain | "
            "wall DTR / plain | simulator overhead (same trace, same budget) "
            "| remats runtime / sim | goal | check |",
            "|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        for r in RATIOS:
            with tempfile.NamedTemporaryFile(suffix=".log") as trace:
                # One fixed heuristic on both sides: `auto` would let the
                # runtime and the simulator pick differently.
                rc, out = train(dtr, m, steps, [
                    "--budget-ratio", str(r), "--check", "--heuristic", "dtr",
                    "--record", trace.name])
                budget = field(out, "summary:", "budget_bytes")
                if rc != 0 or budget is None:
                    last = out.strip().splitlines()[-1] if out.strip() else ""
                    rows.append("| %s | %.1f | | | | | | | %s |" % (
                        m, r, last.replace("|", "/")[:160]))
                    print(rows[-1], file=sys.stderr)
                    continue
                rc2, sim = run([dtr, "sim", trace.name, "--budget-bytes",
                                str(int(budget)), "--heuristic", "dtr",
                                "--thrash-limit", "1000000", "--json"])
            s = sim_json(sim)
            wall = field(out, "summary:", "wall_ms") / \
                field(out, "check:", "wall_ms")
            peak = "%d / %d" % (field(out, "summary:", "allocator_peak_bytes"),
                                field(out, "check:", "allocator_peak_bytes"))
            sim_over = "%.2f" % s["overhead"] if "overhead" in s else "n/a"
            remats = "%d / %s" % (field(out, "summary:", "remats"),
                                  s.get("remats", "n/a"))
            check = "identical" if "bitwise identical" in out else "DIFFER"
            rows.append("| %s | %.1f | %d | %s | %.2f | %s | %s | %s | %s |" % (
                m, r, budget, peak, wall, sim_over, remats,
                goal_cell(wall, s), check))
            print(rows[-1], file=sys.stderr)
    return "\n".join(rows)


def largest_batch_table(dtr, model, base_batch, steps, factors):
    # The memory limit: what plain LibTorch needs at base_batch.
    rc, out = train(dtr, model, steps, ["--batch", str(base_batch),
                                        "--check"])
    limit = int(field(out, "check:", "allocator_peak_bytes"))
    rows = ["Memory limit: %d bytes = plain LibTorch's allocator peak for "
            "%s at batch %d (%d steps). DTR's budget is the limit minus the "
            "memory outside its control (parameters, inputs), measured in "
            "an unbudgeted run at the same batch; a batch fits if the "
            "allocator's peak stays within the limit." % (
                limit, model, base_batch, steps), "",
            "| batch | plain allocator peak | fits plain | DTR budget | "
            "DTR allocator peak | fits DTR | wall DTR / plain | check |",
            "|---|---|---|---|---|---|---|---|"]
    for f in factors:
        b = base_batch * f
        rc, free = train(dtr, model, 1, ["--batch", str(b), "--check"])
        plain_peak = int(field(free, "check:", "allocator_peak_bytes"))
        outside = int(field(free, "summary:", "allocator_peak_bytes") -
                      field(free, "summary:", "dtr_peak_bytes"))
        budget = limit - outside
        rc, out = train(dtr, model, steps, ["--batch", str(b),
                                            "--budget-bytes", str(budget),
                                            "--check"])
        peak = field(out, "summary:", "allocator_peak_bytes")
        fits = rc == 0 and peak is not None and peak <= limit
        wall = (field(out, "summary:", "wall_ms") /
                field(out, "check:", "wall_ms")) if rc == 0 else None
        rows.append("| %d | %d | %s | %d | %s | %s | %s | %s |" % (
            b, plain_peak, "yes" if plain_peak <= limit else "no", budget,
            "%d" % peak if peak else "OOM", "yes" if fits else "no",
            "%.2f" % wall if wall else "", "identical"
            if "bitwise identical" in out else
            (out.strip().splitlines()[-1][:120] if out.strip() else "")))
        print(rows[-1], file=sys.stderr)
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtr", default="build/dtr/cli/dtr")
    ap.add_argument("--out", default="-")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--only", choices=["overhead", "sweep", "batch"])
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated models of the sweep table")
    a = ap.parse_args()
    parts = []
    if a.only in (None, "overhead"):
        parts.append("### Overhead at an unlimited budget\n\n" +
                     overhead_table(a.dtr, a.repeats, a.steps))
    if a.only in (None, "sweep"):
        parts.append("### Slowdown under a budget, next to the simulator\n\n"
                     + sweep_table(a.dtr, 2, a.models.split(",")))
    if a.only in (None, "batch"):
        parts.append("### Largest batch at a fixed memory limit (ResNet-32)"
                     "\n\n" + largest_batch_table(a.dtr, "resnet32", 16, 2,
                                                  [1, 2, 3, 4, 5, 6]))
    text = "\n\n".join(parts) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
