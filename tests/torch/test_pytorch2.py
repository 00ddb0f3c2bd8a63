"""What PyTorch 2 programs contain, under DTR: inputs given as keyword
arguments and containers, kernels whose results depend on grad mode,
parameters rebound from vectors, scaled_dot_product_attention, autocast,
torch.func, fused optimizers, selective checkpointing, the Transformer's
nested-tensor fast path, operators of other libraries, and what DTR
refuses (torch.compile, TorchScript modules) with a clear error. Results
are compared with plain PyTorch using torch.equal.
Run: PYTHONPATH=python DTR_TORCH_LIBRARY=build/dtr/torch/libdtr_torch.so \
     .venv/bin/python -m unittest tests/torch/test_pytorch2.py"""
import collections
import dataclasses
import functools
import unittest
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

import dtr


@dataclasses.dataclass
class _Batch:
    z: torch.Tensor
    note: str = "kept"


class _Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, extra=None, batch=None, seq=()):
        return (self.lin(x) * 2 + extra["y"] + batch.z
                + collections.OrderedDict(seq)["w"])


class KeywordAndContainerInputsTest(unittest.TestCase):
    def test_every_tensor_reaching_forward_is_checkpointed(self):
        seen = {}

        class Probe(_Mixer):
            def forward(self, x, extra=None, batch=None, seq=()):
                seen.update(x=x, y=extra["y"], z=batch.z, w=seq[0][1],
                            note=batch.note, kind=type(extra))
                return super().forward(x, extra, batch, seq)
        torch.manual_seed(0)
        plain = Probe()
        model = dtr.checkpoint(Probe())
        model.load_state_dict(plain.state_dict())

        def inputs():
            g = torch.Generator().manual_seed(1)
            r = lambda: torch.randn(4, 8, generator=g)  # noqa: E731
            return r(), collections.OrderedDict(y=r()), _Batch(r()), \
                [("w", r())]
        x, e, b, s = inputs()
        want = plain(x, extra=e, batch=b, seq=s)
        x, e, b, s = inputs()
        got = model(x, extra=e, batch=b, seq=s)
        for key in ("x", "y", "z", "w"):
            self.assertTrue(dtr.is_checkpoint(seen[key]), key)
        self.assertIs(seen["kind"], collections.OrderedDict)
        self.assertEqual(seen["note"], "kept")
        self.assertFalse(dtr.is_checkpoint(b.z))  # the caller's batch as is
        self.assertTrue(dtr.is_checkpoint(got))
        self.assertTrue(torch.equal(dtr.decheckpoint(got), want))


class ReplayGradModeTest(unittest.TestCase):
    def test_lstm_workspace_is_recomputed_inside_backward(self):
        # oneDNN's LSTM layer computes the workspace its backward reads only
        # with grad mode on; a replay inside backward (grad mode off) must
        # run the forward as it first ran.
        def run(use_dtr, budget=dtr.UNLIMITED):
            torch.manual_seed(0)
            lstm = nn.LSTM(8, 16, num_layers=2)
            x = torch.randn(12, 3, 8)
            if use_dtr:
                x = dtr.checkpoint(x)
            with dtr.budget(budget):
                out, _ = lstm(x)
                out.square().sum().backward()
            return [dtr.decheckpoint(p.grad).clone()
                    for p in lstm.parameters()]
        want = run(False)
        dtr.reset_peak()
        run(True)
        budget = int(dtr.stats()["dtr_peak_bytes"] * 0.75)
        before = dtr.stats()["remat_ops"]
        dtr.reset_peak()
        got = run(True, budget)
        self.assertGreater(dtr.stats()["remat_ops"], before)
        self.assertLessEqual(dtr.stats()["dtr_peak_bytes"], budget)
        for a, b in zip(got, want):
            self.assertTrue(torch.equal(a, b))


