"""The DLPerf PyTorch rule across a restarting counter on whole-second stamps.

Where the counter restarts inside the rule's window, the rule sums each epoch's piece
between the lines it reads (Iteration > 5), and each piece is read from whole-second stamps
up to a second off; where epochs last whole seconds the error repeats every epoch. The
coarseness check missed those pieces (it looked for the intervals after each restart's first
line alone), so it judged the window by its two ends: healthy logs printing a line an
iteration in epochs of 3-5 s were flagged figure_mismatch 27-80 % off "a clock step, or a
stall", and logs printing every 2 iterations with evaluations between epochs gave 1,194.67
for 1,280 unflagged. The pieces are now counted: the figure is timed by the printed rates
where they check, else missing_timestamps.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

BATCH = 128
START = datetime(2023, 8, 4, 5, 46, 58)


def dle_log(path: Path, *, seconds: float, every: int, epoch_len: int, n: int, offset: float,
            seed: int, jitter: float, running: bool = False, evaluations: bool = False,
            counts: float = 1.0, slow_start: float = 0.0) -> None:
    """`n` iterations of BATCH on 1 GPU, `seconds` each (± `jitter` of it; the first
    `slow_start` s longer), a DLLogger line every `every` printing `counts` x the rate of
    its interval (or, `running`, since the start, evaluations left out), the counter
    restarting every `epoch_len`, a named 3 s evaluation after each epoch where
    `evaluations`, the stamps whole seconds from a start `offset` s into its second."""
    rng = random.Random(seed)
    start = START + timedelta(seconds=offset)
    out = [f"DLL {start:%Y-%m-%d %H:%M:%S} - PARAMETER arch : resnet50  batch_size : {BATCH}  "
           f"print_freq : {every}  amp : True  world_size : 1"]
    t = last = 10.0
    since = paused = 0
    for i in range(1, n + 1):
        epoch, it = divmod(i - 1, epoch_len)
        t += seconds * (1 + rng.uniform(-1, 1) * jitter) + (slow_start if i == 1 else 0.0)
        if (it + 1) % every == 0:
            rate = BATCH * (i - since) / (t - last) if not running \
                else BATCH * i / (t - 10.0 - paused)
            stamp = start + timedelta(seconds=t)
            out.append(f"DLL {stamp:%Y-%m-%d %H:%M:%S} - Epoch: {epoch} Iteration: {it + 1}  "
                       f"train.loss : 6.9 None train.total_ips : {counts * rate:.1f} images/s")
            last, since = t, i
        if it + 1 == epoch_len and evaluations:
            t, paused, last = t + 3.0, paused + 3.0, t + 3.0
            stamp = start + timedelta(seconds=t)
            out.append(f"DLL {stamp:%Y-%m-%d %H:%M:%S} - Epoch: {epoch}  val.loss : 6.9 None "
                       "val.compute_ips : 9000.00 images/s")
    out.append(f"DLL {start + timedelta(seconds=t):%Y-%m-%d %H:%M:%S} - Summary: train.loss : "
               f"6.5 None train.total_ips : {counts * BATCH / seconds:.2f} images/s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")


def dlperf_rows(folder: Path, **shape):
    """The DLPerf rule's rows of one log of `shape` per (start offset, seed) of CASES."""
    for k, (offset, seed) in enumerate(CASES):
        dle_log(folder / f"1n1g/r50_b128_amp_{k + 1}.log", offset=offset, seed=seed, **shape)
    frame = run_throughputs(parse_paths([folder], jobs=1), ["dlperf"])["dlperf"]
    assert len(frame) == len(CASES)
    return frame


#: (start offset within its second, seed) of the logs of each shape: seeds differ, else
#: logs printing the same rates are one run's copies.
CASES = ((0.0, 1), (0.125, 3), (0.375, 5), (0.625, 0), (0.875, 2), (0.875, 4))


@pytest.mark.parametrize("epoch_len,seconds", [(15, 0.2), (20, 0.2), (25, 0.2), (30, 0.1),
                                               (12, 0.25)])
@pytest.mark.parametrize("jitter", [0.005, 0.03])
def test_healthy_epochs_of_whole_seconds_are_no_mismatch(tmp_path, epoch_len, seconds, jitter):
    """A line an iteration, epochs of 3-5 s: the figure the rates time, or no figure for
    coarse stamps, never a mismatch blamed on a stall."""
    frame = dlperf_rows(tmp_path, seconds=seconds, every=1, epoch_len=epoch_len,
                        n=epoch_len * 40, jitter=jitter)
    for _, row in frame.iterrows():
        assert row["problem_kind"] in ("", "missing_timestamps"), row["problem"]
        if not row["problem_kind"]:
            assert row["throughput"] == pytest.approx(BATCH / seconds, rel=0.05), row["method"]


@pytest.mark.parametrize("shape", [
    # running means every 2 iterations, epochs of 100 with named evaluations, a slow start
    dict(seconds=0.1, every=2, epoch_len=100, n=300, jitter=0.005, running=True,
         evaluations=True, slow_start=0.5),
    # a line an iteration, epochs of 20 (4 s) with named evaluations, rates 6 % high
    dict(seconds=0.2, every=1, epoch_len=20, n=1200, jitter=0.08, evaluations=True,
         counts=1.06, slow_start=2.0),
])
def test_no_figure_off_unflagged_across_epochs(tmp_path, shape):
    frame = dlperf_rows(tmp_path, **shape)
    for _, row in frame.iterrows():
        assert row["problem_kind"] != "" or \
            row["throughput"] == pytest.approx(BATCH / shape["seconds"], rel=0.05), row["method"]
        if shape.get("counts", 1.0) == 1.0:
            assert row["problem_kind"] != "figure_mismatch", row["problem"]
