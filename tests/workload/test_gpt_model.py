"""workloads.gpt: closed-form parameter count and model FLOPs against independent counts;
pipeline stage split; option checks; the printed log read back by the oneflow_gpt family."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from workloads.gpt.flops import model_flops, parameter_count, seed_flops
from workloads.gpt.model import GPT, GPTConfig, lm_loss
from workloads.gpt.options import check, parse_args
from workloads.gpt.parallel import stage_layers

CONFIGS = [GPTConfig(layers=2, hidden=32, heads=4, seq=16, vocab=64),
           GPTConfig(layers=3, hidden=48, heads=6, seq=24, vocab=100)]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_parameter_count_matches_the_module(cfg):
    model = GPT(cfg)
    assert sum(p.numel() for p in model.parameters()) == \
        parameter_count(cfg.layers, cfg.hidden, cfg.vocab, cfg.seq)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_model_flops_formula_matches_counted_training_flops(cfg):
    """torch's FlopCounterMode counts every matmul (and attention, decomposed by the math
    SDPA backend) of one forward + backward; the formula must give exactly that."""
    torch.manual_seed(0)
    model = GPT(cfg)
    batch = 3
    x = torch.randint(0, cfg.vocab, (batch, cfg.seq))
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        lm_loss(model(x), x).backward()
    assert counter.get_total_flops() == pytest.approx(
        model_flops(batch, cfg.seq, cfg.layers, cfg.hidden, cfg.vocab), rel=1e-12)


def test_seed_formula_is_the_recomputation_convention():
    """Seed 002 (docs/formats.md §3): 96 instead of 72 and V/(16lh); a known value."""
    b, s, layers, h, v = 2, 2048, 16, 1536, 51200
    expected = 96 * b * s * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))
    assert seed_flops(b, s, layers, h, v) == expected
    assert model_flops(b, s, layers, h, v) < expected


def test_stage_layers_cover_every_layer_once():
    for layers, pp in [(16, 2), (16, 4), (24, 4), (7, 3), (2, 2)]:
        ranges = [stage_layers(layers, pp, k) for k in range(pp)]
        assert ranges[0][0] == 0 and ranges[-1][1] == layers
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        assert max(b - a for a, b in ranges) - min(b - a for a, b in ranges) <= 1


def test_keep_layers_drops_what_other_stages_own():
    cfg = CONFIGS[0]
    first = GPT(cfg).keep_layers(0, 1, cfg.layers)
    last = GPT(cfg).keep_layers(1, 2, cfg.layers)
    assert list(first.blocks) == ["0"] and first.tok is not None and first.head is None
    assert list(last.blocks) == ["1"] and last.tok is None and last.head is not None


@pytest.mark.parametrize("argv, world, message", [
    (["--tensor-model-parallel-size", "3"], 4, "do not divide 4 processes"),
    (["--global-batch-size", "12", "--micro-batch-size", "8"], 1, "not a multiple"),
    (["--num-attention-heads", "6", "--hidden-size", "36",
      "--tensor-model-parallel-size", "4"], 4, "multiple of the tensor-parallel size"),
    (["--num-layers", "2", "--pipeline-model-parallel-size", "4"], 4, "fewer than the 4"),
    (["--param-dtype", "bf16", "--tensor-model-parallel-size", "2"], 2,
     "--param-dtype bf16 needs --precision bf16 and one"),
    (["--param-dtype", "bf16", "--global-batch-size", "32"], 2, "one micro-batch per iteration"),
    (["--param-dtype", "bf16", "--precision", "fp32"], 1, "needs --precision bf16"),
    (["--loss-chunk-tokens", "4096", "--tensor-model-parallel-size", "2"], 2,
     "--loss-chunk-tokens needs the whole logit layer"),
    (["--loss-chunk-tokens", "4096", "--pipeline-model-parallel-size", "2"], 4,
     "no FSDP"),
    (["--loss-chunk-tokens", "4096", "--data-parallel-impl", "fsdp"], 2, "no FSDP"),
    (["--grad-reduce-dtype", "bf16", "--tensor-model-parallel-size", "2"], 4,
     "--grad-reduce-dtype bf16 applies to DDP"),
    (["--grad-reduce-dtype", "bf16", "--data-parallel-impl", "fsdp"], 2, "not to FSDP"),
    (["--ddp-static-graph", "--global-batch-size", "32"], 2, "one micro-batch per iteration"),
])
def test_inconsistent_sizes_are_named(argv, world, message):
    assert message in check(parse_args(argv), world)


def test_ddp_bucket_size_must_be_positive(capsys):
    assert parse_args(["--ddp-bucket-mb", "0.5"]).ddp_bucket_mb == 0.5
    with pytest.raises(SystemExit):
        parse_args(["--ddp-bucket-mb", "0"])
    assert "must be > 0, got 0" in capsys.readouterr().err


def test_nccl_thread_block_limits_reach_the_environment(monkeypatch):
    from workloads.gpt.train import limit_nccl

    monkeypatch.delenv("NCCL_MIN_CTAS", raising=False)
    monkeypatch.setenv("NCCL_MAX_CTAS", "6")
    limit_nccl(parse_args(["--nccl-min-ctas", "16"]), "gloo")
    assert "NCCL_MIN_CTAS" not in os.environ
    limit_nccl(parse_args(["--nccl-min-ctas", "16"]), "nccl")
    assert os.environ["NCCL_MIN_CTAS"] == "16" and os.environ["NCCL_MAX_CTAS"] == "6"
    limit_nccl(parse_args(["--nccl-max-ctas", "8"]), "nccl")
    assert os.environ["NCCL_MAX_CTAS"] == "8"


def test_sizes_fill_data_parallel_and_micro_batches():
    args = parse_args(["--tensor-model-parallel-size", "2", "--micro-batch-size", "4",
                       "--global-batch-size", "32"])
    assert check(args, 4) is None
    assert (args.data_parallel_size, args.num_micro_batches) == (2, 4)


TINY = ["--num-layers", "2", "--hidden-size", "32", "--num-attention-heads", "4",
        "--seq-length", "16", "--vocab-size", "64", "--micro-batch-size", "2",
        "--global-batch-size", "4", "--train-iters", "4", "--device", "cpu",
        "--precision", "fp32"]


def test_bad_sizes_exit_2_with_one_line(root):
    proc = subprocess.run([sys.executable, "-m", "workloads.gpt", *TINY,
                           "--global-batch-size", "3"], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "workloads.gpt: --global-batch-size 3 is not a multiple of micro-batch x "
        "data-parallel size = 2"]


def test_printed_log_is_read_by_the_oneflow_gpt_family(root, tmp_path):
    from analysis import parse_paths, summarize

    proc = subprocess.run([sys.executable, "-m", "workloads.gpt", *TINY], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    log = tmp_path / "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz4_s16_l2_h32_nh4_1.log"
    log.write_text(proc.stdout)
    result = parse_paths([str(tmp_path)])
    run = result.runs.iloc[0]
    assert run["family"] == "oneflow_gpt" and run["problems"] == ""
    assert (run["precision"], run["global_batch_size"], run["hidden_size"]) == ("fp32", 4, 32)
    obs = result.observations
    assert obs.loc[obs["metric"] == "latency", "step"].tolist() == [1, 2, 3, 4]
    assert len(obs[obs["metric"] == "model_tflops_per_gpu"]) == 4
    table = summarize(result)
    assert table.loc[0, "case"] == "DP_1x1x1_4_32x2"
    assert table.loc[0, "latency_ms"] > 0


def test_error_line_names_the_innermost_cause():
    from workloads.gpt.train import error_line

    try:
        try:
            raise RuntimeError("params_.size() == rebuilt_param_indices_.size()\nmore")
        except RuntimeError as inner:
            raise RuntimeError("\n  [Stage 0] failed to run forward:\n  args: ...") from inner
    except RuntimeError as outer:
        line = error_line(outer)
    assert line == ("RuntimeError: [Stage 0] failed to run forward: "
                    "RuntimeError: params_.size() == rebuilt_param_indices_.size()")
