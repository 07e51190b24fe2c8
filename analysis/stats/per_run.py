"""Per-run figures: each run's throughput by a named method, its memory peaks, and the
per-iteration traces."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from analysis import metrics as M
from analysis import schema
from analysis.collect import ParseResult, gc_paused
from analysis.errors import UsageError
from analysis.estimate import Estimate, RunData, lowest_rank
from analysis.parsers.base import ParsedLog
from analysis.schema import CASE_COLUMNS
from analysis.stats import energy, methods
from analysis.stats.case_stats import median
from analysis.stats.figure_checks import NO_FIGURE, as_iterations, check_figure
from analysis.stats.methods.window import evaluation_marks, late_or_stall

if TYPE_CHECKING:
    import pandas as pd

OUTLIER_MADS = 3.0
MAD_TO_SIGMA = 1.4826
OUTLIER_MIN_SPREAD = 0.005  # 0.5 % of the median

#: The columns of a per-run frame (declared in schema.PER_RUN).
RUN_COLUMNS = schema.names(schema.PER_RUN)


def _case_key(df: pd.DataFrame):
    return [df[c].astype(object).where(df[c].notna(), None) for c in CASE_COLUMNS]


#: Per-run memory columns: the metric each is the maximum of, over the run's devices and lines.
MEMORY_COLUMNS = {
    "memory_framework_mib": M.MEMORY_MAX_ALLOCATED,  # the framework's own allocator peak
    "memory_sampled_mib": M.MEMORY_USED,  # nvidia-smi samples (inline blocks or sidecars)
}


def run_throughput(result: ParseResult, method: str = "dlperf", warmup: int | None = None,
                   measure: int | None = None) -> pd.DataFrame:
    """One row per run: its throughput by `method` and why it has none.

    Columns: run_id, source, family, framework, model, precision, num_nodes, gpus_per_node,
    num_devices, batch_size_per_device, global_batch_size, repeat, case, group, throughput
    (samples/s), latency_ms, iterations (in the measured window), method (what was computed),
    problem_kind / problem (why the figure is absent or degraded), memory_framework_mib (the
    framework's own allocator peak: DLLogger / Megatron ``memory_max_allocated``) and
    memory_sampled_mib (the peak of the nvidia-smi samples), each the maximum over the run's
    devices and lines and NaN where the logs hold none, outlier (more than 3 MADs from its
    case's median).
    """
    return run_throughputs(result, [method], warmup, measure)[method]


def _iterations(name: str, value, default: int, least: int) -> int:
    """A warmup/measure count as the CLI takes it (None: `default`); a UsageError naming
    `name` for a negative, fractional or non-numeric one (it gave NaN or a shifted window)."""
    if value is None:
        return default
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = None
    if isinstance(value, bool) or count is None or count < least \
            or (isinstance(value, float) and value != count):
        raise UsageError(f"{name} must be an integer >= {least}, not {value!r}")
    return count


def window_counts(warmup, measure) -> tuple[int, int]:
    """(warmup, measure) as the methods use them: the defaults for None, else checked."""
    return (_iterations("warmup", warmup, methods.DEFAULT_WARMUP, 0),
            _iterations("measure", measure, methods.DEFAULT_MEASURE, 1))


def check_method_options(method: str, warmup=None, measure=None) -> None:
    """What a user asked for, checked before any log is read: a known method, window counts
    it can use, and no window option it does not read (UsageError / UnknownNameError)."""
    methods.get(method)
    window_counts(warmup, measure)
    methods.check_window_options(method, warmup, measure)


def run_throughputs(result: ParseResult, names, warmup: int | None = None,
                    measure: int | None = None) -> dict[str, pd.DataFrame]:
    """:func:`run_throughput` by each method of `names`, keyed by name: the runs are split
    and handed to the methods once for all of them."""
    return {name: _runs_frame(rows)
            for name, rows in run_records(result, names, warmup, measure).items()}


def run_records(result: ParseResult, names, warmup: int | None = None,
                measure: int | None = None) -> dict[str, list[dict]]:
    """The rows of :func:`run_throughputs`' frames as dicts (RUN_COLUMNS, a missing value as
    None or NaN), keyed by method name: what the summary is computed from, no frame built."""
    fns = {name: methods.get(name) for name in names}
    warmup, measure = window_counts(warmup, measure)
    with gc_paused():
        done = _compute(result, result.run_records(), fns, warmup, measure)
    return {name: done[name] for name in names}


def _compute(result: ParseResult, runs: list[dict], fns: dict, warmup: int,
             measure: int) -> dict[str, list[dict]]:
    by_run = result.parsed_by_run()
    power = energy.per_run_columns(result, runs)
    rows: dict[str, list[dict]] = {name: [] for name in fns}
    copied = [c for c in RUN_COLUMNS if runs and c in runs[0]]
    stated = _stated_problems(result.problem_list())
    kept = result.figures  # figures of earlier calls
    for run in runs:
        rid = run["run_id"]
        about = {c: run[c] for c in copied}
        mine = by_run.get(rid, ())
        peaks = _memory_peaks(mine)
        rd = None
        for name, fn in fns.items():
            key = f"{name} {warmup} {measure}"
            said = stated.get(rid, {})
            est = _kept_estimate(kept, rid, key, run, said)
            if est is None:
                if rd is None:  # the run's arrays, only for a figure not kept
                    rd, note = _measured_run(run, mine)
                est = check_figure(rd, _estimate(fn, rd, warmup, measure, note), said)
                if kept is not None:
                    kept.put(rid, key, run, said, _estimate_fields(est))
            rows[name].append({
                **about,
                "throughput": est.throughput,
                "latency_ms": est.latency * 1000.0,
                "iterations": est.iterations,
                "method": est.method,
                "problem_kind": est.problem_kind,
                "problem": est.problem,
                **peaks,
                **power.get(rid, energy.NONE),
            })
    if kept is not None:
        kept.save()
    for per in rows.values():
        mark_outliers(per)
    return rows


def figures_where_read(row: dict, parsed_logs: list[ParsedLog], problems: list,
                       files: list[str], names, warmup: int | None,
                       measure: int | None) -> dict[str, tuple[str, dict]]:
    """A run's figures by each method of `names`, made where the run was read (a worker
    process, so that runs are measured in parallel): {key: (digest, figure)}, each figure
    checked as :func:`run_records` checks it, under the digest of the run's `row` (as
    :meth:`ParseResult.run_records` gives it), `files` and `problems` known there;
    :func:`run_records` takes a figure only when the run's final row and problems give the
    same digest, and measures the run again otherwise."""
    from analysis.parse_cache import figure_digest

    warmup, measure = window_counts(warmup, measure)
    rid = row["run_id"]
    said = _stated_problems(problems).get(rid, {})
    rd, note = _measured_run(row, parsed_logs)
    out = {}
    for name in names:
        key = f"{name} {warmup} {measure}"
        est = check_figure(rd, _estimate(methods.get(name), rd, warmup, measure, note), said)
        out[key] = (figure_digest(key, row, sorted(files), said), _estimate_fields(est))
    return out


def _estimate_fields(est: Estimate) -> dict:
    """An Estimate as the parse cache keeps it: JSON values (a rule may give numpy
    numbers; the window as a list)."""
    fields = {f.name: getattr(est, f.name) for f in dataclasses.fields(est)}  # no deep copy
    fields.update(throughput=float(est.throughput), latency=float(est.latency),
                  iterations=int(est.iterations),
                  **{k: None if getattr(est, k) is None else [int(x) for x in getattr(est, k)]
                     for k in ("window", "printed")})
    return fields


def _kept_estimate(kept, run_id: str, key: str, row: dict | None,
                   stated: dict) -> Estimate | None:
    """The Estimate kept for the run by `key` (an earlier call made it from the same row,
    files and stated problems), or None."""
    fields = kept.get(run_id, key, row, stated) if kept is not None else None
    if fields is None:
        return None
    return Estimate(**{**fields, **{k: None if fields.get(k) is None else tuple(fields[k])
                                    for k in ("window", "printed")}})


def _stated_problems(problems: list) -> dict[str, dict[str, tuple[str, str]]]:
    """Per run, {kind: (kind, reason)} of its first problem of each kind that
    :func:`~analysis.stats.figure_checks.check_figure` reads (``NO_FIGURE``)."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for p in problems:
        if p.kind in NO_FIGURE:
            out.setdefault(str(p.run_id), {}).setdefault(p.kind, (p.kind, p.reason))
    return out


