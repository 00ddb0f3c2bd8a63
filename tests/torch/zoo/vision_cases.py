"""timm models and torchvision classifiers and a detector in the zoo: built
with random weights (no download), at small image sizes, and trained as
their users train them.

timm, as its train.py does: timm.utils.random_seed, create_model with
drop_path_rate (stochastic depth: random per sample in every block) and
drop_rate, create_optimizer_v2 (AdamW, LAMB, RMSpropTF; no weight decay on
biases and norms; layer-wise lr decay), create_scheduler_v2 stepped per
update (step_update), Mixup/CutMix (numpy's random, seeded by random_seed)
with SoftTargetCrossEntropy, LabelSmoothingCrossEntropy, BinaryCrossEntropy,
dispatch_clip_grad (norm and AGC), ModelEmaV3, channels_last,
set_grad_checkpointing (torch.utils.checkpoint inside the model).

torchvision, as its references/classification/train.py does: SGD with
momentum and no weight decay on norms (split_normalization_params),
CrossEntropyLoss(label_smoothing), transforms.v2 MixUp/CutMix, a linear
warm-up then cosine (SequentialLR), an EMA of the weights (AveragedModel),
RMSprop for MobileNetV3; and references/detection's Faster R-CNN trained on
images and targets (torchvision::nms and roi_align, another library's
operators, run on checkpointed tensors).

Nothing here imports timm or torchvision until a case runs: the modules
are imported by Case.runnable() (requires=), which skips the case when the
import fails with any exception (beside PyPI's CPU torch 2.13, torchvision
raises RuntimeError: operator torchvision::nms does not exist).
"""
import torch

import dtr
from zoo.cases import Case, Trainer


def _images(n, batch, size, seed=5, classes=10):
    gen = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch, 3, size, size, generator=gen),
             torch.randint(0, classes, (batch,), generator=gen))
            for _ in range(n)]


# --------------------------------------------------------------------- timm

class TimmTrainer(Trainer):
    """timm's train_one_epoch: mixup_fn on the batch, forward, loss,
    backward, dispatch_clip_grad, optimizer.step(), the scheduler's
    step_update(num_updates) and the EMA's update after every step."""

    def __init__(self, model, opt, data, loss_fn, sched, clip=None,
                 clip_mode="norm", mixup=None, ema=None, habits=()):
        super().__init__(model, opt, data, loss_fn=loss_fn, habits=habits,
                         extra_final=self._ema_final)
        self.timm_sched, self.clip, self.clip_mode = sched, clip, clip_mode
        self.mixup, self.ema = mixup, ema
        self.num_updates = 0

    def _ema_final(self):
        if self.ema is None:
            return {}
        return {"ema": self.ema.module.state_dict()}

    def step(self, i):
        from timm.models import model_parameters
        from timm.utils import dispatch_clip_grad
        x, y = self.data[i % len(self.data)]
        if self.mixup is not None:
            x, y = self.mixup(x, y)
        out = self.model(x)
        loss = self.loss_fn(out, y)
        self.opt.zero_grad()
        loss.backward()
        if self.clip is not None:
            dispatch_clip_grad(
                model_parameters(self.model,
                                 exclude_head="agc" in self.clip_mode),
                value=self.clip, mode=self.clip_mode)
        self.opt.step()
        self.num_updates += 1
        self.timm_sched.step_update(num_updates=self.num_updates)
        self._record("lr", [g["lr"] for g in self.opt.param_groups])
        if self.ema is not None:
            self.ema.update(self.model, step=self.num_updates)
        if "item" in self.habits:
            self._record("item", loss.item())
            print("step %d loss %.6f %s" % (i, loss.item(), loss),
                  file=self.log)
        return loss


