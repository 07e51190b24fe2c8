"""The `window` and `reported` methods read each run's arrays (`RunData.arrays`, slices of one
conversion for all runs) in plain numpy: no frame per run is built, and every figure,
method text and problem equals that of the rules as first written with pandas (kept below
as the reference) on every fixture family, through every way a run reaches the methods
(parsed files, a frame export, one run's frame) and on hand-built edge cases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from analysis import metrics as M
from analysis.collect import ParseResult, parse_paths
from analysis.estimate import Estimate, RunData
from analysis.stats import methods, run_data, run_throughput
from analysis.stats.figure_checks import check_figure
from analysis.stats.methods.base import CLOSING, truncated
from analysis.stats.methods.reported import RUNNING
from analysis.stats.methods.window import EVALUATIONS, RAMP_UP

FAMILIES = ["dll_pytorch", "dll_tensorflow", "megatron", "oneflow_bert", "oneflow_cnn",
            "oneflow_gpt", "oneflow_models", "libai", "gpu_memory"]
SETTINGS = [(20, 100), (0, 10), (5, 30), (50, 200)]


# ---- the reference: the rules as first written, on the run's frame ------------------------
def _ref_lowest_rank(df):
    if "rank" not in df.columns or df["rank"].isna().all():
        return df
    r = df["rank"].min()
    return df[(df["rank"] == r) | df["rank"].isna()]


def _ref_first(run: RunData) -> int | None:
    clock = _ref_lowest_rank(run.train)
    steps = clock["step"].dropna()
    return int(steps.min()) if len(steps) else None


def ref_window(run: RunData, warmup: int, measure: int) -> Estimate:
    label = f"window(warmup={warmup}, measure={measure})"
    if not np.isfinite(run.global_batch_size):
        return Estimate.fail("global batch size unknown", "missing_metadata", label)
    clock = _ref_lowest_rank(run.train)
    clock = clock[clock["step"].notna()].drop_duplicates("line")
    if clock.empty:
        return Estimate.fail("no training lines", "no_training_lines", label)
    steps = clock["step"].to_numpy(dtype=np.int64)
    ts = clock["timestamp"].to_numpy(dtype=np.float64)
    lines = clock["line"].to_numpy(dtype=np.int64)
    order = np.argsort(steps, kind="stable")
    steps, ts, lines = steps[order], ts[order], lines[order]
    if np.isfinite(ts).any():
        keep = np.isfinite(ts)
        steps, ts, lines = steps[keep], ts[keep], lines[keep]
        i0 = np.searchsorted(steps, warmup, side="left")
        if i0 >= len(steps):
            return truncated(label, warmup, measure, int(steps[-1]), _ref_first(run))
        i1 = np.searchsorted(steps, steps[i0] + measure, side="left")
        if i1 >= len(steps):
            return truncated(label, warmup, measure, int(steps[-1]), _ref_first(run))
        refused = run.refuse(lines[i0], lines[i1], label)
        if refused is not None:
            return refused
        val = run.evaluations if run.evaluations is not None else np.empty(0, np.int64)
        held = np.array([((val > x) & (val < y)).any() for x, y in zip(lines, lines[1:])],
                        dtype=bool)
        if held[i0:i1].any():  # intervals holding evaluation lines are left out
            use = ~held & (np.diff(steps) > 0)
            inside = np.concatenate([[0], np.where(use, np.diff(steps), 0)]).cumsum()
            i1 = np.searchsorted(inside, inside[i0] + measure, side="left")
            if i1 >= len(steps):
                return truncated(label, warmup, measure, int(steps[-1]), _ref_first(run))
            refused = run.refuse(lines[i0], lines[i1], label)
            if refused is not None:
                return refused
            n_it = int(inside[i1] - inside[i0])
            dt = float(np.diff(ts)[i0:i1][use[i0:i1]].sum())
            first = int(lines[i0 + np.flatnonzero(held[i0:i1])[0]])
            label += EVALUATIONS.format(n=int(held[i0:i1].sum()), line=first, what="evaluation")
            return Estimate(run.global_batch_size * n_it / dt, label, n_it, dt / n_it)
        n_it = int(steps[i1] - steps[i0])
        dt = ts[i1] - ts[i0]
        if dt <= 0:
            return Estimate.fail(f"non-increasing timestamps between steps {steps[i0]} and "
                                 f"{steps[i1]}", "bad_line", label)
        stamped = ts[i0:i1 + 1]
        if (stamped % 1 == 0).all() and 1.0 > 0.05 * dt:  # whole seconds, too coarse
            by_latency = _ref_latency_window(run, int(steps[i0]), n_it, label)
            if by_latency.ok:
                return dataclasses.replace(by_latency, method=by_latency.method + (
                    f" (its whole-second timestamps span {dt:g} s: too coarse)"))
        batches = _ref_batches(run, lines[i0 + 1:i1 + 1])
        if (batches != run.global_batch_size).any():  # a batch-size ramp-up
            samples = float((batches * np.diff(steps[i0:i1 + 1])).sum())
            return Estimate(samples / dt, label + RAMP_UP, n_it, dt / n_it)
        return Estimate(run.global_batch_size * n_it / dt, label, n_it, dt / n_it)
    return _ref_latency_window(run, warmup, measure, label)


def _ref_latency_window(run: RunData, warmup: int, measure: int, label: str) -> Estimate:
    lat = _ref_lowest_rank(run.series(M.LATENCY))
    lat = lat[lat["step"].notna()].sort_values("step")
    if lat.empty:
        return Estimate.fail("the log has neither timestamps nor per-iteration latencies",
                             "missing_timestamps", label)
    steps = lat["step"].to_numpy(dtype=np.int64)
    prev = np.concatenate([[0], steps[:-1]])
    inside = (prev >= warmup) & (steps <= warmup + measure)
    if not inside.any() or steps[-1] < warmup + measure:
        return truncated(label, warmup, measure, int(steps[-1]), _ref_first(run))
    inside_lines = lat["line"].to_numpy(dtype=np.int64)[inside]
    refused = run.refuse(inside_lines.min(), inside_lines.max(), label, timestamps=False)
    if refused is not None:
        return refused
    n_it = steps[inside] - prev[inside]
    seconds = float((lat["value"].to_numpy()[inside] * n_it).sum())
    iters = int(n_it.sum())
    if iters <= 0 or not seconds > 0:
        return Estimate.fail(f"the printed latencies add up to {seconds:g} s over {iters} "
                             "iterations", "impossible_value", label)
    latency = seconds / iters
    label += " from printed latencies"
    batches = _ref_batches(run, lat["line"].to_numpy(dtype=np.int64)[inside])
    if (batches != run.global_batch_size).any():
        return Estimate(float((batches * n_it).sum()) / seconds, label + RAMP_UP, iters, latency)
    return Estimate(run.global_batch_size / latency, label, iters, latency)


def _ref_batches(run: RunData, lines: np.ndarray) -> np.ndarray:
    """The global batch printed on each of `lines`, else the run's."""
    printed = run.series(M.GLOBAL_BATCH)
    at = dict(zip(printed["line"].astype(int), printed["value"].astype(float)))
    return np.array([at.get(int(ln), run.global_batch_size) for ln in lines], dtype=float)


