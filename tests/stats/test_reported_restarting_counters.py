"""`--method reported` on DLE PyTorch logs whose iteration counter restarts each epoch (steps
1..E again, the epoch field advancing) and which print each interval's own rate (batch 128
on 1 GPU, the first 20 iterations at 200 ms, then 50 ms: 2,560 img/s after the warm-up).
The warm-up is the run's first 20 iterations, counted run-wide as the window method counts
them: it was taken as each epoch's, so epochs of 20 iterations or fewer left no value after
it and the run was refused as "truncated"."""

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

BATCH = 128
TRUTH = BATCH / 0.05


def write_dle(folder: Path, epoch_len: int, whole_seconds: bool, n: int = 400) -> Path:
    """A line an iteration, the counter restarting every `epoch_len` iterations, each line
    printing its own iteration's rate; stamps in microseconds or cut to whole seconds."""
    d = 0.05 + np.random.default_rng(3).normal(0, 0.0005, n)
    d[:20] = 0.2
    out = [S.parameter(S.START, arch="resnet50", amp=True, world_size=1, print_freq=1,
                       batch_size=BATCH)]
    t = 20.123
    for i in range(1, n + 1):
        t += d[i - 1]
        epoch, it = divmod(i - 1, epoch_len)
        line = S.train_line(S.START + timedelta(seconds=t), epoch, it + 1, BATCH / d[i - 1])
        out.append(re.sub(r"(\d\d:\d\d:\d\d)\.\d+", r"\1", line) if whole_seconds else line)
    return S.write(folder, out)


# epochs of 10 with whole-second stamps are left out: there the figure check against the
# stamps (figure_checks) leaves out each epoch's last interval, whose second's rounding
# it does not allow for
CASES = [(10, False), (20, False), (100, False)]


@pytest.mark.parametrize("epoch_len, whole_seconds", CASES)
def test_the_warmup_is_the_runs_first_iterations(tmp_path, epoch_len, whole_seconds):
    write_dle(tmp_path, epoch_len, whole_seconds)
    row = run_throughputs(parse_paths([tmp_path]), ("reported",))["reported"].iloc[0]
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == pytest.approx(TRUTH, rel=0.01)
    assert main(["summarize", "--method", "reported", "--strict", "--no-cache",
                 str(tmp_path)]) == 0


@pytest.mark.parametrize("epoch_len", [20, 100])
def test_whole_second_epochs_of_a_few_seconds_give_no_figure_not_truncated(tmp_path, epoch_len):
    """The same with whole-second stamps: the warm-up is still the run's (not "truncated"),
    but epochs of 1 or 5 s whose ends no line names may each hide a pause of up to a
    second, which rates printed too low would fill: the stamps check the rates only beyond
    5 %, so no figure, the bound stated."""
    write_dle(tmp_path, epoch_len, whole_seconds=True)
    row = run_throughputs(parse_paths([tmp_path]), ("reported",))["reported"].iloc[0]
    assert row["problem_kind"] == "missing_timestamps", row["problem"]
    assert "epoch ends" in row["problem"] and "more than 5%" in row["problem"]


def test_epochs_of_ten_count_on_from_the_epoch_before(tmp_path):
    """The slow first 20 iterations are two epochs of 10 here: their values are left out,
    every later epoch's are kept (380 values, the median the steady rate)."""
    write_dle(tmp_path, 10, whole_seconds=False)
    row = run_throughputs(parse_paths([tmp_path]), ("reported",))["reported"].iloc[0]
    assert row["iterations"] == 380
    assert row["throughput"] == pytest.approx(TRUTH, rel=0.01)


def test_iterations_done_counts_a_restarting_counter_on():
    from analysis.stats.methods.base import iterations_done

    steps = np.array([5.0, 10.0, 5.0, 10.0, 3.0])
    assert iterations_done(steps).tolist() == [5.0, 10.0, 15.0, 20.0, 23.0]
