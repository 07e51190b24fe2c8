"""Throughput methods on hand-built runs (numbers checked by hand)."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import analysis
from analysis import metrics as M
from analysis import report, stats
from analysis.errors import UnknownNameError, UsageError
from analysis.estimate import RunData
from analysis.stats import describe_method, methods
from analysis.stats.gpt_flops import SEED002

#: The fixture logs (not `from conftest import DATA`: in a whole-suite run "conftest" may be
#: another folder's).
DATA = Path(__file__).resolve().parents[1] / "data"


def _run(steps, ts, thr=None, latency=None, gbs=256.0, ranks=None):
    rows = []
    for i, (s, t) in enumerate(zip(steps, ts)):
        r = -1 if ranks is None else ranks[i]
        if thr is not None:
            rows.append((s, t, M.THROUGHPUT, thr[i], i + 1, r))
        if latency is not None:
            rows.append((s, t, M.LATENCY, latency[i], i + 1, r))
        rows.append((s, t, M.LOSS, 1.0, i + 1, r))
    df = pd.DataFrame(rows, columns=["step", "timestamp", "metric", "value", "line", "rank"])
    df["step"] = df["step"].astype("Int64")
    df["rank"] = df["rank"].astype("Int64").mask(df["rank"] < 0)
    return RunData("r", "test", gbs, df, {})


def test_window_uses_timestamps_of_the_window_edges():
    steps = np.arange(1, 151)
    ts = 1000.0 + 0.5 * steps  # 2 iterations per second
    ts[:5] += np.array([-30.0, -3, -2, -1, -0.5])  # slow start is outside the window
    est = methods.get("window")(_run(steps, ts), warmup=20, measure=100)
    assert est.ok and est.iterations == 100
    assert est.throughput == pytest.approx(256 * 100 / 50.0)
    assert est.latency == pytest.approx(0.5)


def test_window_reports_truncation():
    steps = np.arange(1, 60)
    est = methods.get("window")(_run(steps, 1000.0 + steps), warmup=20, measure=100)
    assert not est.ok and est.problem_kind == "truncated"
    assert "stops at iteration 59" in est.problem


def test_window_falls_back_to_printed_latency_without_timestamps():
    steps = np.arange(10, 210, 10)
    lat = np.full(steps.size, 0.4)
    lat[0] = 2.0  # start-up interval, outside the window
    est = methods.get("window")(_run(steps, np.full(steps.size, np.nan), latency=lat, gbs=2.0),
                         warmup=10, measure=100)
    assert est.ok and est.iterations == 100
    assert est.latency == pytest.approx(0.4)
    assert est.throughput == pytest.approx(5.0)


def test_window_without_any_clock_says_so():
    steps = np.arange(20, 220, 20)
    est = methods.get("window")(_run(steps, np.full(steps.size, np.nan), thr=np.ones(steps.size)), 20, 100)
    assert est.problem_kind == "missing_timestamps"


def test_window_uses_the_lowest_rank_only():
    steps = np.repeat(np.arange(1, 151), 2)
    ranks = np.tile([0, 1], 150)
    ts = 1000.0 + steps.astype(float)
    ts[ranks == 1] += 7.0  # rank 1 prints later; must be ignored
    ts[(ranks == 1) & (steps == 120)] += 50.0
    est = methods.get("window")(_run(steps, ts, ranks=ranks), 20, 100)
    assert est.throughput == pytest.approx(256.0)


def test_reported_is_median_after_warmup():
    steps = np.arange(20, 220, 20)
    thr = np.array([100.0, 900, 1000, 1100, 1000, 1000, 990, 1010, 1000, 1000])
    est = methods.get("reported")(_run(steps, np.full(steps.size, np.nan), thr=thr), warmup=20, measure=0)
    assert est.throughput == 1000.0 and est.iterations == 9


def test_unknown_method_lists_valid_names():
    with pytest.raises(UnknownNameError, match="dlperf, reported, window"):
        methods.get("fastest")
    assert "30" in describe_method("window", warmup=30, measure=50)


def test_gpt_tflops_formula_seed_002_row():
    # DP_1x1x1_2_1536x16: B=2, s=2048, l=16, h=1536, V=51200, 406.16 ms on 1 GPU
    t = SEED002.tflops_per_gpu(2, 2048, 16, 1536, 51200, 0.40616, 1)
    flops = 96 * 2 * 2048 * 16 * 1536**2 * (1 + 2048 / (6 * 1536) + 51200 / (16 * 16 * 1536))
    assert t == pytest.approx(flops / 0.40616 / 1e12)
    assert 49 < t < 50


def test_window_with_a_clock_step_back_inside_gives_no_figure():
    steps = np.arange(1, 151)
    ts = 1000.0 + 0.5 * steps
    ts[59:] -= 3600.0  # the clock steps back an hour at iteration 60, inside 20..120
    est = methods.get("window")(_run(steps, ts), warmup=20, measure=100)
    assert not est.ok and est.problem_kind == "timestamps_backwards"
    assert "from line 59 to line 60" in est.problem
    ts = 1000.0 + 0.5 * steps
    ts[59:] += 3600.0  # a step forward keeps the order but is no hour of training either
    est = methods.get("window")(_run(steps, ts), warmup=20, measure=100)
    assert not est.ok and est.problem_kind == "timestamps_jump"
    assert "jumps forward 3600.5 s from line 59 to line 60 over 1 iteration(s)" in est.problem


def test_coarse_clock_with_equal_timestamps_is_in_order():
    steps = np.arange(1, 151)
    ts = 1000.0 + np.floor(steps / 3.0)  # whole seconds, three lines per tick
    est = methods.get("window")(_run(steps, ts), warmup=20, measure=100)
    assert est.ok and est.throughput == pytest.approx(256 * 100 / (np.floor(120 / 3) - np.floor(20 / 3)))


def test_repeated_steps_refuse_printed_value_methods():
    steps = np.r_[np.arange(10, 110, 10), np.arange(10, 210, 10)]  # restarted and appended
    lat = np.full(steps.size, 0.4)
    thr = np.full(steps.size, 5.0)
    run = _run(steps, np.full(steps.size, np.nan), thr=thr, latency=lat, gbs=2.0)
    for est in (methods.get("reported")(run, 20, 0), methods.get("window")(run, 10, 50)):
        assert not est.ok and est.problem_kind == "steps_backwards", est
        assert "line 11 (step 10) does not come after line 10 (step 100)" in est.problem


def test_iteration_trace_has_no_negative_or_infinite_throughput(tmp_path):
    from pathlib import Path

    from analysis.collect import parse_paths
    from analysis.stats import iteration_throughput

    src = Path(__file__).resolve().parents[1] / "data" / "dll_pytorch" / "no_fraction"
    lines = (src / "1n1g" / "r50_b256_amp_1.log").read_text().split("\n")
    lines[59] = lines[59].replace("2021-03-23 11:", "2021-03-23 10:")  # one line an hour back
    (tmp_path / "1n1g").mkdir()
    (tmp_path / "1n1g" / "r50_b256_amp_1.log").write_text("\n".join(lines))
    for root in (src, tmp_path):  # whole-second clock: lines share a tick; and a step back
        trace = iteration_throughput(parse_paths([root]))
        thr = trace["throughput"].to_numpy(dtype=float)
        assert not np.isinf(thr).any() and not (thr <= 0).any()
        assert np.isfinite(thr).sum() > 50


def test_each_method_is_a_module_of_its_name():
    """Adding a throughput method is adding one module (the one Registry, as log families and
    workloads); the order of presentation is dlperf, window, reported."""
    import analysis.stats.methods as package

    assert package._registry.module_names() == sorted(methods.names())
    assert methods.names() == ["dlperf", "window", "reported"]
    for cls in package._registry.classes():
        assert cls.__module__ == f"analysis.stats.methods.{cls.name}"
        assert methods.get(cls.name) is cls.estimate
    with pytest.raises(UnknownNameError, match="dlperf"):
        methods.get("fastest")


@pytest.mark.parametrize("steps, warmup, kept", [
    ([100, 200, 300], 20, [False, True, True]),  # the first value measured steps 1-100
    ([19, 20, 21, 22], 20, [False, False, True, True]),  # one value per iteration: step > 20
    # a new epoch restarts steps: its iterations count on run-wide (61-80 at its step 20)
    ([40, 60, 20, 40, 60], 20, [False, True, True, True, True]),
    ([10, 20, 10, 20, 10], 20, [False, False, True, True, True]),  # epochs of 10
    ([10, 30, 50], 30, [False, False, True]),
])
def test_reported_keeps_values_whose_interval_is_past_the_warmup(steps, warmup, kept):
    from analysis.stats.methods.reported import after_warmup

    assert after_warmup(np.array(steps, dtype=float), warmup).tolist() == kept


def test_reported_leaves_out_a_printed_zero_and_flags_the_run(tmp_path):
    """A real OneFlow CNN log whose iteration-100 line prints samples/s 0.000 (a stalled
    interval): it was a value of the median, pulling it down; now it is left out and the
    run says why, naming the line."""
    import sys
    from pathlib import Path

    from analysis.collect import parse_paths
    from analysis.stats import run_throughput

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
    import synth

    case = tmp_path / "1n1g"
    case.mkdir()
    lines = synth.oneflow_cnn_log(1, 1, 128, "fp32", 3).splitlines()
    printed = [i for i, ln in enumerate(lines) if "samples/s:" in ln]
    stalled = [i for i in printed if ", iter 100," in lines[i] or ", iter 110," in lines[i]]
    for i in stalled:
        head, _, tail = lines[i].partition("samples/s: ")
        lines[i] = head + "samples/s: 0.000 " + tail.split()[1]
    (case / "r50_b128_fp32_1.log").write_text("\n".join(lines) + "\n")
    run = run_throughput(parse_paths([tmp_path]), "reported").iloc[0]
    speed = synth.throughput("fp32", 128, 1, 1, 3)
    assert run["throughput"] == pytest.approx(speed, rel=1e-6)  # not pulled towards 0
    assert run["iterations"] == len(printed) - 2 - 2  # warm-up intervals and the zeros out
    assert run["problem_kind"] == "zero_throughput"
    assert f"lines {stalled[0] + 1}, {stalled[1] + 1}" in run["problem"]


def test_reported_with_only_zeros_after_the_warmup_has_no_figure():
    steps = np.arange(20, 120, 20)
    thr = np.array([500.0, 0.0, 0.0, 0.0, 0.0])
    est = methods.get("reported")(_run(steps, np.full(steps.size, np.nan), thr=thr), 20, 0)
    assert not est.ok and est.problem_kind == "zero_throughput"
    assert "lines 2, 3, 4, 5" in est.problem


@pytest.mark.parametrize(("warmup", "measure", "message"), [
    (-5, None, "warmup must be an integer >= 0, not -5"),
    (None, 0, "measure must be an integer >= 1, not 0"),
    (2.5, None, "warmup must be an integer >= 0, not 2.5"),
    ("twenty", None, "warmup must be an integer >= 0, not 'twenty'")])
def test_a_bad_window_from_python_or_a_notebook_is_an_error(warmup, measure, message):
    # the CLI refused these; from a notebook, warmup=-5 moved the window and measure=0 gave
    # NaN for every run without a word
    result = analysis.parse_paths([DATA / "dll_pytorch" / "seed003_2020"], cache=False)
    with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
        stats.run_throughput(result, method="window", warmup=warmup, measure=measure)
    with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
        report.build(DATA / "no-such-folder", warmup=warmup, measure=measure)  # before parsing
    assert stats.run_throughput(result, method="window", warmup="20", measure=100.0)[
        "throughput"].notna().all()
