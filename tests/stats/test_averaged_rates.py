"""Healthy logs whose printed rates are means over more than their own interval: a running
mean since the run's start (DLLogger style) or its epoch's (OneFlow CNN lines), the mean
since the rate printed before (a rate every 10th line), the mean over the last 10 lines.
Read as each interval's own rate they imply a scattered batch whose median is not the
stated one where the intervals are uneven; read over their span they give it. Batch 128 on
1 GPU at about 50 ms an iteration (dll_synth) unless the test says otherwise."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

METHODS = ("dlperf", "window", "reported")
BATCH = 128
N = 400


def figures(folder: Path) -> dict:
    result = parse_paths([folder])
    return {m: df.iloc[0] for m, df in run_throughputs(result, METHODS).items()}


def seconds(kind: str, seed: int = 1) -> np.ndarray:
    """Each iteration's seconds: `jitter` (skewed, 45 ms + an exponential 10 ms), `slow4`
    (50 ms, every 4th 150 ms), `slow10` (50 ms, the 5th of every 10 200 ms), `start`
    (`slow4` after 30 iterations of 300 ms)."""
    rng = np.random.default_rng(seed)
    if kind == "jitter":
        return 0.045 + rng.exponential(0.01, N)
    d = 0.05 + rng.normal(0, 0.001, N)
    if kind == "slow10":
        d[4::10] = 0.2
        return d
    d[3::4] = 0.15
    if kind == "start":
        d[:30] = 0.3
    return d


def running_mean(i: int, t: np.ndarray) -> float:
    return BATCH * i / t[i - 1]


def since_last_print(every: int):
    def rate(i: int, t: np.ndarray) -> float | None:
        if i % every:
            return None
        return BATCH * every / (t[i - 1] - (t[i - every - 1] if i > every else 0.0))
    return rate


def last(n: int):
    def rate(i: int, t: np.ndarray) -> float:
        a = max(0, i - n)
        return BATCH * (i - a) / (t[i - 1] - (t[a - 1] if a else 0.0))
    return rate


def own_interval(i: int, t: np.ndarray) -> float:
    return BATCH / (t[i - 1] - (t[i - 2] if i > 1 else 0.0))


def write_dll(folder: Path, durations: np.ndarray, rate, times: float = 1.0,
              stated: bool = True, step_at: int = 0, step_s: float = 0.0) -> Path:
    """A DLLogger log of one line an iteration, printing `rate(i, t)` x `times` (a line
    without a rate where it gives None); the stamps' clock stepped `step_s` forward from
    iteration `step_at` (the program's clock not)."""
    params = {"batch_size": BATCH} if stated else {}
    out = [S.parameter(S.START, arch="resnet50", amp=True, world_size=1, print_freq=1,
                       **params)]
    t = np.cumsum(durations)
    for i in range(1, len(durations) + 1):
        shift = step_s if step_at and i >= step_at else 0.0
        when = S.START + timedelta(seconds=20.0 + float(t[i - 1]) + shift)
        value = rate(i, t)
        out.append(S.train_line(when, 0, i, value * times) if value is not None else
                   f"DLL {S.stamp(when)} - Epoch: 0 Iteration: {i}  train.loss : 6.90000 None ")
    return S.write(folder, out, "1n1g/r50_b128_amp_1.log" if stated else "1n1g/r50_amp_1.log")


def write_oneflow(folder: Path, times: float = 1.0) -> Path:
    """OneFlow CNN lines every 20 iterations, 4 epochs of 400 with 30 s of validation after
    each, the counter restarting: 1 s an interval, one in 3 taking 1.5 s more (a data
    reload); the printed samples/s the mean since the epoch's start."""
    rng = np.random.default_rng(2)
    t, out = 1597933942.0, []
    for e in range(4):
        start = t
        for i in range(20, 401, 20):
            t += 20 * 0.05 * (1 + rng.normal(0, 0.01)) + (1.5 if (i // 20) % 3 == 0 else 0.0)
            out.append(S.oneflow_line(e, i, BATCH * i / (t - start) * times, t))
        t += 30.0
    return S.write_oneflow(folder, out)


def assert_clean(runs: dict, methods=METHODS) -> None:
    for method in methods:
        assert runs[method]["problem_kind"] == "", (method, runs[method]["problem"])


@pytest.mark.parametrize("kind", ["jitter", "slow4"])
def test_a_running_mean_since_the_start_is_no_mismatch(tmp_path, kind):
    """Read as each interval's rate, the running means imply 119 (jitter) or 87 (a slow
    step every 4) samples an iteration against the stated 128: every figure was flagged.
    The stamps' figures are the run's rate, unflagged; `reported` is the median of each
    interval's own rate recovered from the means, as from a log printing them, flagged as
    that one is: uneven iterations, whose slow ones the median leaves out."""
    d = seconds(kind)
    write_dll(tmp_path, d, running_mean)
    runs = figures(tmp_path)
    assert_clean(runs, ("dlperf", "window"))
    for method in ("dlperf", "window"):
        assert runs[method]["throughput"] == pytest.approx(BATCH * N / d.sum(), rel=0.02)
    assert_uneven(runs["reported"], d)


def assert_uneven(row, d: np.ndarray) -> None:
    """`reported` is each interval's own rate's median after the warm-up, flagged for
    uneven iterations."""
    assert row["throughput"] == pytest.approx(BATCH / np.median(d[20:]), rel=0.01)
    assert row["problem_kind"] == "figure_mismatch" and "uneven iterations" in row["problem"]


def test_a_running_mean_without_a_stated_batch_implies_the_batch_it_ran(tmp_path):
    """No batch stated: the batch the lines imply was 86.5 (each interval's rate), and the
    median of the running means was flagged 48 % off the stamps' rate at that batch. Each
    interval's own rate needs no batch: it is recovered all the same."""
    d = seconds("slow4")
    write_dll(tmp_path, d, running_mean, stated=False)
    assert_uneven(figures(tmp_path)["reported"], d)


def test_a_running_mean_holding_a_slow_start_flags_only_the_median_of_it(tmp_path):
    """30 iterations of 300 ms first: the window's figure was flagged against the median of
    the running means (which hold that start) as a batch that may not be what ran; it is
    the lines' own rate. The reported figure is each interval's own rate, recovered: the
    start is not in it, and only its uneven iterations are flagged."""
    d = seconds("start")
    write_dll(tmp_path, d, running_mean)
    runs = figures(tmp_path)
    assert_clean(runs, ("dlperf", "window"))
    assert_uneven(runs["reported"], d)
    assert "a mean since the run's start" in runs["reported"]["method"]


def test_a_rate_every_tenth_line_the_mean_since_the_last_print(tmp_path):
    """A rate on every 10th line, the mean over the 10 iterations since the rate before,
    one iteration in 10 slow: read as the last iteration's rate it implied 97.7 a batch."""
    write_dll(tmp_path, seconds("slow10"), since_last_print(10))
    runs = figures(tmp_path)
    assert_clean(runs, ("window", "reported"))


def test_a_mean_over_the_last_ten_lines(tmp_path):
    """Each line prints the mean over the last 10 iterations: read as each interval's rate,
    91.5 a batch."""
    write_dll(tmp_path, seconds("slow4"), last(10))
    assert_clean(figures(tmp_path))


def test_oneflow_running_mean_since_the_epoch_start(tmp_path):
    """Another family: OneFlow CNN samples/s as the mean since the epoch's start (counter
    restarting each epoch): read as each line's interval it implied 92 a batch, and the
    DLPerf window of 5 intervals was flagged against the running means. `reported`, each
    interval's own rate, is flagged for its uneven intervals (one in 3 reloads data)."""
    write_oneflow(tmp_path)
    runs = figures(tmp_path)
    assert_clean(runs, ("dlperf", "window"))
    assert runs["reported"]["problem_kind"] == "figure_mismatch"
    assert "uneven iterations" in runs["reported"]["problem"]
    assert "a mean since its epoch's start" in runs["reported"]["method"]


@pytest.mark.parametrize("log", ["running", "every10", "oneflow"])
def test_a_rate_counting_twice_the_batch_is_still_flagged(tmp_path, log):
    """The same logs printing twice the rate: every figure is flagged, and where the text
    names the batch the lines imply, it is the 256 they count, not a scattered median."""
    if log == "oneflow":
        write_oneflow(tmp_path, times=2.0)
    else:
        write_dll(tmp_path, seconds("slow4" if log == "running" else "slow10"),
                  running_mean if log == "running" else since_last_print(10), times=2.0)
    runs = figures(tmp_path)
    for method in METHODS:
        if log == "every10" and method == "dlperf":
            continue  # 40 lines: too few for the DLPerf rule
        assert runs[method]["problem_kind"] == "figure_mismatch", method
        numbers = [float(x.replace(",", "")) for x in re.findall(
            r"(?:imply|gives) ([\d,.]+) samples an iteration", runs[method]["problem"])]
        assert all(x == pytest.approx(256.0, rel=0.01) for x in numbers), runs[method]["problem"]


def test_a_clock_step_the_running_means_disprove_is_still_flagged(tmp_path):
    """The stamps' clock steps 2 s forward at iteration 60, inside the DLPerf window; the
    running means do not hold it. The window's figure is flagged against the rates the
    means give its intervals (as against instantaneous rates), and no other batch is
    claimed (read as each interval's rate they implied 86.5)."""
    write_dll(tmp_path, seconds("slow4"), running_mean, step_at=60, step_s=2.0)
    runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        assert runs[method]["problem_kind"] == "figure_mismatch", method
        assert "imply" not in runs[method]["problem"], runs[method]["problem"]


def test_rates_of_each_interval_are_read_as_before(tmp_path):
    """Control: rates of each interval's own iterations, a slow step every 4 - the median
    of the printed rates overstates the run, as flagged before."""
    write_dll(tmp_path, seconds("slow4"), own_interval)
    runs = figures(tmp_path)
    assert_clean(runs, ("dlperf", "window"))
    assert runs["reported"]["problem_kind"] == "figure_mismatch"
    assert "uneven iterations" in runs["reported"]["problem"]
