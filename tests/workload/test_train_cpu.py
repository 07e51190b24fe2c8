"""The workload on the CPU: DLL line shapes, options, environment, and real runs (one process
and ``torchrun --nproc_per_node=2`` with gloo) whose stdout is parsed like a campaign log."""

from __future__ import annotations

import io
import math
import os
import re
import socket
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
import torch

from workloads.dist import DistEnv, WorkloadError
from workloads.resnet import dllog
from workloads.resnet.options import parse_args
from workloads.resnet.train import build, main, parameters, summary_window, train

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--image-size", "32", "--width", "8", "--batch-size", "4", "--iterations", "6",
        "--precision", "fp32", "--device", "cpu"]
DLL = re.compile(r"^DLL (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}) - (.*)$")
ITER = re.compile(r"^Epoch: 0 Iteration: (\d+)  train\.loss : (\S+)  train\.total_ips : (\S+) img/s$")
SUMMARY = re.compile(r"^Summary: train\.loss : (\S+)  train\.total_ips : (\S+) img/s$")


def parse_dll(text: str) -> dict:
    """Split workload stdout into the parameter dict, iteration rows and the summary."""
    params, iters, summary = None, [], None
    for raw in text.splitlines():
        m = DLL.match(raw)
        assert m, f"non-DLL line on stdout: {raw!r}"
        t = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
        rest = m.group(2)
        if rest.startswith("PARAMETER "):
            assert params is None and not iters, "PARAMETER must come first, once"
            assert rest.endswith(" ") and "   " not in rest
            pairs = rest[len("PARAMETER "):].rstrip(" ").split("  ")
            params = dict(p.split(" : ", 1) for p in pairs)
        elif (mi := ITER.match(rest)):
            iters.append((int(mi.group(1)), t, float(mi.group(2)), float(mi.group(3))))
        elif (ms := SUMMARY.match(rest)):
            summary = (t, float(ms.group(1)), float(ms.group(2)))
        else:
            raise AssertionError(f"unexpected DLL line: {raw!r}")
    return {"params": params, "iters": iters, "summary": summary}


def run_workload(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "workloads.resnet", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240, **kw)


def check_run(out: dict, iterations: int, world: int) -> None:
    p = out["params"]
    assert p["arch"] == "resnet50" and p["batch_size"] == "4" and p["precision"] == "fp32"
    assert p["amp"] == "False" and p["world_size"] == str(world)
    assert p["global_batch_size"] == str(4 * world)
    assert p["num_nodes"] == "1" and p["gpus_per_node"] == str(world)
    assert p["channels_last"] == "True" and p["compile"] == "False"
    assert p["framework"] == "PyTorch" and p["torch_version"] == torch.__version__
    assert p["device"] == "cpu" and p["tf32"] == "False" and p["iterations"] == str(iterations)
    assert int(p["num_parameters"]) > 0 and int(p["macs_per_image"]) > 0
    steps = [r[0] for r in out["iters"]]
    assert steps == list(range(1, iterations + 1))
    times = [r[1] for r in out["iters"]]
    assert all(b > a for a, b in zip(times, times[1:], strict=False)), times
    assert all(math.isfinite(r[2]) for r in out["iters"])
    assert all(r[3] > 0 for r in out["iters"])
    t_sum, loss, ips = out["summary"]
    assert t_sum >= times[-1] and math.isfinite(loss) and ips > 0
    assert loss == out["iters"][-1][2]
    # the Summary's img/s is the timestamp window after iteration 1 (run shorter than warm-up);
    # printed timestamps carry microseconds, the summary used the unrounded clock
    expect = 4 * world * (iterations - 1) / (times[-1] - times[0])
    assert ips == pytest.approx(expect, rel=0.02)


# --- DLL line shapes --------------------------------------------------------------------------

def test_line_shapes_follow_dllogger_stdout():
    t = datetime(2026, 11, 21, 10, 0, 0, 123456).timestamp()
    assert dllog.iteration_line(t, 0, 7, 6.935041, 1200.104) == (
        "DLL 2026-11-21 10:00:00.123456 - Epoch: 0 Iteration: 7  train.loss : 6.93504  "
        "train.total_ips : 1200.10 img/s")
    assert dllog.parameter_line(t, {"arch": "resnet50", "amp": True, "seed": None}) == (
        "DLL 2026-11-21 10:00:00.123456 - PARAMETER arch : resnet50  amp : True  seed : None ")
    assert dllog.summary_line(t, 1.0, 5.0, 1234.5).endswith(
        "- Summary: train.loss : 1.00000  train.total_ips : 5.00 img/s "
        "train.memory_max_allocated : 1234.50 MiB")
    assert dllog.summary_line(t, 1.0, 5.0, None).endswith("train.total_ips : 5.00 img/s")


