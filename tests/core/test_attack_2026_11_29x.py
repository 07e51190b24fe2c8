"""Inputs of a thirteenth attack: the real Megatron-DeepSpeed log in Megatron-LM core's dated
shape (``[2022-10-29 00:42:31] iteration ...``, DeepSpeed's step= stamps moved onto the
iteration lines) with nothing before the date, and behind a kubectl ``--prefix`` tag of over
60 characters; the test bed's LiBai stdout moved across Feb 28 of a common year. Built in
tmp_path."""

from __future__ import annotations

import re
import sys
from datetime import datetime
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.problems import strict_failures
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edited_runs import megatron_folder  # noqa: E402
from test_attack_2026_11_29r import _scaled  # noqa: E402
from test_attack_2026_11_29u import _libai  # noqa: E402

_STEP = re.compile(r"(?m)^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+\] \[INFO\] "
                   r"\[logging\.py:\d+:log_dist\] \[Rank 0\] step=(\d+),")
_KUBECTL = "[pod/gpt-pretrain-worker-0-abcdef/pytorch-container-with-a-long-name] "


def _core_dated(factor: float, tag: str = ""):
    """The log as Megatron-LM core prints it: each iteration line led by the date DeepSpeed's
    step= line of that iteration states (those lines dropped), elapsed and timers x `factor`,
    every line behind `tag`."""
    def edit(text: str) -> str:
        dates = {int(m[2]): m[1] for m in _STEP.finditer(text)}
        text = re.sub(r"(?m)^.*\[Rank 0\] step=.*\n", "", text)
        text = re.sub(r"(?m)^ iteration +(\d+)/",
                      lambda m: f"[{dates[int(m[1])]}] {m[0].lstrip()}", text)
        text = _scaled(text, factor)
        return "\n".join(tag + line if line else line for line in text.split("\n"))
    return edit


@pytest.mark.parametrize("tag", ["", _KUBECTL])
def test_a_cut_clock_in_core_dated_lines_fails_strict(tmp_path, tag):
    """Elapsed and timers x 0.8 in core's dated lines with no tag before the date gave
    547.95 samples/s for 438.36 (+25 %) with 0 problems: the date was taken for a launcher's
    tag and stripped from every line, and with it the stamps; a kubectl tag over 60
    characters was not read as a tag at all."""
    folder = megatron_folder(tmp_path, _core_dated(0.8, tag))
    row = run_throughput(parse_paths([folder], cache=False), "dlperf").iloc[0]
    assert row["problem_kind"] == "figure_mismatch", row["problem"]
    assert main(["summarize", "--method", "dlperf", "--strict", str(folder)]) == 3


@pytest.mark.parametrize("tag", ["", _KUBECTL])
def test_core_dated_lines_as_printed_are_read_whole(tmp_path, tag):
    """The same lines uncut: the exact figure with the run's precision and case, no problem."""
    folder = megatron_folder(tmp_path, _core_dated(1.0, tag))
    result = parse_paths([folder], cache=False)
    row = run_throughput(result, "dlperf").iloc[0]
    assert row["throughput"] == pytest.approx(438.356, rel=1e-4)
    assert row["precision"] == "amp"
    assert not strict_failures(result.problem_list())


@pytest.mark.parametrize("method", ["window", "reported"])
def test_libai_stamps_across_feb_28_of_a_common_year_are_ten_seconds(tmp_path, method):
    """LiBai stamps were read in a leap year, so Feb 28 23:59:55 -> Mar 1 00:00:05 of 2022
    read as a day and 10 s: no figure by the window method ("a clock step") and a false
    figure_mismatch by the reported one for a healthy run of 64 samples/s."""
    folder = _libai(tmp_path, 1.0, datetime(2022, 2, 28, 23, 59, 0))
    result = parse_paths([folder], cache=False)
    row = run_throughput(result, method).iloc[0]
    assert row["throughput"] == pytest.approx(64.0, rel=1e-3)
    assert row["problem_kind"] == ""
    assert not strict_failures(result.problem_list())
