"""Inputs of a ninth attack on what a log states: a done marker writing its node's exit
status as a float, a Megatron-DeepSpeed log whose elapsed time per iteration disagrees with
its own DeepSpeed step stamps, a Megatron batch altered where DeepSpeed's micro-batch and the
launcher's command line still state the real one, and a stated batch whose printed rates
imply another on every interval alike. Built in tmp_path from the bundled ResNet-50
campaign (data/raw_logs/rn50_4gpu: 1 node of 4 GPUs, batch 128) and the real
Megatron-DeepSpeed log of the test bed."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.problems import strict_failures
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edited_runs import RN50, STEM, megatron_folder, run_three_marked  # noqa: E402

# --- a done marker writing its node's exit status as a float ---------------------------------

@pytest.mark.parametrize("rc, runs", [(1.0, 2), (137.0, 2), (0.0, 3), ("1.0", 2), (True, 2),
                                      ("error", 2), ([1], 2), ({"code": 1}, 2), ("0", 3),
                                      ({"code": 0}, 3)])
def test_a_done_marker_node_rc_written_as_a_float_is_read_as_its_exit_status(
        tmp_path, rc, runs):
    """A node rc of 1.0 (a tool writing numbers as floats), "1.0", true, a word, or a list or
    mapping holding a non-zero code counted the run: 3 repeats."""
    def with_rc(marker: dict) -> dict:
        marker["nodes"][0]["rc"] = rc
        return marker
    run_three_marked(tmp_path, with_rc)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == runs
    strays = list(result.problems[result.problems["kind"] == "stray_log"]["reason"])
    if runs == 2:
        assert len(strays) == 1 and f"nodes[0].rc {json.dumps(rc)}" in strays[0]
    else:
        assert not strays


# --- a Megatron elapsed time held to DeepSpeed's stamped step lines ---------------------------

def _elapsed_times(factor: float):
    def edit(text: str) -> str:
        text, n = re.subn(r"(elapsed time per iteration \(ms\): )([\d.]+)",
                          lambda m: f"{m.group(1)}{float(m.group(2)) * factor:.1f}", text)
        assert n == 12
        return text
    return edit


@pytest.mark.parametrize("factor", [0.8, 1.1])
def test_a_megatron_elapsed_time_off_its_deepspeed_step_stamps_fails_strict(tmp_path, factor):
    """Every elapsed time x 0.8 gave 547.95 samples/s (+25 %) with 0 problems, though
    DeepSpeed's stamped step=N lines in the same log space its iterations 583.8 ms apart."""
    folder = megatron_folder(tmp_path, _elapsed_times(factor))
    result = parse_paths([folder], cache=False)
    reasons = result.problems[result.problems["kind"] == "figure_mismatch"]["reason"]
    assert sum(f"is {factor:.3f} times the spacing of DeepSpeed's stamped step= lines" in r
               for r in reasons) == 1
    assert main(["summarize", "--method", "dlperf", "--strict", str(folder)]) != 0


def test_deepspeed_step_lines_behind_a_launcher_tag_are_read(tmp_path):
    """pdsh tags every line ``worker-0: ``: the step= lines were not read behind the tag, so
    every elapsed time x 0.92 gave 476.46 samples/s (+8.7 %) with 0 problems."""
    def edit(text: str) -> str:
        return "".join(f"worker-0: {line}"
                       for line in _elapsed_times(0.92)(text).splitlines(keepends=True))
    result = parse_paths([megatron_folder(tmp_path, edit)], cache=False)
    reasons = result.problems[result.problems["kind"] == "figure_mismatch"]["reason"]
    assert sum("is 0.920 times the spacing of DeepSpeed's stamped step= lines" in r
               for r in reasons) == 1


def test_a_megatron_elapsed_time_within_its_step_stamps_is_no_flag(tmp_path):
    """The real log (elapsed 584 ms, stamps 583.8) and one 3 % off stay unflagged."""
    for factor in (1.0, 0.97):
        (tmp_path / str(factor)).mkdir()
        result = parse_paths([megatron_folder(tmp_path / str(factor), _elapsed_times(factor))],
                             cache=False)
        assert not strict_failures(result.problem_list()), factor