def test_timestamps_always_carry_microseconds():
    t = datetime(2026, 1, 2, 3, 4, 5).timestamp()
    assert dllog.timestamp(t) == "2026-01-02 03:04:05.000000"


def test_parameter_values_are_single_tokens_or_words():
    assert dllog.value_text("NVIDIA  H200\n") == "NVIDIA H200"
    assert dllog.value_text("") == "None"
    assert dllog.value_text(3.0517578125e-05) == "3.0517578125e-05"
    assert dllog.value_text(float("nan")) == "nan"


# --- options and environment ------------------------------------------------------------------

def test_option_defaults():
    a = parse_args([])
    assert (a.arch, a.precision, a.batch_size, a.iterations, a.print_freq) == (
        "resnet50", "amp", 256, 150, 1)
    assert (a.image_size, a.width, a.num_classes, a.warmup_iterations) == (224, 64, 1000, 20)
    assert a.channels_last and a.cudnn_benchmark and a.tf32 and not a.compile
    assert a.static_graph and a.gradient_as_bucket_view and not a.broadcast_buffers
    assert (a.device, a.dist_backend, a.optimizer_impl) == ("auto", "auto", "auto")
    assert not parse_args(["--compile"]).static_graph
    assert parse_args(["--compile", "--static-graph"]).static_graph
    assert not parse_args(["--no-channels-last"]).channels_last
    # the DLPerf layout's spellings, as a campaign may pass them
    assert parse_args(["--precision", "fp16", "--arch", "r50"]).precision == "amp"
    assert parse_args(["--arch", "R50"]).arch == "resnet50"
    t = parse_args(["--precision", "tf32", "--no-tf32"])
    assert t.precision == "tf32" and t.tf32


@pytest.mark.parametrize("bad", [["--batch-size", "0"], ["--precision", "fp8"], ["--arch", "vgg16"],
                                 ["--image-size", "4"], ["--compile-mode", "fast"]])
def test_bad_options_exit_2(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(bad)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_dist_env_from_torchrun_variables():
    env = {"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4",
           "GROUP_WORLD_SIZE": "2"}
    assert DistEnv.from_env(env) == DistEnv(5, 8, 1, 4, 2)
    assert DistEnv.from_env({}) == DistEnv(0, 1, 0, 1, 1)
    # no GROUP_WORLD_SIZE: nodes from the sizes
    assert DistEnv.from_env({"RANK": "0", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}).num_nodes == 2
    with pytest.raises(WorkloadError, match="RANK=4"):
        DistEnv.from_env({"RANK": "4", "WORLD_SIZE": "2"})
    with pytest.raises(WorkloadError, match="not an integer"):
        DistEnv.from_env({"WORLD_SIZE": "two"})


def test_summary_window():
    assert summary_window(150, 20) == 20
    assert summary_window(6, 20) == 1
    assert summary_window(1, 20) == 0
    assert summary_window(21, 20) == 20


@pytest.mark.no_gpu
def test_asking_for_cuda_without_it_fails_clearly(capsys):
    assert main(["--device", "cuda", "--iterations", "1"]) == 1
    err = capsys.readouterr().err
    assert "--device cuda" in err and "is_available() is False" in err


def test_bf16_run_does_not_claim_fp16_amp():
    s = build(parse_args([*TINY, "--precision", "bf16"]), DistEnv())
    p = parameters(s)
    assert p["bf16"] is True and "amp" not in p and p["precision"] == "bf16"
    assert s.scaler is None and s.autocast_dtype == torch.bfloat16
    p = parameters(build(parse_args([*TINY, "--precision", "amp"]), DistEnv()))
    assert p["amp"] is True and p["bf16"] is False
    s = build(parse_args([*TINY, "--precision", "tf32"]), DistEnv())
    assert "amp" not in parameters(s) and s.autocast_dtype is None and s.scaler is None


# --- real runs --------------------------------------------------------------------------------

def in_process(args: list[str]) -> dict:
    buf = io.StringIO()
    assert train(parse_args(args), DistEnv(), buf) == 0
    return parse_dll(buf.getvalue())


def test_amp_run_survives_skipped_first_steps_and_prints_every_third():
    # GradScaler skips the first steps (inf gradients at scale 65536); the fused SGD's
    # momentum buffers must not keep uninitialised memory through them (NaN weights otherwise)
    out = in_process([*TINY, "--precision", "amp", "--iterations", "14", "--print-freq", "3",
                      "--warmup-iterations", "3", "--lr", "0.005"])
    assert out["params"]["amp"] == "True" and out["params"]["optimizer_impl"] == "fused"
    assert [r[0] for r in out["iters"]] == [3, 6, 9, 12, 14]  # every 3rd and the last
    losses = [r[2] for r in out["iters"]]
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0] - 0.5, losses
    t3, t14 = out["iters"][0][1], out["iters"][-1][1]
    assert out["summary"][2] == pytest.approx(4 * 11 / (t14 - t3), rel=0.02)