def timm_case(name, model_name, model_kw, opt, opt_kw, sched, sched_kw,
              loss="smooth", size=32, batch=4, steps=3, clip=None,
              clip_mode="norm", mixup=None, ema=None, channels_last=False,
              grad_checkpointing=False, habits=()):
    """create_model(model_name, pretrained=False, num_classes=10,
    **model_kw), trained by TimmTrainer. loss: "smooth"
    (LabelSmoothingCrossEntropy 0.1), "bce" (BinaryCrossEntropy, the
    ResNet-strikes-back recipe); with mixup (a dict of Mixup's arguments)
    SoftTargetCrossEntropy, or BCE on the mixed targets. ema: ModelEmaV3's
    decay."""
    def setup(use_dtr):
        import timm
        from timm.data import Mixup
        from timm.loss import (BinaryCrossEntropy, LabelSmoothingCrossEntropy,
                               SoftTargetCrossEntropy)
        from timm.optim import create_optimizer_v2
        from timm.scheduler import create_scheduler_v2
        from timm.utils import ModelEmaV3, random_seed
        random_seed(42, 0)  # torch, numpy (Mixup draws from it) and random
        model = timm.create_model(model_name, pretrained=False,
                                  num_classes=10, **model_kw)
        if grad_checkpointing:
            model.set_grad_checkpointing(True)
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
        if use_dtr:
            dtr.checkpoint(model)
        o = create_optimizer_v2(model, opt, **opt_kw)
        s, _ = create_scheduler_v2(o, sched, step_on_epochs=False,
                                   updates_per_epoch=steps, **sched_kw)
        m = Mixup(num_classes=10, **mixup) if mixup else None
        if loss == "bce":
            loss_fn = BinaryCrossEntropy(smoothing=0.1)
        elif mixup:
            loss_fn = SoftTargetCrossEntropy()
        else:
            loss_fn = LabelSmoothingCrossEntropy(smoothing=0.1)
        e = ModelEmaV3(model, decay=ema) if ema else None
        data = _images(steps, batch, size)
        if channels_last:
            data = [(x.contiguous(memory_format=torch.channels_last), y)
                    for x, y in data]
        return TimmTrainer(model, o, data, loss_fn, s, clip=clip,
                           clip_mode=clip_mode, mixup=m, ema=e, habits=habits)
    desc = ["timm", opt, sched, loss] + [k for k, v in (
        ("mixup", mixup), ("ema", ema), ("clip-" + clip_mode, clip),
        ("channels_last", channels_last),
        ("grad_checkpointing", grad_checkpointing)) if v] + list(habits)
    return Case(name, setup, steps=steps, requires="timm",
                habits=" ".join(desc))


_COSINE = {"num_epochs": 3, "warmup_epochs": 1, "warmup_lr": 1e-5,
           "min_lr": 1e-6}
_MIXUP = {"mixup_alpha": 0.8, "cutmix_alpha": 1.0, "label_smoothing": 0.1}

