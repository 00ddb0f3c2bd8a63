"""One run of the comparison, in a process of its own: builds the user's
model, applies one method, trains, and prints what it measured as one JSON
line. The parent (dtr.compare) starts one such process per method and
setting, so no run sees another's allocations, compiled code or DTR
state."""
import contextlib
import hashlib
import json
import random
import statistics
import sys
import time

import torch

from . import methods
from .spec import RESULT_TAG, load

def build(spec):
    """(model, optimizer, make_batch, loss_fn, blocks) from the user's
    function, seeded alike in every run. It returns the first four and, if
    the blocks to checkpoint are not the model's top-level children, a
    list of them as a fifth."""
    torch.manual_seed(0)
    random.seed(0)
    parts = load(spec)()
    if not isinstance(parts, (tuple, list)) or len(parts) not in (4, 5):
        raise ValueError(f"{spec} must return (model, optimizer, make_batch, "
                         "loss_fn) or those and a list of blocks")
    model, optimizer, make_batch, loss_fn = parts[:4]
    blocks = list(parts[4]) if len(parts) == 5 else list(model.children())
    if not blocks:
        blocks = [model]
    return model, optimizer, make_batch, loss_fn, blocks


def _state_digest(model, optimizer):
    """A hash of every parameter, buffer and optimizer state tensor's bytes
    (and the scalars of the state): equal digests mean bitwise equal."""
    digest = hashlib.sha256()

    def add(t):
        t = t.detach().cpu().contiguous()
        digest.update(str((t.dtype, tuple(t.shape))).encode())
        digest.update(t.view(-1).view(torch.uint8).numpy().tobytes())
    for _, p in model.named_parameters():
        add(p)
    for _, b in model.named_buffers():
        add(b)
    for group in optimizer.state_dict()["state"].values():
        for key in sorted(group):
            value = group[key]
            if torch.is_tensor(value):
                add(value)
            else:
                digest.update(repr((key, value)).encode())
    return digest.hexdigest()


def _allocator():
    """reset() and peak() of the one counter every method is measured by:
    the process's CPU tensor allocator, as dtr's library counts it (it
    replaces the allocator when loaded, whether or not a run uses DTR)."""
    import dtr
    return dtr.reset_peak, lambda: dtr.stats()["allocator_peak_bytes"]


def run(spec, method, setting, steps, warmup, thrash_limit):
    """Trains `warmup + steps` steps of the user's model under `method`;
    returns what the parent reports (peak, median step time of the timed
    steps) and compares (the losses, the final state's digest)."""
    model, optimizer, make_batch, loss_fn, blocks = build(spec)
    reset_peak, peak = _allocator()
    trained = methods.prepare(method, setting, model, blocks)
    staging = contextlib.nullcontext()
    if method in ("dtr", "dtr-stage"):
        import dtr
        dtr.set_thrash_limit(thrash_limit)
        if method == "dtr-stage":
            staging = dtr.stage()
    reset_peak()
    losses, times = [], []
    with staging:
        _train(trained, optimizer, make_batch, loss_fn, warmup + steps,
               losses, times)
    return {"method": method, "setting": setting,
            "peak_bytes": int(peak()),
            "step_ms": 1e3 * statistics.median(times[warmup:]),
            "losses": losses, "state": _state_digest(model, optimizer)}


def _train(model, optimizer, make_batch, loss_fn, steps, losses, times):
    """Appends each step's loss (the exact float, in hex) and wall time."""
    for step in range(steps):
        batch = make_batch(step)
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model, batch)
        loss.backward()
        optimizer.step()
        value = loss.item()
        times.append(time.perf_counter() - start)
        losses.append(float(value).hex())


def main(argv):
    spec, method, setting, steps, warmup, thrash_limit = argv
    result = run(spec, method, setting, int(steps), int(warmup),
                 float(thrash_limit))
    sys.stdout.write(RESULT_TAG + json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
