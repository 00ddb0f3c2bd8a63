"""The zoo: ordinary PyTorch training programs nobody wrote for DTR.

Each Case has a short name, a seed, a number of steps and `setup(use_dtr)`,
which builds model, optimizer and data and returns a Program (`step(i)` ->
loss, `final()` -> {name: tensor or value} compared at the end besides the
losses). Under DTR the only change is the `dtr.checkpoint(...)` call the case
makes in `setup` (by default `dtr.checkpoint(model)`); everything else is the
same code. Habits spread over the cases: SGD (momentum, nesterov,
weight_decay), Adam/AdamW with foreach True and False, clip_grad_norm_,
StepLR / OneCycleLR, eval passes under no_grad, .item() and printing of the
loss, torch.save into io.BytesIO mid-run, copy.deepcopy of
optimizer.state_dict(), channels_last, torch.utils.checkpoint, in-place
activations and Dropout(inplace=True) after a flatten, a custom
autograd.Function, only part of a model checkpointed, a checkpointed leaf,
.tolist(), new_tensor, gradient accumulation, random activations (RReLU),
sequences packed inside forward, sparse embedding gradients.
"""
import copy
import io
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

import dtr


class Case:
    def __init__(self, name, setup, steps=3, seed=0, habits="", requires=None):
        self.name, self.setup, self.steps, self.seed = name, setup, steps, seed
        self.habits = habits
        self.requires = requires  # a module the case imports, if any

    def runnable(self):
        """False if the module the case needs does not import here."""
        if not self.requires:
            return True
        try:
            __import__(self.requires)
            return True
        except Exception:  # torchvision beside the CPU wheel: RuntimeError
            return False

    def __repr__(self):
        return "Case(%s)" % self.name


def _cpu_params(model):
    return [p for p in model.parameters() if p.requires_grad]


class Trainer:
    """A conventional training loop with optional habits:
      item      loss.item() recorded and the loss printed (to a log compared
                as text: printing goes through repr)
      eval      an eval pass under torch.no_grad() (model.eval(), then
                model.train()) each step; its output is compared
      save      torch.save(model+optimizer state_dict) into io.BytesIO at
                step 1, loaded back and compared
      deepcopy  copy.deepcopy(optimizer.state_dict()) at step 1, compared
      tolist    accuracy from logits.argmax(1).tolist() each step
      accum     two micro-batches per step (gradient accumulation)
    plus clip (max norm for clip_grad_norm_; the returned norm is compared),
    sched (an LR scheduler stepped each step), loss_fn, forward (model call).
    """

    def __init__(self, model, opt, data, loss_fn=F.cross_entropy, sched=None,
                 clip=None, habits=(), forward=None, extra_final=None):
        self.model, self.opt, self.data = model, opt, data
        self.loss_fn, self.sched, self.clip = loss_fn, sched, clip
        self.habits = set(habits)
        self.forward = forward or model
        self.extra_final = extra_final
        self.extra = {}
        self.log = io.StringIO()

    def _record(self, key, value):
        self.extra.setdefault(key, []).append(value)

    def step(self, i):
        x, y = self.data[i % len(self.data)]
        self.opt.zero_grad(set_to_none=True)
        if "accum" in self.habits:
            half = x.shape[0] // 2
            loss = None
            for xs, ys in ((x[:half], y[:half]), (x[half:], y[half:])):
                part = self.loss_fn(self.forward(xs), ys) / 2
                part.backward()
                loss = part if loss is None else loss + part.detach()
            out = None
        else:
            out = self.forward(x)
            loss = self.loss_fn(out, y)
            loss.backward()
        if self.clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(
                _cpu_params(self.model), self.clip)
            self._record("grad_norm", dtr.decheckpoint(norm).clone())
        self.opt.step()
        if self.sched is not None:
            self.sched.step()
            self._record("lr", self.sched.get_last_lr())
        if "item" in self.habits:
            self._record("item", loss.item())
            print("step %d loss %.6f %s" % (i, loss.item(), loss), file=self.log)
        if "tolist" in self.habits and out is not None:
            pred = out.argmax(1).tolist()
            self._record("acc", sum(int(p == t) for p, t in
                                    zip(pred, y.tolist())) / len(pred))
        if "eval" in self.habits:
            self.model.eval()
            with torch.no_grad():
                ev = self.forward(x)
            self.model.train()
            self._record("eval", dtr.decheckpoint(ev).clone())
        if "save" in self.habits and i == 1:
            buf = io.BytesIO()
            torch.save({"model": self.model.state_dict(),
                        "opt": self.opt.state_dict()}, buf)
            buf.seek(0)
            self.extra["saved"] = torch.load(buf)
        if "deepcopy" in self.habits and i == 1:
            self.extra["opt_copy"] = copy.deepcopy(self.opt.state_dict())
        return loss

    def final(self):
        from zoo.harness import snapshot
        extra = dict(self.extra)
        # Printing a checkpointed tensor says "dtr.tensor(...)" and shows no
        # grad_fn (python/dtr: repr of the detached plain value): compare
        # the printed numbers, not that decoration.
        extra["log"] = re.sub(r"dtr\.tensor|, grad_fn=<\w+>", lambda m:
                              "tensor" if m.group(0) == "dtr.tensor" else "",
                              self.log.getvalue())
        if self.extra_final is not None:
            extra.update(self.extra_final())
        return snapshot(self.model, self.opt, extra)


