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
import mlperf_edits as M  # noqa: E402


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



@pytest.mark.parametrize("shifts", [
    {0: -9900, 2: -2500, 5: -2500},          # time to train -5.8 %: each allowance used apart
    {k: -1000 for k in range(1, 7)}])        # six -1 s steps in later blocks: -2.3 %
def test_steps_back_under_each_allowance_are_flagged(tmp_path, shifts):
    M.shifted(tmp_path, shifts)
    result = parse_paths([tmp_path])
    jumps = result.problems[result.problems["kind"] == "timestamps_jump"]
    assert len(jumps) == 5
    assert "clock steps inside the run" in jumps["reason"].iloc[0]


# --- windows of one or two printed intervals at a change of pace; short runs -----------------

SECONDS = 0.04373  # an iteration: 100 of them are no whole number of seconds


def _sparse(n: int, every: int, real: dict, steps: dict | None = None) -> list[str]:
    """Lines at iteration 1 and every `every` (as DLE prints them), no rate; `real` are
    iterations' own extra seconds, `steps` clock steps from an iteration on."""
    jumps = dict(real)
    for k, v in (steps or {}).items():
        jumps[k] = jumps.get(k, 0.0) + v
    text = S.lines(n, jumps=jumps, seconds=SECONDS)
    keep = [text[0].replace("print_freq : 1 ", f"print_freq : {every} ")] + [ln for ln in text[1:]
                        if (k := int(re.search(r"Iteration: (\d+)", ln)[1])) == 1 or k % every == 0]
    return _unprinted(keep)


def _slow_from(k: int, factor: float, n: int) -> dict:
    return {i: (factor - 1) * SECONDS for i in range(k, n + 1)}


@pytest.mark.parametrize("every, n, real, steps", [
    (50, 3000, _slow_from(101, 1.25, 3000), {70: 0.5}),    # -9.3 %, 0 problems
    (100, 3000, _slow_from(201, 1.25, 3000), {150: 1.0}),  # -18.6 %
    (50, 150, {}, {70: 0.5}),                              # a run of 150 iterations: -10.3 %
    (50, 200, {}, {70: 0.5}),
    (100, 300, {}, {150: 1.0}),                            # -18.6 %
    (50, 150, {}, {70: -0.4}),                             # a step back: +22 %
    (50, 150, {}, {120: -0.4})])                           # at the last interval: +10 %
def test_a_step_in_a_window_of_few_intervals_gives_no_figure(tmp_path, every, n, real, steps):
    """The window's one or two intervals were judged by the pace after it only (or not at
    all in a short run): a step matching a later, slower pace passed."""
    S.write(tmp_path, _sparse(n, every, real, steps))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"


@pytest.mark.parametrize("every, n, real", [
    (50, 3000, _slow_from(101, 1.25, 3000)),
    (100, 3000, _slow_from(201, 1.25, 3000))])
def test_a_window_of_few_intervals_at_a_change_of_pace_says_so(tmp_path, every, n, real):
    """Healthy runs slowing down right after the window were refused as "a clock stepped
    back"; a step can make so few intervals match either pace, so no figure, with that
    reason."""
    S.write(tmp_path, _sparse(n, every, real))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"
    assert "the run's pace changes at the window" in row["problem"]
    assert "stepped back" not in row["problem"]


@pytest.mark.parametrize("every, n, real", [
    (50, 150, {}), (100, 300, {}), (50, 3000, {k: 0.3 for k in range(70, 3001, 100)})])
def test_short_runs_and_alternating_stalls_keep_their_figure(tmp_path, every, n, real):
    S.write(tmp_path, _sparse(n, every, real))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["problem_kind"] == ""
    lo, hi = (50, 150) if every == 50 else (100, 200)
    truth = 128 * (hi - lo) / ((hi - lo) * SECONDS + sum(v for k, v in real.items() if lo < k <= hi))
    assert row["throughput"] == pytest.approx(truth, rel=1e-3)


# --- a step in phase with evaluations the run starts later ----------------------------------

@pytest.mark.parametrize("every, step_at, step", [(1, 100, 2.5), (10, 100, 2.5), (50, 70, 0.6)])
def test_a_step_in_phase_with_later_evaluations_gives_no_figure(tmp_path, every, step_at, step):
    """3 s evaluations every 100 iterations from 200, a clock step at 100: the step's slot
    was excused up to its siblings' 3 s though none came before it: -36 % (-12 % at +0.6 s,
    a line every 50), 0 problems."""
    evals = {k: 3.0 for k in range(200, 1501, 100)}
    S.write(tmp_path, _sparse(1500, every, evals, {step_at: step}))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"


