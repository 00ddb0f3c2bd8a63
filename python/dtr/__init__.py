"""DTR for PyTorch: train under a memory budget with unchanged model code.

    import dtr
    model = dtr.checkpoint(model)        # inputs to forward() get checkpointed
    with dtr.budget(64 << 20):           # bytes of tensor storage
        loss = loss_fn(model(x), y)
        loss.backward()
    print(dtr.stats()["allocator_peak_bytes"])

A budget bounds the storage of checkpointed values by default; with
``scope="process"`` it bounds every byte of CPU tensor memory in the process
(parameters, gradients and optimizer state included). One budget for the
whole process: ``budget()`` blocks on different threads may overlap and end
in any order; while any is active the budget is the sum over threads of each
thread's innermost block (their values share one pool), and afterwards what
``set_budget()`` set (unlimited by default).

A child of ``os.fork()`` (multiprocessing, DataLoader workers) gets its own
DTR state and never waits for a lock the parent's threads held: it keeps
the budget settings, and checkpointed tensors made before the fork raise
RuntimeError there (decheckpoint them first, or make them in the child).

Loads the same libdtr_torch.so the C++ API uses into PyTorch (2.6 or newer,
the release it was built against).
It looks, in order, at $DTR_TORCH_LIBRARY, at the copy installed inside the
package (dtr/_lib/libdtr_torch.so, put there by ``pip install .``), then, in
a source checkout, at the CMake build directories (build*/) next to python/.

Importing dtr patches a few Python methods of torch.Tensor: __repr__,
numpy, tolist, __reduce_ex__ (pickling, torch.save), __deepcopy__,
new_tensor, storage and untyped_storage, and the setter of ``data``. These
read a tensor's memory directly, and a checkpointed tensor has no storage of
its own (its value may be evicted), so without the patch printing, saving or
copying one would fail. Each patched method calls the original unchanged
for every tensor that is not checkpointed; see _tensor_methods.py.
"""
import contextlib
import glob
import math
import numbers
import os

import torch

__all__ = ["checkpoint", "decheckpoint", "is_checkpoint", "budget",
           "set_budget", "budget_scope", "stats", "reset_peak", "evict_all",
           "set_cost_model", "record", "profile", "stage", "set_heuristic",
           "heuristic", "heuristics", "set_thrash_limit", "begin_step",
           "UNLIMITED"]



def _find_library():
    """The path of libdtr_torch.so; an ImportError naming every place
    searched if there is none."""
    path = os.environ.get("DTR_TORCH_LIBRARY")
    if path:
        if not os.path.isfile(path):
            raise ImportError(f"dtr: DTR_TORCH_LIBRARY={path!r} is not a file")
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    shipped = os.path.join(here, "_lib", "libdtr_torch.so")
    if os.path.isfile(shipped):
        return shipped
    # A source checkout: <root>/python/dtr/__init__.py, built into
    # <root>/build*/ (or into build*/ beside <root>).
    root = os.path.dirname(os.path.dirname(here))
    patterns = [os.path.join(root, "build*", "dtr", "torch", "libdtr_torch.so"),
                os.path.join(os.path.dirname(root), "build*", "**",
                             "libdtr_torch.so")]
    checkout = os.path.isfile(os.path.join(root, "CMakeLists.txt"))
    for pattern in patterns if checkout else []:
        found = sorted(glob.glob(pattern, recursive=True))
        if found:
            return found[0]
    searched = "\n  ".join(["$DTR_TORCH_LIBRARY (not set)", shipped]
                           + (patterns if checkout else
                              [f"(no source checkout around {here})"]))
    raise ImportError("dtr: libdtr_torch.so not found; searched:\n  "
                      f"{searched}\nInstall the package with `pip install "
                      "--no-build-isolation .` from the source tree, or build "
                      "the dtr_torch target and set DTR_TORCH_LIBRARY to "
                      "its path")


torch.ops.load_library(_find_library())
_ops = torch.ops.dtr
UNLIMITED = _ops.unlimited()  # "no budget", as the library defines it


_WRAPPER_KEY = torch._C.DispatchKey.PrivateUse1


def is_checkpoint(t):
    # The key check first: it needs no dispatch, so it also answers inside
    # tracers' modes (torch.compile's fake tensors), where an op would not.
    return (isinstance(t, torch.Tensor)
            and torch._C._dispatch_keys(t).has(_WRAPPER_KEY)
            and _ops.is_checkpoint(t))


def decheckpoint(t):
    """The plain tensor behind `t` (rematerialized if needed)."""
    return _ops.decheckpoint(t) if is_checkpoint(t) else t


def checkpoint(obj):
    """A tensor: returns it checkpointed (in its autograd graph: gradients
    flow back to it). A module: checkpoints the inputs of every forward()
    call (parameters and their gradients stay plain tensors; recurrent
    modules get checkpointed initial states) and returns the module."""
    if isinstance(obj, torch.nn.Module):
        return _modules.install(obj)
    return _modules.wrap(obj)


