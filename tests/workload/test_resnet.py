"""ResNet-50 v1.5 architecture: counts, stride placement, shapes, analytic vs traced MACs."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from workloads.resnet import resnet as R


@pytest.fixture(scope="module")
def full() -> R.ResNet:
    return R.resnet50()


def test_full_model_has_torchvision_parameter_count(full):
    assert R.count_parameters(full) == R.RESNET50_PARAMETERS == 25_557_032
    assert R.analytic_parameters() == 25_557_032


def test_parameter_tensors_in_torchvision_order(full):
    shapes = R.parameter_shapes(full)
    # 53 convolutions, 53 batch norms (weight + bias), fc weight + bias
    assert len(shapes) == 53 + 2 * 53 + 2 == 161
    assert shapes[:7] == [
        ("conv1.weight", (64, 3, 7, 7)), ("bn1.weight", (64,)), ("bn1.bias", (64,)),
        ("layer1.0.conv1.weight", (64, 64, 1, 1)), ("layer1.0.bn1.weight", (64,)),
        ("layer1.0.bn1.bias", (64,)), ("layer1.0.conv2.weight", (64, 64, 3, 3)),
    ]
    names = [n for n, _ in shapes]
    i = names.index("layer2.0.downsample.0.weight")
    assert shapes[i - 3:i + 3] == [
        ("layer2.0.conv3.weight", (512, 128, 1, 1)), ("layer2.0.bn3.weight", (512,)),
        ("layer2.0.bn3.bias", (512,)), ("layer2.0.downsample.0.weight", (512, 256, 1, 1)),
        ("layer2.0.downsample.1.weight", (512,)), ("layer2.0.downsample.1.bias", (512,)),
    ]
    assert shapes[-2:] == [("fc.weight", (1000, 2048)), ("fc.bias", (1000,))]
    # buffers as torchvision: running mean/var and num_batches_tracked per BN
    assert len(full.state_dict()) == 161 + 3 * 53


def test_stride_two_sits_on_the_3x3_conv(full):
    assert full.conv1.stride == (2, 2) and full.maxpool.stride == 2
    for i, stage in enumerate(full.stages()):
        for b, block in enumerate(stage):
            expect = 2 if (i > 0 and b == 0) else 1
            assert block.conv1.stride == (1, 1)
            assert block.conv2.stride == (expect, expect), (i, b)
            assert block.conv2.kernel_size == (3, 3)
            assert block.conv3.stride == (1, 1)
            if b == 0:
                assert block.downsample[0].stride == (expect, expect)
            else:
                assert block.downsample is None
    assert [len(s) for s in full.stages()] == [3, 4, 6, 3]


def test_analytic_macs_at_224(full):
    macs = R.analytic_macs()
    assert macs == pytest.approx(4.09e9, rel=0.01)
    assert macs == 4_089_184_256
    assert R.traced_macs(full, 224) == macs
    assert R.train_flops_per_image(macs) == 6 * macs


@pytest.mark.parametrize("size", [224, 97, (64, 80)])
def test_layer_specs_match_a_traced_forward(full, size):
    specs = R.layer_specs(image_size=size)
    traced = R.traced_layers(full, size)
    assert [s.name for s in specs] == [t["name"] for t in traced]
    for s, t in zip(specs, traced, strict=True):
        assert t["macs"] == s.macs, s.name
        if s.kind == "conv":
            assert t["out_shape"] == (s.out_channels, *s.out_hw), s.name
            assert t["stride"] == (s.stride, s.stride)


@pytest.mark.parametrize("width,classes", [(8, 10), (16, 1000), (64, 10)])
def test_shrunken_models_count_as_analysed(width, classes):
    model = R.resnet50(width=width, num_classes=classes)
    assert R.count_parameters(model) == R.analytic_parameters(width, classes)
    assert R.traced_macs(model, 32) == R.analytic_macs(width, classes, 32)
    assert model.fc.in_features == 32 * width


def test_forward_output_shape_and_backward():
    torch.manual_seed(0)
    model = R.resnet50(width=8, num_classes=10)
    x = torch.randn(2, 3, 40, 40)
    y = model(x)
    assert y.shape == (2, 10)
    y.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    # channels-last gives the same function
    model.eval()
    ref = model(x)
    cl = model.to(memory_format=torch.channels_last)(x.contiguous(memory_format=torch.channels_last))
    torch.testing.assert_close(cl, ref, rtol=1e-4, atol=1e-4)


def test_v15_differs_from_v1_in_spatial_trace():
    # v1.5: a down-sampling block's first 1x1 keeps the input's size; its 3x3 halves it
    rows = {r["name"]: r for r in R.traced_layers(R.resnet50(width=8), 64)}
    assert rows["layer2.0.conv1"]["out_shape"][1:] == (16, 16)
    assert rows["layer2.0.conv2"]["out_shape"][1:] == (8, 8)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="width"):
        R.resnet50(width=0)


def test_traced_layers_work_on_any_module():
    net = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.Flatten(), nn.Linear(4 * 8 * 8, 5))
    rows = R.traced_layers(net, 16)
    assert [r["macs"] for r in rows] == [4 * 8 * 8 * 3 * 9, 256 * 5]
    assert next(net.parameters()).device.type == "cpu"  # the original is untouched