def test_evaluations_from_the_start_keep_their_figure(tmp_path):
    """The same evaluations every 100 from 100: the window's is one of them."""
    evals = {k: 3.0 for k in range(100, 1501, 100)}
    S.write(tmp_path, _sparse(1500, 1, evals))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(128 * 100 / (100 * SECONDS + 3.0), rel=1e-3)


# --- healthy: loader hiccups of about 3x that jitter ------------------------------------------

def _hiccups(k: float, seed: int) -> dict:
    """Iterations of 50 ms x lognormal(0, 0.05), every 25th k times as long."""
    rng = np.random.default_rng(seed)
    real = {i: 0.05 * (float(np.exp(rng.normal(0, 0.05))) - 1) for i in range(1, 1001)}
    for i in range(25, 1001, 25):
        real[i] += 0.05 * (k - 1) * (1 + real[i] / 0.05)
    return real


@pytest.mark.parametrize("k, seed", [(3.0, 5), (2.5, 5), (3.0, 9)])
def test_jittery_hiccups_at_one_period_keep_their_figure(tmp_path, k, seed):
    """Some of the hiccups fell under the 3x cut for recurring stalls and the rest over it,
    so they lost their period: no figure, "a clock step ... or a stall"."""
    real = _hiccups(k, seed)
    for method, row in _rows(tmp_path, 1, 1000, real).items():
        assert row["problem_kind"] == "", method
    truth = 128 * 100 / (100 * 0.05 + sum(v for i, v in real.items() if 20 < i <= 120))
    assert row["throughput"] == pytest.approx(truth, rel=1e-3)


@pytest.mark.parametrize("step", [0.3, 0.5])
def test_a_step_beside_jittery_hiccups_is_still_refused(tmp_path, step):
    real = _hiccups(3.0, 5)
    real[60] += step
    row = _rows(tmp_path, 1, 1000, real, ("window",))["window"]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"


# --- healthy: a warm-up ramp lasting into the window --------------------------------------------

def _ramp(n: int) -> dict:
    """Iterations 2x as long at the start, falling smoothly to 1x at iteration 150."""
    return {i: 0.05 * (1 - i / 150) for i in range(1, 150)}


def test_a_warm_up_ramp_into_the_window_keeps_its_figure(tmp_path):
    """A line every 10 iterations: the window's first intervals read slower than their local
    pace, which mirrored the run's start about its first interval: "a clock step ... or a
    stall", no figure."""
    real = _ramp(1500)
    S.write(tmp_path, _sparse(1500, 10, real))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["problem_kind"] == ""
    truth = 128 * 100 / (100 * SECONDS + sum(v for i, v in real.items() if 20 < i <= 120))
    assert row["throughput"] == pytest.approx(truth, rel=1e-3)


def test_a_step_in_a_warm_up_ramp_is_still_refused(tmp_path):
    S.write(tmp_path, _sparse(1500, 10, _ramp(1500), {60: 0.3}))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"
    assert "from line 7 to line 8" in row["problem"]


# --- stamps printed to tenths or halves of a second -------------------------------------------

@pytest.mark.parametrize("step", [0.1, 0.5])
def test_sub_second_coarse_stamps_are_named_as_such(tmp_path, step):
    """Stamps floored to 0.1 s or 0.5 s, a line every iteration of 43.7 ms: explained as "a
    clock step (daylight saving, NTP)" where "an iteration of the window takes 0 s"."""
    def floor(ln: str) -> str:
        m = re.search(r"(\d\d):(\d\d):(\d\d\.\d{6})", ln)
        if not m:
            return ln
        sec = float(m[3]) // step * step
        return ln.replace(m[0], f"{m[1]}:{m[2]}:{sec:09.6f}")
    S.write(tmp_path, [floor(ln) for ln in _unprinted(S.lines(300, seconds=SECONDS))])
    rows = run_throughputs(parse_paths([tmp_path]), ["dlperf", "window"])
    for method in ("dlperf", "window"):
        row = rows[method].iloc[0]
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "missing_timestamps"
        assert f"printed to {step:g} s" in row["problem"] and "takes 0 s" not in row["problem"]
