"""Real models nobody here wrote, built from a config (random weights, no
download) with Hugging Face transformers, the one model library pinned in
requirements.txt. torchvision is not there: PyPI's torchvision does not
import beside the CPU build of torch (its _C.so links libtorch_cuda)."""
import importlib.util

import torch
import torch.nn as nn

# transformers is optional where dtr is checked against another PyTorch
# than the pinned one: the tests that build these models skip without it.
HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
NO_TRANSFORMERS = "needs transformers (requirements.txt)"


class Logits(nn.Module):
    """A transformers image classifier called as model(x) -> logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(pixel_values=x).logits


def resnet18(num_classes=10):
    """ResNet-18's layout (basic blocks, 2-2-2-2) as transformers builds it."""
    from transformers import ResNetConfig, ResNetForImageClassification
    config = ResNetConfig(depths=[2, 2, 2, 2], layer_type="basic",
                          hidden_sizes=[64, 128, 256, 512],
                          num_labels=num_classes)
    return Logits(ResNetForImageClassification(config))


def mobilenet_v2(num_classes=10):
    from transformers import MobileNetV2Config, MobileNetV2ForImageClassification
    config = MobileNetV2Config(depth_multiplier=0.35, image_size=32,
                               num_labels=num_classes)
    return Logits(MobileNetV2ForImageClassification(config))
