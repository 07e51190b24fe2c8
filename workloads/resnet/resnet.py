"""ResNet-50 v1.5 in plain torch, plus analytic parameter and MAC counts.

v1.5 puts the stride-2 of a down-sampling bottleneck on its 3x3 convolution (v1 puts it on the
first 1x1); this is torchvision's ``resnet50``. Module and parameter names follow torchvision's,
so a torchvision state dict loads into :func:`resnet50` with ``strict=True``.

``width`` is the stem's channel count (64 in the real model); stage ``i`` uses ``width * 2**i``
channels inside its bottlenecks and four times that at their outputs. Tests shrink it.

MACs count multiply-accumulates of convolutions and linear layers only (batch norm, ReLU,
pooling and the residual additions are left out, as the usual "4.1 GMACs" figure does).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn

#: Bottlenecks per stage of ResNet-50.
RESNET50_LAYERS = (3, 4, 6, 3)
#: Output channels of a bottleneck = inner width x EXPANSION.
EXPANSION = 4
#: torchvision's resnet50 (1000 classes) has this many parameters.
RESNET50_PARAMETERS = 25_557_032


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carries the stride: v1.5), 1x1 expand; projection shortcut when needed."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1):
        super().__init__()
        out = planes * EXPANSION
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or inplanes != out:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        # the shortcut after the main path: torchvision's call order (traced_layers relies on it)
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(y + identity)


class ResNet(nn.Module):
    """Stem (7x7/2 conv, BN, ReLU, 3x3/2 max-pool), four bottleneck stages, global pool, fc."""

    def __init__(self, layers: tuple[int, ...] = RESNET50_LAYERS, width: int = 64,
                 num_classes: int = 1000):
        super().__init__()
        if width < 1 or num_classes < 1:
            raise ValueError(f"width and num_classes must be >= 1, got {width}, {num_classes}")
        self.width, self.num_classes, self.layer_counts = width, num_classes, tuple(layers)
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        inplanes = width
        for i, blocks in enumerate(layers):
            planes = width * 2**i
            stride = 1 if i == 0 else 2
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(inplanes, planes, stride if b == 0 else 1))
                inplanes = planes * EXPANSION
            self.add_module(f"layer{i + 1}", nn.Sequential(*stage))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(inplanes, num_classes)
        self._init_weights()

    def _init_weights(self) -> None:
        # torchvision's scheme: He (fan_out) for convolutions, BN gamma 1 / beta 0.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def stages(self) -> Iterator[nn.Sequential]:
        for i in range(len(self.layer_counts)):
            yield getattr(self, f"layer{i + 1}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        for stage in self.stages():
            x = stage(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50(width: int = 64, num_classes: int = 1000) -> ResNet:
    """ResNet-50 v1.5; ``resnet50()`` has torchvision's 25,557,032 parameters."""
    return ResNet(RESNET50_LAYERS, width=width, num_classes=num_classes)


ARCHS = {"resnet50": resnet50}


# ---------------------------------------------------------------------------------------------
# Analytic counts (no tensors involved)


@dataclass(frozen=True)
class LayerSpec:
    """One convolution or linear layer as the analytic walk sees it."""

    name: str  # torchvision-style module name, e.g. "layer2.0.conv2"
    kind: str  # "conv" or "linear"
    in_channels: int
    out_channels: int
    kernel: int
    stride: int
    out_hw: tuple[int, int]  # output spatial size (1, 1) for linear

    @property
    def params(self) -> int:
        return self.out_channels * self.in_channels * self.kernel**2 + (
            self.out_channels if self.kind == "linear" else 0)

    @property
    def macs(self) -> int:
        return self.out_hw[0] * self.out_hw[1] * self.out_channels * self.in_channels * self.kernel**2


def _conv_out(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + 2 * padding - kernel) // stride + 1