def _images(n, batch, size, seed=5, channels_last=False, classes=10):
    gen = torch.Generator().manual_seed(seed)
    data = []
    for _ in range(n):
        x = torch.randn(batch, 3, size, size, generator=gen)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        data.append((x, torch.randint(0, classes, (batch,), generator=gen)))
    return data


def _opt(kind, params, **kw):
    return getattr(torch.optim, kind)(params, **kw)


def vision(name, build, opt, opt_kw, size=32, batch=4, habits=(), clip=None,
           sched=None, channels_last=False, steps=3):
    def setup(use_dtr):
        import torchvision  # noqa: F401 -- build() uses it
        model = build()
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
        if use_dtr:
            dtr.checkpoint(model)
        o = _opt(opt, model.parameters(), **opt_kw)
        s = sched(o) if sched else None
        return Trainer(model, o, _images(steps, batch, size,
                                         channels_last=channels_last),
                       sched=s, clip=clip, habits=habits)
    return Case(name, setup, steps=steps,
                habits="%s %s %s" % (opt, opt_kw, " ".join(habits)),
                requires="torchvision")


def _tv(fn, **kw):
    def build():
        import torchvision
        return getattr(torchvision.models, fn)(num_classes=10, **kw)
    return build


def _small_densenet():
    import torchvision
    # torchvision's DenseNet class, small config; memory_efficient=True runs
    # each dense layer's bottleneck under torch.utils.checkpoint.
    return torchvision.models.DenseNet(growth_rate=12, block_config=(2, 2, 2),
                                       num_init_features=16, bn_size=2,
                                       memory_efficient=True, num_classes=10)


def _step_lr(o):
    return torch.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5)


def _one_cycle(o):
    return torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.01, total_steps=10)


# ---------------------------------------------------------------- sequences

class SeqClassifier(nn.Module):
    """An RNN over (seq, batch, feat) classified from the last step."""

    def __init__(self, rnn, hidden, classes=10, h0=None):
        super().__init__()
        self.rnn, self.head, self.h0 = rnn, nn.Linear(hidden, classes), h0

    def forward(self, x):
        if self.h0 == "new_zeros":  # the state made from the input
            layers = self.rnn.num_layers * (2 if self.rnn.bidirectional else 1)
            h = x.new_zeros(layers, x.shape[1], self.rnn.hidden_size)
            state = (h, h.clone()) if isinstance(self.rnn, nn.LSTM) else h
            out, _ = self.rnn(x, state)
        else:
            out, _ = self.rnn(x)  # default zero initial state
        return self.head(out[-1])


def _seq_data(n, seq, batch, feat, seed=7, classes=10):
    gen = torch.Generator().manual_seed(seed)
    return [(torch.randn(seq, batch, feat, generator=gen),
             torch.randint(0, classes, (batch,), generator=gen))
            for _ in range(n)]


