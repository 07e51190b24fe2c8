"""`--method reported` on logs whose printed rates are running means holding a slow start
(the first 20 iterations at 200 ms, then 50 ms: batch 128 on 1 GPU, 2,560 img/s after the
warm-up): the median of the printed means holds the start and was 11 to 41 % low, flagged.
Each interval's own rate is recovered from the means (the time to each print is the
samples since the mean's start / the mean) and their median taken, as from a log printing
each interval's rate."""

from __future__ import annotations

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

BATCH = 128
TRUTH = BATCH / 0.05


def durations(n: int) -> np.ndarray:
    """Seconds of each of `n` iterations: 200 ms for the first 20, 50 ms (jitter 1 %) after."""
    d = 0.05 + np.random.default_rng(1).normal(0, 0.0005, n)
    d[:20] = 0.2
    return d


def write_dle(folder: Path, d: np.ndarray, epoch_len: int | None = None,
              running: bool = True) -> Path:
    """A DLE PyTorch log, a line an iteration, printing `train.total_ips` as the mean since
    the run's start (since the epoch's with `epoch_len`, 5 s of validation between epochs),
    or each interval's own rate."""
    out = [S.parameter(S.START, arch="resnet50", amp=True, world_size=1, print_freq=1,
                       batch_size=BATCH)]
    t = t0 = 20.0
    for i in range(1, len(d) + 1):
        epoch, it = (0, i) if epoch_len is None else divmod(i - 1, epoch_len)
        it += epoch_len is not None
        if epoch_len is not None and it == 1 and i > 1:
            t += 5.0
            t0 = t
        t += d[i - 1]
        rate = BATCH * it / (t - t0) if running else BATCH / d[i - 1]
        out.append(S.train_line(S.START + timedelta(seconds=t), epoch, it, rate))
    return S.write(folder, out)


def write_oneflow(folder: Path) -> Path:
    """OneFlow CNN lines every 20 iterations, samples/s the mean since the epoch's start:
    an epoch of 600 iterations, 30 s of validation, 300 more; the first 20 iterations slow."""
    rng = np.random.default_rng(2)
    t, out = 1597933942.0, []
    for e, length in enumerate((600, 300)):
        start = t
        for i in range(20, length + 1, 20):
            t += 20 * (0.2 if e == 0 and i == 20 else 0.05 * (1 + rng.normal(0, 0.005)))
            out.append(S.oneflow_line(e, i, BATCH * i / (t - start), t))
        t += 30.0
    return S.write_oneflow(folder, out)


def reported(folder: Path):
    return run_throughputs(parse_paths([folder]), ("reported",))["reported"].iloc[0]


CASES = {  # the median of the printed means before: 1,993, 1,505, 2,023, 2,265
    "since the run's start": lambda p: write_dle(p, durations(400)),
    "short run": lambda p: write_dle(p, durations(150)),
    "since the epoch's start": lambda p: write_dle(p, durations(450), epoch_len=300),
    "oneflow cnn": write_oneflow,
}


@pytest.mark.parametrize("case", CASES)
def test_each_interval_rate_is_recovered_from_running_means(tmp_path, case):
    CASES[case](tmp_path)
    row = reported(tmp_path)
    assert row["throughput"] == pytest.approx(TRUTH, rel=0.005)
    assert row["problem_kind"] == "", row["problem"]
    assert "recovered from running means (a mean since" in row["method"]
    assert main(["summarize", "--method", "reported", "--strict", "--no-cache",
                 str(tmp_path)]) == 0


def test_the_same_figure_as_a_log_printing_each_interval_rate(tmp_path):
    """One mechanism: the running means give the figure a log printing each interval's own
    rate gives for the same iterations."""
    d = durations(400)
    write_dle(tmp_path / "running", d)
    write_dle(tmp_path / "own", d, running=False)
    assert reported(tmp_path / "running")["throughput"] == pytest.approx(
        reported(tmp_path / "own")["throughput"], rel=1e-3)


def test_a_mean_that_gives_an_interval_no_time_gives_no_figure(tmp_path):
    """A printed mean far above the one before (here 3x on one line) gives its interval a
    negative time: no interval rate can be recovered there, so no figure, not a low one."""
    path = write_dle(tmp_path, durations(400))
    lines = path.read_text().splitlines()
    value = float(lines[200].split("train.total_ips : ")[1].split()[0])
    lines[200] = lines[200].replace(f"{value:.2f}", f"{3 * value:.2f}")
    path.write_text("\n".join(lines) + "\n")
    row = reported(tmp_path)
    assert np.isnan(row["throughput"])
    assert row["problem_kind"] == "impossible_value"
    assert "line 201" in row["problem"] and "no positive time" in row["problem"]
