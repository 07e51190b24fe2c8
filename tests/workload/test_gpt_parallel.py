"""workloads.gpt on CPU with gloo: tensor, pipeline and data parallel layouts give the
single-process numbers.

Tolerance: fp32 throughout; the layouts sum the same products in another order (sharded
matmuls, all-reduces, per-micro-batch gradient sums), so losses agree to a relative 2e-5
over 4 AdamW steps and gradients to an absolute 1e-6 + relative 1e-4.
"""

from __future__ import annotations

import os
import socket

import pytest
import torch
import torch.multiprocessing as mp

LOSS_RTOL = 2e-5
TINY = ["--num-layers", "2", "--hidden-size", "32", "--num-attention-heads", "4",
        "--seq-length", "16", "--vocab-size", "64", "--micro-batch-size", "2",
        "--precision", "fp32", "--device", "cpu", "--lr", "1e-3", "--seed", "7"]
STEPS = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, argv: list[str], mode: str, out: str) -> None:
    """One rank: STEPS optimizer steps (mode "loss") or one backward (mode "grad")."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world))
    torch.set_num_threads(1)
    from workloads import dist as wdist
    from workloads.dist import DistEnv
    from workloads.gpt.options import check, parse_args
    from workloads.gpt.parallel import all_reduce_mean, make_layout
    from workloads.gpt.train import Trainer

    args = parse_args(argv)
    assert check(args, world) is None
    device = torch.device("cpu")
    denv = DistEnv.from_env()
    wdist.init(denv, "gloo", device)
    try:
        layout = make_layout(args.data_parallel_size, args.tensor_model_parallel_size,
                             args.pipeline_model_parallel_size, device)
        trainer = Trainer(args, layout, device)
        result: dict = {"rank": rank, "last_stage": layout.last_stage}
        if mode == "loss":
            losses = []
            for _ in range(STEPS):
                loss = trainer.step()
                if layout.last_stage:
                    losses.append(float(all_reduce_mean(loss, layout)))
            result["losses"] = losses
        else:
            trainer._accumulate()
            result["grad_dtypes"] = sorted({str(p.grad.dtype) for p in trainer.model.parameters()
                                            if p.grad is not None})
            if trainer.master is not None and not trainer.master.hooks:
                trainer.master.take_grads()
                result["master_grads"] = [m.grad.clone() for m in trainer.master.master]
            result["grads"] = {
                n: (p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad).clone()
                for n, p in trainer.model.named_parameters() if p.grad is not None}
            ddp = trainer.wrapped
            if hasattr(ddp, "bucket_bytes_cap"):
                result["ddp"] = {"bucket_bytes_cap": ddp.bucket_bytes_cap,
                                 "static_graph": ddp.static_graph}
        torch.save(result, os.path.join(out, f"{rank}.pt"))
    finally:
        wdist.finish()


def _launch(tmp_path, world: int, extra: list[str], mode: str = "loss") -> list[dict]:
    out = tmp_path / f"{mode}_{world}_{'_'.join(extra) or 'single'}"
    out.mkdir()
    mp.start_processes(_worker, args=(world, _free_port(), TINY + extra, mode, str(out)),
                       nprocs=world, join=True, start_method="spawn")
    return [torch.load(out / f"{r}.pt") for r in range(world)]


def _losses(results: list[dict]) -> list[float]:
    return next(r["losses"] for r in results if r["last_stage"])


@pytest.fixture(scope="module")
def single_losses(tmp_path_factory) -> list[float]:
    """The 1-process trajectory at global batch 8 (4 micro-batches of 2)."""
    return _losses(_launch(tmp_path_factory.mktemp("single"), 1, ["--global-batch-size", "8"]))


def test_single_process_loss_decreases(single_losses):
    assert len(single_losses) == STEPS
    assert single_losses[-1] < single_losses[0] - 0.05


@pytest.mark.timeout(120)
def test_tensor_parallel_2_matches_single_process(tmp_path, single_losses):
    tp = _losses(_launch(tmp_path, 2, ["--global-batch-size", "8",
                                       "--tensor-model-parallel-size", "2"]))
    assert tp == pytest.approx(single_losses, rel=LOSS_RTOL)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
def test_pipeline_parallel_2_matches_single_process(tmp_path, single_losses, schedule):
    pp = _losses(_launch(tmp_path, 2, ["--global-batch-size", "8",
                                       "--pipeline-model-parallel-size", "2",
                                       "--pipeline-schedule", schedule]))
    assert pp == pytest.approx(single_losses, rel=LOSS_RTOL)


@pytest.mark.timeout(120)
def test_data_parallel_2_matches_single_process(tmp_path, single_losses):
    dp = _losses(_launch(tmp_path, 2, ["--global-batch-size", "8"]))
    assert dp == pytest.approx(single_losses, rel=LOSS_RTOL)


@pytest.mark.timeout(120)
def test_data_parallel_gradients_equal_single_process(tmp_path):
    single = _launch(tmp_path, 1, ["--global-batch-size", "8"], mode="grad")[0]["grads"]
    ranks = _launch(tmp_path, 2, ["--global-batch-size", "8"], mode="grad")
    for r in ranks:
        assert r["grads"].keys() == single.keys()
        for name, g in single.items():
            torch.testing.assert_close(r["grads"][name], g, rtol=1e-4, atol=1e-6, msg=name)


BF16 = ["--precision", "bf16", "--param-dtype", "bf16"]


@pytest.mark.timeout(180)
def test_bf16_weights_under_data_parallel_follow_the_single_process(tmp_path):
    """--param-dtype bf16 with DDP: the bf16 gradients are averaged over the ranks (in
    bf16), then summed into the fp32 master weights; the trajectory is the one process's
    (gradients summed in fp32 over its two micro-batches) within bf16 rounding."""
    single = _losses(_launch(tmp_path, 1, ["--global-batch-size", "4", *BF16]))
    dp = _losses(_launch(tmp_path, 2, ["--global-batch-size", "4", *BF16]))
    assert dp == pytest.approx(single, rel=2e-3)
    assert dp[-1] < dp[0] - 0.05
    ranks = _launch(tmp_path, 2, ["--global-batch-size", "4", *BF16], mode="grad")
    for r in ranks:
        assert r["grad_dtypes"] == ["torch.bfloat16"]  # what DDP's buckets averaged
        assert all(g.dtype == torch.float32 for g in r["master_grads"])
    for a, b in zip(ranks[0]["master_grads"], ranks[1]["master_grads"], strict=True):
        assert torch.equal(a, b)  # every rank steps the same averaged gradient


def test_bf16_weights_refuse_layouts_they_do_not_support():
    from workloads.gpt.options import check, parse_args

    def problem(world, *extra):
        return check(parse_args([*TINY[:-8], *BF16, *extra]), world)

    assert problem(2, "--global-batch-size", "4") is None
    assert "one micro-batch" in problem(2, "--global-batch-size", "8")
    assert "tensor and pipeline" in problem(2, "--tensor-model-parallel-size", "2")
    assert "bf16 already" in problem(2, "--global-batch-size", "4", "--grad-reduce-dtype", "bf16")


def _bf16_exact(t: torch.Tensor) -> bool:
    return torch.equal(t, t.to(torch.bfloat16).float())


@pytest.mark.timeout(180)
def test_bf16_gradient_all_reduce_sends_bf16_and_keeps_the_mean(tmp_path):
    """--grad-reduce-dtype bf16: DDP averages the gradients in bf16 (each averaged gradient
    is a bf16 value, cast back into the fp32 gradient), within bf16 rounding of the
    1-process gradients (relative to each tensor's largest entry: halves that nearly cancel
    keep their rounding error); the default fp32 all-reduce gives gradients that are not bf16
    values (so the first check can fail)."""
    single = _launch(tmp_path, 1, ["--global-batch-size", "8"], mode="grad")[0]["grads"]
    fp32 = _launch(tmp_path, 2, ["--global-batch-size", "8"], mode="grad")[0]["grads"]
    assert not all(_bf16_exact(g) for g in fp32.values())
    for r in _launch(tmp_path, 2, ["--global-batch-size", "8", "--grad-reduce-dtype", "bf16"],
                     mode="grad"):
        for name, g in single.items():
            got = r["grads"][name]
            assert got.dtype == torch.float32 and _bf16_exact(got), name
            # each rank's half rounded to bf16 (8 significant bits), then their sum
            torch.testing.assert_close(got, g, rtol=2**-7, atol=2**-8 * float(g.abs().max()),
                                       msg=name)


@pytest.mark.timeout(120)
def test_ddp_bucket_size_and_static_graph_reach_ddp(tmp_path):
    """One micro-batch per rank (a static graph refuses accumulation under no_sync)."""
    single = _launch(tmp_path, 1, ["--global-batch-size", "4"], mode="grad")[0]["grads"]
    ranks = _launch(tmp_path, 2, ["--global-batch-size", "4", "--ddp-bucket-mb", "0.01",
                                  "--ddp-static-graph"], mode="grad")
    for r in ranks:
        assert r["ddp"] == {"bucket_bytes_cap": int(0.01 * 2**20), "static_graph": True}
        for name, g in single.items():
            torch.testing.assert_close(r["grads"][name], g, rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.timeout(240)
def test_data_x_tensor_parallel_2x2_matches_single_process(tmp_path, single_losses):
    """2D: FSDP2 over the data-parallel pairs of tensor-parallel shards (4 processes)."""
    two_d = _losses(_launch(tmp_path, 4, ["--global-batch-size", "8",
                                          "--tensor-model-parallel-size", "2"]))
    assert two_d == pytest.approx(single_losses, rel=LOSS_RTOL)



@pytest.mark.timeout(240)
def test_data_x_pipeline_parallel_2x2_matches_single_process(tmp_path, single_losses):
    """DDP-wrapped pipeline stages (the schedule skips the all-reduce but for the last
    micro-batch), 2 micro-batches of 2 per data-parallel rank (4 processes)."""
    dp_pp = _losses(_launch(tmp_path, 4, ["--global-batch-size", "8",
                                          "--pipeline-model-parallel-size", "2"]))
    assert dp_pp == pytest.approx(single_losses, rel=LOSS_RTOL)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("layout", [[], ["--pipeline-model-parallel-size", "2"]],
                         ids=["dp2", "pp2"])
def test_loss_chunks_on_two_processes_match_single_process(tmp_path, single_losses, layout):
    """The chunked logit layer + loss under DDP (the logit weight's gradient arrives outside
    DDP's forward and must still be all-reduced) and on the last pipeline stage."""
    got = _losses(_launch(tmp_path, 2, ["--global-batch-size", "8", "--loss-chunk-tokens", "5",
                                        *layout]))
    assert got == pytest.approx(single_losses, rel=LOSS_RTOL)
