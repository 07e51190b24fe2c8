"""workloads.gpt speed options on CPU, one process: the chunked logit layer + loss
(``--loss-chunk-tokens``) and bf16 weights with fp32 master weights (``--param-dtype bf16``)
compute what the plain model computes.

Tolerances: the chunked loss in fp32 sums the same products per token (only the weight
gradient's sum over tokens is split by chunk), so losses and gradients agree to float32
rounding (relative 1e-5 / 2e-5 over 4 AdamW steps). bf16 weights round every weight and
activation to 8 mantissa bits, so their loss trajectory stays within a relative 2e-3 of the
fp32 one over 4 steps (seen: 1e-4).
"""

from __future__ import annotations

import pytest
import torch

from workloads.gpt.chunked_loss import chunked_lm_loss
from workloads.gpt.model import lm_loss
from workloads.gpt.options import check, parse_args
from workloads.gpt.parallel import make_layout
from workloads.gpt.train import Trainer

TINY = ["--num-layers", "2", "--hidden-size", "32", "--num-attention-heads", "4",
        "--seq-length", "16", "--vocab-size", "64", "--micro-batch-size", "2",
        "--global-batch-size", "8", "--device", "cpu", "--lr", "1e-3", "--seed", "7"]
STEPS = 4


def _trainer(*extra: str) -> Trainer:
    args = parse_args(TINY + list(extra))
    assert check(args, 1) is None
    device = torch.device("cpu")
    return Trainer(args, make_layout(1, 1, 1, device), device)


def _losses(*extra: str) -> list[float]:
    trainer = _trainer(*extra)
    return [float(trainer.step()) for _ in range(STEPS)]


@pytest.mark.parametrize("chunk", [1, 7, 30, 1000])
def test_chunked_loss_and_gradients_equal_the_plain_ones(chunk):
    """Chunk sizes that split a sequence, do not divide the 30 tokens, or exceed them;
    the backward pass scales by the incoming gradient (here 0.25, as with 4 micro-batches)."""
    gen = torch.Generator().manual_seed(chunk)
    hidden = torch.randn(3, 10, 16, generator=gen, requires_grad=True)
    weight = torch.randn(50, 16, generator=gen, requires_grad=True)
    targets = torch.randint(0, 50, (3, 10), generator=gen)
    plain = lm_loss(hidden @ weight.t(), targets)
    (plain * 0.25).backward()
    expected = hidden.grad.clone(), weight.grad.clone()
    hidden.grad = weight.grad = None
    chunked = chunked_lm_loss(hidden, weight, targets, chunk)
    (chunked * 0.25).backward()
    assert chunked.item() == pytest.approx(plain.item(), rel=1e-6)
    torch.testing.assert_close(hidden.grad, expected[0], rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(weight.grad, expected[1], rtol=1e-5, atol=1e-7)


def test_chunked_loss_in_bf16_keeps_fp32_gradient_dtypes():
    """bf16 matmuls on fp32 inputs (the autocast model's final LayerNorm output and
    weights): gradients come back in the inputs' dtypes, close to the fp32 ones."""
    gen = torch.Generator().manual_seed(1)
    hidden = torch.randn(2, 8, 16, generator=gen, requires_grad=True)
    weight = torch.randn(40, 16, generator=gen, requires_grad=True)
    targets = torch.randint(0, 40, (2, 8), generator=gen)
    lm_loss(hidden @ weight.t(), targets).backward()
    expected = weight.grad.clone()
    weight.grad = None
    loss = chunked_lm_loss(hidden, weight, targets, 5, dtype=torch.bfloat16)
    loss.backward()
    assert hidden.grad.dtype == weight.grad.dtype == torch.float32
    assert float((weight.grad - expected).norm() / expected.norm()) < 2e-2


def test_loss_chunks_give_the_plain_loss_trajectory():
    plain = _losses("--precision", "fp32")
    chunked = _losses("--precision", "fp32", "--loss-chunk-tokens", "5")
    assert chunked == pytest.approx(plain, rel=2e-5)
    assert chunked[-1] < chunked[0] - 0.05


def test_bf16_weights_follow_the_fp32_loss_trajectory():
    reference = _losses("--precision", "fp32")
    for extra in (["--param-dtype", "bf16"], ["--param-dtype", "bf16",
                                               "--loss-chunk-tokens", "5"]):
        losses = _losses("--precision", "bf16", *extra)
        assert losses == pytest.approx(reference, rel=2e-3), extra
        assert losses != pytest.approx(reference, rel=1e-7), "bf16 weights were not used"


def test_bf16_weights_sum_micro_batch_gradients_in_fp32():
    """4 micro-batches: each master gradient is the fp32 sum of the 4 bf16 gradients (a bf16
    running sum would round after every addition), and the step writes the updated master
    weights back into the bf16 model."""
    trainer = _trainer("--precision", "bf16", "--param-dtype", "bf16")
    model, master = trainer.model, trainer.master
    assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    expected = [torch.zeros_like(m) for m in master.master]
    for x, y in zip(trainer.inputs.chunk(4), trainer.targets.chunk(4), strict=True):
        grads = torch.autograd.grad(trainer.loss_fn(model(x), y) / 4, list(model.parameters()))
        for e, g in zip(expected, grads, strict=True):
            e += g.float()
    trainer._accumulate()
    assert all(p.grad is None for p in model.parameters())
    for m, e in zip(master.master, expected, strict=True):
        assert m.grad.dtype == torch.float32
        torch.testing.assert_close(m.grad, e, rtol=0, atol=0)
    trainer.optimizer.step()
    master.copy_to_model()
    for p, m in zip(model.parameters(), master.master, strict=True):
        assert torch.equal(p, m.to(torch.bfloat16))