TIMM_CASES = [
    timm_case("timm_resnet18", "resnet18", {"drop_path_rate": 0.05},
              "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "cosine", _COSINE,
              size=224, batch=2, clip=1.0, habits=("item",)),
    timm_case("timm_resnet18d_rsb", "resnet18d", {"drop_path_rate": 0.05},
              "lamb", {"lr": 5e-3, "weight_decay": 0.01}, "cosine", _COSINE,
              loss="bce", mixup={"mixup_alpha": 0.1, "cutmix_alpha": 1.0},
              size=160, channels_last=True),
    timm_case("timm_vit_tiny", "vit_tiny_patch16_224",
              {"img_size": 32, "patch_size": 8, "drop_path_rate": 0.1},
              "adamw", {"lr": 1e-3, "weight_decay": 0.05,
                        "layer_decay": 0.75}, "cosine", _COSINE,
              mixup=_MIXUP, ema=0.99, clip=1.0),
    timm_case("timm_deit_gc", "deit_tiny_distilled_patch16_224",
              {"img_size": 32, "patch_size": 8, "drop_path_rate": 0.1},
              "adamw", {"lr": 5e-4, "weight_decay": 0.05}, "cosine", _COSINE,
              grad_checkpointing=True),
    timm_case("timm_convnext_atto", "convnext_atto", {"drop_path_rate": 0.1},
              "adamw", {"lr": 1e-3, "weight_decay": 0.05, "foreach": True},
              "cosine", _COSINE, size=96, channels_last=True, ema=0.99,
              clip=1.0),
    timm_case("timm_mobilenetv3", "mobilenetv3_small_050",
              {"drop_rate": 0.2, "drop_path_rate": 0.05}, "rmsproptf",
              {"lr": 0.016, "weight_decay": 1e-5, "eps": 1e-3}, "step",
              {"num_epochs": 3, "decay_epochs": 1, "decay_rate": 0.97,
               "warmup_epochs": 1, "warmup_lr": 1e-6},
              size=64, ema=0.999, clip=0.01, clip_mode="agc"),
    timm_case("timm_swin", "swin_tiny_patch4_window7_224",
              {"img_size": 32, "window_size": 4, "embed_dim": 32,
               "depths": (2, 2), "num_heads": (2, 4), "drop_path_rate": 0.1},
              "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "cosine", _COSINE,
              clip=5.0),
]


# -------------------------------------------------------------- torchvision

class TorchvisionTrainer(Trainer):
    """references/classification/train.py's train_one_epoch: the batch
    through the collate's MixUp/CutMix, forward, criterion, backward,
    clip_grad_norm_ (if asked), step, the EMA's update_parameters every
    step; the scheduler is stepped per step here (3 steps, not epochs)."""

    def __init__(self, model, opt, data, loss_fn, sched, mix=None, ema=None,
                 clip=None):
        super().__init__(model, opt, data, loss_fn=loss_fn, sched=sched,
                         clip=clip, extra_final=self._ema_final)
        self.mix, self.ema = mix, ema

    def _ema_final(self):
        if self.ema is None:
            return {}
        return {"ema": self.ema.module.state_dict(),
                "ema_n": self.ema.n_averaged}

    def step(self, i):
        x, y = self.data[i % len(self.data)]
        if self.mix is not None:
            x, y = self.mix(x, y)
        out = self.model(x)
        loss = self.loss_fn(out, y)
        self.opt.zero_grad()
        loss.backward()
        if self.clip is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.opt.step()
        if self.ema is not None:
            self.ema.update_parameters(self.model)
        self.sched.step()
        self._record("lr", self.sched.get_last_lr())
        return loss


def _warmup_cosine(o):
    from torch.optim import lr_scheduler
    return lr_scheduler.SequentialLR(
        o, [lr_scheduler.LinearLR(o, start_factor=0.01, total_iters=1),
            lr_scheduler.CosineAnnealingLR(o, T_max=4)], milestones=[1])


