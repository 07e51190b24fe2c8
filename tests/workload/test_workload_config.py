"""Our workloads print their whole configuration (every option as the run used it: compile,
parameter dtype, data-parallel implementation, …) in the argument dump the suite's parsers
read as a run's stated configuration, so that an eager and a compiled run placed as repeats
of one case are told apart (a flagged case) rather than averaged."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from analysis import parse_paths
from workloads.dist import DistEnv
from workloads.gpt.options import build_parser as gpt_parser
from workloads.resnet.options import build_parser as resnet_parser
from workloads.resnet.options import parse_args
from workloads.resnet.train import train

ROOT = Path(__file__).resolve().parents[2]
RESNET_TINY = ["--image-size", "32", "--width", "8", "--batch-size", "4", "--iterations", "4",
               "--precision", "fp32", "--device", "cpu"]
GPT_TINY = ["--num-layers", "2", "--hidden-size", "32", "--num-attention-heads", "4",
            "--seq-length", "16", "--vocab-size", "64", "--micro-batch-size", "2",
            "--global-batch-size", "4", "--train-iters", "4", "--device", "cpu",
            "--precision", "fp32"]
#: Options printed under another name (the DLE-style or Megatron-style key).
RESNET_NAMES = {"static_graph": "ddp_static_graph", "bucket_cap_mb": "ddp_bucket_cap_mb",
                "gradient_as_bucket_view": "ddp_gradient_as_bucket_view",
                "broadcast_buffers": "ddp_broadcast_buffers",
                "grad_compression": "ddp_grad_compression"}
GPT_NAMES = {"activation_checkpointing": "checkpoint_activations"}


def _options(parser) -> set[str]:
    return {a.dest for a in parser._actions if a.dest != "help"}


def _resnet_log(folder: Path, repeat: int, *extra: str) -> None:
    buf = io.StringIO()
    assert train(parse_args([*RESNET_TINY, *extra]), DistEnv(), buf) == 0
    (folder / f"resnet50_b4_fp32_{repeat}.log").write_text(buf.getvalue())


def test_resnet_states_every_option_and_an_eager_and_a_compiled_run_are_told_apart(tmp_path):
    folder = tmp_path / "logs" / "1n1g"
    folder.mkdir(parents=True)
    _resnet_log(folder, 1)
    _resnet_log(folder, 2, "--compile", "--compile-backend", "eager")
    result = parse_paths([str(tmp_path / "logs")])
    stated = dict(zip(result.runs["run_id"], result.runs["parameters"]))
    eager, compiled = stated["1n1g/resnet50_b4_fp32_1"], stated["1n1g/resnet50_b4_fp32_2"]
    missing = {RESNET_NAMES.get(o, o) for o in _options(resnet_parser())} - set(eager)
    assert not missing
    assert (eager["param_dtype"], eager["data_parallel_impl"], eager["compile"]) == \
        ("fp32", "none", "False")
    assert compiled["compile"] == "True" and compiled["compile_backend"] == "eager"
    proc = subprocess.run([sys.executable, "-m", "analysis", "summarize", str(tmp_path / "logs"),
                           "--method", "window", "--warmup", "1", "--measure", "2",
                           "--format", "json", "--all-columns"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    (row,) = json.loads(proc.stdout)
    # (tiny CPU runs may spread more than 5 % too: a second flag after this one)
    assert row["flags"].startswith(
        "configuration differs in compile, compile_backend, compile_mode")
    assert "mixed_configuration" in proc.stderr


def test_gpt_states_every_option(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "workloads.gpt", *GPT_TINY], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    log = tmp_path / "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz4_s16_l2_h32_nh4_1.log"
    log.write_text(proc.stdout)
    (stated,) = parse_paths([str(tmp_path)]).runs["parameters"]
    missing = {GPT_NAMES.get(o, o) for o in _options(gpt_parser())} - set(stated)
    assert not missing
    assert (stated["param_dtype"], stated["data_parallel_impl"], stated["compile"],
            stated["precision"], stated["device"]) == ("fp32", "ddp", "False", "fp32", "cpu")
