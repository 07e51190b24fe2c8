"""Inputs of an eleventh attack on what a log states beside its figure: the suite's own GPT
table logs (``workloads.gpt``) with latency and throughput cut alike beside the printed
``model_tflops_per_gpu`` column, built in tmp_path from the bundled data/raw_logs/gpt_4gpu
runs (66.41 samples/s, 516 TFLOP/s per GPU); LiBai's running-mean time and throughput cut
alike beside the lines' year-less stamps (the test bed's stdout, 64.0 samples/s)."""

from __future__ import annotations

import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from analysis.changes.sources import started_at
from analysis.cli import main
from analysis.collect import parse_paths
from analysis.problems import strict_failures
from analysis.stats import run_throughput

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


# --- LiBai: the printed running means held to the lines' year-less stamps --------------------

_LIBAI = _REPO / "tests" / "data" / "libai" / "gpt2_stdout" / "1n8g" / "gpt2_b4_amp_1.log"
_STAMP = re.compile(r"\[(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d) ")


def _libai(tmp_path: Path, factor: float, shift_to: datetime | None = None) -> Path:
    """The test bed's LiBai stdout (32 samples an iteration at 0.5 s by its stamps) with
    every ``time:`` and the closing speed x `factor`, ``total_throughput`` / `factor`; with
    `shift_to`, every stamp moved by one offset so the first is at `shift_to`."""
    text = _LIBAI.read_text()
    text, n = re.subn(r"(time: )([\d.]+)( s/iter  data)",
                      lambda m: f"{m[1]}{float(m[2]) * factor:.4f}{m[3]}", text)
    assert n == 11
    text, n = re.subn(r"(total_throughput: )([\d.]+)",
                      lambda m: f"{m[1]}{float(m[2]) / factor:.2f}", text)
    assert n == 11
    text, n = re.subn(r"\(([\d.]+) s / it\)", lambda m: f"({float(m[1]) * factor:.4f} s / it)",
                      text)
    assert n == 1
    if shift_to is not None:
        first = _STAMP.search(text)
        offset = shift_to - datetime(2022, int(first[1]), int(first[2]), int(first[3]),
                                     int(first[4]), int(first[5]))

        def moved(m: re.Match) -> str:
            t = datetime(2022, *(int(x) for x in m.groups())) + offset
            return t.strftime("[%m/%d %H:%M:%S ")
        text = _STAMP.sub(moved, text)
    out = tmp_path / "libai" / "1n8g"
    out.mkdir(parents=True)
    (out / _LIBAI.name).write_text(text)
    return out.parent


def _summary(folder: Path, method: str) -> tuple[float, list[str]]:
    result = parse_paths([folder], cache=False)
    runs = run_throughput(result, method)
    kinds = [k for k in runs["problem_kind"].fillna("").tolist() if k]
    kinds += [p.kind for p in strict_failures(result.problem_list())]
    return float(runs["throughput"].iloc[0]), kinds


@pytest.mark.parametrize("method", ["reported", "window"])
def test_libai_time_and_throughput_cut_beside_their_stamps_is_flagged(tmp_path, method):
    """``time:`` x 0.8 and ``total_throughput:`` x 1.25 gave 80.0 samples/s for 64.0 with 0
    problems: the stamps (100 s for 200 iterations) were dropped for want of a year. Now
    they time the window (64.0) and the printed figures are held to them."""
    folder = _libai(tmp_path, 0.8)
    figure, kinds = _summary(folder, method)
    assert "figure_mismatch" in kinds, kinds
    assert figure == pytest.approx(80.0 if method == "reported" else 64.0, rel=0.001)
    assert main(["summarize", "--method", method, "--strict", str(folder)]) != 0


def test_libai_stamps_across_new_year_time_the_run_and_claim_no_date(tmp_path):
    """The healthy log with its stamps moved across Dec 31 -> Jan 1: the window is timed by
    them (64.0 samples/s, not the 63.9987 of the printed running means), nothing is flagged,
    and the year-less stamps are no campaign start."""
    folder = _libai(tmp_path, 1.0, shift_to=datetime(2022, 12, 31, 23, 59, 0))
    figure, kinds = _summary(folder, "window")
    assert figure == 64.0 and not kinds, (figure, kinds)
    assert started_at(parse_paths([folder], cache=False).observations) == ""
