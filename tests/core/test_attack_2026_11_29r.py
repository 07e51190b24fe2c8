"""Inputs of an eleventh attack on what a Megatron log states: the real Megatron-DeepSpeed
log of the test bed behind launcher tags holding ``[`` (torchrun's ``[rank0]: ``, a host
name's ``[host-a01] ``), its printed TFLOP/s cut by the ratio between two of Megatron-LM's
FLOPs counts, and a grouped-query, gated-MLP model's TFLOP/s. Built in tmp_path."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.problems import strict_failures
from analysis.stats.summary import summarize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edited_runs import megatron_folder  # noqa: E402


def _scaled(text: str, factor: float) -> str:
    """Every elapsed time and every timers value x `factor` (one clock cut throughout)."""
    text = re.sub(r"(elapsed time per iteration \(ms\): )([\d.]+)",
                  lambda m: f"{m[1]}{float(m[2]) * factor:.1f}", text)
    return re.sub(r"(?m)^(time \(ms\) \|.*)$", lambda m: re.sub(
        r"(: )([\d.]+)", lambda n: f"{n[1]}{float(n[2]) * factor:.2f}", m[1]), text)


def _tagged(tag: str, factor: float):
    return lambda text: "\n".join(tag + line if line else line
                                  for line in _scaled(text, factor).split("\n"))


def _row(folder: Path) -> dict:
    row = summarize(parse_paths([folder], cache=False), method="dlperf").iloc[0]
    return {k: row[k] for k in ("precision", "batch_size_per_device", "case", "latency_ms",
                                "tflops_per_gpu", "throughput_median")}


@pytest.mark.parametrize("tag", ["[rank0]: ", "[host-a01] ", "worker-0: ", "   0: "])
def test_a_tagged_megatron_deepspeed_log_is_read_as_the_untagged_one(tmp_path, tag):
    """Behind ``[rank0]: `` the log gave its figure without precision, batch, case or TFLOP/s
    and no problem: neither its argument dump nor DeepSpeed's step= stamps were read."""
    (tmp_path / "plain").mkdir()
    plain = _row(megatron_folder(tmp_path / "plain", lambda text: text))
    tagged = megatron_folder(tmp_path, _tagged(tag, 1.0))
    assert _row(tagged) == plain and plain["case"] and plain["precision"] == "amp"
    assert not strict_failures(parse_paths([tagged], cache=False).problem_list())


@pytest.mark.parametrize("tag", ["[rank0]: ", "[host-a01] "])
def test_a_cut_clock_behind_a_bracketed_tag_fails_strict(tmp_path, tag):
    """Elapsed and timers x 0.8 behind ``[rank0]: `` gave 553.15 samples/s for 442.60
    (+25 %) with 0 problems: DeepSpeed's step= stamps went unread."""
    folder = megatron_folder(tmp_path, _tagged(tag, 0.8))
    reasons = parse_paths([folder], cache=False).problems["reason"].tolist()
    assert any(re.search(r"is 0\.80\d times the spacing of DeepSpeed's stamped step= lines", r)
               for r in reasons), reasons
    assert main(["summarize", "--method", "dlperf", "--strict", str(folder)]) != 0