def tv_case(name, fn, opt, size=32, batch=4, steps=3, mix=False, ema=None,
            clip=None, label_smoothing=0.1, norm_weight_decay=0.0):
    """torchvision.models.<fn>(num_classes=10) with the reference script's
    recipe: opt is "sgd" (momentum 0.9, wd 1e-4) or "rmsprop" (the
    MobileNetV3 recipe: alpha 0.9, eps 0.0316, momentum 0.9, wd 1e-5)."""
    def setup(use_dtr):
        import torchvision
        from torchvision.ops._utils import split_normalization_params
        from torchvision.transforms import v2
        model = getattr(torchvision.models, fn)(num_classes=10)
        if use_dtr:
            dtr.checkpoint(model)
        wd = 1e-4 if opt == "sgd" else 1e-5
        norm, other = split_normalization_params(model)
        groups = [{"params": other, "weight_decay": wd},
                  {"params": norm, "weight_decay": norm_weight_decay}]
        if opt == "sgd":
            o = torch.optim.SGD(groups, lr=0.02, momentum=0.9,
                                weight_decay=wd)
        else:
            o = torch.optim.RMSprop(groups, lr=0.064, alpha=0.9, eps=0.0316,
                                    momentum=0.9, weight_decay=wd)
        m = None
        if mix:
            m = v2.RandomChoice([v2.MixUp(alpha=0.2, num_classes=10),
                                 v2.CutMix(alpha=1.0, num_classes=10)])
        e = None
        if ema:
            e = torch.optim.swa_utils.AveragedModel(
                model, multi_avg_fn=torch.optim.swa_utils.
                get_ema_multi_avg_fn(ema), use_buffers=True)
        return TorchvisionTrainer(
            model, o, _images(steps, batch, size),
            torch.nn.CrossEntropyLoss(label_smoothing=label_smoothing),
            _warmup_cosine(o), mix=m, ema=e, clip=clip)
    desc = ["torchvision", opt, "norm wd %s" % norm_weight_decay,
            "label_smoothing %s" % label_smoothing, "warm-up+cosine"]
    desc += [k for k, v in (("mixup/cutmix", mix), ("ema", ema),
                            ("clip", clip)) if v]
    return Case(name, setup, steps=steps, requires="torchvision",
                habits=" ".join(desc))


class DetectionTrainer(Trainer):
    """references/detection's train_one_epoch: model(images, targets)
    returns a dict of losses, summed; SGD; a warm-up LinearLR per step."""

    def __init__(self, model, opt, data, sched):
        super().__init__(model, opt, data, sched=sched)

    def step(self, i):
        images, targets = self.data[i % len(self.data)]
        loss_dict = self.model(images, targets)
        loss = sum(v for v in loss_dict.values())
        for k in sorted(loss_dict):
            self._record(k, dtr.decheckpoint(loss_dict[k]).detach().clone())
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.sched.step()
        self._record("lr", self.sched.get_last_lr())
        return loss


def _detection_data(n, batch, size, classes, seed=21):
    gen = torch.Generator().manual_seed(seed)
    data = []
    for _ in range(n):
        images, targets = [], []
        for _ in range(batch):
            images.append(torch.rand(3, size, size, generator=gen))
            k = 2
            xy = torch.rand(k, 2, generator=gen) * (size * 0.6)
            wh = torch.rand(k, 2, generator=gen) * (size * 0.3) + size * 0.1
            targets.append({"boxes": torch.cat([xy, xy + wh], 1),
                            "labels": torch.randint(1, classes, (k,),
                                                    generator=gen)})
        data.append((images, targets))
    return data


def fasterrcnn_setup(use_dtr, steps=2):
    import torchvision
    from torchvision.models.detection import (
        fasterrcnn_mobilenet_v3_large_320_fpn)
    # Its defaults: images resized to 320, 2000 proposals, 512 sampled
    # RoIs per image into the box head.
    model = fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, num_classes=3)
    assert torchvision.ops.nms  # the operators the model calls
    if use_dtr:
        dtr.checkpoint(model)
    params = [p for p in model.parameters() if p.requires_grad]
    o = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LinearLR(o, start_factor=0.001,
                                              total_iters=steps)
    return DetectionTrainer(model, o, _detection_data(steps, 2, 96, 3), sched)


TV_CASES = [
    tv_case("tv_resnet18_ref", "resnet18", "sgd", size=160, mix=True,
            ema=0.99),
    tv_case("tv_mobilenet_v3_rms", "mobilenet_v3_small", "rmsprop", size=64,
            ema=0.999, label_smoothing=0.0),
    tv_case("tv_regnet_y", "regnet_y_400mf", "sgd", clip=1.0),
    Case("tv_fasterrcnn", fasterrcnn_setup, steps=2, requires="torchvision",
         habits="torchvision detection: images+targets, loss dict, nms, "
                "roi_align, SGD, LinearLR warm-up"),
]

CASES = TIMM_CASES + TV_CASES