def _runs_frame(rows: list[dict]) -> pd.DataFrame:
    """The per-run frame (schema.PER_RUN) of :func:`run_records`' rows."""
    import pandas as pd

    return schema.coerce(pd.DataFrame(rows, columns=RUN_COLUMNS), schema.PER_RUN)


def _measured_run(run: dict, parsed_logs: list[ParsedLog]) -> tuple[RunData, str]:
    """(the run of `run`'s row and files as the methods measure it, what that read notes:
    :func:`~analysis.stats.figure_checks.as_iterations`)."""
    closing = _closing(parsed_logs)
    rd = _run_data(run, *_parsed_arrays(parsed_logs), closing, _evaluations(parsed_logs))
    rd.closing_seconds = _closing_seconds(parsed_logs, closing)
    return as_iterations(rd) if rd.metric_rows else (rd, "")


def _run_data(run: dict, train: pd.DataFrame, metric_rows: dict, arrays: dict | None,
              closing: tuple[float, int] | None = None,
              evaluations: tuple | None = None) -> RunData:
    gbs = run["global_batch_size"]
    lines, stamps, said, saves, apart = (None,) * 5 if evaluations is None else evaluations
    rd = RunData(run["run_id"], run["family"],
                 float("nan") if schema.is_missing(gbs) else float(gbs), train, run,
                 metric_rows, arrays, closing, lines, stamps, saves=saves, timed_apart=apart)
    if lines is not None and (train is not None or arrays is not None):
        rd.evaluations, rd.evaluation_stamps, rd.evaluations_other = evaluation_marks(
            rd.timeline(), lines, stamps, said)
    return rd


