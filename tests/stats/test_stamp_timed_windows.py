"""Healthy logs whose whole-second stamps time a figure summed over many short stretches:
Megatron with a line every iteration and an evaluation every few (the window sums the
stretches between evaluations, all of one length, so they round alike: 1.35 s read as
1 s gave +36 % unflagged), and DLLogger with print_freq 5 on short epochs (the DLPerf rule
sums the stretches within epochs, each up to a second off, and a -27 % error read as a
clock step). Either is timed by what the lines print or fails ``missing_timestamps``."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs


def _megatron(path: Path, ms: float, iters: int, eval_interval: int, phase_us: int) -> None:
    """Megatron at `ms` per iteration (gbs 256), a line every iteration, a 3-s evaluation
    every `eval_interval`, stamps in whole seconds."""
    rng = random.Random(7)
    args = dict(global_batch_size=256, micro_batch_size=4, data_parallel_size=8,
                log_interval=1, eval_interval=eval_interval, train_iters=iters, world_size=8)
    out = ["------------------------ arguments ------------------------"]
    out += [f"  {k} {'.' * (40 - len(k))} {v}" for k, v in sorted(args.items())]
    out += ["-------------------- end of arguments ---------------------", "training ..."]
    t, pending = datetime(2024, 5, 2, 10, 11, 12, phase_us), 0.0
    for it in range(1, iters + 1):
        took = (3 * ms if it == 1 else ms * (1 + rng.uniform(-0.03, 0.03))) / 1000
        span = took + pending
        t += timedelta(seconds=span)
        out.append(f"[{t:%Y-%m-%d %H:%M:%S}]  iteration {it:8d}/{iters:8d} | consumed samples: "
                   f"{it * 256:12d} | elapsed time per iteration (ms): {span * 1000:.1f} | "
                   "learning rate: 1.000E-04 | global batch size:   256 | lm loss: 7.0E+00 |")
        pending = 0.0
        if it % eval_interval == 0:
            pending = 3.0
            out.append(f" validation loss at iteration {it} | lm loss value: 7.5E+00 |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")


def _dle(path: Path, per_epoch: int, iters: int, phase_us: int, evals: bool) -> None:
    """DLLogger ResNet-50, batch 128 on 1 GPU at 50 ms an iteration (2,560 img/s),
    print_freq 5 on the in-epoch counter, stamps in whole seconds; with `evals`, a 3-s
    evaluation after each epoch."""
    rng = random.Random(3)
    start = datetime(2023, 8, 4, 5, 46, 58, phase_us)
    out = [f"DLL {start:%Y-%m-%d %H:%M:%S} - PARAMETER arch : resnet50  batch_size : 128  "
           f"print_freq : 5  amp : True  world_size : 1  epochs : {iters // per_epoch}"]
    t, last, n = start + timedelta(seconds=10), start + timedelta(seconds=10), 0
    for i in range(1, iters + 1):
        t += timedelta(seconds=0.5 if i == 1 else 0.05 * (1 + rng.uniform(-0.003, 0.003)))
        n += 1
        epoch, it = (i - 1) // per_epoch, (i - 1) % per_epoch + 1
        if it % 5 == 0 or i == 1:
            rate = 128 * n / (t - last).total_seconds()
            out.append(f"DLL {t:%Y-%m-%d %H:%M:%S} - Epoch: {epoch} Iteration: {it}  "
                       f"train.loss : 6.5 None train.total_ips : {rate:.2f} images/s")
            last, n = t, 0
            if evals and it == per_epoch:
                t += timedelta(seconds=3.0)
                out.append(f"DLL {t:%Y-%m-%d %H:%M:%S} - Epoch: {epoch} Iteration: {it}  "
                           "val.loss : 6.9 None val.compute_ips : 9000.00 images/s")
                last = t
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")


def _row(folder: Path, method: str):
    return run_throughputs(parse_paths([folder], jobs=1), [method])[method].iloc[0]


@pytest.mark.parametrize("ms,iters,eval_interval", [(150.0, 600, 10), (500.0, 300, 10),
                                                     (150.0, 600, 50)])
@pytest.mark.parametrize("phase_us", [182137, 600000])
def test_a_megatron_window_timed_by_whole_second_stamps_is_right_or_missing(
        tmp_path, ms, iters, eval_interval, phase_us):
    """The window sums the stretches between evaluations by their whole-second stamps: its
    figure is within 5 % of the truth (256 / ms) or fails missing_timestamps, never a wrong
    figure unflagged for printing latencies it was not timed by."""
    _megatron(tmp_path / "1n8g" / "gpt_b4_fp16_1.log", ms, iters, eval_interval, phase_us)
    row = _row(tmp_path, "window")
    truth = 256 / (ms / 1000)
    if row["problem_kind"] == "missing_timestamps":
        assert "stretches" in row["problem"]
    else:
        assert row["problem_kind"] in ("", "figure_mismatch")
        assert row["problem_kind"] or abs(row["throughput"] / truth - 1) <= 0.05


@pytest.mark.parametrize("per_epoch,iters,evals", [(40, 1200, False), (200, 1200, True)])
@pytest.mark.parametrize("phase_us", [708499, 800798, 50000, 400000])
def test_dlperf_stretches_within_short_epochs_are_no_clock_step(
        tmp_path, per_epoch, iters, evals, phase_us):
    """The DLPerf rule's figure sums stretches within epochs on print_freq 5 (its lines skip
    each epoch's Iteration 5): the log is healthy, so it is 2,560 img/s within 5 % or
    missing_timestamps for its stretches, never figure_mismatch."""
    _dle(tmp_path / "1n1g" / "r50_b128_amp_1.log", per_epoch, iters, phase_us, evals)
    row = _row(tmp_path, "dlperf")
    assert row["problem_kind"] != "figure_mismatch", row["problem"]
    if row["problem_kind"] == "missing_timestamps":
        assert "stretches" in row["problem"]
    else:
        assert abs(row["throughput"] / 2560 - 1) <= 0.05, row["method"]
