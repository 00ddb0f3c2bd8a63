#!/usr/bin/env python3
"""Markdown table of DTR against the best schedule and the lower bound, from
`dtr plan ... --planner all --heuristics ... --json` results (one JSON
object a line on stdin): each heuristic's overhead, the best schedule any
row found, the MILP's bound (as an overhead), its solve time, and each
heuristic's worst ratios to the bound and to the best schedule over the
cells where it trains. A trace named like the paper's files
(`lstm-128-...-default`) is shown as `paper lstm`."""
import json
import sys

SHORT = {"oom": "oom", "thrash": "thrash"}


def name(j):
    parts = j["trace"].split("-")
    return "paper " + parts[0] if len(parts) > 2 else j["trace"]


def overhead(j, ns):
    return ns / j["baseline_compute_ns"]


def main():
    cells = [json.loads(line) for line in sys.stdin if line.strip()]
    heuristics = [r["name"] for r in cells[0]["results"] if r["kind"] == "dtr"]
    print("| trace (nodes) | ratio | " + " | ".join(heuristics) +
          " | best schedule | bound | milp | milp s |")
    print("|---|---|" + "---|" * (len(heuristics) + 4))
    worst, worst_best = {}, {}
    for j in cells:
        ratio = j["budget_bytes"] / j["baseline_peak_bytes"]
        rows = {r["name"]: r for r in j["results"]}
        fits = [r for r in j["results"] if r["fits"]]
        best = min((r["compute_ns"] for r in fits), default=None)
        bound = j.get("lower_bound_ns", 0)
        out = []
        for h in heuristics:
            r = rows[h]
            if not r["fits"]:
                out.append(SHORT.get(r["status"], r["status"]))
                continue
            out.append("%.3f" % r["overhead"])
            where = "%s %.1f" % (name(j), ratio)
            if bound > 0:
                x = r["compute_ns"] / bound
                if x > worst.get(h, (0, ""))[0]:
                    worst[h] = (x, where)
            y = r["compute_ns"] / best
            if y > worst_best.get(h, (0, ""))[0]:
                worst_best[h] = (y, where)
        milp = rows.get("milp")
        milp_text = "-"
        if milp is not None:
            milp_text = ("%.3f %s" % (milp["overhead"], milp["status"])
                         if milp["fits"] else milp["status"])
        print("| %s (%d) | %.1f | " % (name(j), j["nodes"], ratio) +
              " | ".join(out) + " | %s | %s | %s | %s |" % (
                  "%.3f" % overhead(j, best) if best else "none",
                  "%.3f" % overhead(j, bound) if bound > 0 else "-",
                  milp_text,
                  "%.1f" % milp["solve_s"] if milp else "-"))
    print()
    for h, (x, where) in worst.items():
        y, where_best = worst_best[h]
        print("- `%s`: at most %.3fx the optimum where it trains (worst: %s); "
              "at most %.3fx the best schedule found (%s)" %
              (h, x, where, y, where_best))


main()