def _ref_intervals(run: RunData, metric: str, warmup: int) -> pd.DataFrame:
    df = _ref_lowest_rank(run.series(metric))
    df = df[df["step"].notna()]
    start = df["step"].shift(fill_value=0)  # the interval a printed value measured
    start = start.where(start <= df["step"], 0)  # steps restart: from 0
    return df[(df["step"] > warmup) & (start >= warmup)]


def ref_reported(run: RunData, warmup: int, measure: int) -> Estimate:
    if run.closing is not None and run.closing[0] > 0:  # the log's own closing figure
        method = CLOSING.format(line=run.closing[1])
        lines = _ref_lowest_rank(run.train)
        lines = lines.loc[lines["step"].notna(), "line"]
        refused = run.refuse(lines.min(), lines.max(), method, timestamps=False) \
            if len(lines) else None
        return refused or Estimate(run.closing[0], method)
    label = f"reported(warmup={warmup})"
    if run.family == "libai":  # running means: global batch / each interval's latency
        label += RUNNING.format(what="a mean since the run's start")
        df = _ref_intervals(run, M.LATENCY, warmup)
        if df.empty:
            return Estimate.fail(
                f"the printed throughputs are running means (a mean since the run's start) "
                f"and no interval after iteration {warmup} could be recovered from them (too "
                "short, or resumed from a checkpoint: docs/formats.md)", "truncated", label)
        lines = df["line"].to_numpy(dtype=np.int64)
        refused = run.refuse(lines.min(), lines.max(), label, timestamps=False)
        if refused is not None:
            return refused
        lat = df["value"].to_numpy(dtype=np.float64)
        return Estimate(float(np.median(run.global_batch_size / lat)), label, len(lat),
                        float(np.median(lat)))
    if not (run.train["metric"] == M.THROUGHPUT).any():  # the reason text is the module's
        from analysis.stats.methods.base import train_arrays
        from analysis.stats.methods.reported import _none_printed
        return _none_printed(run, train_arrays(run), label)
    df = _ref_intervals(run, M.THROUGHPUT, warmup)
    vals = df["value"].to_numpy(dtype=np.float64)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return Estimate.fail(f"no throughput printed for an interval after iteration {warmup}",
                             "truncated", label)
    lines = df["line"].to_numpy(dtype=np.int64)
    refused = run.refuse(lines.min(), lines.max(), label, timestamps=False)
    if refused is not None:
        return refused
    assert (vals > 0).all()  # the fixtures print no zero (test_methods covers those)
    return Estimate(float(np.median(vals)), label, int(vals.size))