def _bytes(nbytes, where):
    """A budget in bytes, as the library takes it: an int >= 0 (not a bool)
    or a finite float >= 0 (rounded down to whole bytes); anything from
    UNLIMITED up, or float('inf'), means unlimited. Anything else raises
    TypeError or ValueError naming `where` and the value, as `dtr train`
    rejects a bad --budget-bytes."""
    # bool is an int subclass, but True as a budget is a mistake, not 1.
    if isinstance(nbytes, bool) or not isinstance(nbytes, numbers.Real):
        raise TypeError(f"dtr.{where}: nbytes must be an int or a float "
                        f"(bytes), got {type(nbytes).__name__} {nbytes!r}")
    if isinstance(nbytes, numbers.Integral):
        n = int(nbytes)
    elif math.isnan(nbytes):
        raise ValueError(f"dtr.{where}: nbytes must be a number of bytes, "
                         f"got {nbytes!r}")
    elif nbytes == math.inf:
        return UNLIMITED
    else:
        n = math.floor(nbytes) if nbytes >= 0 else -1
    if n < 0:
        raise ValueError(f"dtr.{where}: negative budget, nbytes={nbytes!r} "
                         "(give bytes >= 0, or dtr.UNLIMITED)")
    return min(n, UNLIMITED)


def set_budget(nbytes, scope="checkpointed"):
    """Sets the budget in bytes ("checkpointed" values, or the whole
    "process"): the innermost ``budget()`` block's of this thread if any,
    else the base budget. Returns the previous one. `nbytes`: an int >= 0
    or a finite float >= 0 (rounded down); UNLIMITED or float('inf') for
    none. Raises TypeError for any other type (bool and str included) and
    ValueError for a negative or NaN value."""
    return _ops.set_budget(_bytes(nbytes, "set_budget"), scope)


def budget_scope():
    return _ops.budget_scope()


@contextlib.contextmanager
def budget(nbytes, scope="checkpointed"):
    """A budget for the block (see the module's docstring for threads).
    `nbytes` is checked as set_budget() checks it, before the block
    begins."""
    token = _ops.push_budget(_bytes(nbytes, "budget"), scope)
    try:
        yield
    finally:
        _ops.pop_budget(token)


@contextlib.contextmanager
def record(path):
    """Writes every operator call on checkpointed tensors inside the block
    to `path` as a trace the simulator replays (`dtr sim PATH`)."""
    _ops.start_recording(str(path))
    try:
        yield
    finally:
        _ops.stop_recording()


@contextlib.contextmanager
def profile(path):
    """Writes what DTR does inside the block to `path` as a Chrome trace
    (open it in chrome://tracing or ui.perfetto.dev; docs/profiling.md):
    a span per operator on checkpointed tensors with its replays nested
    inside, an instant per eviction with the victim's score, and counter
    tracks for DTR, allocator and held bytes. Raises if `path` cannot be
    written."""
    _ops.start_profile(str(path))
    try:
        yield
    finally:
        _ops.stop_profile()


@contextlib.contextmanager
def stage():
    """Staging for the block: each training step (a forward() of a module
    given to checkpoint() starts one) replays the previous step's evictions
    with no heuristic search while the program repeats it, and falls back
    to the search at the first difference (stats(): staged_steps,
    diverged_steps, eviction_searches). Results are unchanged."""
    was = _ops.set_staging(True)
    try:
        yield
    finally:
        _ops.set_staging(was)



def stats():
    """Counters of the runtime by name (bytes, ops, replays, evictions,
    ...), with choose_wall_ns and replay_wall_ns: wall time spent choosing
    victims and replaying evicted values; "heuristic" is the heuristic
    evicting now (auto's current choice when "auto_heuristic" is 1), and
    "auto_decisions" how many step shapes auto simulated to choose."""
    s = dict(_ops.stats())
    s["heuristic"] = _ops.heuristic_in_force()
    return s


def set_heuristic(name):
    """The eviction heuristic: "auto" (the default: simulates each new
    shape of training step under every heuristic heuristics(auto_only=True)
    lists and runs the best) or a fixed one of heuristics(), which turns
    auto off. The environment variable DTR_HEURISTIC sets it at import."""
    _ops.set_heuristic(str(name))


def heuristics(auto_only=False):
    """The names set_heuristic() takes besides "auto", as the library
    registers them (dtr, dtr-eq, dtr-local, msps, lru, size, random, and
    any heuristic registered from C++); with auto_only, those auto
    simulates."""
    return list(_ops.heuristics(bool(auto_only)))


def heuristic():
    """"auto" or the fixed heuristic set by set_heuristic()."""
    return _ops.heuristic()


def set_thrash_limit(ratio):
    """Makes a training step whose recomputation passes `ratio` times its
    own compute raise RuntimeError ("[dtr] thrashing ...") instead of
    running on, many times slower, under a budget too close to the
    program's floor. None (the default) sets no limit; then a step that
    recomputes more than 10 times its own compute is reported once on
    stderr. Returns the previous limit (None for none). `ratio`: a number
    > 0; TypeError for any other type (bool and str included), ValueError
    for 0, a negative number or NaN."""
    if ratio is None:
        ratio = math.inf
    elif isinstance(ratio, bool) or not isinstance(ratio, numbers.Real):
        raise TypeError("dtr.set_thrash_limit: the limit is a number > 0 "
                        f"or None, got {ratio!r}")
    elif not ratio > 0:
        raise ValueError("dtr.set_thrash_limit: the limit must be > 0 "
                         f"(None: no limit), got {ratio!r}")
    previous = _ops.set_thrash_limit(float(ratio))
    return None if previous == math.inf else previous


def begin_step():
    """Marks the start of a training step (the forward() of a module given
    to checkpoint() does it); a second call with no operator in between is
    the same boundary."""
    _ops.begin_step()


def evict_all():
    """Evicts every evictable value now (for tests and debugging)."""
    _ops.evict_all()


def reset_peak():
    _ops.reset_peak()


def set_cost_model(model):
    """'measured' (op time) or 'bytes' (deterministic)."""
    _ops.set_cost_model(model)


from . import _modules  # noqa: E402
from . import _tensor_methods  # noqa: E402,F401  (patches torch.Tensor)
