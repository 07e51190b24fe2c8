"""The CPU-runnable parts of benchmarks/workload_gpu.py (the lead runs it on the GPU machine)."""

from __future__ import annotations

import importlib.util
import json
from datetime import datetime
from pathlib import Path

import pytest

from workloads.resnet import dllog
from workloads.resnet.resnet import resnet50

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wg():
    spec = importlib.util.spec_from_file_location("workload_gpu", ROOT / "benchmarks" / "workload_gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fake_log(n: int, dt: float = 0.04, gb: int = 256) -> str:
    t0 = datetime(2026, 11, 21, 10, 0, 0).timestamp()
    lines = [dllog.parameter_line(t0, {"arch": "resnet50", "global_batch_size": gb,
                                       "world_size": 1, "device_name": "NVIDIA H200"})]
    lines.append("some warning on stdout")
    for i in range(1, n + 1):
        lines.append(dllog.iteration_line(t0 + 1 + i * dt, 0, i, 7.0 - i / 100, gb / dt))
    lines.append(dllog.summary_line(t0 + 2 + n * dt, 5.5, 6400.0, 12345.5))
    return "\n".join(lines) + "\n"


def test_parse_dll_reads_the_workload_lines(wg):
    out = wg.parse_dll(fake_log(30))
    assert out["parameters"]["device_name"] == "NVIDIA H200"
    assert out["parameters"]["global_batch_size"] == "256"
    assert sorted(out["iterations"]) == list(range(1, 31))
    assert out["summary"]["memory_max_allocated_mib"] == 12345.5
    assert out["summary"]["total_ips"] == 6400.0
    assert len(out["dll_lines"]) == 32  # the non-DLL line is left out


def test_window_throughput_uses_the_dlperf_window(wg):
    its = wg.parse_dll(fake_log(150, dt=0.04))["iterations"]
    tp = wg.window_throughput(its, 256, 25, 125)
    assert (tp["start"], tp["end"]) == (25, 125)
    assert tp["img_per_s"] == pytest.approx(256 * 100 / 4.0, rel=1e-4)
    short = wg.window_throughput(wg.parse_dll(fake_log(60))["iterations"], 256, 25, 125)
    assert (short["start"], short["end"]) == (25, 60)
    tiny = wg.window_throughput(wg.parse_dll(fake_log(10))["iterations"], 256, 25, 125)
    assert (tiny["start"], tiny["end"]) == (2, 10)
    assert wg.window_throughput({}, 256, 25, 125) is None
    assert wg.window_throughput({1: (0.0, 1.0, 1.0)}, 256, 25, 125) is None


def test_compare_models_passes_on_a_copy_and_fails_on_a_different_model(wg):
    good = wg.compare_models(resnet50(width=8), resnet50(width=8), image_size=64,
                             expected_params=None, expected_macs=None)
    assert all(c["ok"] for c in good), good
    assert {c["check"] for c in good} >= {"parameter_count", "parameter_shapes_in_order",
                                          "traced_layers_in_order", "macs", "same_outputs_eval"}
    bad = wg.compare_models(resnet50(width=8), resnet50(width=8, num_classes=10), image_size=64,
                            expected_params=None, expected_macs=None)
    failed = {c["check"] for c in bad if not c["ok"]}
    assert {"parameter_count", "parameter_shapes_in_order", "load_reference_state_dict"} <= failed


def test_commands_and_plan(wg):
    args = wg.build_parser().parse_args(["--out", "x.json", "--skip-compile"])
    assert args.iterations == 150 and args.budget_s < 240
    plan = dict(wg.plan_cases(list(wg.CASES), 1, args))
    assert plan["amp-eager"] == "" and plan["fp32-eager"] == ""
    assert plan["amp-compile"] == "--skip-compile" and "2+ GPUs" in plan["amp-eager-multi"]
    cmd = wg.workload_command("py", "amp-eager-multi", args, 4)
    assert cmd[:5] == ["py", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=4"]
    assert cmd[5:7] == ["-m", "workloads.resnet"] and "--compile" not in cmd
    cmd = wg.workload_command("py", "fp32-compile", args, 1)
    i = cmd.index("--batch-size")
    assert cmd[i + 1] == "128" and cmd[cmd.index("--compile-mode") + 1] == "default"
    env = wg.child_env("/somewhere")
    assert env["NCCL_NVLS_ENABLE"] == "0" and env["PYTHONPATH"].startswith("/somewhere")


@pytest.mark.slow
def test_smoke_run_writes_json(wg, tmp_path):
    out = tmp_path / "r.json"
    rc = wg.main(["--out", str(out), "--smoke", "--cases", "fp32-eager,amp-compile",
                  "--skip-compile", "--iterations", "12", "--window-start", "4",
                  "--window-end", "10"])
    result = json.loads(out.read_text())
    assert rc == 0, json.dumps(result, indent=1)[:3000]
    assert result["ok"] and all(c["ok"] for c in result["architecture"]["checks"])
    (run,) = result["runs"]
    assert run["case"] == "fp32-eager" and run["returncode"] == 0
    assert run["window"]["start"] == 4 and run["window"]["end"] == 10 and run["img_per_s"] > 0
    assert run["parameters"]["precision"] == "fp32" and len(run["dll_lines"]) == 14
    assert result["skipped"] == [{"case": "amp-compile", "reason": "--skip-compile"}]