def run_data(result: ParseResult, run_id: str) -> RunData:
    """One run as the throughput methods measure it (for notebooks, tests and new rules), its
    training rows as a frame the caller may change before use: where its steps count
    samples, in iterations, as every method reads them (`_measured_run`)."""
    run = next((r for r in result.run_records() if r["run_id"] == run_id), None)
    if run is None:
        raise UsageError(f"no run {run_id!r}; runs: {', '.join(result.runs['run_id'][:5])}, ...")
    rd, _ = _measured_run(run, result.parsed_by_run().get(run_id, []))
    if rd.arrays is None:  # no training rows: the frame is empty
        rd.arrays = {k: np.empty(0, np.int64 if k == "line" else np.float64)
                     for k in _PART_COLUMNS}
    rd.train, rd.arrays = rd.train, None  # built from the arrays, and then read alone
    return rd


def _parsed_arrays(parsed_logs: list[ParsedLog]) -> tuple[None, dict, dict | None]:
    """(train=None, metric -> row range, the columns) of a run's training rows, from what its
    files gave (no frame): each metric's rows in line order (rows of one line in the order
    read)."""
    per_metric: dict[str, list[dict]] = {}
    for parsed in parsed_logs:
        for block in parsed.obs.blocks:
            for metric, part in _train_parts(block):
                per_metric.setdefault(metric, []).append(part)
    if not per_metric:
        return None, {}, None
    metric_rows, columns, at = {}, {k: [] for k in _PART_COLUMNS}, 0
    for metric, parts in per_metric.items():
        cols = {k: np.concatenate([p[k] for p in parts]) for k in _PART_COLUMNS}
        line = cols["line"]
        if len(parts) > 1 or (line[1:] < line[:-1]).any():
            order = np.argsort(line, kind="stable")
            cols = {k: v[order] for k, v in cols.items()}
        for k, v in cols.items():
            columns[k].append(v)
        metric_rows[metric] = (at, at + len(line))
        at += len(line)
    c = {k: np.concatenate(v) for k, v in columns.items()}
    step, rank, epoch = c["step"], c["rank"], c["epoch"]
    return None, metric_rows, {
        "step": np.where(step < 0, np.nan, step.astype(np.float64)),
        "timestamp": c["timestamp"].astype(np.float64), "line": c["line"].astype(np.int64),
        "rank": np.where(rank < 0, np.nan, rank.astype(np.float64)),
        "epoch": np.where(epoch < 0, -1.0, epoch.astype(np.float64)),
        "value": c["value"].astype(np.float64)}