def layer_specs(width: int = 64, num_classes: int = 1000, image_size: int | tuple[int, int] = 224,
                layers: tuple[int, ...] = RESNET50_LAYERS) -> list[LayerSpec]:
    """Every conv/linear layer of ResNet(layers, width, num_classes) in forward order, with its
    output size for a square (or (h, w)) input — derived from the architecture, not by running it."""
    h, w = (image_size, image_size) if isinstance(image_size, int) else image_size
    specs: list[LayerSpec] = []

    def conv(name: str, cin: int, cout: int, k: int, s: int, hw: tuple[int, int]) -> tuple[int, int]:
        out = (_conv_out(hw[0], k, s, k // 2), _conv_out(hw[1], k, s, k // 2))
        specs.append(LayerSpec(name, "conv", cin, cout, k, s, out))
        return out

    hw = conv("conv1", 3, width, 7, 2, (h, w))
    hw = (_conv_out(hw[0], 3, 2, 1), _conv_out(hw[1], 3, 2, 1))  # max-pool
    inplanes = width
    for i, blocks in enumerate(layers):
        planes = width * 2**i
        out = planes * EXPANSION
        for b in range(blocks):
            stride = 2 if (i > 0 and b == 0) else 1
            p = f"layer{i + 1}.{b}"
            a = conv(f"{p}.conv1", inplanes, planes, 1, 1, hw)
            a = conv(f"{p}.conv2", planes, planes, 3, stride, a)
            a = conv(f"{p}.conv3", planes, out, 1, 1, a)
            if stride != 1 or inplanes != out:
                conv(f"{p}.downsample.0", inplanes, out, 1, stride, hw)
            hw, inplanes = a, out
    specs.append(LayerSpec("fc", "linear", inplanes, num_classes, 1, 1, (1, 1)))
    return specs


def analytic_macs(width: int = 64, num_classes: int = 1000,
                  image_size: int | tuple[int, int] = 224) -> int:
    """Conv + linear multiply-accumulates of one forward pass of one image."""
    return sum(s.macs for s in layer_specs(width, num_classes, image_size))


def analytic_parameters(width: int = 64, num_classes: int = 1000,
                        layers: tuple[int, ...] = RESNET50_LAYERS) -> int:
    """Parameter count from the architecture: conv weights, fc weight + bias, and the two
    affine parameters of every batch norm (one BN follows each convolution)."""
    specs = layer_specs(width, num_classes, 224, layers)
    bn = sum(2 * s.out_channels for s in specs if s.kind == "conv")
    return sum(s.params for s in specs) + bn


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameter elements of an instantiated model."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


def parameter_shapes(model: nn.Module) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every parameter, in registration order."""
    return [(n, tuple(p.shape)) for n, p in model.named_parameters()]


def traced_layers(model: nn.Module, image_size: int | tuple[int, int] = 224) -> list[dict]:
    """Conv/linear layers of any model as a forward pass sees them, in call order:
    ``{"name", "kind", "weight_shape", "stride", "out_shape", "macs"}`` for one image.

    The pass runs on the meta device (no memory, no arithmetic) through
    ``torch.func.functional_call`` with meta stand-ins for the parameters and buffers, so it is
    quick even for the full-size network, leaves the model untouched (its train/eval mode
    is restored) and works for any nn.Module (used to count torchvision's resnet50 the same
    way as ours)."""
    from torch.func import functional_call

    h, w = (image_size, image_size) if isinstance(image_size, int) else image_size
    names = {m: n for n, m in model.named_modules()}
    rows: list[dict] = []

    def hook(mod: nn.Module, inputs, output) -> None:
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            cin = mod.in_channels // mod.groups
            macs = output.shape[1] * output.shape[2] * output.shape[3] * cin * k
            rows.append(dict(name=names[mod], kind="conv", weight_shape=tuple(mod.weight.shape),
                             stride=tuple(mod.stride), out_shape=tuple(output.shape[1:]),
                             macs=int(macs)))
        elif isinstance(mod, nn.Linear):
            rows.append(dict(name=names[mod], kind="linear", weight_shape=tuple(mod.weight.shape),
                             stride=(1, 1), out_shape=tuple(output.shape[1:]),
                             macs=int(mod.in_features * mod.out_features)))

    stand_ins = {n: torch.empty_like(t, device="meta") for n, t in
                 [*model.named_parameters(), *model.named_buffers()]}
    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, (nn.Conv2d, nn.Linear))]
    modes = {m: m.training for m in model.modules()}
    try:
        model.eval()  # batch of one: BN must not ask for batch statistics
        with torch.no_grad():
            functional_call(model, stand_ins, (torch.empty(1, 3, h, w, device="meta"),))
    finally:
        for hd in handles:
            hd.remove()
        for m, training in modes.items():
            m.training = training
    return rows


def traced_macs(model: nn.Module, image_size: int | tuple[int, int] = 224) -> int:
    """Conv + linear MACs of one image, counted from a meta-device forward pass."""
    return sum(r["macs"] for r in traced_layers(model, image_size))


def train_flops_per_image(macs: int) -> float:
    """Training FLOPs of one image: forward + backward (~2x forward), 2 FLOPs per MAC."""
    return 3.0 * 2.0 * macs
