"""A clock step that the rates the lines print disprove: DLE PyTorch lines, batch 128 on 1
GPU at about 50 ms an iteration (2,560 img/s), each line printing the rate of its own
iteration by the program's clock, the stamps' clock stepped forward 0.5 s once, or back
0.04 s every 10 iterations. Printed rate x stamps gives the batch on every interval but
the stepped ones, yet the figures were kept at the stepped value (-9.1 %, +7.8 %), flagged
"the stated global batch or devices may not be what ran". A step back is a clock step and
nothing else: timed by the rates. A step forward cannot be told from a pause the program's
timer leaves out (a save no line names): flagged with both readings named, never retimed."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

FORWARD = {60: 0.5}
BACK = {n: -0.04 for n in range(30, 111, 10)}
#: The first and last iteration of each method's window (DLPerf's rule: Iterations 25 and
#: 125; the window method's 20 after a warm-up of 20, 100 measured).
WINDOWS = {"dlperf": (25, 125), "window": (20, 120)}


def _run(steps: dict[int, float], seed: int = 1, n: int = 150) -> tuple[list[str], np.ndarray]:
    """`n` iterations of 50 ms with 2 ms jitter, each line stamped to the microsecond by a
    clock that `steps` {iteration: seconds} moves from that iteration on, printing its own
    iteration's rate, and the closing summary DLE prints; the iterations' true ends."""
    took = 0.05 + np.random.default_rng(seed).normal(0.0, 0.002, n)
    end = 20 + np.cumsum(took)
    shift = np.cumsum([steps.get(i, 0.0) for i in range(1, n + 1)])
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1,
                       print_freq=1)]
    out += [S.train_line(S.START + timedelta(seconds=float(t + s)), 0, i, 128 / d)
            for i, (t, s, d) in enumerate(zip(end.tolist(), shift.tolist(), took.tolist()),
                                          start=1)]
    # the program's closing average, by its own clock, stamped as the last line
    out.append(out[-1].split(" - ")[0] + f" - Summary: train.loss : 6.2 None "
               f"train.total_ips : {128 * n / took.sum():.2f} images/s")
    return out, end


@pytest.mark.parametrize("steps, shift, first", [(BACK, "-0.36 s", 31)], ids=["back"])
@pytest.mark.parametrize("method", ["dlperf", "window"])
def test_intervals_the_clock_stepped_are_timed_by_their_printed_rates(tmp_path, method, steps,
                                                                      shift, first):
    """The figure is the run's true rate, unflagged; its method text names the stepped
    intervals and how they were timed."""
    text, end = _run(steps)
    S.write(tmp_path, text)
    row = run_throughputs(parse_paths([tmp_path], jobs=1), [method])[method].iloc[0]
    a, b = WINDOWS[method]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(128 * (b - a) / (end[b - 1] - end[a - 1]), rel=1e-4)
    assert "timed by their printed rates" in row["method"]
    assert f"ending at line(s) {first}" in row["method"] and f"by {shift} in all" in row["method"]


@pytest.mark.parametrize("method", ["dlperf", "window"])
def test_stamps_longer_than_the_rates_are_flagged_not_retimed(tmp_path, method):
    """Forward: a clock step or a pause the program's timer leaves out, the log cannot tell
    which; the figure is the stamps', flagged with both readings, never silently the rates'
    (an unlogged 3 s pause read as a step gave a run at 1,600 img/s as 2,560)."""
    text, _ = _run(FORWARD)
    S.write(tmp_path, text)
    row = run_throughputs(parse_paths([tmp_path], jobs=1), [method])[method].iloc[0]
    assert row["problem_kind"] == "figure_mismatch"
    assert "a clock step, or a stall" in row["problem"]
    assert "timed by their printed rates" not in row["method"]


@pytest.mark.parametrize("steps", [BACK], ids=["back"])
@pytest.mark.parametrize("method", ["dlperf", "window", "reported"])
def test_a_stepped_run_passes_strict_at_its_true_rate(tmp_path, method, steps, capsys):
    """Three repeats, the stepped one among them: strict summarize passes (it failed on the
    figure_mismatch) and the case's median is the true rate, whichever method."""
    for rep in (1, 2, 3):
        S.write(tmp_path, _run(steps if rep == 1 else {}, seed=rep)[0],
                f"1n1g/r50_b128_amp_{rep}.log")
    assert main(["summarize", str(tmp_path), "--no-cache", "--strict", "--method", method,
                 "--format", "csv"]) == 0
    head, row = capsys.readouterr().out.splitlines()[:2]
    median = float(dict(zip(head.split(","), row.split(",")))["throughput_median"])
    assert median == pytest.approx(2560, rel=0.01)


@pytest.mark.parametrize("measure", [1, 2])
def test_a_window_of_few_intervals_over_a_step_names_a_clock_step(tmp_path, measure):
    """A window of one or two intervals, the step among them: too few of its own intervals
    to show its rates keep the stamps' clock, so kept and flagged, for the reason that is
    true (the run's rates agree with the stated batch), not a batch that may not be what
    ran."""
    text, _ = _run({21: 0.5})
    S.write(tmp_path, text)
    row = run_throughputs(parse_paths([tmp_path], jobs=1), ["window"], warmup=20,
                          measure=measure)["window"].iloc[0]
    assert row["problem_kind"] == "figure_mismatch"
    assert "a clock step" in row["problem"] and "may not be what ran" not in row["problem"]


def test_rates_off_their_stamps_on_most_of_the_window_do_not_time_it(tmp_path):
    """The rates of every other line of the window doubled: half its intervals' stamps do
    not give their rates, too many to be steps of the stamps' clock (the rates there count
    something else): the figure is kept at its stamps' value, flagged."""
    text, end = _run({})
    text = [re.sub(r"([\d.]+) images/s", lambda m: f"{2 * float(m[1]):.2f} images/s", ln)
            if 20 <= k <= 130 and k % 2 else ln for k, ln in enumerate(text)]
    S.write(tmp_path, text)
    row = run_throughputs(parse_paths([tmp_path], jobs=1), ["window"])["window"].iloc[0]
    assert row["throughput"] == pytest.approx(128 * 100 / (end[119] - end[19]), rel=1e-4)
    assert row["problem_kind"] == "figure_mismatch"
    assert "timed by their printed rates" not in row["method"]


def test_an_evaluation_the_rates_leave_out_is_no_clock_step(tmp_path):
    """An evaluation of 2 s inside the DLPerf rule's window, its line between two training
    lines whose rates leave it out: the rule counts its time, and that interval is no clock
    step to time by its rate (its stamps hold work); kept at 1,828.57, flagged for what
    is true, not a batch that may not be what ran."""
    text = S.lines(300, jumps={71: 2.0})
    text.insert(71, f"DLL {S.stamp(S.START + timedelta(seconds=25.5))} - Epoch: 0  "
                    "val.top1 : 10.0  val.loss : 6.9")
    S.write(tmp_path, text)
    row = run_throughputs(parse_paths([tmp_path], jobs=1), ["dlperf"])["dlperf"].iloc[0]
    assert row["throughput"] == pytest.approx(128 * 100 / 7.0, abs=0.01)
    assert row["problem_kind"] == "figure_mismatch"
    assert "an evaluation they leave out" in row["problem"]
    assert "timed by their printed rates" not in row["method"]
