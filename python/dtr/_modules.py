"""What dtr.checkpoint(module) installs on a module tree.

Every forward() call of the root gets its tensor inputs checkpointed,
positional and keyword, also inside containers. The
recurrent modules of torch.nn (nn.LSTM, nn.GRU, nn.RNN) make their default
initial state with torch.zeros(...), a plain tensor, when called without
one; their cells then write checkpointed gates into that plain state in
place, and the whole recurrence would run outside DTR and its budget
(docs/torch.md, "Escape hatch"). The forward() of each such module in
the tree checkpoint() is given (at that moment) passes the same zeros
explicitly when the input is checkpointed, created from it so they are
checkpointed too: the values, and so the results, are unchanged; any other
call is untouched. Only those instances change: the classes stay as they
are, so other modules of the program (torch.jit.script) are unaffected.
Everything installed is picklable (torch.save(model) works; loading it
needs dtr importable).
"""
import collections.abc
import copy
import dataclasses

import torch
import torch.utils.checkpoint
from torch.nn.utils.rnn import PackedSequence

from . import _ops


def wrap(x):
    """`x` with every dense CPU tensor in it checkpointed: tensors inside
    lists, tuples, namedtuples, dicts and other mappings (a tokenizer's
    BatchEncoding) and dataclasses too, each rebuilt as its own type."""
    if isinstance(x, PackedSequence):  # batch_sizes must stay plain
        return x._replace(data=wrap(x.data))
    if isinstance(x, torch.Tensor):
        if x.device.type == "cpu" and x.layout == torch.strided:
            return _ops.checkpoint(x)
        return x
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple
        return type(x)(*(wrap(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(wrap(v) for v in x)
    if isinstance(x, collections.abc.MutableMapping):
        out = copy.copy(x)  # same type and attributes, values rebound
        for k, v in x.items():
            out[k] = wrap(v)
        return out
    if isinstance(x, collections.abc.Mapping):
        return {k: wrap(v) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        out = copy.copy(x)
        for f in dataclasses.fields(x):
            object.__setattr__(out, f.name, wrap(getattr(x, f.name)))
        return out
    return x


def _zeros_state(module, x):
    """The initial state nn.LSTM/GRU/RNN would make, from `x`."""
    if isinstance(x, PackedSequence):
        batch, template, batched = int(x.batch_sizes[0]), x.data, True
    else:
        batched = x.dim() == 3
        batch = (x.size(0) if module.batch_first else x.size(1)) \
            if batched else 1
        template = x
    layers = module.num_layers * (2 if module.bidirectional else 1)
    proj = getattr(module, "proj_size", 0)

    def zeros(width):
        shape = (layers, batch, width) if batched else (layers, width)
        return template.new_zeros(shape)
    if isinstance(module, torch.nn.LSTM):
        return (zeros(proj if proj > 0 else module.hidden_size),
                zeros(module.hidden_size))
    return zeros(module.hidden_size)


class _StateForward:
    """The forward() of one nn.LSTM/GRU/RNN: its default zero state made
    from the input when the input is checkpointed, unchanged otherwise. A
    class, not a closure, so that the module still pickles."""

    def __init__(self, module):
        self.module = module

    def __call__(self, input, hx=None):
        if hx is None:
            data = input.data if isinstance(input, PackedSequence) else input
            if _ops.is_checkpoint(data):
                hx = _zeros_state(self.module, input)
        return type(self.module).forward(self.module, input, hx)


_RECURRENT = (torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN)


def _nested_backward(plain_backward):
    """torch.utils.checkpoint's reentrant backward, marked as a backward
    pass nested in another (Note [Nested backward passes])."""
    def backward(ctx, *grads):
        _ops.nested_backward(True)
        try:
            return plain_backward(ctx, *grads)
        finally:
            _ops.nested_backward(False)
    return staticmethod(backward)


_reentrant = torch.utils.checkpoint.CheckpointFunction
_reentrant.backward = _nested_backward(_reentrant.backward)


@torch._dynamo.disable
def _refuse_compile(module):
    raise RuntimeError(
        "dtr: %s is checkpointed (dtr.checkpoint) and runs under "
        "torch.compile, which cannot trace checkpointed tensors: a compiled "
        "graph has no place for DTR's evictions and replays, and would run "
        "outside the budget. Compile the model without dtr.checkpoint(), "
        "or run the checkpointed model uncompiled" % type(module).__name__)


def _checkpoint_inputs(module, args, kwargs):
    # Dynamo traces this hook with is_compiling() true and, at the graph
    # break, calls the disabled _refuse_compile for real: the first compiled
    # call raises, before any step runs.
    if torch.compiler.is_compiling():
        _refuse_compile(module)
    _ops.begin_step()  # the root's forward() starts a training step
    return wrap(args), wrap(kwargs)


def install(module):
    if isinstance(module, torch.jit.ScriptModule):
        raise TypeError(
            "dtr.checkpoint: %s is a TorchScript module, which takes no "
            "forward hooks; pass checkpointed inputs instead: "
            "model(dtr.checkpoint(x))" % type(module).__name__)
    if isinstance(module, torch._dynamo.eval_frame.OptimizedModule):
        raise TypeError(
            "dtr.checkpoint: the module is compiled with torch.compile, "
            "which cannot trace checkpointed tensors; checkpoint the "
            "uncompiled module (its _orig_mod) and run it uncompiled")
    for m in module.modules():
        if isinstance(m, _RECURRENT) and "forward" not in vars(m):
            m.forward = _StateForward(m)
    module.register_forward_pre_hook(_checkpoint_inputs, with_kwargs=True)
    return module
