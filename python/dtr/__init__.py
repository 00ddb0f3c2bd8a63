"""DTR for PyTorch: train under a memory budget with unchanged model code.

    import dtr
    model = dtr.checkpoint(model)        # inputs to forward() get checkpointed
    with dtr.budget(64 << 20):           # bytes of tensor storage
        loss = loss_fn(model(x), y)
        loss.backward()
    print(dtr.stats()["allocator_peak_bytes"])

Loads the same libdtr_torch.so the C++ API uses into Debian's python3-torch
(found through $DTR_TORCH_LIBRARY or next to the build directories).
"""
import contextlib
import glob
import os

import torch

__all__ = ["checkpoint", "decheckpoint", "is_checkpoint", "budget",
           "set_budget", "stats", "reset_peak", "evict_all", "set_cost_model", "UNLIMITED"]

UNLIMITED = 1 << 60
_STAT_NAMES = ("budget_bytes", "dtr_bytes", "dtr_peak_bytes",
               "allocator_bytes", "allocator_peak_bytes", "outside_bytes",
               "held_bytes", "ops", "remat_ops", "evictions",
               "eager_evictions", "lineage_cuts", "remat_compute_ns",
               "escapes")


def _find_library():
    path = os.environ.get("DTR_TORCH_LIBRARY")
    if path:
        return path
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    patterns = [os.path.join(root, "build*", "dtr", "torch", "libdtr_torch.so"),
                os.path.join(os.path.dirname(root), "build*", "**",
                             "libdtr_torch.so")]
    for pattern in patterns:
        found = sorted(glob.glob(pattern, recursive=True))
        if found:
            return found[0]
    raise ImportError("dtr: libdtr_torch.so not found; build the dtr_torch "
                      "target and set DTR_TORCH_LIBRARY to its path")


torch.ops.load_library(_find_library())
_ops = torch.ops.dtr


def is_checkpoint(t):
    return isinstance(t, torch.Tensor) and _ops.is_checkpoint(t)


def decheckpoint(t):
    """The plain tensor behind `t` (rematerialized if needed)."""
    return _ops.decheckpoint(t) if is_checkpoint(t) else t


def _wrap(x):
    if isinstance(x, torch.Tensor) and x.device.type == "cpu" \
            and x.layout == torch.strided:
        return _ops.checkpoint(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_wrap(v) for v in x)
    return x


def checkpoint(obj):
    """A tensor: returns it checkpointed. A module: checkpoints the inputs
    of every forward() call (parameters stay plain tensors, outside DTR's
    control) and returns the module."""
    if isinstance(obj, torch.nn.Module):
        obj.register_forward_pre_hook(lambda module, args: _wrap(args))
        return obj
    return _wrap(obj)


def set_budget(nbytes):
    """Sets the budget in bytes; returns the previous one."""
    return _ops.set_budget(int(nbytes))


@contextlib.contextmanager
def budget(nbytes):
    previous = set_budget(nbytes)
    try:
        yield
    finally:
        set_budget(previous)


def stats():
    return dict(zip(_STAT_NAMES, _ops.stats()))


def evict_all():
    """Evicts every evictable value now (for tests and debugging)."""
    _ops.evict_all()


def reset_peak():
    _ops.reset_peak()


def set_cost_model(model):
    """'measured' (op time) or 'bytes' (deterministic)."""
    _ops.set_cost_model(model)


# repr()/numpy() read data directly (LIBTORCH-NOTES pitfall 6): go through
# the plain tensor for checkpointed ones.
_plain_repr = torch.Tensor.__repr__
_plain_numpy = torch.Tensor.numpy


def _repr(self, *args, **kwargs):
    if is_checkpoint(self):
        return "dtr." + _plain_repr(decheckpoint(self).detach(), *args,
                                    **kwargs)
    return _plain_repr(self, *args, **kwargs)


def _numpy(self, *args, **kwargs):
    return _plain_numpy(decheckpoint(self), *args, **kwargs)


torch.Tensor.__repr__ = _repr
torch.Tensor.numpy = _numpy
