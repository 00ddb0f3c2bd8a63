#!/usr/bin/env python3
"""Model-zoo table: every case of tests/torch/zoo at budget ratios 0.5 and
0.3 of its unbudgeted DTR allocator peak (above the memory live when
training starts), as a Markdown table on stdout:

  case | budget ratio | outcome | allocator peak / budget | wall DTR/plain |
  evictions | note

Outcomes: IDENTICAL (bitwise equal to plain PyTorch), OOM (out of memory;
"explained" if the message states a floor above the budget), ERROR (any
other exception), DIFFERENT (silent mismatch). The note column carries the
message (first mismatching tensors, or the exception) and escapes/lineage
cuts. A case whose unbudgeted DTR run already fails is reported with ratio
"free".

  PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \
      .venv/bin/python bench/torch/zoo_table.py [--cases a,b] [--ratios 0.5,0.3]
      [--tracebacks] [--json FILE]

Point PYTHONPATH and DTR_TORCH_LIBRARY at another build (e.g. an older
commit's) to compare.
Progress goes to stderr; the table to stdout.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "torch"))

from zoo import cases as zoo_cases  # noqa: E402
from zoo import harness  # noqa: E402


def fmt(v, spec):
    return "-" if v is None else spec % v


def note(row):
    parts = []
    if row["outcome"] == harness.OOM:
        parts.append("explained" if row["oom_explained"] else "unexplained")
    if row["message"]:
        parts.append(row["message"].replace("|", "\\|"))
    if row.get("escapes"):
        parts.append("escapes %d" % row["escapes"])
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", help="comma-separated case names (default all)")
    ap.add_argument("--ratios", default="0.5,0.3")
    ap.add_argument("--tracebacks", action="store_true",
                    help="print tracebacks of ERROR rows to stderr")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args()
    names = args.cases.split(",") if args.cases else [
        c.name for c in zoo_cases.CASES]
    ratios = [float(r) for r in args.ratios.split(",")]
    rows, skipped = [], []
    start = time.perf_counter()
    for name in names:
        case = zoo_cases.BY_NAME[name]
        if not case.runnable():
            skipped.append(name)
            continue
        t = time.perf_counter()
        for ratio in ratios:
            row = harness.run_case(case, ratio)
            rows.append(row)
            if args.tracebacks and row["traceback"]:
                print(row["traceback"], file=sys.stderr)
            if row["message"].startswith("unbudgeted run:"):
                row["ratio"] = "free"
                break
        print("[zoo] %s %.1fs %s" % (name, time.perf_counter() - t,
                                     " ".join(r["outcome"] for r in rows
                                              if r["case"] == name)),
              file=sys.stderr, flush=True)
    print("| case | budget ratio | outcome | allocator peak / budget | "
          "wall DTR/plain | evictions | note |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["ratio"], r["outcome"],
            fmt(r["alloc_peak_over_budget"], "%.2f"),
            fmt(r["wall_ratio"], "%.2f"), fmt(r["evictions"], "%d"),
            note(r)))
    print("\n%d runs in %.0f s" % (len(rows), time.perf_counter() - start))
    if skipped:
        print("\nNot run (a module they import does not import here): %s"
              % ", ".join(skipped))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{k: v for k, v in r.items()} for r in rows], f,
                      indent=1, default=str)


if __name__ == "__main__":
    main()
