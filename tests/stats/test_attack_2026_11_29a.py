"""Inputs of a fifth attack on the window rule of a run's figure that still gave wrong
numbers: a clock step hidden by the run's recurring evaluations or by a slow phase
elsewhere in the run (the bound for every interval was raised to theirs), a step landing
in an evaluation's slot. DLLogger logs printing no rate, batch 128 on 1 GPU at 50 ms an
iteration (2,560 img/s), shaped as the attack's generators shaped them."""

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


def _window_truth(real: dict, lo: int = 20, hi: int = 120) -> float:
    """128 x 100 over the true time of iterations lo+1..hi (the DLPerf window): `real` are
    the iterations' own extra seconds, a clock step is none of them."""
    return 128 * (hi - lo) / ((hi - lo) * 0.05 + sum(v for k, v in real.items() if lo < k <= hi))


def _rows(tmp_path, every: int, n: int, jumps: dict, methods=("dlperf", "window")):
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=jumps)))
    return {m: f.iloc[0] for m, f in run_throughputs(parse_paths([tmp_path]), list(methods)).items()}


EVALS_200 = {k: 3.0 for k in range(200, 1501, 200)}   # a 3 s evaluation every 200 iterations
TAIL = {k: 1.2 * 0.05 for k in range(1301, 1501)}     # the last 200 iterations 2.2x slower
TAIL_1 = {k: 1.0 * 0.05 for k in range(1301, 1501)}   # ... 2x slower
EIGHT = {k: 0.04 for k in range(30, 120, 11)}         # eight steps of 40 ms


@pytest.mark.parametrize("every, real, step", [
    (10, EVALS_200, {60: 0.8}),    # the evaluations' 8x set the bound: -15.5 %, 0 problems
    (10, TAIL, {60: 0.5}),         # the slow tail's 2.2x set it: -10.3 %
    (1, TAIL_1, EIGHT)])           # eight steps under the tail's 2x: -7.6 %
def test_a_step_beside_recurring_evaluations_or_a_slow_phase_gives_no_figure(
        tmp_path, every, real, step):
    rows = _rows(tmp_path, every, 1500, {k: real.get(k, 0) + step.get(k, 0)
                                         for k in real.keys() | step.keys()})
    for method, row in rows.items():
        if method == "dlperf" and every > 1:
            continue  # the DLPerf rule of a log printed every 10 iterations is another window
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method


@pytest.mark.parametrize("every, real", [(10, EVALS_200), (10, TAIL), (1, TAIL_1)])
def test_recurring_evaluations_and_a_slow_phase_without_a_step_keep_their_figure(
        tmp_path, every, real):
    row = _rows(tmp_path, every, 1500, real, ("window",))["window"]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(_window_truth(real), rel=1e-3)


def test_noisy_iterations_with_recurring_evaluations_keep_their_figure(tmp_path):
    """Iterations 50 ms x lognormal(0, 0.3) (many intervals 5 % off the median), a 3 s
    evaluation every 50: the evaluations are the run's own, not a bound for the rest."""
    rng = np.random.default_rng(7)
    real = {k: 0.05 * (float(np.exp(rng.normal(0, 0.3))) - 1) for k in range(1, 1501)}
    for k in range(50, 1501, 50):
        real[k] += 3.0
    row = _rows(tmp_path, 1, 1500, real, ("window",))["window"]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(_window_truth(real), rel=1e-3)


EVALS_50 = {k: 3.0 for k in range(50, 1501, 50)}


def test_a_step_landing_in_an_evaluation_slot_gives_no_figure(tmp_path):
    """+5 s at iteration 100, an evaluation's slot: the slot took 8 s where its siblings
    took 3 s, which made every slow interval of the window usual: -32.5 %, 0 problems."""
    rows = _rows(tmp_path, 1, 1500, EVALS_50 | {100: 8.0})
    for method, row in rows.items():
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method
        assert "from line 100 to line 101 over 1 iteration(s)" in row["problem"], method
        assert "recurring at that period take up to 3.05 s" in row["problem"], method


def test_a_step_beside_evaluations_is_named_not_an_evaluation(tmp_path):
    """+1 s at iteration 70 between evaluations at 50 and 100: the text named the healthy
    evaluation interval from line 50 to line 51."""
    row = _rows(tmp_path, 1, 1500, EVALS_50 | {70: 1.0}, ("window",))["window"]
    assert row["problem_kind"] == "timestamps_jump"
    assert "jumps forward 1.05 s from line 70 to line 71" in row["problem"]


def test_evaluations_of_uneven_length_keep_their_figure(tmp_path):
    """Evaluations taking 2.7 s to 3.3 s: each within what its siblings take."""
    real = {k: 3.0 + 0.3 * ((k // 50) % 3 - 1) for k in range(50, 1501, 50)}
    row = _rows(tmp_path, 1, 1500, real, ("window",))["window"]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(_window_truth(real), rel=1e-3)


# --- windows of fewer than 3 intervals with no printed rate -------------------------------

@pytest.mark.parametrize("every, n, step, measure", [
    (1, 300, {22: 0.1}, 2),      # --warmup 20 --measure 2: -53 %, 0 problems
    (50, 5000, {70: 1.0}, None)])  # a line every 50 iterations, default window: -18.6 %
def test_a_step_in_a_window_of_few_unprinted_intervals_gives_no_figure(tmp_path, every, n,
                                                                         step, measure):
    """Judged against the run's own pace around the window: its other lines state it."""
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=step)))
    kw = {} if measure is None else {"warmup": 20, "measure": measure}
    row = run_throughputs(parse_paths([tmp_path]), ["window"], **kw)["window"].iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump"
    assert "(the run's local pace)" in row["problem"]


