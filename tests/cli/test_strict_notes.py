"""`--strict` fails on what leaves a figure in doubt, not on notes of what was left out."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli._helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real"
ENERGY_RUN = ROOT / "tests" / "data" / "energy_h200" / "1n1g"


def test_a_short_real_log_given_its_own_closing_figure_passes_strict(dlperf_exe):
    # 58 training lines: too few for the DLPerf rule, which falls back to the log's Summary
    log = REAL / "paddle_perf_pytorch_resnet" / "pytorch_gpu8_amp_bs256.txt"
    proc = run_cli(dlperf_exe, "summarize", log, "--strict", "--format", "csv",
                   "--meta", "num_nodes=1,gpus_per_node=8,batch_size_per_device=256")
    assert proc.returncode == 0, proc.stderr
    assert "10515.76" in proc.stdout
    assert "method_fallback" in proc.stderr  # still listed


def test_a_run_the_method_gives_no_figure_still_fails_strict(dlperf_exe):
    log = REAL / "paddle_perf_pytorch_resnet" / "pytorch_gpu8_amp_bs256.txt"
    proc = run_cli(dlperf_exe, "summarize", log, "--strict", "--method", "window",
                   "--meta", "num_nodes=1,gpus_per_node=8,batch_size_per_device=256")
    assert proc.returncode == 3, proc.stderr
    assert "truncated" in proc.stderr


def test_another_gpus_samples_left_out_pass_strict(dlperf_exe, tmp_path):
    dest = tmp_path / "1n1g"
    dest.mkdir()
    for f in ENERGY_RUN.glob("resnet50_b256_amp_1.*"):
        shutil.copy(f, dest / f.name)
    csv = dest / "resnet50_b256_amp_1.gpu.csv"
    lines = csv.read_text().splitlines()
    # a sampler that watched the whole node: another job on GPU 1 at the same instants
    # (nvidia-smi prints every GPU at each instant)
    rows = [lines[0]]
    for ln in lines[1:]:
        rows += [ln, ln.split(",")[0] + ", 1, 70000 MiB, 143771 MiB, 100 %, 690.00 W"]
    csv.write_text("\n".join(rows) + "\n")
    proc = run_cli(dlperf_exe, "summarize", tmp_path, "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "foreign_gpu_sample" in proc.stderr


def test_a_problem_beside_the_note_still_fails_strict(dlperf_exe, tmp_path):
    dest = tmp_path / "1n1g"
    shutil.copytree(ENERGY_RUN, dest)
    log = next(dest.glob("resnet50_b256_amp_1.log"))
    log.write_text(log.read_text() + "DLL 2026-11-28 13:00:00.000000 - Epoch: 0 Iteration: 9  "
                   "train.loss : nan  train.total_ips : nan img/s\n")
    proc = run_cli(dlperf_exe, "summarize", tmp_path, "--strict")
    assert proc.returncode == 3, proc.stderr
