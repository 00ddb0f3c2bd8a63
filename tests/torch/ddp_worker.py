"""One rank of a data-parallel training job (torch.nn.parallel.
DistributedDataParallel over a Gloo process group on loopback), plain or
under DTR, and launch(): runs a whole job as N processes of this script.

Each rank trains its shard of every global batch; DDP averages gradients
with Gloo all-reduces during backward. Under DTR each rank has
dtr.checkpoint(model) (its forward inputs are checkpointed; parameters and
their gradients stay plain, so DDP's buckets and collectives only ever see
plain tensors) and its own budget.

A rank writes <out>/rank<R>.pt: losses, every parameter, buffer and
optimizer state tensor (plain copies), and DTR's stats. Faults: an
OutOfMemory is re-raised as "rank R: ..." (its message states the budget
and the floor in bytes) and the rank exits 1; launch() then stops the
other ranks at once (they would otherwise wait in a collective until the
process group's timeout) and raises with that rank's message. With
--check-floor a rank first runs one step on a copy of its model under its
budget, before the process group exists: a budget below the floor fails
before any collective.

Run one job by hand (from the repository root):
  PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \
  .venv/bin/python tests/torch/ddp_worker.py --launch 2 --model cnn \
      --mode dtr --budget 300000 --out /tmp/ddp
"""
import argparse
import copy
import datetime
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import dtr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_models  # noqa: E402


class SmallCnn(nn.Module):
    """Conv-BatchNorm-ReLU blocks, deep enough that activations dominate
    (so 0.3 of the peak is above the floor); BatchNorm buffers are
    broadcast by DDP each forward (broadcast_buffers=True)."""

    def __init__(self):
        super().__init__()
        layers, c = [], 3
        for width in (16,) * 8:
            layers += [nn.Conv2d(c, width, 3, padding=1, bias=False),
                       nn.BatchNorm2d(width), nn.ReLU()]
            c = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c, 10)

    def forward(self, x):
        x = self.features(x)
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def build(name):
    """(model, optimizer factory, global batch, image size)."""
    if name == "cnn":
        return SmallCnn(), (lambda p: torch.optim.SGD(
            p, lr=0.05, momentum=0.9)), 8, 16
    if name == "resnet18":
        return real_models.resnet18(), (
            lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9,
                                      weight_decay=1e-4)), 4, 32
    if name == "mobilenet_v2":
        return real_models.mobilenet_v2(), (
            lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)), 2, 64
    raise ValueError("unknown model %r" % name)


def _plain(t):
    t = dtr.decheckpoint(t)
    return t.detach().clone() if isinstance(t, torch.Tensor) else t


def _snapshot(model, opt):
    snap = {"model/" + k: _plain(v) for k, v in model.state_dict().items()}
    for i, state in opt.state_dict()["state"].items():
        for k, v in state.items():
            snap["opt/%s/%s" % (i, k)] = _plain(v)
    return snap


def _data(steps, batch, size, world):
    """The same global batches on every rank (seeded), split into shards."""
    gen = torch.Generator().manual_seed(5)
    out = []
    for _ in range(steps):
        x = torch.randn(batch * world, 3, size, size, generator=gen)
        y = torch.randint(0, 10, (batch * world,), generator=gen)
        out.append((x, y))
    return out


def _step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return _plain(loss)


def _check_floor(model, make_opt, x, y, budget, rank):
    """One step on a copy of the model under `budget`, RNG untouched: an
    OutOfMemory here means the budget is below this rank's floor."""
    probe = copy.deepcopy(model)
    with torch.random.fork_rng():
        try:
            with dtr.budget(budget):
                _step(probe, make_opt(probe.parameters()), x, y)
        except RuntimeError as e:
            if "out of memory" not in str(e).lower():
                raise
            raise RuntimeError(
                "rank %d: budget of %d bytes fails before the first "
                "collective: %s" % (rank, budget, e)) from None
    del probe


def worker(a):
    torch.set_num_threads(1)
    rank, world = a.rank, a.world
    budgets = [int(b) for b in a.budget.split(",")] if a.budget else [0]
    budget = budgets[rank % len(budgets)]
    torch.manual_seed(a.seed)
    model, make_opt, batch, size = build(a.model)
    data = _data(a.steps, batch, size, world)
    shard = [(x[rank * batch:(rank + 1) * batch],
              y[rank * batch:(rank + 1) * batch]) for x, y in data]
    use_dtr = a.mode == "dtr"
    if use_dtr:
        dtr.set_cost_model("bytes")  # the same choices on every run
        dtr.checkpoint(model)
        if a.check_floor and budget:
            _check_floor(model, make_opt, *shard[0], budget, rank)
    dist.init_process_group(
        "gloo", init_method="file://" + a.store, rank=rank, world_size=world,
        timeout=datetime.timedelta(seconds=a.timeout))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = make_opt(ddp.parameters())
    dtr.reset_peak()
    base = dtr.stats()["allocator_bytes"]
    losses, times = [], []
    torch.manual_seed(a.seed + 1)
    for x, y in shard:
        start = time.perf_counter()
        try:
            if use_dtr and budget:
                with dtr.budget(budget):
                    losses.append(_step(ddp, opt, x, y))
            else:
                losses.append(_step(ddp, opt, x, y))
        except RuntimeError as e:
            if "out of memory" in str(e).lower():
                raise RuntimeError("rank %d: %s" % (rank, e)) from None
            raise
        times.append(time.perf_counter() - start)
    st = dtr.stats()
    st["allocator_peak_above_baseline"] = st["allocator_peak_bytes"] - base
    result = {"losses": losses, "final": _snapshot(model, opt),
              "stats": st, "budget": budget, "step_s": times,
              "grads_plain": all(not dtr.is_checkpoint(p.grad)
                                 for p in model.parameters()
                                 if p.grad is not None)}
    torch.save(result, os.path.join(a.out, "rank%d.pt" % rank))
    # PyTorch 2.x's Gloo worker threads free each finished collective
    # themselves, and one launched in backward holds a Python object whose
    # release needs the GIL. DDP's reducer, freed with the GIL held, joins
    # those threads if it holds the group's last reference: the job then
    # hung at exit now and then (plain DDP too, 4 of 30 runs on 2 cores).
    # Holding the group past the reducer makes the group's own destructor,
    # which releases the GIL, the one that joins them.
    group = dist.group.WORLD
    dist.destroy_process_group()
    del ddp
    gc.collect()
    del group