def test_momentum_buffers_start_at_zero():
    s = build(parse_args(TINY), DistEnv())
    bufs = [s.optimizer.state[p]["momentum_buffer"] for p in s.model.parameters()]
    assert len(bufs) == 161 and all(int(b.count_nonzero()) == 0 for b in bufs)
    conv = s.model.conv1.weight
    assert s.optimizer.state[conv]["momentum_buffer"].is_contiguous(
        memory_format=torch.channels_last)


def test_compiled_run_prints_the_same_shape():
    out = in_process([*TINY, "--iterations", "3", "--compile", "--compile-backend", "eager"])
    assert out["params"]["compile"] == "True" and out["params"]["compile_backend"] == "eager"
    assert [r[0] for r in out["iters"]] == [1, 2, 3]


def test_nonfinite_loss_exits_3(capsys):
    assert main([*TINY, "--image-size", "16", "--width", "2", "--iterations", "2",
                 "--lr", "1e30"]) == 3
    assert "final loss" in capsys.readouterr().err


@pytest.mark.slow
def test_single_process_run_prints_dll_lines():
    proc = run_workload(TINY)
    assert proc.returncode == 0, proc.stderr
    out = parse_dll(proc.stdout)
    check_run(out, 6, 1)
    assert out["params"]["distributed"] == "False" and out["params"]["dist_backend"] == "None"


@pytest.mark.slow
def test_torchrun_two_processes_gloo(tmp_path):
    torchrun = Path(sys.executable).parent / "torchrun"
    assert torchrun.exists(), f"{torchrun} missing: torch is installed without its scripts"
    logs = tmp_path / "logs"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [str(torchrun), "--standalone", "--nproc_per_node=2", "--log-dir", str(logs),
         "--redirects", "1", "-m", "workloads.resnet", *TINY],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rank_out = {int(p.parent.name): p.read_text() for p in logs.rglob("stdout.log")}
    assert sorted(rank_out) == [0, 1]
    assert "DLL " not in rank_out[1]  # only global rank 0 prints
    out = parse_dll(rank_out[0])
    check_run(out, 6, 2)
    p = out["params"]
    assert p["distributed"] == "True" and p["dist_backend"] == "gloo"
    assert p["ddp_static_graph"] == "True" and p["ddp_gradient_as_bucket_view"] == "True"

    # the suite's DLL reader takes the log as a campaign would save it
    from analysis.collect import parse_paths

    saved = tmp_path / "campaign" / "1n2g" / "resnet50_b4_fp32_1.log"
    saved.parent.mkdir(parents=True)
    saved.write_text(rank_out[0])
    result = parse_paths([tmp_path / "campaign"])
    assert result.problems.empty, result.problems.to_string()
    run = result.runs.iloc[0]
    assert run["family"] == "dll_pytorch" and run["model"] == "resnet50"
    assert run["precision"] == "fp32" and run["batch_size_per_device"] == 4
    assert run["num_devices"] == 2 and run["global_batch_size"] == 8
    obs = result.observations
    train_tp = obs[(obs["phase"] == "train") & (obs["metric"] == "throughput")]
    assert train_tp["step"].astype(int).tolist() == list(range(1, 7))
    assert train_tp["value"].tolist() == pytest.approx([r[3] for r in out["iters"]], abs=0.006)


_DDP_AT_FINISH = """
import gc, weakref, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from workloads import dist as wdist
dist.init_process_group("gloo", rank=0, world_size=1)
gc.disable()  # the collector runs when it pleases: here, not before finish()
def run():
    model = DDP(torch.nn.Linear(4, 4))
    model(torch.randn(2, 4)).sum().backward()
    return weakref.ref(model)
model = run()
print("kept by its cycles:", model() is not None)
wdist.finish()
print("alive at destroy:", model() is not None)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_finish_collects_ddp_before_the_group_is_destroyed(tmp_path):
    """A DDP module outlives its function (reference cycles) until a collection; left to
    the interpreter's exit its reducer met gloo half torn down: a finished two-rank run
    aborted (-6, 'terminate called without an active exception') in one fresh-clone CI run.
    finish() collects before destroying the group."""
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()),
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", _DDP_AT_FINISH], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["kept by its cycles: True", "alive at destroy: False"]