# --- a stated batch whose printed rates imply another on every interval alike ----------------

@pytest.mark.parametrize("per_gpu", [112, 120])
def test_a_batch_stated_low_whose_rates_imply_128_on_every_interval_fails_strict(
        tmp_path, per_gpu):
    """Run 1 of the bundled case (4 x 128) with its PARAMETER line saying 112 / 448 (a log
    alone) gave 10,217.77 img/s for 11,677 with only a rates_other_clock note: its printed
    rates and stamps imply 512 an iteration on every interval alike (the stamps' own clock),
    so the stated batch is what is off."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    text = (RN50 / f"{STEM}1.log").read_text()
    text, n = re.subn(r"batch_size : 128  global_batch_size : 512",
                      f"batch_size : {per_gpu}  global_batch_size : {per_gpu * 4}", text)
    assert n == 1
    (folder / f"resnet50_b{per_gpu}_fp32_1.log").write_text(text)
    result = parse_paths([tmp_path], cache=False)
    for method, df in run_throughputs(result, ("window", "dlperf")).items():
        row = df.iloc[0]
        assert row["problem_kind"] == "figure_mismatch", (method, row["problem"])
    assert main(["summarize", "--method", "window", "--strict", str(tmp_path)]) != 0


# --- a Megatron batch held to DeepSpeed's micro batch and the launcher's command line ---------

def _times(k: int):
    return lambda m: f"{m.group(1)}{int(m.group(2)) * k:>{len(m.group(2))}}"


def _batch_and_micro_ten_times(text: str) -> str:
    """Megatron's every statement of the global batch x 10, the dump's micro_batch_size x 10
    and DeepSpeed's train_batch_size print x 10: DeepSpeed's micro-batch print, its JSON echo
    and the launcher's command line left as they are (4 and 256)."""
    for field, n_ in (("global_batch_size \\.+ ", 1), ("micro_batch_size \\.+ ", 1),
                      ("\\[config\\.py:\\d+:print\\] +train_batch_size[ .]+", 1),
                      ("global batch size: +", 12), ("consumed samples: +", 12),
                      ("consumed tokens: +", 12)):
        text, n = re.subn(f"({field})(\\d+)", _times(10), text)
        assert n == n_, field
    return text


def test_a_megatron_batch_and_micro_batch_ten_times_the_launchers_fails_strict(tmp_path):
    """The global batch x 10 with the dump's micro batch 40 to match gave 4,383.56
    samples/s and 1,086 TFLOP/s per GPU with 0 problems: DeepSpeed's
    train_micro_batch_size_per_gpu print, its JSON echo and the launcher's cmd line say 4
    and 256."""
    folder = megatron_folder(tmp_path, _batch_and_micro_ten_times)
    result = parse_paths([folder], cache=False)
    [reason] = result.problems[result.problems["kind"] == "metadata_conflict"]["reason"]
    for said in ("DeepSpeed's JSON train_batch_size 256", "the launcher's --global-batch-size 256",
                 "DeepSpeed's train_micro_batch_size_per_gpu 4 (line",
                 "the launcher's --micro-batch-size 4 (line"):
        assert said in reason
    assert main(["summarize", "--method", "dlperf", "--strict", str(folder)]) != 0


@pytest.mark.parametrize("factor, flagged", [(0.8, True), (1.0, False)])
def test_a_megatron_elapsed_time_below_its_printed_parts_fails_strict(tmp_path, factor, flagged):
    """Without DeepSpeed's stamped lines, an elapsed time x 0.8 (467 ms) is still below the
    forward + backward + optimizer times (565 ms) the timers lines print for the same
    intervals, which no iteration can be; the real times (584 ms) are not."""
    def edit(text: str) -> str:
        text = re.sub(r"(?m)^.*log_dist\] \[Rank 0\] step=.*\n", "", _elapsed_times(factor)(text))
        assert "step=" not in text
        return text
    result = parse_paths([megatron_folder(tmp_path, edit)], cache=False)
    reasons = list(result.problems[result.problems["kind"] == "figure_mismatch"]["reason"])
    assert len(reasons) == flagged
    if flagged:
        assert "0.827 times the forward, backward and optimizer times" in reasons[0]
