#!/usr/bin/env python3
"""Markdown table of `dtr plan ... --json` results (one JSON object a line
on stdin): overhead of every planner and DTR heuristic at each budget."""
import json
import sys

SHORT = {"infeasible": "inf", "over-budget": "over", "time-limit": "time",
         "unsupported": "n/a", "oom": "oom", "thrash": "thrash"}


def cell(r):
    if not r["fits"]:
        return "– (%s)" % SHORT.get(r["status"], r["status"])
    text = "%.3f" % r["overhead"]
    if r["kind"] == "planner" and r["name"] == "milp":
        if r["status"] == "optimal":
            text += " opt, %.1f s" % r["solve_s"]
        else:
            text += " gap %.0f%%, %.0f s" % (100 * r["gap"], r["solve_s"])
    return text


rows = [json.loads(line) for line in sys.stdin if line.strip()]
names = [r["name"] for r in rows[0]["results"]]
print("| model (nodes) | ratio | " + " | ".join(names) + " |")
print("|---|---|" + "---|" * len(names))
for j in rows:
    ratio = j["budget_bytes"] / j["baseline_peak_bytes"]
    by_name = {r["name"]: r for r in j["results"]}
    print("| %s (%d) | %.1f | " % (j["trace"], j["nodes"], ratio) +
          " | ".join(cell(by_name[n]) for n in names) + " |")