@pytest.mark.parametrize("every, n, measure", [(1, 300, 2), (50, 5000, None)])
def test_a_window_of_few_unprinted_intervals_without_a_step_keeps_its_figure(
        tmp_path, every, n, measure):
    rng = np.random.default_rng(3)
    real = {k: 0.05 * float(rng.uniform(-0.1, 0.1)) for k in range(1, n + 1)}
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=real)))
    kw = {} if measure is None else {"warmup": 20, "measure": measure}
    row = run_throughputs(parse_paths([tmp_path]), ["window"], **kw)["window"].iloc[0]
    assert row["problem_kind"] == ""


def _megatron(folder: Path, step_at: int) -> None:
    """The dated Megatron fixture's dump, then 30 lines every 100 iterations of 500 ms
    (the first 750 ms), global batch 8, whole-second stamps; +20 s from line `step_at`."""
    src = next((Path(__file__).resolve().parents[1] / "data/megatron/dated_torchrun/1n4g")
               .glob("*.log")).read_text().split("\n")
    head, line = [], None
    for ln in src:
        if "iteration " in ln and "consumed samples" in ln:
            line = line or ln
        elif line is None:
            head.append(re.sub(r"log_interval( \.+ )10$", r"log_interval\g<1>100", ln))
    from datetime import datetime, timedelta
    t, out = datetime(2024, 5, 1, 10, 0, 5), list(head)
    for k in range(1, 31):
        ms = 750.0 if k == 1 else 500.0
        t += timedelta(seconds=ms / 10)
        stamp = (t + timedelta(seconds=20 if k >= step_at else 0)).strftime("%Y-%m-%d %H:%M:%S")
        x = re.sub(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]", f"[{stamp}]", line)
        x = re.sub(r"iteration\s+\d+/", f"iteration {100 * k:8d}/", x)
        x = re.sub(r"consumed samples:\s+\d+", f"consumed samples: {800 * k:12d}", x)
        out.append(re.sub(r"\(ms\): [\d.]+", f"(ms): {ms}", x))
    (folder / "1n4g").mkdir(parents=True)
    (folder / "1n4g/gpt_b2_bf16_1.log").write_text("\n".join(out) + "\n")


@pytest.mark.parametrize("step_at, kind", [(2, "timestamps_jump"), (99, "")])
def test_megatron_lines_every_100_iterations_with_a_step_in_the_window(tmp_path, step_at, kind):
    """The window's one interval read 70 s where every line prints 500 ms: 11.43 samples/s
    (-28.6 %), 0 problems; without the step 16.0."""
    _megatron(tmp_path, step_at)
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["problem_kind"] == kind
    if not kind:
        assert row["throughput"] == pytest.approx(16.0)


# --- whole-second stamps, nothing printed to time the window closer -----------------------

def _whole(text: list[str]) -> list[str]:
    return [re.sub(r"(\d\d:\d\d:\d\d)\.\d{6}", r"\1", ln) for ln in text]


@pytest.mark.parametrize("every, n, seconds, methods", [
    (10, 1500, 0.04373, ("window",)),           # a window of 4.37 s read as 4 s: +9.3 %
    (1, 300, 0.04373, ("dlperf", "window"))])
def test_whole_second_stamps_a_large_share_of_the_window_give_no_figure(
        tmp_path, every, n, seconds, methods):
    S.write(tmp_path, _whole(_unprinted(S.lines(n, every=every, seconds=seconds))))
    rows = run_throughputs(parse_paths([tmp_path]), list(methods))
    for method in methods:
        row = rows[method].iloc[0]
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "missing_timestamps"
        assert "whole seconds, up to 1 s off at each end" in row["problem"]


def test_whole_second_stamps_a_small_share_of_the_window_keep_their_figure(tmp_path):
    """0.3 s an iteration: a 30 s window, the second 3 % of it."""
    S.write(tmp_path, _whole(_unprinted(S.lines(1500, every=10, seconds=0.3))))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["problem_kind"] == "" and row["throughput"] == pytest.approx(128 / 0.3, rel=0.04)


# --- MLPerf: clock steps back spread over several blocks ----------------------------------



@pytest.mark.parametrize("shifts", [
    {0: -9900, 2: -4900, 4: -4900, 6: -4900},    # time to train -9.5 %, each block in bounds
    {k: -4500 for k in range(1, 9)},             # -14 %: most blocks stepped, the median too
    {}])                                         # the real logs as published
def test_clock_steps_back_spread_over_blocks_are_flagged(tmp_path, shifts):
    M.shifted(tmp_path, shifts)
    result = parse_paths([tmp_path])
    jumps = result.problems[result.problems["kind"] == "timestamps_jump"]
    assert len(jumps) == (5 if shifts else 0)
    if shifts:
        assert "clock steps inside the run" in jumps["reason"].iloc[0]
