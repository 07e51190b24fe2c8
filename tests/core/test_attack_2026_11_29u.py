"""Inputs of an eleventh attack on what a log states beside its figure: the suite's own GPT
table logs (``workloads.gpt``) with latency and throughput cut alike beside the printed
``model_tflops_per_gpu`` column, built in tmp_path from the bundled data/raw_logs/gpt_4gpu
runs (66.41 samples/s, 516 TFLOP/s per GPU)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.problems import strict_failures

_REPO = Path(__file__).resolve().parents[2]
_GPT = _REPO / "data" / "raw_logs" / "gpt_4gpu" / "1n1g"
_ROW = re.compile(r"(?m)^(\| \d+ +\| [^|]+\| [^|]+\| )([\d.]+)( +\| )([\d.]+)( +\|)")


def _gpt_table(tmp_path: Path, latency: float, throughput: float) -> Path:
    """The bundled 1n1g runs with every table row's latency x `latency` and throughput x
    `throughput`, the TFLOP/s column untouched."""
    out = tmp_path / "gpt" / "1n1g"
    out.mkdir(parents=True)
    for src in sorted(_GPT.glob("pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l16_h1536_nh16_*")):
        if src.suffix != ".log":
            shutil.copy(src, out / src.name)
            continue
        text, n = _ROW.subn(lambda m: f"{m[1]}{float(m[2]) * throughput:.5f}{m[3]}"
                                      f"{float(m[4]) * latency:.5f}{m[5]}", src.read_text())
        assert n == 20
        (out / src.name).write_text(text)
    return out.parent


def _ratios(folder: Path) -> list[float]:
    problems = parse_paths([folder], cache=False).problems
    return [float(m[1]) for r in problems[problems["kind"] == "figure_mismatch"]["reason"]
            if (m := re.search(r"is ([\d.]+) times the [\d.,]+ ms its own model_tflops_per_gpu", r))]


def test_gpt_table_latency_and_throughput_cut_beside_printed_tflops_fails_strict(tmp_path):
    """Latency x 0.8 and throughput x 1.25 (consistent with each other) gave 83.01 samples/s
    and 645 TFLOP/s per GPU for 66.41 / 516 with 0 problems: the printed TFLOP/s column,
    FLOPs by the stated formula over the same timer's latency, now holds them."""
    folder = _gpt_table(tmp_path, 0.8, 1.25)
    ratios = _ratios(folder)
    assert len(ratios) == 3 and all(r == pytest.approx(0.8, abs=0.002) for r in ratios), ratios
    assert main(["summarize", "--method", "dlperf", "--strict", str(folder)]) != 0


def test_gpt_table_as_written_is_no_flag(tmp_path):
    """The bundled runs (their latency and TFLOP/s of one timer) raise nothing."""
    folder = _gpt_table(tmp_path, 1.0, 1.0)
    assert not _ratios(folder)
    assert not strict_failures(parse_paths([folder], cache=False).problem_list())
