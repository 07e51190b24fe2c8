"""DLE lines (batch 128, 1 GPU, 0.2 s an iteration: 640 img/s) stamped in whole seconds, each
printed rate the mean since the epoch's start (x `f`), every 5th iteration, 5 epochs of 450,
a named evaluation after each, the first iteration 2 s slow.

The stamps settle no reading of the rates (each interval's own fits the run within its
slack, as the epoch's mean does), so the window's figure was compared with the raw means on
its lines, which still carry the slow start (562 against 640): a healthy run was flagged
figure_mismatch, its reason a clock step or a stall the log does not hold.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

TRUTH = 128 / 0.2


def dle(folder: Path, *, f: float, seed: int, iters: int = 2250, ipe: int = 450,
        pf: int = 5) -> Path:
    """The run described above, whole-second stamps, rates to 1 decimal."""
    rng, start = random.Random(seed), datetime(2023, 8, 4, 5, 46, 58)
    out = [f"DLL {start:%Y-%m-%d %H:%M:%S} - PARAMETER data : /imagenet  arch : resnet50  "
           f"epochs : {iters // ipe}  batch_size : 128  print_freq : {pf}  amp : True  "
           "world_size : 1", f"RUNNING EPOCHS FROM 0 TO {iters // ipe}"]
    t = te = 10.0
    ne = 0
    for i in range(1, iters + 1):
        ep, it = (i - 1) // ipe, (i - 1) % ipe + 1
        if it == 1:
            te, ne = t, 0
        t += 0.2 * (1 + rng.uniform(-1, 1) * 0.005) + (2.0 if i == 1 else 0)
        ne += 1
        if it % pf == 0:
            out.append(f"DLL {start + timedelta(seconds=t):%Y-%m-%d %H:%M:%S} - Epoch: {ep} "
                       f"Iteration: {it}  train.loss : 6.00000 None train.total_ips : "
                       f"{f * 128 * ne / (t - te):.1f} images/s train.lr : 0.1")
        if it == ipe:
            t += 8.0
            out.append(f"DLL {start + timedelta(seconds=t):%Y-%m-%d %H:%M:%S} - Epoch: {ep}  "
                       "val.loss : 6.9 None val.top1 : 1.2 None val.compute_ips : 9000.00 images/s")
    path = folder / "1n1g" / "r50_b128_amp_1.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    return folder


def window(folder: Path) -> tuple[float, str, str]:
    row = run_throughputs(parse_paths([folder], jobs=1), ["window"])["window"].iloc[0]
    return float(row["throughput"]), str(row["problem_kind"] or ""), str(row["problem"] or "")


@pytest.mark.parametrize("seed", [3035, 7, 11])
def test_healthy_epoch_means_after_a_slow_start_keep_the_window(tmp_path, seed):
    value, kind, why = window(dle(tmp_path, f=1.0, seed=seed))
    assert kind != "figure_mismatch", why
    assert abs(value - TRUTH) <= 0.01 * TRUTH or kind == "missing_timestamps", (value, why)


@pytest.mark.parametrize("seed", [3035, 7])
@pytest.mark.parametrize("f", [0.9, 1.1])
def test_epoch_means_off_the_truth_stay_flagged(tmp_path, f, seed):
    value, kind, why = window(dle(tmp_path, f=f, seed=seed))
    assert kind in ("figure_mismatch", "missing_timestamps"), (value, why)