def rnn_case(name, cell, opt, opt_kw, h0=None, bidirectional=False,
             clip=None, sched=None, habits=(), seq=16, batch=8, feat=16,
             hidden=32, layers=2):
    def setup(use_dtr):
        rnn = cell(feat, hidden, num_layers=layers, bidirectional=bidirectional)
        model = SeqClassifier(rnn, hidden * (2 if bidirectional else 1),
                              h0=h0)
        if use_dtr:
            dtr.checkpoint(model)
        o = _opt(opt, model.parameters(), **opt_kw)
        return Trainer(model, o, _seq_data(3, seq, batch, feat),
                       clip=clip, sched=sched(o) if sched else None,
                       habits=habits)
    return Case(name, setup, habits="%s %s %s h0=%s" % (
        cell.__name__, opt, " ".join(habits), h0))


class AttentionPooledGRU(nn.Module):
    """nn.GRU (batch first) pooled by a learned attention over the steps.
    Its backward writes gradients into [16, 24] views of [16, 25] buffers:
    a replay that gives them contiguous strides makes the weights differ in
    the last bits under fixed heuristics at 0.75."""

    def __init__(self, feat=12, hidden=24, classes=5):
        super().__init__()
        self.gru = nn.GRU(feat, hidden, num_layers=2, batch_first=True)
        self.att = nn.Linear(hidden, 1)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        h, _ = self.gru(x)
        w = torch.softmax(self.att(h).squeeze(-1), dim=1)
        return self.head((w.unsqueeze(-1) * h).sum(1))


def gru_attention_setup(use_dtr):
    model = AttentionPooledGRU()
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.Adam(model.parameters(), lr=1e-3, amsgrad=True,
                         foreach=True)
    gen = torch.Generator().manual_seed(4)
    data = [(torch.randn(16, 20, 12, generator=gen),
             torch.randint(0, 5, (16,), generator=gen)) for _ in range(3)]
    return Trainer(model, o, data)


class LanguageModel(nn.Module):
    def __init__(self, vocab=50, dim=24, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return self.out(h).flatten(0, 1)


def lstm_lm_setup(use_dtr):
    model = LanguageModel()
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    gen = torch.Generator().manual_seed(11)
    data = []
    for _ in range(3):
        t = torch.randint(0, 50, (4, 13), generator=gen)
        data.append((t[:, :-1], t[:, 1:].flatten()))
    return Trainer(model, o, data, sched=_one_cycle(o), clip=1.0)


class AttentionNet(nn.Module):
    def __init__(self, dim=32, heads=4, classes=10, blocks=4):
        super().__init__()
        self.proj = nn.Linear(16, dim)
        self.attn = nn.ModuleList(nn.MultiheadAttention(dim, heads,
                                                        batch_first=True)
                                  for _ in range(blocks))
        self.norm = nn.ModuleList(nn.LayerNorm(dim) for _ in range(blocks))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.proj(x)
        extra = 0
        for attn, norm in zip(self.attn, self.norm):
            a, w = attn(h, h, h)  # need_weights=True (the default)
            h = norm(h + a)
            extra = extra + 0 * w.sum()
        return self.head(h.mean(1)) + extra


def mha_setup(use_dtr):
    model = AttentionNet()
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    gen = torch.Generator().manual_seed(3)
    data = [(torch.randn(8, 24, 16, generator=gen),
             torch.randint(0, 10, (8,), generator=gen)) for _ in range(3)]
    return Trainer(model, o, data, clip=0.5, habits=("item",))


class EncoderNet(nn.Module):
    def __init__(self, dim=32, classes=10, mask=False):
        super().__init__()
        self.proj = nn.Linear(16, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, dim_feedforward=64,
                                           dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(dim, classes)
        self.mask = mask

    def forward(self, x):
        pad = None
        if self.mask:  # the last 3 positions are padding
            pad = torch.zeros(x.shape[0], x.shape[1], dtype=torch.bool)
            pad[:, -3:] = True
        h = self.enc(self.proj(x), src_key_padding_mask=pad)
        return self.head(h[:, 0])


def encoder_case(name, mask, opt_kw, habits):
    def setup(use_dtr):
        model = EncoderNet(mask=mask)
        if use_dtr:
            dtr.checkpoint(model)
        o = torch.optim.AdamW(model.parameters(), lr=1e-3, **opt_kw)
        gen = torch.Generator().manual_seed(4)
        data = [(torch.randn(4, 12, 16, generator=gen),
                 torch.randint(0, 10, (4,), generator=gen)) for _ in range(3)]
        return Trainer(model, o, data, sched=_one_cycle(o), habits=habits)
    return Case(name, setup, habits="AdamW %s %s" % (opt_kw, habits))


# ------------------------------------------------------------------ habits

class ScaledTanh(torch.autograd.Function):
    """A custom autograd.Function saving its output for backward."""

    @staticmethod
    def forward(ctx, x, scale):
        y = torch.tanh(x * scale)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y) * ctx.scale, None


class CustomFnNet(nn.Module):
    def __init__(self, depth=6):
        super().__init__()
        self.fcs = nn.ModuleList(nn.Linear(64, 64) for _ in range(depth))
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        for fc in self.fcs:
            x = ScaledTanh.apply(fc(x), 0.7)
        return self.head(x)


def _vec_data(n=3, batch=16, feat=64, seed=9):
    gen = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch, feat, generator=gen),
             torch.randint(0, 10, (batch,), generator=gen)) for _ in range(n)]


