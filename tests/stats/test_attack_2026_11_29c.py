"""Inputs of a sixth attack on the window rule of a run's figure: a clock stepped back at one
period hidden as recurring fast intervals, steps in windows of few intervals judged by the
pace after a change, a step in phase with evaluations that start later, and healthy runs
(warm-up ramps, jittery loader hiccups) refused. DLLogger logs printing no rate, batch 128
on 1 GPU at 50 ms an iteration (2,560 img/s), shaped as the attack's generators shaped
them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def _unprinted(text: list[str]) -> list[str]:
    return [re.sub(r" train\.total_ips : [0-9.]+ \S+", "", ln) for ln in text]


def _rows(tmp_path, every: int, n: int, jumps: dict, methods=("dlperf", "window"), **kw):
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=jumps, **kw)))
    return {m: f.iloc[0] for m, f in run_throughputs(parse_paths([tmp_path]), list(methods)).items()}


# --- a clock stepped back at one period, each step shorter than a printed interval --------

@pytest.mark.parametrize("every, step, period, first", [
    (10, -0.3, 100, 70),      # the interval 60 -> 70 reads 0.2 s where its siblings read 0.5 s
    (10, -0.45, 100, 70),     # 10 iterations in 50 ms
    (10, -0.17, 50, 45),      # twice in the window
    (5, -0.09, 20, 23)])      # a line every 5 iterations, five times in the window
def test_a_clock_stepped_back_at_one_period_gives_no_figure(tmp_path, every, step, period,
                                                              first):
    """+7 % to +13 %, 0 problems: the short intervals recurred, so they were taken as the
    run's own fast ones, though a printed interval of many iterations cannot lose more than
    one iteration's time."""
    jumps = {k: step for k in range(first, 1501, period)}
    for method, row in _rows(tmp_path, every, 1500, jumps).items():
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method
        assert "a clock stepped back" in row["problem"], method


def test_one_fast_iteration_at_one_period_keeps_its_figure(tmp_path):
    """A line every 10 iterations, one iteration in 100 taking half the time (a cached
    batch): the interval holding it is half an iteration short, which one iteration can be."""
    jumps = {k: -0.025 for k in range(70, 1501, 100)}
    row = _rows(tmp_path, 10, 1500, jumps, ("window",))["window"]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(128 * 100 / (5 - 0.025), rel=1e-3)


# --- MLPerf: a clock step back in the first block beside steps in later ones ----------------

REAL_MLPERF = Path(__file__).resolve().parents[1] / "data/real/mlperf_v1_0_google_tf_resnet"


def _shifted(folder: Path, shifts: dict) -> None:
    """The five real v1.0 TF ResNet logs, every time_ms from the record after the k-th
    block_start on moved by shifts[k] ms (cumulative)."""
    import json
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(5):
        src = (REAL_MLPERF / f"result_{r}.txt").read_text().split("\n")
        starts = [i for i, ln in enumerate(src) if '"key": "block_start"' in ln]
        moves = {starts[k] + 1: ms for k, ms in shifts.items()}
        off, out = 0, []
        for i, ln in enumerate(src):
            off += moves.get(i, 0)
            if ":::MLLOG" in ln and off:
                t = json.loads(ln.split(":::MLLOG", 1)[1])["time_ms"]
                ln = ln.replace(f'"time_ms": {t}', f'"time_ms": {t + off}')
            out.append(ln)
        (folder / f"result_{r}.txt").write_text("\n".join(out))


@pytest.mark.parametrize("shifts", [
    {0: -9900, 2: -2500, 5: -2500},          # time to train -5.8 %: each allowance used apart
    {k: -1000 for k in range(1, 7)}])        # six -1 s steps in later blocks: -2.3 %
def test_steps_back_under_each_allowance_are_flagged(tmp_path, shifts):
    _shifted(tmp_path, shifts)
    result = parse_paths([tmp_path])
    jumps = result.problems[result.problems["kind"] == "timestamps_jump"]
    assert len(jumps) == 5
    assert "clock steps inside the run" in jumps["reason"].iloc[0]
