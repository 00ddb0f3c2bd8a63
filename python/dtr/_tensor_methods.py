"""Python methods of torch.Tensor that read a tensor's memory directly,
and the setter of Tensor.data.

A checkpointed tensor has no storage of its own (its value may be evicted),
so printing, numpy(), tolist(), pickling (torch.save, copy.deepcopy) and
new_tensor() would fail on it (they read the storage directly). Each method below
goes through the plain value for checkpointed tensors and is unchanged for
every other tensor. Saved or pickled checkpointed tensors load back as
plain tensors, so files written under DTR open without it.
"""
import torch

from . import _ops, decheckpoint, is_checkpoint

_plain = {name: getattr(torch.Tensor, name) for name in (
    "__repr__", "numpy", "tolist", "__reduce_ex__", "__deepcopy__",
    "new_tensor", "storage", "untyped_storage")
    if hasattr(torch.Tensor, name)}


def _value(t):
    """The plain value of `t`, detached, with t's requires_grad."""
    v = decheckpoint(t).detach()
    return v.requires_grad_(True) if t.requires_grad and t.is_leaf else v


def _repr(self, *args, **kwargs):
    if is_checkpoint(self):
        return "dtr." + _plain["__repr__"](decheckpoint(self).detach(),
                                           *args, **kwargs)
    return _plain["__repr__"](self, *args, **kwargs)


def _shared(t):
    """The buffer of `t` for an alias the program may write through: held
    resident for good, so DTR never evicts or recomputes it. Such writes
    are not seen by lineage that already read it (docs/torch.md)."""
    return _ops.hold_value(t) if is_checkpoint(t) else t


def _numpy(self, *args, **kwargs):
    if not is_checkpoint(self):
        return _plain["numpy"](self, *args, **kwargs)
    return _numpy_checkpoint(self, *args, **kwargs)


def _numpy_checkpoint(self, *, force=False):
    if self.requires_grad and not force:
        # What PyTorch says: the checkpointed value handed to numpy() is
        # detached, so without this check the refusal would be lost.
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                           "Use tensor.detach().numpy() instead.")
    return _plain["numpy"](_shared(self), force=force)


def _tolist(self):
    return _plain["tolist"](decheckpoint(self))


def _reduce_ex(self, proto):
    if is_checkpoint(self):
        return _plain["__reduce_ex__"](_value(self), proto)
    return _plain["__reduce_ex__"](self, proto)


def _deepcopy(self, memo):
    if not is_checkpoint(self):
        return _plain["__deepcopy__"](self, memo)
    if id(self) in memo:
        return memo[id(self)]
    copy = _ops.checkpoint(decheckpoint(self).detach().clone())
    if self.requires_grad:
        copy.requires_grad_(True)
    memo[id(self)] = copy
    return copy


def _new_tensor(self, data, *args, **kwargs):
    if not is_checkpoint(self):
        return _plain["new_tensor"](self, data, *args, **kwargs)
    return _new_tensor_checkpoint(self, data, *args, **kwargs)


def _new_tensor_checkpoint(self, data, *, dtype=None, device=None,
                           requires_grad=False):
    t = torch.tensor(data, dtype=dtype or self.dtype, device=device or "cpu")
    return _ops.checkpoint(t).requires_grad_(requires_grad)


def _storage_method(name):
    def method(self, *args, **kwargs):
        return _plain[name](_shared(self), *args, **kwargs)
    return method


_data = torch._C.TensorBase.data  # the C property behind Tensor.data


def _set_data(self, value):
    # `param.data = v` with a checkpointed v (vector_to_parameters of a
    # vector computed under DTR): the plain tensor takes v's plain value;
    # a wrapper cannot become its buffer.
    if not is_checkpoint(self) and is_checkpoint(value):
        value = decheckpoint(value)
    _data.__set__(self, value)


torch.Tensor.data = property(_data.__get__, _set_data, doc=_data.__doc__)
torch.Tensor.__repr__ = _repr
torch.Tensor.numpy = _numpy
torch.Tensor.tolist = _tolist
torch.Tensor.__reduce_ex__ = _reduce_ex
torch.Tensor.__deepcopy__ = _deepcopy
torch.Tensor.new_tensor = _new_tensor
for _name in ("storage", "untyped_storage"):
    if _name in _plain:
        setattr(torch.Tensor, _name, _storage_method(_name))