_PART_COLUMNS = ("line", "step", "epoch", "rank", "timestamp", "value")


def _train_parts(block: dict):
    """(metric, columns) of a block's training rows, one per metric."""
    phase, metric = block["phase"], block["metric"]
    if isinstance(phase, str):
        if phase != M.TRAIN:
            return
        keep = None
    else:
        keep = np.asarray(phase, dtype=object) == M.TRAIN
        if not keep.any():
            return
    if isinstance(metric, str):
        yield metric, {k: block[k] if keep is None else block[k][keep] for k in _PART_COLUMNS}
        return
    names = np.asarray(metric, dtype=object)
    for name in dict.fromkeys((names if keep is None else names[keep]).tolist()):
        mask = names == name if keep is None else (names == name) & keep
        yield name, {k: block[k][mask] for k in _PART_COLUMNS}


def _memory_peaks(parsed_logs: list[ParsedLog]) -> dict[str, float]:
    """Per memory column (MEMORY_COLUMNS), the run's peak in MiB over its devices and lines
    (NaN where none)."""
    out = dict.fromkeys(MEMORY_COLUMNS, np.nan)
    for column, metric in MEMORY_COLUMNS.items():
        for parsed in parsed_logs:
            for b, at in parsed.obs.rows(M.MEMORY, metric):
                out[column] = float(np.fmax.reduce(b["value"][at], initial=out[column]))
    return out


def _closing(parsed_logs: list[ParsedLog]) -> tuple[float, int] | None:
    """The run's closing figure (``RunData.closing``): of the finite summary-phase throughputs
    of its lowest rank (or of none), the one on the last line, (value, line)."""
    rows = _lowest_rank([(float(b["value"][i]), int(b["line"][i]), _rank(b, i))
                         for parsed in parsed_logs
                         for b, at in parsed.obs.rows(M.SUMMARY, M.THROUGHPUT) for i in at
                         if np.isfinite(b["value"][i])])
    return max(rows, key=lambda r: r[1])[:2] if rows else None


#: The printed name of the seconds a closing line states its figure is over (DLE PyTorch
#: BERT: ``training_sequences_per_second`` is its samples over ``raw_train_time``).
CLOSING_SECONDS = "raw_train_time"


def _closing_seconds(parsed_logs: list[ParsedLog], closing: tuple[float, int] | None
                     ) -> float | None:
    """The seconds the run's closing line states its figure is over (``RunData.
    closing_seconds``), None where that line states none."""
    found = [float(b["value"][i]) for parsed in parsed_logs
             for b, at in parsed.obs.rows(M.SUMMARY, CLOSING_SECONDS) for i in at
             if closing is not None and int(b["line"][i]) == closing[1]]
    return found[-1] if found and np.isfinite(found[-1]) and found[-1] > 0 else None


def _evaluations(parsed_logs: list[ParsedLog]) -> tuple | None:
    """(the sorted lines, their timestamps, their (metric, value) pairs, the lines of saves,
    the lines of pauses timed apart) of the pauses the run's lowest rank (or none) names:
    its validation rows and its checkpoint saves (``RunData.evaluations``,
    ``evaluation_stamps``, ``saves``, ``timed_apart``: those with a ``timed_apart`` row);
    None without any."""
    rows = _lowest_rank([(int(b["line"][i]), float(b["timestamp"][i]), _name(b, i),
                          repr(float(b["value"][i])), phase, _rank(b, i))
                         for parsed in parsed_logs for phase in (M.VAL, M.CHECKPOINT)
                         for b, at in parsed.obs.rows(phase) for i in at])
    apart = np.unique([r[0] for r in rows if r[2] == M.TIMED_APART]).astype(np.int64)
    rows = [r for r in rows if r[2] != M.TIMED_APART]
    if not rows:
        return None
    rows.sort(key=lambda r: r[:2])
    lines = np.asarray([r[0] for r in rows], dtype=np.int64)
    first = np.unique(lines, return_index=True)[1]
    said: dict[int, list] = {}
    for r in rows:
        said.setdefault(r[0], []).append(r[2:4])
    saves = np.unique([r[0] for r in rows if r[4] == M.CHECKPOINT]).astype(np.int64)
    return (lines[first], np.asarray([r[1] for r in rows], dtype=float)[first],
            [sorted(said[int(line)]) for line in lines[first]], saves, apart)