REFERENCE = {"window": ref_window, "reported": ref_reported}


# ---- helpers --------------------------------------------------------------------------------
def _same_number(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == b


def assert_same(new: Estimate, old: Estimate, what: str) -> None:
    assert _same_number(new.throughput, old.throughput), (what, new, old)
    assert _same_number(new.latency, old.latency), (what, new, old)
    assert (new.method, new.iterations, new.problem_kind, new.problem) == (
        old.method, old.iterations, old.problem_kind, old.problem), (what, new, old)


def assert_same_row(row, old: Estimate, what: str) -> None:
    """A row of run_throughput (latency in ms) against an Estimate."""
    assert _same_number(row.latency_ms, old.latency * 1000.0), (what, row, old)
    assert_same(Estimate(row.throughput, row.method, int(row.iterations), old.latency,
                         row.problem_kind, row.problem), old, what)


@pytest.fixture(scope="module")
def parsed(data_dir):
    return parse_paths([data_dir / f for f in FAMILIES])


@pytest.fixture(scope="module")
def from_frames(parsed):
    """The same runs as a frame export gives them (no parsed files behind them)."""
    return ParseResult(parsed.observations, parsed.runs, parsed.problems)


def _ref_closing(result: ParseResult) -> dict:
    """Each run's closing figure as first written with pandas: the lowest rank's (no rank
    counts as lowest) last finite summary-phase throughput, (value, line)."""
    o = result.observations
    o = o[(o["phase"] == M.SUMMARY) & (o["metric"] == M.THROUGHPUT) & o["value"].notna()]
    out = {}
    for rid, g in o.groupby("run_id", observed=True):
        g = _ref_lowest_rank(g).sort_values("line")
        out[str(rid)] = (float(g["value"].iloc[-1]), int(g["line"].iloc[-1]))
    return out


# ---- fixtures: every family, every way in -------------------------------------------------
def test_closing_figures_are_the_reference_ones(parsed, from_frames):
    """`RunData.closing` from parsed files, from a frame export and for one run equals the
    pandas reference; the fixtures have runs with and without one."""
    ref = _ref_closing(parsed)
    assert len(ref) >= 3 and len(ref) < len(parsed.runs)
    for rid in parsed.runs["run_id"]:
        assert run_data(parsed, rid).closing == ref.get(rid), rid
        assert run_data(from_frames, rid).closing == ref.get(rid), rid
    rows = run_throughput(parsed, "reported").set_index("run_id")
    for rid, (value, line) in ref.items():
        assert rows.loc[rid, "throughput"] == value
        assert rows.loc[rid, "method"] == CLOSING.format(line=line)


@pytest.mark.parametrize("name", ["window", "reported"])
@pytest.mark.parametrize("warmup,measure", SETTINGS)
def test_every_fixture_run_gives_the_reference_figures(parsed, from_frames, name, warmup,
                                                       measure):
    fn, ref = methods.get(name), REFERENCE[name]
    by_parts = run_throughput(parsed, name, warmup, measure)
    by_frames = run_throughput(from_frames, name, warmup, measure)
    assert parsed.parts is not None and from_frames.parts is None
    compared, figures = 0, 0
    for a, b in zip(by_parts.itertuples(), by_frames.itertuples()):
        run = run_data(parsed, a.run_id)
        if run.train.empty:
            continue
        old = ref(run, warmup, measure)
        assert_same(fn(run, warmup, measure), old, f"{a.run_id} (run_data)")
        checked = check_figure(run, fn(run, warmup, measure), {})  # what per_run adds
        assert_same_row(a, checked, f"{a.run_id} (parsed files)")
        assert_same_row(b, checked, f"{b.run_id} (frame export)")
        plain = RunData(run.run_id, run.family, run.global_batch_size,
                        run.train.sample(frac=1.0, random_state=1), run.meta)
        assert_same(fn(plain, warmup, measure), ref(plain, warmup, measure),
                    f"{a.run_id} (a shuffled frame, no metric_rows)")
        compared += 1
        figures += old.ok
    assert compared >= 20 and figures >= 3


# ---- hand-built edge cases ------------------------------------------------------------------
def _frame(steps, ts, thr=None, latency=None, ranks=None, loss_lines=True) -> pd.DataFrame:
    rows = []
    for i, (s, t) in enumerate(zip(steps, ts)):
        r = -1 if ranks is None else ranks[i]
        if thr is not None:
            rows.append((s, t, M.THROUGHPUT, thr[i], i + 1, r))
        if latency is not None:
            rows.append((s, t, M.LATENCY, latency[i], i + 1, r))
        if loss_lines:
            rows.append((s, t, M.LOSS, 1.0, i + 1, r))
    df = pd.DataFrame(rows, columns=["step", "timestamp", "metric", "value", "line", "rank"])
    df["step"] = df["step"].astype("Int64").mask(df["step"] < 0)
    df["rank"] = df["rank"].astype("Int64").mask(df["rank"] < 0)
    return df


def _edge_cases():
    rng = np.random.default_rng(7)
    n = 160
    steps = np.arange(1, n + 1)
    ts = 1000.0 + 0.5 * steps + rng.uniform(0, 0.01, n)
    thr = rng.uniform(900, 1100, n)
    lat = rng.uniform(0.3, 0.5, n)
    nan = np.full(n, np.nan)
    ranks = np.tile([1, 0, 2, 3], n // 4)
    holes = steps.copy()
    holes[::7] = -1  # lines without a step
    dup = np.sort(rng.integers(1, 60, n)) * 3  # repeated steps (> 16 rows: numpy's quicksort)
    back = steps.copy()
    back[70] = 40  # a step going back inside the window
    late = ts.copy()
    late[90] -= 30.0  # a timestamp going back
    some = ts.copy()
    some[rng.random(n) < 0.3] = np.nan  # timestamps on some lines only
    return {
        "clean": _frame(steps, ts, thr=thr),
        "ranks": _frame(np.repeat(steps, 4)[:n], np.repeat(ts, 4)[:n], thr=thr, ranks=ranks),
        "no steps on some lines": _frame(holes, ts, thr=thr),
        "latency only": _frame(steps, nan, latency=lat),
        "latency, repeated steps": _frame(dup, nan, latency=lat),
        "latency, ranks": _frame(steps, nan, latency=lat, ranks=ranks),
        "steps back": _frame(back, ts, thr=thr),
        "steps back, latency": _frame(back, nan, latency=lat),
        "clock back": _frame(steps, late, thr=thr),
        "some timestamps": _frame(steps, some, thr=thr, latency=lat),
        "throughput only": _frame(steps, ts, thr=thr, loss_lines=False),
        "no clock at all": _frame(steps, nan, thr=thr),
        "short": _frame(steps[:30], ts[:30], thr=thr[:30], latency=lat[:30]),
        "non-finite printed": _frame(steps, ts, thr=np.where(steps % 3 == 0, np.nan, thr)),
        "no training steps": _frame(np.full(n, -1), ts, thr=thr),
    }


@pytest.mark.parametrize("case", list(_edge_cases()))
@pytest.mark.parametrize("name", ["window", "reported"])
def test_edge_cases_give_the_reference_figures(case, name):
    frame = _edge_cases()[case]
    fn, ref = methods.get(name), REFERENCE[name]
    for gbs in (256.0, float("nan")):
        for warmup, measure in SETTINGS:
            run = RunData("r", "test", gbs, frame, {})
            assert_same(fn(run, warmup, measure), ref(run, warmup, measure),
                        f"{case}, gbs {gbs}, {warmup}/{measure}")


def test_the_methods_build_no_frame_from_a_runs_arrays(parsed):
    """Runs handed over as arrays (the campaign path) stay arrays: `RunData.train`, the frame
    built on first use, is never built by these methods."""
    seen = []
    original = RunData.train

    def spy(self):
        seen.append(self.run_id)
        return original.fget(self)

    from analysis.stats import per_run

    try:
        RunData.train = property(spy, original.fset)
        for name in ("window", "reported"):
            by_run = parsed.parsed_by_run()
            for run in parsed.run_records():
                _, metric_rows, arrays = per_run._parsed_arrays(by_run.get(run["run_id"], ()))
                if metric_rows:
                    rd = per_run._run_data(run, None, metric_rows, arrays)
                    methods.get(name)(rd, methods.DEFAULT_WARMUP, methods.DEFAULT_MEASURE)
    finally:
        RunData.train = original
    assert seen == []


def test_all_methods_at_once_give_each_methods_own_frame(parsed, from_frames):
    """`run_throughputs` hands each run to every method once; each frame is the one
    `run_throughput` gives for that method alone."""
    from analysis.stats.per_run import run_throughputs

    for result in (parsed, from_frames):
        together = run_throughputs(result, methods.names(), 5, 30)
        assert list(together) == methods.names()
        for name, frame in together.items():
            pd.testing.assert_frame_equal(frame, run_throughput(result, name, 5, 30))


def _ref_agreement(frames: dict, threshold: float = 0.05) -> pd.DataFrame:
    """method_agreement as first written: a pandas groupby per method."""
    from analysis.schema import CASE_COLUMNS
    from analysis.stats import agreement
    from analysis.stats.per_run import _case_key

    names = list(frames)
    cases: dict = {}
    for name, runs in frames.items():
        for key, g in runs.groupby(_case_key(runs), dropna=False, sort=False):
            row = cases.setdefault(key, {c: g[c].iloc[0]
                                         for c in (*CASE_COLUMNS, *agreement._SETTINGS)})
            v = g["throughput"].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            row[f"median_{name}"] = float(np.median(v)) if v.size else np.nan
            row[f"repeats_{name}"] = int(v.size)
    rows = [agreement._compare(row, names, threshold) for row in cases.values()]
    out = pd.DataFrame(rows, columns=agreement.agreement_columns(names))
    for name in names:
        out[f"repeats_{name}"] = out[f"repeats_{name}"].fillna(0).astype("int64")
    out["disagree"] = out["disagree"].astype(bool)
    return out


def test_agreement_without_a_groupby_is_the_groupby_frame(parsed):
    from analysis.stats.agreement import method_agreement, runs_by_method

    for warmup, measure in SETTINGS:
        frames = runs_by_method(parsed, warmup, measure)
        pd.testing.assert_frame_equal(method_agreement(frames), _ref_agreement(frames))