def _last_line(err):
    err.seek(0)
    lines = [ln for ln in err.read().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _first_cause(bad, last):
    """The rank to blame among those that exited with an error. When one
    rank fails (say, out of memory) its peers' collectives then fail too
    ("Connection closed by peer"), and a poll can see both exited: the rank
    whose own failure message ("rank R: ...", raised by worker()) is there
    is the cause, not the lowest rank number."""
    own = [r for r in bad if ("rank %d: " % r) in last[r]]
    return (own or bad)[0]


def _settle(procs, seconds):
    """Waits up to `seconds` for every process to exit."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(p.poll() is None for p in procs):
        time.sleep(0.05)


def launch(nproc, out, model="cnn", mode="plain", budget=None, steps=2,
           timeout=60, check_floor=False, seed=0, wall_limit=None):
    """Runs a job of `nproc` ranks of this script; returns the ranks'
    results ([rank0, rank1, ...], see worker()). If a rank fails, stops
    the others and raises RuntimeError with its stderr's last line (for an
    OutOfMemory: "rank R: [dtr] out of memory ... budget of B bytes ...")."""
    os.makedirs(out, exist_ok=True)
    store = tempfile.mktemp(prefix="store", dir=out)
    if isinstance(budget, (list, tuple)):
        budget = ",".join(str(int(b)) for b in budget)
    cmd = [sys.executable, os.path.abspath(__file__), "--world", str(nproc),
           "--store", store, "--model", model, "--mode", mode, "--out", out,
           "--steps", str(steps), "--timeout", str(timeout),
           "--seed", str(seed)]
    if budget:
        cmd += ["--budget", str(budget)]
    if check_floor:
        cmd += ["--check-floor"]
    procs, errs = [], []
    for r in range(nproc):
        err = tempfile.TemporaryFile(mode="w+")
        procs.append(subprocess.Popen(cmd + ["--rank", str(r)],
                                      stdout=subprocess.DEVNULL, stderr=err))
        errs.append(err)
    deadline = time.monotonic() + (wall_limit or 4 * timeout)
    bad = []
    try:
        while True:
            codes = [p.poll() for p in procs]
            bad = [r for r, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                # A peer of the failing rank fails too once the connection
                # drops, and may exit first: give every rank a moment to
                # exit, then blame by the messages (_first_cause).
                _settle(procs, seconds=3)
                codes = [p.poll() for p in procs]
                bad = [r for r, c in enumerate(codes) if c not in (None, 0)]
                break
            if all(c == 0 for c in codes):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("data-parallel job: no result after %ss"
                                   % (wall_limit or 4 * timeout))
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        last = {r: _last_line(errs[r]) for r in bad}
        for err in errs:
            err.close()
    if bad:
        failed = _first_cause(bad, last)
        raise RuntimeError("data-parallel job failed: rank %d exited %d: %s"
                           % (failed, procs[failed].returncode,
                              last[failed] or "(no message)"))
    return [torch.load(os.path.join(out, "rank%d.pt" % r))
            for r in range(nproc)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--store")
    p.add_argument("--launch", type=int, metavar="N",
                   help="run a whole job of N ranks and print a summary")
    p.add_argument("--model", default="cnn")
    p.add_argument("--mode", choices=("plain", "dtr"), default="plain")
    p.add_argument("--budget", help="bytes, or one per rank: B0,B1,...")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-floor", action="store_true")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.launch:
        res = launch(a.launch, a.out, a.model, a.mode, a.budget, a.steps,
                     a.timeout, a.check_floor, a.seed)
        for r, x in enumerate(res):
            print(json.dumps({
                "rank": r, "budget": x["budget"],
                "losses": [float(v) for v in x["losses"]],
                "step_s": x["step_s"],
                "dtr_peak_bytes": x["stats"]["dtr_peak_bytes"],
                "allocator_peak_above_baseline":
                    x["stats"]["allocator_peak_above_baseline"]}))
        return
    try:
        worker(a)
    except BaseException:
        # Exit at once with the error as stderr's last line: tearing down
        # a process group whose peer died can abort the interpreter
        # ("terminate called without an active exception", exit -6),
        # which hides the error.
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


if __name__ == "__main__":
    main()