def custom_fn_setup(use_dtr):
    model = CustomFnNet()
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return Trainer(model, o, _vec_data(batch=256), habits=("item",))


def _small_cnn(inplace_dropout=True):
    """A strided stem, then four 16-channel blocks at one resolution: the
    activations, not one layer, make the peak, as in the networks people
    train under a budget."""
    layers = [nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16),
              nn.ReLU(inplace=True)]
    for _ in range(4):
        layers += [nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16),
                   nn.ReLU(inplace=True)]
    layers += [nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
               nn.Dropout(0.3, inplace=inplace_dropout), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def cnn_channels_last_setup(use_dtr):
    model = _small_cnn().to(memory_format=torch.channels_last)
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    return Trainer(model, o, _images(3, 8, 32, channels_last=True),
                   habits=("item",))


def inplace_dropout_setup(use_dtr):
    model = _small_cnn()
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9,
                        weight_decay=1e-4)
    return Trainer(model, o, _images(3, 8, 32), habits=("eval",))


def cnn_save_setup(use_dtr):
    model = _small_cnn(inplace_dropout=False)
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    return Trainer(model, o, _images(3, 8, 32), habits=("save",))


def cnn_deepcopy_setup(use_dtr):
    model = _small_cnn(inplace_dropout=False)
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9,
                        nesterov=True)
    return Trainer(model, o, _images(3, 8, 32), habits=("deepcopy",))


def cnn_tolist_setup(use_dtr):
    model = _small_cnn(inplace_dropout=False)
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.SGD(model.parameters(), lr=0.05)

    def loss_fn(out, y):  # class weights made with new_tensor
        w = out.new_tensor([1.0 + 0.1 * k for k in range(10)])
        return F.cross_entropy(out, y, weight=w)
    return Trainer(model, o, _images(3, 8, 32), loss_fn=loss_fn,
                   habits=("tolist",))


def cnn_accum_setup(use_dtr):
    model = _small_cnn(inplace_dropout=False)
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    return Trainer(model, o, _images(3, 8, 32), habits=("accum",),
                   sched=_step_lr(o))


