#!/usr/bin/env python3
"""The arena table of docs/allocators.md: per (trace, ratio) and heuristic,
the overhead with a perfect allocator and with the arena (same budget), and
the arena's overhead over the perfect one; a failed run shows its status.
Usage:
    for a in perfect arena; do
      dtr sweep ../shared/traces/manifest.json --threads 2 --quiet \\
          --no-plots --ratios 1.0,0.8,0.6,0.5,0.4,0.3 --allocator $a \\
          --out out/alloc-$a
    done
    scripts/arena-table.py out/alloc-perfect/results.csv \\
        out/alloc-arena/results.csv
"""
import csv
import sys

def load(path):
    cells = {}
    for row in csv.DictReader(open(path, newline="")):
        key = (row["trace"], round(float(row["budget_ratio"]), 2),
               row["heuristic"])
        cells[key] = row
    return cells


def show(row):
    return f"{float(row['overhead']):.3f}" if row["status"] == "ok" \
        else row["status"]


def cell(perfect, arena):
    if perfect["status"] != "ok" or arena["status"] != "ok":
        return f"{show(perfect)} / {show(arena)}"
    ratio = float(arena["overhead"]) / float(perfect["overhead"])
    return f"{show(perfect)} / {show(arena)} ({ratio:.3f})"


def main(perfect_path, arena_path):
    perfect, arena = load(perfect_path), load(arena_path)
    rows = sorted({(t, r) for t, r, _ in perfect}, key=lambda k: (k[0], -k[1]))
    # The sweep's heuristics, in the order they first appear.
    heuristics = list(dict.fromkeys(h for _, _, h in perfect))
    print("| trace | ratio | " + " | ".join(heuristics) + " |")
    print("|---" * (len(heuristics) + 2) + "|")
    for trace, ratio in rows:
        shown = [cell(perfect[(trace, ratio, h)], arena[(trace, ratio, h)])
                 for h in heuristics]
        print(f"| {trace[:24]} | {ratio:.2f} | " + " | ".join(shown) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
