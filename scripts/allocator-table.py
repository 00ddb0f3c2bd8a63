#!/usr/bin/env python3
"""The reserved-memory tables of docs/allocators.md from sweeps run with
--allocator: per allocator model, one row per (trace, ratio), for each
heuristic the reserved peak as a multiple of the budget (above 1: an
allocator holding exactly the budget would have failed) and the
fragmentation at that peak; a failed run shows its status. Usage:
    for a in best-fit caching; do
      dtr sweep ../shared/traces/manifest.json --threads 2 --quiet \\
          --no-plots --ratios 1.0,0.8,0.6,0.5,0.4,0.3 --allocator $a \\
          --out out/alloc-$a
    done
    scripts/allocator-table.py out/alloc-best-fit/results.csv \\
        out/alloc-caching/results.csv
"""
import csv
import sys

def cell(row):
    if row["status"] != "ok":
        return row["status"]
    budget = float(row["budget_bytes"])
    reserved = float(row["reserved_peak_bytes"]) / budget
    frag = 100 * float(row["fragmentation"])
    return f"{reserved:.3f} ({frag:.0f}%)"


def table(path):
    cells = {}
    model = "?"
    rows = list(csv.DictReader(open(path, newline="")))
    for row in rows:
        model = row["allocator"]
        key = (row["trace"], float(row["budget_ratio"]))
        cells.setdefault(key, {})[row["heuristic"]] = row
    # The sweep's heuristics, in the order they first appear.
    heuristics = list(dict.fromkeys(row["heuristic"] for row in rows))
    print(f"\n**{model}**: reserved peak / budget (fragmentation at that "
          "peak)\n")
    print("| trace | ratio | " + " | ".join(heuristics) + " |")
    print("|---" * (len(heuristics) + 2) + "|")
    for (trace, ratio), runs in sorted(cells.items(),
                                       key=lambda kv: (kv[0][0], -kv[0][1])):
        shown = [cell(runs[h]) if h in runs else "" for h in heuristics]
        print(f"| {trace[:24]} | {ratio:.2f} | " + " | ".join(shown) + " |")


def main(paths):
    for path in paths:
        table(path)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