def _name(block: dict, i: int) -> str:
    metric = block["metric"]
    return metric if isinstance(metric, str) else str(metric[i])


def _rank(block: dict, i: int) -> float:
    r = int(block["rank"][i])
    return np.nan if r < 0 else float(r)


def _lowest_rank(rows: list[tuple]) -> list[tuple]:
    """The rows (rank last, NaN for none) of the lowest rank or of no rank: one process's."""
    keep = lowest_rank(np.array([r[-1] for r in rows], dtype=float))
    return [r for r, k in zip(rows, keep, strict=True) if k]


def _estimate(fn, rd: RunData, warmup: int, measure: int, note: str = "") -> Estimate:
    """Method `fn`'s figure of `rd` (:func:`as_iterations` of the run), `note` (what that
    read) added to its method text."""
    if not rd.metric_rows:
        return Estimate.fail("no training lines", "no_training_lines")
    est = late_or_stall(rd, fn(rd, warmup, measure), lambda other: fn(other, warmup, measure))
    return dataclasses.replace(est, method=est.method + note) if note else est


def mark_outliers(rows: list[dict]) -> None:
    """Set ``outlier`` in each per-run row: True for repeats more than OUTLIER_MADS scaled
    median absolute deviations from the case median. The MAD is scaled by 1.4826 (a normal
    sigma) and floored at OUTLIER_MIN_SPREAD of the median, so very repeatable cases do not
    flag run-to-run noise of a fraction of a percent."""
    for row in rows:
        row["outlier"] = False
    for case in _case_groups(rows):
        ok = [r for r in case if math.isfinite(r["throughput"])]
        if len(ok) < 3:
            continue
        med = median([r["throughput"] for r in ok])
        mad = max(MAD_TO_SIGMA * median([abs(r["throughput"] - med) for r in ok]),
                  OUTLIER_MIN_SPREAD * abs(med))
        for r in ok:
            r["outlier"] = abs(r["throughput"] - med) > OUTLIER_MADS * mad


