#!/usr/bin/env python3
"""The auto-vs-fixed table of docs/planners.md from a sweep's results.csv:
one row per (trace, ratio), the overhead of each fixed heuristic and of
auto (with its choice); a failed run shows its status. Usage:
    dtr sweep ../shared/traces/manifest.json --threads 2 \\
        --heuristics dtr,dtr-eq,dtr-local,msps,lru,size,auto --out out/auto
    scripts/auto-table.py out/auto/results.csv
The fixed heuristics are the sweep's others, in the order they appear.
"""
import csv
import sys

def main(path):
    cells = {}
    fixed = []
    for row in csv.DictReader(open(path, newline="")):
        key = (row["trace"], float(row["budget_ratio"]))
        cells.setdefault(key, {})[row["heuristic"]] = row
        if row["heuristic"] != "auto" and row["heuristic"] not in fixed:
            fixed.append(row["heuristic"])
    print("| trace | ratio | " + " | ".join(fixed) + " | auto | chosen |")
    print("|---" * (len(fixed) + 4) + "|")
    worse = 0
    for (trace, ratio), runs in sorted(cells.items(),
                                       key=lambda kv: (kv[0][0], -kv[0][1])):
        def show(h):
            r = runs[h]
            return (f"{float(r['overhead']):.3f}" if r["status"] == "ok"
                    else r["status"])
        ok = [float(runs[h]["overhead"]) for h in fixed
              if runs[h]["status"] == "ok"]
        a = runs["auto"]
        if ok and (a["status"] != "ok" or float(a["overhead"]) > min(ok)):
            worse += 1
        print(f"| {trace.split('-')[0]} | {ratio:.1f} | "
              + " | ".join(show(h) for h in fixed)
              + f" | {show('auto')} | {a['chosen'] or '-'} |")
    print(f"\ncells where auto is worse than the best fixed heuristic: {worse}")


if __name__ == "__main__":
    main(sys.argv[1])
