"""Printed latencies checked against whole-second stamps: the stamps bound the batch the
lines imply to a worst case (a second a stretch, relative to the true time), which a
healthy log stays inside; a latency further off than MISMATCH by the stamps' best reading
is flagged, though it may sit inside MISMATCH plus that worst case. Where that worst case
is wider than MISMATCH, a figure resting on the latencies is missing_timestamps (the stamps
cannot check them to MISMATCH), never figure_mismatch on a healthy log."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

START = datetime(2024, 5, 2, 10, 11, 12, tzinfo=timezone.utc)


def megatron(folder: Path, *, interval: int, iterations: int, ms: float, printed: float = 1.0,
             offset: float = 0.3, jitter: float = 0.003, seed: int = 1) -> Path:
    """Megatron-LM lines of global batch 256 behind whole-second `[date]` prefixes, a line
    every `interval` iterations of `ms` ms (the first interval 3x), each printing its
    elapsed time per iteration x `printed`."""
    rng = random.Random(seed)
    t = START + timedelta(seconds=offset)
    out = ["using world size: 8, data-parallel-size: 8, tensor-model-parallel size: 1, "
           "pipeline-model-parallel size: 1"]
    for it in range(interval, iterations + 1, interval):
        each = ms * (3 if it == interval else 1 + rng.uniform(-jitter, jitter))
        t += timedelta(milliseconds=each * interval)
        out.append(f"[{t:%Y-%m-%d %H:%M:%S}]  iteration {it:8d}/{iterations:8d} | consumed "
                   f"samples: {it * 256:12d} | elapsed time per iteration (ms): "
                   f"{each * printed:.1f} | global batch size:   256 | lm loss: 7.990000E+00 | "
                   "loss scale: 65536.0 | number of skipped iterations:   0 | number of nan "
                   "iterations:   0 |")
    path = folder / "1n8g" / "gpt_b4_fp16_1.log"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(out) + "\n")
    return path


def kinds(folder: Path) -> dict[str, str]:
    frames = run_throughputs(parse_paths([folder]), ["dlperf", "window"])
    return {m: str(f.iloc[0]["problem_kind"]) for m, f in frames.items()}


def test_a_latency_7_percent_short_on_a_30_second_run_is_flagged(tmp_path):
    """200 iterations of 150 ms printing 0.93x their time: 1,835 samples/s against the
    stamps' 1,707; the stamps bound the batch to 3.6 %, the lines imply 276.7 of 256."""
    megatron(tmp_path, interval=1, iterations=200, ms=150.0, printed=0.93)
    assert set(kinds(tmp_path).values()) == {"figure_mismatch"}


@pytest.mark.parametrize("seed", range(6))
def test_healthy_short_runs_whose_stamps_round_their_most_pass(tmp_path, seed):
    """100 iterations printed every 10 (15 s): a second's truncation is 7 % of the time, and
    the stamps may read it a second long; no mismatch flag, and the dlperf figure, which
    rests on the printed latencies, is missing_timestamps: the stamps check them only to
    more than 5 %."""
    megatron(tmp_path, interval=10, iterations=100, ms=150.0, jitter=0.08, seed=seed,
             offset=0.05 + 0.15 * seed)
    assert kinds(tmp_path)["dlperf"] == "missing_timestamps"


def test_stamps_that_read_a_run_a_second_long_are_no_flag(tmp_path):
    """9 intervals of 10 iterations at 144.67 ms (13.02 s) whose first stamp falls at .99 s:
    the stamps read 14 s, 7.5 % long; a second is 7.5 % of what they read but 8.1 % of the
    true time, which is what the implied batch is relative to: no mismatch flag, and the
    latencies the dlperf figure rests on are unchecked to 5 % (missing_timestamps)."""
    ms = 13.02 / 90 * 1000
    first = 30 * ms / 1000  # the first line: 10 iterations at 3x
    megatron(tmp_path, interval=10, iterations=100, ms=ms, jitter=0.0,
             offset=(0.99 - first) % 1.0)
    assert kinds(tmp_path)["dlperf"] == "missing_timestamps"