def _case_groups(rows: list[dict]) -> list[list[dict]]:
    """The rows of each case (CASE_COLUMNS, a missing value of any kind as None), cases in
    order of their first row."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        key = tuple(row[c] for c in CASE_COLUMNS)
        if not all(v is None or type(v) in (str, int) for v in key):  # NaN, NA: missing
            key = tuple(None if schema.is_missing(v) else v for v in key)
        groups.setdefault(key, []).append(row)
    return list(groups.values())


#: Columns of :func:`iteration_throughput`: the run's identity, then one training line.
TRACE_COLUMNS = ["run_id", "framework", "model", "precision", "num_nodes", "gpus_per_node",
                 "batch_size_per_device", "repeat", "case", "step", "timestamp", "throughput",
                 "basis"]


def iteration_throughput(result: ParseResult) -> pd.DataFrame:
    """Per-iteration throughput traces: one row per training line of each run.

    Columns: run_id, framework, model, precision, num_nodes, gpus_per_node,
    batch_size_per_device, repeat, case, step, timestamp, throughput, basis
    ('timestamps' = global batch x iterations / time since the previous line, else
    'printed' = the value the program printed). Lines are taken in line order; where the
    step or the clock does not advance from the previous line (a new epoch, a repeated
    step, a clock step back, two lines in one clock tick) the timestamp basis gives NaN.
    Runs come in the order the observations first name them.

    Computed over all runs at once (one sort, differences within run boundaries): a
    per-run pandas loop costs milliseconds per run.
    """
    import pandas as pd

    obs = result.observations
    train = obs[obs["phase"] == M.TRAIN]
    if train.empty:
        return pd.DataFrame(columns=TRACE_COLUMNS)
    code, names = pd.factorize(train["run_id"], sort=False)  # runs in order of first row
    names = np.asarray(names.astype(str), dtype=object)
    step = train["step"].to_numpy(dtype=float, na_value=np.nan)
    ts = train["timestamp"].to_numpy(dtype=float, na_value=np.nan)
    line = train["line"].to_numpy(dtype=np.int64)
    keep = _lowest_rank_rows(train, code, len(names))
    runs = result.runs.drop_duplicates("run_id").set_index("run_id")
    gbs = runs["global_batch_size"].reindex(names).to_numpy(dtype=float, na_value=np.nan)
    # the clock: each run's lines with a step, once per line, in line order
    clock = np.flatnonzero(keep & ~np.isnan(step))
    clock = clock[np.lexsort((line[clock], code[clock]))]
    first = np.ones(len(clock), dtype=bool)
    first[1:] = (code[clock][1:] != code[clock][:-1]) | (line[clock][1:] != line[clock][:-1])
    clock = clock[first]  # lines are unique per run now; the stable sort kept the first row
    c_code, c_step, c_ts = code[clock], step[clock], ts[clock]
    finite = np.bincount(c_code, weights=np.isfinite(c_ts).astype(float), minlength=len(names))
    timed = (finite >= 2) & np.isfinite(gbs)
    # timestamps basis: the difference to the previous line of the same run
    t_rows = np.flatnonzero(timed[c_code])
    t_rows = t_rows[1:][c_code[t_rows][1:] == c_code[t_rows][:-1]]  # not a run's first line
    d_step = c_step[t_rows] - c_step[t_rows - 1]
    d_t = c_ts[t_rows] - c_ts[t_rows - 1]
    ok = (d_step > 0) & (d_t > 0)
    thr = np.full(len(t_rows), np.nan)
    thr[ok] = gbs[c_code[t_rows]][ok] * d_step[ok] / d_t[ok]
    # printed basis: the program's throughput lines, by step
    printed = np.flatnonzero(keep & ~timed[code] & (train["metric"] == M.THROUGHPUT).to_numpy())
    printed = printed[np.lexsort((step[printed], code[printed]))]
    value = train["value"].to_numpy(dtype=float, na_value=np.nan)
    parts = pd.DataFrame({
        "_code": np.concatenate([c_code[t_rows], code[printed]]),
        "step": np.concatenate([c_step[t_rows], step[printed]]),
        "timestamp": np.concatenate([c_ts[t_rows], ts[printed]]),
        "throughput": np.concatenate([thr, value[printed]]),
        "basis": ["timestamps"] * len(t_rows) + ["printed"] * len(printed)})
    parts = parts.sort_values("_code", kind="stable", ignore_index=True)
    ids = names[parts.pop("_code").to_numpy()]
    about = runs[TRACE_COLUMNS[1:9]].reindex(ids).reset_index(drop=True)
    df = pd.concat([pd.DataFrame({"run_id": ids}), about, parts], axis=1)[TRACE_COLUMNS]
    df["step"] = df["step"].astype("Int64")
    return df


def _lowest_rank_rows(train: pd.DataFrame, code: np.ndarray, n_runs: int) -> np.ndarray:
    """Which rows of `train` are from their run's lowest rank (or name no rank): the rows
    one process wrote, as ``estimate.lowest_rank`` keeps them, for every run at once."""
    if "rank" not in train.columns:
        return np.ones(len(train), dtype=bool)
    rank = train["rank"].to_numpy(dtype=float, na_value=np.nan)
    lowest = np.full(n_runs, np.inf)
    has = ~np.isnan(rank)
    np.minimum.at(lowest, code[has], rank[has])
    return ~has | (rank == lowest[code])
