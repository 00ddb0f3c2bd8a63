"""How each method of the comparison changes a model before training.

Every function takes the model and the blocks to checkpoint (by default the
model's top-level children) and returns the module to train; parameters are
the model's own in every case, so the optimizer needs no change."""
import torch
import torch.utils.checkpoint as tc

METHODS = ("plain", "checkpoint", "sac", "compile-budget", "dtr",
           "dtr-stage")
# What runs unless --methods says otherwise.
DEFAULT_METHODS = METHODS[:5]

# Selective activation checkpointing saves the outputs of these operators
# and recomputes everything else: matrix products and convolutions, as
# PyTorch's documentation of create_selective_checkpoint_contexts suggests
# ("save matmuls"), with attention's fused kernels counted as matmuls.
_SAVED_BY_SAC = [
    "mm.default", "addmm.default", "bmm.default", "baddbmm.default",
    "convolution.default",
    "_scaled_dot_product_flash_attention_for_cpu.default",
    "_scaled_dot_product_efficient_attention.default",
    "_scaled_dot_product_flash_attention.default",
]


def _saved_ops():
    ops = set()
    for name in _SAVED_BY_SAC:
        packet, _, overload = name.partition(".")
        op = getattr(torch.ops.aten, packet, None)
        if op is not None and overload in op.overloads():
            ops.add(getattr(op, overload))
    return ops


def _sac_context():
    saved = _saved_ops()

    def policy(ctx, op, *args, **kwargs):
        return (tc.CheckpointPolicy.MUST_SAVE if op in saved
                else tc.CheckpointPolicy.PREFER_RECOMPUTE)
    return tc.create_selective_checkpoint_contexts(policy)


def _checkpoint_blocks(blocks, context_fn):
    """Each block's forward runs under torch.utils.checkpoint
    (non-reentrant), with `context_fn` (None: full recomputation)."""
    for block in blocks:
        forward = block.forward
        extra = {} if context_fn is None else {"context_fn": context_fn}

        def checkpointed(*args, _forward=forward, _extra=extra, **kwargs):
            return tc.checkpoint(_forward, *args, use_reentrant=False,
                                 **_extra, **kwargs)
        block.forward = checkpointed


def prepare(method, setting, model, blocks):
    """The module to train under `method` at `setting` (compile-budget: the
    activation memory budget fraction; dtr: the budget in bytes, for the
    whole process)."""
    if method == "plain":
        return model
    if method == "checkpoint":
        _checkpoint_blocks(blocks, None)
        return model
    if method == "sac":
        _checkpoint_blocks(blocks, _sac_context)
        return model
    if method == "compile-budget":
        import torch._functorch.config as functorch_config
        functorch_config.activation_memory_budget = float(setting)
        return torch.compile(model)
    if method in ("dtr", "dtr-stage"):  # staging: child.run
        import dtr
        dtr.set_budget(int(setting), scope="process")
        return dtr.checkpoint(model)
    raise ValueError(f"unknown method {method!r} (one of {', '.join(METHODS)})")

