"""Runner of the model-zoo differential test.

A case (cases.py) is an ordinary PyTorch training program: `setup(use_dtr)`
builds model, optimizer, data (fixed seeds) and returns a Program whose
`step(i)` runs one training step and returns the loss, and whose `final()`
returns every tensor to compare at the end (parameters, buffers, optimizer
state_dict, plus whatever the case recorded along the way).

For each case we run:
  1. plain PyTorch: the reference losses and final tensors;
  2. DTR, unbudgeted: its DTR peak (stats dtr_peak_bytes: the storage of
     checkpointed values, which is what the default budget bounds;
     parameters, their gradients and optimizer state are outside it);
  3. DTR at budget = ratio x that peak, for each ratio asked (the allocator's
     peak above baseline over the budget is reported, not asserted).
and classify each DTR run as
  IDENTICAL  every loss and final tensor torch.equal to plain PyTorch;
  OOM        RuntimeError mentioning "out of memory" (acceptable only if
             oom_is_explained(): the message states a floor above the budget);
  ERROR      any other exception (a failure);
  DIFFERENT  ran to the end but something differs (the worst failure).

run_case(case, ratio) returns a dict (see its docstring) for the table script
(bench/torch/zoo_table.py); references are cached per case in this process.
"""
import gc
import io
import math
import re
import time
import traceback

import torch

import dtr

IDENTICAL, OOM, ERROR, DIFFERENT = "IDENTICAL", "OOM", "ERROR", "DIFFERENT"
RATIOS = (0.5, 0.3)


_FLOOR = re.compile(r"budget of (\d+) bytes is below this program's floor "
                    r"of at least (\d+) bytes")


def oom_is_explained(msg, budget):
    """An OutOfMemory is acceptable when the library says why: that the
    budget (this run's) is below a floor it states (the memory the program
    needs at once, e.g. one operator's inputs and outputs), and the floor
    is above the budget."""
    m = _FLOOR.search(msg)
    return (m is not None and int(m.group(1)) == budget
            and int(m.group(2)) > budget)


def _plain(t):
    """A comparable plain copy of a (possibly checkpointed) tensor."""
    t = dtr.decheckpoint(t)
    if isinstance(t, torch.Tensor):
        return t.detach().clone()
    return t


def flatten(obj, prefix=""):
    """{path: leaf} for nested dicts/lists/tuples of tensors and scalars."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, "%s%s/" % (prefix, k)))
    elif isinstance(obj, (list, tuple)):
        for k, v in enumerate(obj):
            out.update(flatten(v, "%s%d/" % (prefix, k)))
    else:
        out[prefix.rstrip("/")] = obj
    return out


def snapshot(model, opt, extra=None):
    """Every parameter, buffer and optimizer state tensor, plain copies."""
    snap = {}
    for k, v in model.state_dict().items():
        snap["model/" + k] = _plain(v)
    for k, v in flatten(opt.state_dict(), "opt/").items():
        snap[k] = _plain(v)
    for k, v in (extra or {}).items():
        for kk, vv in flatten(v, "extra/%s/" % k).items():
            snap[kk] = _plain(vv)
    return snap


def compare(ref, got):
    """None if identical, else a short description of the first mismatches."""
    bad = []
    if ref.keys() != got.keys():
        missing = sorted(ref.keys() - got.keys())[:3]
        added = sorted(got.keys() - ref.keys())[:3]
        return "keys differ: missing %s, added %s" % (missing, added)
    for k, a in ref.items():
        b = got[k]
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            same = (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                    and a.dtype == b.dtype and a.shape == b.shape
                    and torch.equal(a, b))
            if not same:
                if (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                        and a.shape == b.shape and a.is_floating_point()):
                    d = (a.double() - b.double()).abs().max().item()
                    bad.append("%s (max abs diff %.3g)" % (k, d))
                else:
                    bad.append(k)
        elif not (a == b or (isinstance(a, float) and isinstance(b, float)
                             and math.isnan(a) and math.isnan(b))):
            bad.append("%s (%r vs %r)" % (k, a, b))
    if not bad:
        return None
    return "%d differ: %s" % (len(bad), ", ".join(bad[:4]) +
                              (", ..." if len(bad) > 4 else ""))


def _train(case, use_dtr, budget=None):
    """One run: returns (losses, final snapshot, stats or None, wall s)."""
    gc.collect()
    torch.manual_seed(case.seed)
    prog = case.setup(use_dtr)
    gc.collect()
    dtr.reset_peak()
    before = dtr.stats()
    base = before["allocator_bytes"]  # parameters, data, references
    previous = dtr.set_budget(budget if (use_dtr and budget) else dtr.UNLIMITED)
    losses = []
    torch.manual_seed(case.seed + 1)  # dropout etc. draw the same in both runs
    try:
        start = time.perf_counter()
        for i in range(case.steps):
            loss = prog.step(i)
            losses.append(_plain(loss) if isinstance(loss, torch.Tensor)
                          else loss)
        wall = time.perf_counter() - start
        st = _delta(before, dtr.stats())
    finally:
        dtr.set_budget(previous)
    st["allocator_peak_above_baseline"] = st["allocator_peak_bytes"] - base
    final = {"loss/%d" % i: l for i, l in enumerate(losses)}
    final.update(prog.final())
    return final, st, wall


_COUNTERS = ("ops", "remat_ops", "evictions", "eager_evictions",
             "lineage_cuts", "remat_compute_ns", "escapes")


def _delta(before, after):
    """Stats of one run: the library's counters are cumulative."""
    out = dict(after)
    for k in _COUNTERS:
        out[k] = after[k] - before[k]
    return out


