#!/usr/bin/env python3
"""The equal-reserved-memory table of docs/allocators.md: for each paper
trace and ratio, a heuristic on the caching-allocator model at that ratio
reserves R bytes; the arena is then given exactly R (the same memory held)
and the overheads are compared. Run from the repository root after a
build. Usage:
    scripts/arena-vs-caching.py ../shared/traces/manifest.json \\
        0.8,0.6,0.5,0.4,0.3 [HEURISTIC]
"""
import json
import os
import subprocess
import sys

DTR = "build/dtr/cli/dtr"


def sim(trace, heuristic, *args):
    out = subprocess.run([DTR, "sim", trace, "--json", "--heuristic",
                          heuristic, *args], capture_output=True, text=True)
    return json.loads(out.stdout)


def show(run):
    return f"{run['overhead']:.3f}" if run["status"] == "ok" \
        else run["status"]


def main(manifest, ratios, heuristic):
    folder = os.path.dirname(manifest)
    print("| trace | ratio | caching: reserved / budget | caching overhead "
          "| arena budget / baseline peak | arena overhead |")
    print("|---" * 6 + "|")
    for model in json.load(open(manifest))["models"]:
        trace = os.path.join(folder, model["log"])
        for ratio in ratios:
            c = sim(trace, heuristic, "--budget-ratio", str(ratio),
                    "--allocator", "caching")
            reserved = c["reserved_peak_bytes"]
            a = sim(trace, heuristic, "--budget-bytes", str(reserved),
                    "--allocator", "arena")
            print(f"| {model['name']} | {ratio:.2f} "
                  f"| {reserved / c['budget_bytes']:.3f} | {show(c)} "
                  f"| {reserved / c['baseline_peak_bytes']:.3f} "
                  f"| {show(a)} |")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], [float(r) for r in sys.argv[2].split(",")],
         sys.argv[3] if len(sys.argv) == 4 else "dtr")