def _outputs_of_two_weight_settings(set_weights):
    """Evolution strategies: set the weights, run forward, keep the output,
    repeat; score later. Returns the model, its checkpointed input and the
    two outputs, all evicted."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1))
    x = dtr.checkpoint(torch.randn(32, 16))
    outs = []
    with torch.no_grad():
        for k in range(2):
            set_weights(model, k)
            outs.append(model(x))
    dtr.evict_all()
    return model, x, outs


class RebindingTest(unittest.TestCase):
    def assert_only_current_weights_replay(self, set_weights, message):
        # A replay of an evicted output must not compute it from the new
        # weights; the value computed from the current weights still replays.
        model, x, outs = _outputs_of_two_weight_settings(set_weights)
        with self.assertRaisesRegex(RuntimeError, message):
            dtr.decheckpoint(outs[0])
        want = model(dtr.decheckpoint(x))
        self.assertTrue(torch.equal(dtr.decheckpoint(outs[1]), want))

    def test_replay_refuses_a_parameter_given_another_buffer(self):
        # vector_to_parameters gives each parameter a new buffer
        # (`param.data = ...`), which bumps no version counter.
        from torch.nn.utils import (parameters_to_vector,
                                    vector_to_parameters)
        base = {}

        def set_weights(model, k):
            if not base:
                base["v"] = parameters_to_vector(
                    model.parameters()).detach().clone()
            vector_to_parameters(base["v"] + k, model.parameters())
        self.assert_only_current_weights_replay(set_weights, "another buffer")

    def test_replay_refuses_a_parameter_written_without_a_version_bump(self):
        # The weights written in place through `.data` (a new version
        # counter on the same buffer) or numpy (no counter at all): the
        # buffer stays, so only the bytes tell that it changed.
        writes = {
            "data": lambda p, v: p.data.copy_(v),
            "numpy": lambda p, v: p.detach().numpy().__setitem__(
                Ellipsis, v.numpy()),
        }
        for how, write in writes.items():
            with self.subTest(how):
                base = []

                def set_weights(model, k):
                    if not base:
                        base.extend(p.detach().clone()
                                    for p in model.parameters())
                    for p, b in zip(model.parameters(), base):
                        write(p, b + k)
                self.assert_only_current_weights_replay(set_weights,
                                                        "other bytes")


def _plain(t):
    return dtr.decheckpoint(t).detach()


def _train(build, use_dtr, steps=3, opt=None, context=None, budget=None):
    """Losses and final parameters and optimizer state of a short run."""
    torch.manual_seed(0)
    model = build()
    if use_dtr:
        dtr.checkpoint(model)
    o = (opt or functools.partial(torch.optim.SGD, lr=0.1))(
        model.parameters())
    x = torch.randn(4, 6, 16, generator=torch.Generator().manual_seed(1))
    losses = []
    with dtr.budget(budget if use_dtr and budget else dtr.UNLIMITED):
        for _ in range(steps):
            o.zero_grad()
            with context() if context else _nothing():
                loss = model(x).float().square().mean()
            loss.backward()
            o.step()
            losses.append(_plain(loss))
    state = [t for s in o.state.values() for t in s.values()
             if torch.is_tensor(t)]
    return losses + [_plain(p) for p in model.parameters()] + \
        [_plain(t) for t in state]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Attention(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.qkv, self.out, self.heads = nn.Linear(dim, 3 * dim), \
            nn.Linear(dim, dim), heads

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, -1).permute(
            2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=0.1)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class PyTorch2ProgramsTest(unittest.TestCase):
    def assert_identical(self, build, **kw):
        plain, under = _train(build, False, **kw), _train(build, True, **kw)
        self.assertEqual(len(plain), len(under))
        for a, b in zip(plain, under):
            self.assertTrue(torch.equal(a, b))

    def test_scaled_dot_product_attention_with_dropout(self):
        self.assert_identical(_Attention)
        # and under a budget that makes it replay (dropout's mask included)
        self.assert_identical(_Attention, budget=24 << 10)

    def test_autocast_bfloat16(self):
        self.assert_identical(
            _Attention,
            context=lambda: torch.autocast("cpu", dtype=torch.bfloat16))

    def test_fused_and_foreach_optimizers(self):
        for kind, kw in [("Adam", {"fused": True}),
                         ("AdamW", {"fused": True, "weight_decay": 0.1}),
                         ("SGD", {"fused": True, "momentum": 0.9}),
                         ("Adam", {"foreach": True, "amsgrad": True}),
                         ("RAdam", {}), ("NAdam", {"foreach": True})]:
            with self.subTest(optimizer=kind, **kw):
                self.assert_identical(_Attention, opt=functools.partial(
                    getattr(torch.optim, kind), lr=1e-2, **kw))

    def test_selective_and_non_reentrant_checkpoint_inside(self):
        from torch.utils.checkpoint import (CheckpointPolicy, checkpoint,
                                            create_selective_checkpoint_contexts)

        def policy(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op == torch.ops.aten.mm.default \
                else CheckpointPolicy.PREFER_RECOMPUTE

        class Blocks(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = _Attention(), _Attention()

            def forward(self, x):
                x = checkpoint(self.a, x, use_reentrant=False)
                return checkpoint(self.b, x, use_reentrant=False,
                                  context_fn=functools.partial(
                                      create_selective_checkpoint_contexts,
                                      policy))
        self.assert_identical(Blocks)

    def test_transformer_encoder_inference_fast_path(self):
        torch.manual_seed(0)
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)
        enc.eval()
        x = torch.randn(2, 5, 16)
        mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
        with torch.no_grad():
            want = enc(x, src_key_padding_mask=mask)
            got = dtr.checkpoint(enc)(x, src_key_padding_mask=mask)
        self.assertTrue(torch.equal(_plain(got), want))

    def test_inference_mode_and_embedding_bag(self):
        torch.manual_seed(0)
        bag = nn.EmbeddingBag(10, 4, mode="sum")
        idx, offsets = torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 3])
        want = bag(idx, offsets)
        want.sum().backward()
        grad, bag.weight.grad = bag.weight.grad.clone(), None
        got = dtr.checkpoint(bag)(idx, offsets)
        got.sum().backward()
        self.assertTrue(torch.equal(_plain(got), want.detach()))
        self.assertTrue(torch.equal(_plain(bag.weight.grad), grad))
        with torch.inference_mode():
            self.assertTrue(torch.equal(_plain(bag(idx, offsets)),
                                        want.detach()))

    def test_torch_func_transforms(self):
        from torch.func import grad, vmap

        def f(x):
            return (x.sin() * x).sum()
        x = torch.randn(3, 4)
        self.assertTrue(torch.equal(_plain(grad(f)(dtr.checkpoint(x))),
                                    grad(f)(x)))
        self.assertTrue(torch.equal(_plain(vmap(f)(dtr.checkpoint(x))),
                                    vmap(f)(x)))

    def test_parameters_set_from_a_checkpointed_vector(self):
        from torch.nn.utils import vector_to_parameters
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        n = sum(p.numel() for p in model.parameters())
        v = torch.randn(n)
        vector_to_parameters(dtr.checkpoint(v) * 2, model.parameters())
        self.assertFalse(dtr.is_checkpoint(model.weight))
        self.assertTrue(torch.equal(model.weight.detach().flatten(),
                                    (v * 2)[:12]))

    def test_operator_of_another_library_without_autograd(self):
        # What torchvision::nms is: defined in another library, one CPU
        # kernel, no autograd kernel.
        lib = torch.library.Library("dtr_test_ext", "DEF")
        self.addCleanup(lib._destroy)
        lib.define("keep_above(Tensor boxes, float thr) -> Tensor")
        lib.impl("keep_above",
                 lambda b, thr: (b[:, 0] > thr).nonzero().flatten(), "CPU")
        boxes = torch.rand(10, 4, generator=torch.Generator().manual_seed(2))
        want = torch.ops.dtr_test_ext.keep_above(boxes, 0.5)
        w = torch.ones(4, requires_grad=True)
        got = torch.ops.dtr_test_ext.keep_above(dtr.checkpoint(boxes) * w,
                                                0.5)
        self.assertTrue(torch.equal(_plain(got), want))


class RefusedConstructsTest(unittest.TestCase):
    def test_torch_compile_of_a_checkpointed_model_is_refused(self):
        warnings.simplefilter("ignore")
        for inner in (False, True):
            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(),
                                  nn.Linear(16, 2))
            dtr.checkpoint(model[0] if inner else model)
            compiled = torch.compile(model, backend="eager")
            ops = dtr.stats()["ops"]
            with self.assertRaisesRegex(RuntimeError,
                                        "torch.compile, which cannot trace"):
                compiled(torch.ones(4, 8))
            self.assertEqual(dtr.stats()["ops"], ops)  # before any op
            torch._dynamo.reset()

    def test_code_reading_a_checkpointed_tensors_memory_is_told_why(self):
        x = dtr.checkpoint(torch.randn(8))
        with self.assertRaisesRegex(RuntimeError, "dtr.decheckpoint"):
            x.data_ptr()
        # Inductor's compiled code reads its inputs' memory.
        f = torch.compile(lambda a: (a.sin() * 2).sum())
        with self.assertRaisesRegex(RuntimeError, "no memory of its own"):
            f(x)
        torch._dynamo.reset()
        self.assertTrue(torch.allclose(f(dtr.decheckpoint(x)),
                                       (dtr.decheckpoint(x).sin() * 2).sum()))
        torch._dynamo.reset()

    def test_script_and_compiled_modules_are_refused_at_checkpoint(self):
        with self.assertRaisesRegex(TypeError, "TorchScript module"):
            dtr.checkpoint(torch.jit.script(nn.Linear(4, 4)))
        with self.assertRaisesRegex(TypeError, "compiled with torch.compile"):
            dtr.checkpoint(torch.compile(nn.Linear(4, 4)))


if __name__ == "__main__":
    unittest.main()