class _Ref:
    pass


_REFS = {}


def reference(case):
    """Plain-PyTorch result and the unbudgeted DTR peak, cached per case.
    Raises if the plain program itself fails (a bug in the case)."""
    if case.name in _REFS:
        return _REFS[case.name]
    ref = _Ref()
    dtr.set_budget(dtr.UNLIMITED)
    ref.final, ref.plain_stats, ref.plain_wall = _train(case, False)
    ref.free = run_dtr(case, ref, None)
    _REFS[case.name] = ref
    return ref


def run_dtr(case, ref, budget):
    """One DTR run at `budget` bytes (None: unbudgeted), classified."""
    res = {"case": case.name, "budget": budget, "stats": None, "wall": None}
    dtr.set_cost_model("bytes")
    before = dtr.stats()
    try:
        final, st, wall = _train(case, True, budget)
        res["stats"], res["wall"] = st, wall
        diff = compare(ref.final, final)
        res["outcome"] = IDENTICAL if diff is None else DIFFERENT
        res["message"] = diff or ""
    except Exception as e:  # noqa: BLE001 -- every failure is classified
        msg = "%s: %s" % (type(e).__name__, e)
        res["outcome"] = (OOM if isinstance(e, RuntimeError)
                          and "out of memory" in str(e).lower() else ERROR)
        res["message"] = msg
        res["traceback"] = traceback.format_exc()
        try:
            res["stats"] = _delta(before, dtr.stats())
        except Exception:  # noqa: BLE001
            pass
    finally:
        dtr.set_budget(dtr.UNLIMITED)
        dtr.set_cost_model("measured")
        gc.collect()
    return res


def _first_line(msg, limit=300):
    msg = " ".join(msg.split())
    return msg if len(msg) <= limit else msg[:limit] + "..."


def run_case(case, ratio):
    """Runs `case` under DTR at `ratio` x its unbudgeted DTR peak (what the
    default budget bounds: checkpointed values; ratio None: the unbudgeted
    run itself). Returns a dict:
      case, ratio, outcome (IDENTICAL/OOM/ERROR/DIFFERENT), budget (bytes),
      free_peak (unbudgeted DTR peak),
      alloc_peak_over_budget (allocator peak above baseline / budget),
      dtr_peak (stats dtr_peak_bytes), wall_ratio (DTR / plain, training
      loop only), evictions, remat_ops, escapes, lineage_cuts,
      oom_explained, message, traceback (on exceptions)."""
    ref = reference(case)
    free = ref.free
    out = {"case": case.name, "ratio": ratio, "budget": None,
           "free_peak": None, "alloc_peak_over_budget": None,
           "dtr_peak": None, "wall_ratio": None, "evictions": None,
           "remat_ops": None, "escapes": None, "lineage_cuts": None,
           "oom_explained": None, "message": "", "traceback": None}
    if free["stats"] is not None and free["outcome"] != ERROR:
        out["free_peak"] = free["stats"]["dtr_peak_bytes"]
    if ratio is None:
        res = free
    elif free["outcome"] != IDENTICAL:
        # No trustworthy peak to scale: report the unbudgeted failure.
        res = dict(free)
        res["message"] = "unbudgeted run: " + free["message"]
    else:
        budget = max(1, int(ratio * out["free_peak"]))
        out["budget"] = budget
        res = run_dtr(case, ref, budget)
    out["outcome"] = res["outcome"]
    out["message"] = _first_line(res["message"])
    out["traceback"] = res.get("traceback")
    st = res["stats"]
    if st is not None and res["outcome"] != ERROR:
        out["dtr_peak"] = st["dtr_peak_bytes"]
        for k in ("evictions", "remat_ops", "escapes", "lineage_cuts"):
            out[k] = st[k]
        if out["budget"] and "allocator_peak_above_baseline" in st:
            out["alloc_peak_over_budget"] = (
                st["allocator_peak_above_baseline"] / out["budget"])
    if res.get("wall") and ref.plain_wall:
        out["wall_ratio"] = res["wall"] / ref.plain_wall
    if res["outcome"] == OOM:
        out["oom_explained"] = oom_is_explained(res["message"], out["budget"])
    return out


def acceptable(row):
    """The test's verdict on one run_case() row: (ok, reason); a failed
    run's reason ends with its traceback, if it raised."""
    if row["outcome"] == IDENTICAL:
        if row["budget"] is not None and row["dtr_peak"] > row["budget"]:
            return False, "dtr_peak_bytes %d > budget %d" % (
                row["dtr_peak"], row["budget"])
        return True, ""
    if row["outcome"] == OOM and row["oom_explained"]:
        return True, ""
    why = "%s: %s" % (row["outcome"], row["message"])
    if row["traceback"]:
        why += "\n" + row["traceback"]
    return False, why
