"""Models of the classes people bring, exported to ONNX by Debian's torch.

torchvision CNNs (ResNet-18, MobileNet-V2, SqueezeNet 1.1; random weights
from a fixed seed, nothing is downloaded) and small nets written here: a
Conv2d + BatchNorm + pool block, a dilated TCN with BatchNorm, a GRU
classifier and a TransformerEncoder classifier. Every model is exported in
eval mode (BatchNorm with running statistics, Dropout off) with a symbolic
batch dim (and a symbolic length for the sequence models), opset 13, the
way a user's torch.onnx.export call writes it. Runs under /usr/bin/python3.
"""
import os

import numpy as np
import torch
from torch import nn


def _randomise_batch_norm(module, seed):
    """Running statistics and affine parameters away from the identity, so a
    wrong BatchNorm fold shows in the outputs."""
    g = torch.Generator().manual_seed(seed)
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = m.num_features
            m.running_mean.copy_(0.2 * torch.randn(c, generator=g))
            m.running_var.copy_(0.5 + torch.rand(c, generator=g))
            m.weight.data.copy_(0.8 + 0.4 * torch.rand(c, generator=g))
            m.bias.data.copy_(0.1 * torch.randn(c, generator=g))


class ConvBnBlock(nn.Module):
    """Conv2d + BN + ReLU, MaxPool, Conv2d + BN + ReLU, global pool, linear head."""

    def __init__(self, channels=3, width=32, classes=10):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU())
        self.head = nn.Linear(2 * width, classes)

    def forward(self, x):
        return self.head(self.body(x).mean(dim=(2, 3)))


class DilatedTcn(nn.Module):
    """Residual blocks of dilated causal Conv1d + BN + ReLU over [N, C, T], then a regression head."""

    def __init__(self, sensors=6, width=32, levels=4, outputs=2):
        super().__init__()
        self.inp = nn.Conv1d(sensors, width, 1)
        self.blocks = nn.ModuleList()
        for i in range(levels):
            d = 2 ** i
            self.blocks.append(nn.Sequential(
                nn.ConstantPad1d((2 * d, 0), 0.0), nn.Conv1d(width, width, 3, dilation=d), nn.BatchNorm1d(width),
                nn.ReLU()))
        self.out = nn.Linear(width, outputs)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = h + b(h)
        return self.out(h[:, :, -1])


class GruClassifier(nn.Module):
    def __init__(self, features=8, hidden=64, classes=4):
        super().__init__()
        self.gru = nn.GRU(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out[:, -1])


class TransformerClassifier(nn.Module):
    def __init__(self, features=16, d_model=64, heads=4, layers=2, classes=5):
        super().__init__()
        self.proj = nn.Linear(features, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=128, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, classes)

    def forward(self, x):
        return torch.log_softmax(self.head(self.encoder(self.proj(x)).mean(dim=1)), dim=-1)


KEEP_BN = {"conv_bn_block", "tcn_bn"}


def _bn_export_mode(name):
    """Export arguments: PRESERVE (the model is in eval mode) skips the
    exporter's own Conv+BN fusion, which EVAL runs."""
    if name in KEEP_BN:
        return {"training": torch.onnx.TrainingMode.PRESERVE, "do_constant_folding": False}
    return {}


def _torchvision(name, classes):
    import torchvision  # Debian's python3-torchvision
    return getattr(torchvision.models, name)(num_classes=classes)


# name -> (builder, example input shape, dynamic axes of the input). The
# exporter folds BatchNorm into Conv itself when it folds constants; the
# "_bn" nets are exported without that (as other exporters and
# torch users who export with TrainingMode.PRESERVE write them), so the
# runtime has to.
ZOO = {
    "resnet18": (lambda: _torchvision("resnet18", 10), (2, 3, 96, 96), {0: "N"}),
    "mobilenet_v2": (lambda: _torchvision("mobilenet_v2", 10), (2, 3, 96, 96), {0: "N"}),
    "squeezenet1_1": (lambda: _torchvision("squeezenet1_1", 10), (2, 3, 96, 96), {0: "N"}),
    "conv_bn_block": (lambda: ConvBnBlock(), (8, 3, 64, 64), {0: "N"}),
    "tcn_bn": (lambda: DilatedTcn(), (32, 6, 128), {0: "N", 2: "T"}),
    "gru": (lambda: GruClassifier(), (32, 48, 8), {0: "N", 1: "T"}),
    "transformer": (lambda: TransformerClassifier(), (16, 32, 16), {0: "N", 1: "T"}),
}


def export(name, directory, seed=0):
    """Writes <directory>/<name>.onnx (once) and returns (path, example input shape)."""
    build, shape, axes = ZOO[name]
    path = os.path.join(directory, f"{name}.onnx")
    if not os.path.exists(path):
        torch.manual_seed(seed)
        model = build()
        _randomise_batch_norm(model, seed + 1)
        model.eval()
        example = torch.randn(*shape)
        # With autograd on, TransformerEncoderLayer takes its exportable path
        # (under no_grad it calls a fused kernel the exporter cannot write).
        torch.onnx.export(model, example, path, input_names=["x"], output_names=["y"], opset_version=13,
                          dynamic_axes={"x": axes, "y": {0: "N"}}, **_bn_export_mode(name))
    return path, shape


def example_input(name, rng, shape=None):
    """Inputs of the model's class: images in [0, 1] normalised, sensor sequences unit-normal."""
    shape = shape or ZOO[name][1]
    if len(shape) == 4:
        return {"x": ((rng.uniform(0, 1, shape) - 0.45) / 0.25).astype(np.float32)}
    return {"x": rng.standard_normal(shape).astype(np.float32)}