class UtilsCheckpointNet(nn.Module):
    """torch.utils.checkpoint around two blocks (reentrant and not)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.b0 = nn.Sequential(*[m for _ in range(4) for m in (
            nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())])
        self.b1 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
                                nn.Conv2d(16, 16, 3, padding=1))
        self.b2 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.GELU(),
                                nn.Dropout(0.2), nn.Conv2d(16, 16, 3, padding=1))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        h = self.b0(F.relu(self.stem(x)))
        h = h + checkpoint(self.b1, h, use_reentrant=True)
        h = h + checkpoint(self.b2, h, use_reentrant=False)
        return self.head(h.mean((2, 3)))


def utils_checkpoint_setup(use_dtr):
    model = UtilsCheckpointNet()
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    return Trainer(model, o, _images(3, 8, 32))


def partial_setup(use_dtr):
    """Module A (plain) feeds module B; only B is given to dtr.checkpoint.
    A's gradients flow back through B's checkpointed graph."""
    a = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1),
                      nn.BatchNorm2d(8), nn.ReLU())
    blocks = []
    for c_in in (8,) + (16,) * 7:
        blocks += [nn.Conv2d(c_in, 16, 3, padding=1), nn.ReLU()]
    b = nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(16, 10))
    model = nn.Sequential(a, b)
    if use_dtr:
        dtr.checkpoint(b)
    o = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return Trainer(model, o, _images(3, 8, 32),
                   extra_final=lambda: {"grad_a": [p.grad for p in
                                                   a.parameters()]})


def leaf_setup(use_dtr):
    """A leaf weight that requires grad, given to dtr.checkpoint in the
    forward: the checkpointed tensor is a function of w, so w.grad must
    match plain PyTorch (the optimizer updates w itself)."""
    w = torch.randn(64, 64).mul_(0.1).requires_grad_()
    b = torch.zeros(64, requires_grad=True)
    head = nn.Linear(64, 10)
    o = torch.optim.SGD([w, b] + list(head.parameters()), lr=0.05,
                        momentum=0.9)

    def forward(x):
        wc = dtr.checkpoint(w) if use_dtr else w
        for _ in range(4):  # one weight, used by every layer
            x = torch.tanh(x @ wc + b)
        return head(x)
    holder = nn.Module()
    holder.head = head
    return Trainer(holder, o, _vec_data(batch=256), forward=forward,
                   extra_final=lambda: {"w": w, "w_grad": w.grad,
                                        "b_grad": b.grad})


def bn_mlp_setup(use_dtr):
    model = nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128),
                          nn.ReLU(inplace=True), nn.Linear(128, 128),
                          nn.BatchNorm1d(128), nn.ReLU(inplace=True),
                          nn.Dropout(0.5), nn.Linear(128, 10))
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9,
                        nesterov=True, weight_decay=5e-4)
    return Trainer(model, o, _vec_data(), sched=_step_lr(o),
                   habits=("eval", "item"))


def rrelu_setup(use_dtr):
    layers = [nn.Linear(64, 256), nn.RReLU()]
    for k in range(8):  # deep enough that activations dominate the floor
        layers += [nn.Linear(256, 256), nn.RReLU(inplace=k % 2 == 1)]
    model = nn.Sequential(*layers, nn.Linear(256, 10))
    if use_dtr:
        dtr.checkpoint(model)
    o = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return Trainer(model, o, _vec_data(batch=128), habits=("item",))


class PackedClassifier(nn.Module):
    """Pads in, packs inside forward (the usual variable-length habit)."""

    def __init__(self):
        super().__init__()
        # A per-step encoder: the GRU's all-steps input projection alone
        # puts its floor near 0.6 of its own peak.
        layers = [nn.Linear(16, 64), nn.Tanh()]
        for _ in range(5):
            layers += [nn.Linear(64, 64), nn.Tanh()]
        self.encoder = nn.Sequential(*layers)
        self.rnn = nn.GRU(64, 64, batch_first=True)
        self.head = nn.Linear(64, 10)

    def forward(self, x, lengths):
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            self.encoder(x), lengths, batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        return self.head(h[-1])


def packed_setup(use_dtr):
    model = PackedClassifier()
    if use_dtr:
        dtr.checkpoint(model)
    lengths = torch.tensor([64, 47, 9, 64, 3, 32, 50, 1] * 4)
    gen = torch.Generator().manual_seed(11)
    data = [(torch.randn(32, 64, 16, generator=gen),
             torch.randint(0, 10, (32,), generator=gen)) for _ in range(3)]
    o = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    return Trainer(model, o, data, forward=lambda x: model(x, lengths))


def sparse_embedding_setup(use_dtr):
    layers = [nn.Embedding(1000, 16, sparse=True), nn.Flatten(),
              nn.Linear(16 * 16, 256), nn.ReLU()]
    for _ in range(6):  # activations dominate the floor
        layers += [nn.Linear(256, 256), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(256, 10))
    if use_dtr:
        dtr.checkpoint(model)
    gen = torch.Generator().manual_seed(13)
    data = [(torch.randint(0, 1000, (512, 16), generator=gen),
             torch.randint(0, 10, (512,), generator=gen)) for _ in range(3)]
    o = torch.optim.SGD(model.parameters(), lr=0.1)
    return Trainer(model, o, data, habits=("item",))


CASES = [
    vision("resnet18", _tv("resnet18"), "SGD", {"lr": 0.01, "momentum": 0.9},
           habits=("item",)),
    vision("resnet18_cl", _tv("resnet18"), "SGD",
           {"lr": 0.01, "momentum": 0.9, "nesterov": True,
            "weight_decay": 1e-4}, channels_last=True),
    vision("mobilenet_v2", _tv("mobilenet_v2"), "Adam",
           {"lr": 1e-3, "foreach": False}, habits=("eval",)),
    vision("mobilenet_v3_s", _tv("mobilenet_v3_small"), "AdamW",
           {"lr": 1e-3, "foreach": False}, clip=1.0),
    vision("efficientnet_b0", _tv("efficientnet_b0"), "SGD",
           {"lr": 0.01, "momentum": 0.9, "nesterov": True,
            "weight_decay": 1e-4}, sched=_step_lr),
    vision("shufflenet", _tv("shufflenet_v2_x0_5"), "Adam",
           {"lr": 1e-3, "foreach": False}, habits=("save",)),
    vision("squeezenet", _tv("squeezenet1_0"), "SGD",
           {"lr": 0.01, "momentum": 0.9}, size=64, habits=("deepcopy",)),
    vision("mnasnet", _tv("mnasnet0_5"), "SGD", {"lr": 0.01},
           habits=("tolist",)),
    vision("convnext_cl", _tv("convnext_tiny"), "AdamW",
           {"lr": 1e-3, "foreach": True}, channels_last=True, batch=2),
    vision("densenet_ckpt", _small_densenet, "SGD",
           {"lr": 0.01, "momentum": 0.9, "weight_decay": 1e-4}),
    rnn_case("lstm", nn.LSTM, "SGD", {"lr": 0.05, "momentum": 0.9}, clip=1.0),
    rnn_case("lstm_h0", nn.LSTM, "SGD", {"lr": 0.05, "momentum": 0.9},
             h0="new_zeros", clip=1.0),
    rnn_case("gru", nn.GRU, "Adam", {"lr": 1e-3, "foreach": False}),
    rnn_case("gru_h0", nn.GRU, "Adam", {"lr": 1e-3, "foreach": True},
             h0="new_zeros"),
    rnn_case("gru_bidir", nn.GRU, "AdamW", {"lr": 1e-3, "foreach": False},
             bidirectional=True, sched=_step_lr, habits=("item",)),
    Case("gru_attention", gru_attention_setup,
         habits="GRU batch_first, attention pooling, Adam amsgrad foreach"),
    Case("lstm_lm", lstm_lm_setup, habits="Embedding+LSTM AdamW OneCycleLR"),
    Case("mha", mha_setup, habits="MultiheadAttention AdamW clip item"),
    encoder_case("transformer", False, {"foreach": False}, ("eval",)),
    encoder_case("transformer_mask", True, {"foreach": True}, ()),
    Case("custom_fn", custom_fn_setup, habits="autograd.Function SGD item"),
    Case("cnn_cl", cnn_channels_last_setup,
         habits="channels_last AdamW foreach item"),
    Case("inplace_dropout", inplace_dropout_setup,
         habits="ReLU/Dropout inplace after Flatten, eval"),
    Case("bn_mlp", bn_mlp_setup, habits="BatchNorm1d nesterov wd eval item"),
    Case("torch_save", cnn_save_setup, habits="torch.save BytesIO"),
    Case("deepcopy_opt", cnn_deepcopy_setup, habits="deepcopy(opt.state_dict())"),
    Case("tolist_newtensor", cnn_tolist_setup, habits="tolist, new_tensor"),
    Case("grad_accum", cnn_accum_setup, habits="2 micro-batches, StepLR"),
    Case("utils_checkpoint", utils_checkpoint_setup,
         habits="torch.utils.checkpoint reentrant + not"),
    Case("partial_ab", partial_setup, habits="only B checkpointed"),
    Case("leaf_w", leaf_setup, habits="dtr.checkpoint(leaf w)"),
    Case("rrelu", rrelu_setup, habits="RReLU (random), in-place, momentum"),
    Case("packed_gru", packed_setup,
         habits="pack_padded_sequence in forward, unsorted, Adam"),
    Case("sparse_embedding", sparse_embedding_setup,
         habits="Embedding(sparse=True), SGD, item"),
]

from zoo import hf_cases  # noqa: E402 -- it builds on Case and Trainer

CASES += hf_cases.CASES

from zoo import vision_cases  # noqa: E402 -- timm and torchvision

CASES += vision_cases.CASES
BY_NAME = {c.name: c for c in CASES}
