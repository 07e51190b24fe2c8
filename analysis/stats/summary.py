"""Per-run throughput and per-case statistics: frames in, frames out."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import metrics as M
from analysis.collect import ParseResult
from analysis.errors import UsageError
from analysis.estimate import Estimate, RunData, train_columns
from analysis.schema import CASE_COLUMNS
from analysis.stats import gpt_flops, methods

#: Vocabulary size OneFlow GPT uses when the log does not state one (docs/formats.md §3).
GPT_DEFAULT_VOCAB = 51200
OUTLIER_MADS = 3.0
MAD_TO_SIGMA = 1.4826
OUTLIER_MIN_SPREAD = 0.005  # 0.5 % of the median
_TRAIN_COLS = ["epoch", "step", "timestamp", "metric", "value", "line", "rank"]

RUN_COLUMNS = [
    "run_id", "source", "family", "framework", "model", "precision", "num_nodes",
    "gpus_per_node", "num_devices", "batch_size_per_device", "global_batch_size", "repeat",
    "case", "group", "throughput", "latency_ms", "iterations", "method", "problem_kind",
    "problem", "memory_mib_max", "outlier",
]
SUMMARY_COLUMNS = [
    "framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
    "batch_size_per_device", "case", "group", "repeats", "throughput_median",
    "throughput_mean", "throughput_std", "throughput_min", "throughput_max", "ci_low",
    "ci_high", "speedup", "scaling_efficiency", "memory_mib_max", "latency_ms",
    "tflops_per_gpu", "tflops_formula", "tflops_per_gpu_seed002", "outliers", "problems",
]


def _memory_by_run(obs: pd.DataFrame) -> dict[str, float]:
    """Max MiB per run: nvidia-smi style `memory_used`, else the allocator peak."""
    mem = obs[obs["phase"] == M.MEMORY]
    used = mem[mem["metric"] == M.MEMORY_USED].groupby("run_id", observed=True)["value"].max()
    alloc = mem[mem["metric"] == M.MEMORY_MAX_ALLOCATED].groupby("run_id", observed=True)["value"].max()
    both = used.combine_first(alloc)
    return dict(zip(both.index.astype(str), both.to_numpy(dtype=float)))


def run_throughput(result: ParseResult, method: str = "dlperf", warmup: int | None = None,
                   measure: int | None = None) -> pd.DataFrame:
    """One row per run: its throughput by `method` and why it has none.

    Columns: run_id, source, family, framework, model, precision, num_nodes, gpus_per_node,
    num_devices, batch_size_per_device, global_batch_size, repeat, case, group, throughput
    (samples/s), latency_ms, iterations (in the measured window), method (what was computed),
    problem_kind / problem (why the figure is absent or degraded), memory_mib_max, outlier
    (more than 3 MADs from its case's median).
    """
    fn = methods.get(method)
    warmup = methods.DEFAULT_WARMUP if warmup is None else int(warmup)
    measure = methods.DEFAULT_MEASURE if measure is None else int(measure)
    obs, runs = result.observations, result.runs
    memory = _memory_by_run(obs)
    rows = []
    for run, train, metric_rows, arrays in _split_train(obs, runs):
        est = _estimate(fn, _run_data(run, train, metric_rows, arrays), warmup, measure)
        rows.append({
            **{c: getattr(run, c) for c in RUN_COLUMNS if c in runs.columns},
            "throughput": est.throughput,
            "latency_ms": est.latency * 1000.0,
            "iterations": est.iterations,
            "method": est.method,
            "problem_kind": est.problem_kind,
            "problem": est.problem,
            "memory_mib_max": memory.get(run.run_id, np.nan),
        })
    df = pd.DataFrame(rows, columns=[c for c in RUN_COLUMNS if c != "outlier"])
    for c in ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device",
              "global_batch_size", "repeat"):
        df[c] = df[c].astype("Int64")
    df["throughput"] = df["throughput"].astype(float)
    df["memory_mib_max"] = df["memory_mib_max"].astype(float)
    df["outlier"] = _outliers(df)
    return df


def _run_data(run, train: pd.DataFrame, metric_rows: dict, arrays: dict | None) -> RunData:
    gbs = run.global_batch_size
    return RunData(run.run_id, run.family, float(gbs) if pd.notna(gbs) else float("nan"),
                   train, run._asdict(), metric_rows, arrays)


def run_data(result: ParseResult, run_id: str) -> RunData:
    """One run as the throughput methods see it (for notebooks, tests and new rules)."""
    runs = result.runs[result.runs["run_id"] == run_id]
    if runs.empty:
        raise UsageError(f"no run {run_id!r}; runs: {', '.join(result.runs['run_id'][:5])}, ...")
    run, train, metric_rows, _ = next(_split_train(result.observations, runs))
    return _run_data(run, train, metric_rows, None)  # `train` may be changed before use


def _split_train(obs: pd.DataFrame, runs: pd.DataFrame):
    """Yield (run row, its training rows, metric -> row range, their train_columns) for
    every run.

    One stable sort by (run, metric, line) and slicing: per-run boolean masks or a
    groupby cost milliseconds per run, which dominates on campaigns of 10,000 runs.
    """
    train = obs.loc[obs["phase"] == M.TRAIN, _TRAIN_COLS + ["run_id"]]
    run_codes = train["run_id"].cat.codes.to_numpy()
    metric_codes = train["metric"].cat.codes.to_numpy()
    order = np.lexsort((train["line"].to_numpy(), metric_codes, run_codes))
    train = train.iloc[order]
    run_codes, metric_codes = run_codes[order], metric_codes[order]
    metrics = train["metric"].cat.categories
    cats = train["run_id"].cat.categories
    where = {rid: i for i, rid in enumerate(cats)}
    bounds = np.searchsorted(run_codes, np.arange(len(cats) + 1))
    train = train.drop(columns="run_id")
    columns = train_columns(train)
    empty = train.iloc[0:0]
    for run in runs.itertuples(index=False):
        i = where.get(run.run_id)
        if i is None or bounds[i] == bounds[i + 1]:
            yield run, empty, {}, None
            continue
        a, b = bounds[i], bounds[i + 1]
        mc = metric_codes[a:b]
        starts = np.flatnonzero(np.r_[True, mc[1:] != mc[:-1]])
        stops = np.r_[starts[1:], len(mc)]
        yield run, train.iloc[a:b], {
            metrics[mc[s]]: (int(s), int(e)) for s, e in zip(starts, stops)}, {
            k: v[a:b] for k, v in columns.items()}


def _estimate(fn, rd: RunData, warmup: int, measure: int) -> Estimate:
    if rd.train.empty:
        return Estimate.fail("no training lines", "no_training_lines")
    return fn(rd, warmup, measure)


def _case_key(df: pd.DataFrame):
    return [df[c].astype(object).where(df[c].notna(), None) for c in CASE_COLUMNS]


def _outliers(runs: pd.DataFrame) -> pd.Series:
    """True for repeats more than OUTLIER_MADS scaled median absolute deviations from the
    case median. The MAD is scaled by 1.4826 (a normal sigma) and floored at
    OUTLIER_MIN_SPREAD of the median, so very repeatable cases do not flag run-to-run
    noise of a fraction of a percent."""
    out = pd.Series(False, index=runs.index)
    if runs.empty:
        return out
    for _, g in runs.groupby(_case_key(runs), dropna=False, sort=False):
        v = g["throughput"].to_numpy(dtype=float)
        ok = np.isfinite(v)
        if ok.sum() < 3:
            continue
        med = np.median(v[ok])
        mad = max(MAD_TO_SIGMA * np.median(np.abs(v[ok] - med)), OUTLIER_MIN_SPREAD * abs(med))
        out.loc[g.index[ok]] = np.abs(v[ok] - med) > OUTLIER_MADS * mad
    return out


def bootstrap_median_ci(values: np.ndarray, confidence: float = 0.95, n_boot: int = 2000,
                        seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the median (NaN for < 2 values)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    meds = np.median(rng.choice(v, size=(n_boot, v.size), replace=True), axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(meds, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def gpt_tflops_per_gpu(global_batch: float, seq: float, layers: float, hidden: float,
                       vocab: float, latency_s: float, gpus: float) -> float:
    """Model TFLOP/s per GPU of a GPT iteration by seed 002's convention (96·…, counting
    recomputation; docs/formats.md §3)."""
    return gpt_flops.SEED002.tflops_per_gpu(global_batch, seq, layers, hidden, vocab,
                                            latency_s, gpus)


def summarize(result: ParseResult, method: str = "dlperf", warmup: int | None = None,
              measure: int | None = None, confidence: float = 0.95, n_boot: int = 2000,
              seed: int = 0, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per case (framework, model, precision, nodes, GPUs/node, batch size, case).

    Columns: SUMMARY_COLUMNS — repeats (runs with a throughput), throughput_median / mean /
    std / min / max over repeats (samples/s), ci_low / ci_high (bootstrap CI of the median),
    speedup (median / median of the 1n1g case with the same framework, model, precision and
    batch size), scaling_efficiency (speedup / devices), memory_mib_max, latency_ms, and for
    GPT cases tflops_per_gpu by tflops_formula (the one the log states, else seed 002's; see
    analysis.stats.gpt_flops) and tflops_per_gpu_seed002 (seed 002's 96 convention, to
    compare with it), outliers (flagged repeats), problems (runs of the case with any
    problem). Pass `runs` (from run_throughput) to avoid computing it twice.
    """
    per_run = run_throughput(result, method, warmup, measure) if runs is None else runs
    flagged = set(result.runs.loc[result.runs["problems"] != "", "run_id"])
    flagged |= set(per_run.loc[per_run["problem_kind"] != "", "run_id"])
    rows = []
    for _, g in per_run.groupby(_case_key(per_run), dropna=False, sort=False):
        first = g.iloc[0]
        v = g["throughput"].to_numpy(dtype=float)
        ok = v[np.isfinite(v)]
        lo, hi = bootstrap_median_ci(ok, confidence, n_boot, seed)
        lat = g["latency_ms"].to_numpy(dtype=float)
        lat = lat[np.isfinite(lat)]
        row = {c: first[c] for c in ("framework", "model", "precision", "num_nodes",
                                     "gpus_per_node", "num_devices", "batch_size_per_device",
                                     "case", "group")}
        row.update(
            repeats=int(ok.size),
            throughput_median=float(np.median(ok)) if ok.size else np.nan,
            throughput_mean=float(ok.mean()) if ok.size else np.nan,
            throughput_std=float(ok.std(ddof=1)) if ok.size > 1 else np.nan,
            throughput_min=float(ok.min()) if ok.size else np.nan,
            throughput_max=float(ok.max()) if ok.size else np.nan,
            ci_low=lo, ci_high=hi,
            memory_mib_max=float(g["memory_mib_max"].max()) if g["memory_mib_max"].notna().any() else np.nan,
            latency_ms=float(np.median(lat)) if lat.size else np.nan,
            **dict(zip(("tflops_per_gpu", "tflops_formula", "tflops_per_gpu_seed002"),
                       _tflops(result, g, lat))),
            outliers=int(g["outlier"].sum()),
            problems=int(g["run_id"].isin(flagged).sum()),
        )
        rows.append(row)
    df = pd.DataFrame(rows, columns=[c for c in SUMMARY_COLUMNS if c not in ("speedup", "scaling_efficiency")])
    df = _add_speedup(df)
    for c in ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device"):
        df[c] = df[c].astype("Int64")
    df = df.sort_values(["framework", "model", "precision", "batch_size_per_device", "case",
                         "num_devices", "num_nodes"], kind="stable", na_position="last")
    return df[SUMMARY_COLUMNS].reset_index(drop=True)


def _tflops(result: ParseResult, g: pd.DataFrame, lat_ms: np.ndarray) -> tuple[float, str, float]:
    """(TFLOP/s per GPU by the formula the case's log states, else seed 002's; that formula;
    TFLOP/s per GPU by seed 002's). A formula we do not know gives the log's printed figures."""
    nan = float("nan")
    model = g["model"].iloc[0]
    if not lat_ms.size or (pd.notna(model) and model != "gpt"):  # unknown model: GPT fields decide
        return nan, "", nan
    run = result.runs.set_index("run_id").loc[g["run_id"].iloc[0]]
    params = run["parameters"] if isinstance(run["parameters"], dict) else {}
    stated = str(params.get("flops_formula", "")).strip()
    formula = gpt_flops.known_formula(stated) if stated else gpt_flops.SEED002
    need = (run["global_batch_size"], run["seq_length"], run["num_layers"], run["hidden_size"],
            run["num_devices"])
    if formula is None:
        return _printed_tflops(result, g["run_id"]), stated, nan
    if any(pd.isna(x) for x in need):
        return nan, formula.text, nan
    vocab = run["vocab_size"] if pd.notna(run["vocab_size"]) else GPT_DEFAULT_VOCAB
    args = [float(x) for x in need[:4]] + [float(vocab), float(np.median(lat_ms)) / 1000.0,
                                           float(need[4])]
    return (formula.tflops_per_gpu(*args), formula.text,
            gpt_flops.SEED002.tflops_per_gpu(*args))


def _printed_tflops(result: ParseResult, run_ids: pd.Series) -> float:
    """Median over runs of each run's median printed `model_tflops_per_gpu` after its first
    (start-up) line, as the latency rule treats latencies; NaN when none is printed."""
    obs = result.observations
    rows = obs[(obs["metric"] == "model_tflops_per_gpu") & obs["run_id"].isin(run_ids)]
    per_run = [float(np.median(r.sort_values("line")["value"].to_numpy()[1:]))
               for _, r in rows.groupby("run_id", observed=True) if len(r) > 1]
    return float(np.median(per_run)) if per_run else float("nan")


def _add_speedup(df: pd.DataFrame) -> pd.DataFrame:
    key = ["framework", "model", "precision", "batch_size_per_device"]
    base = df[(df["num_nodes"] == 1) & (df["gpus_per_node"] == 1) & (df["case"] == "")]
    base = base.drop_duplicates(key).set_index(key)["throughput_median"]
    ref = [base.get(tuple(r), np.nan) for r in df[key].itertuples(index=False)]
    ref = np.asarray(ref, dtype=float)
    ref[df["case"].to_numpy() != ""] = np.nan  # GPT cases differ in more than device count
    df["speedup"] = df["throughput_median"].to_numpy(dtype=float) / ref
    devices = pd.to_numeric(df["num_devices"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    df["scaling_efficiency"] = df["speedup"].to_numpy(dtype=float) / devices
    return df


def iteration_throughput(result: ParseResult) -> pd.DataFrame:
    """Per-iteration throughput traces: one row per training line of each run.

    Columns: run_id, framework, model, precision, num_nodes, gpus_per_node,
    batch_size_per_device, repeat, case, step, timestamp, throughput, basis
    ('timestamps' = global batch x iterations / time since the previous line, else
    'printed' = the value the program printed). Lines are taken in line order; where the
    step or the clock does not advance from the previous line (a new epoch, a repeated
    step, a clock step back, two lines in one clock tick) the timestamp basis gives NaN.
    """
    obs, runs = result.observations, result.runs.set_index("run_id")
    train = obs[obs["phase"] == M.TRAIN]
    out = []
    for rid, df in train.groupby("run_id", observed=True, sort=False):
        run = runs.loc[rid]
        df = methods._lowest_rank(df)
        clock = df[df["step"].notna()].drop_duplicates("line").sort_values("line")
        steps = clock["step"].to_numpy(dtype=float)
        ts = clock["timestamp"].to_numpy(dtype=float)
        gbs = run["global_batch_size"]
        if np.isfinite(ts).sum() >= 2 and pd.notna(gbs):
            d_step, d_t = np.diff(steps), np.diff(ts)
            ok = (d_step > 0) & (d_t > 0)
            thr = np.full(d_t.shape, np.nan)
            thr[ok] = float(gbs) * d_step[ok] / d_t[ok]
            frame = pd.DataFrame({"step": steps[1:], "timestamp": ts[1:], "throughput": thr,
                                  "basis": "timestamps"})
        else:
            p = df[df["metric"] == M.THROUGHPUT].sort_values("step")
            frame = pd.DataFrame({"step": p["step"].to_numpy(dtype=float),
                                  "timestamp": p["timestamp"].to_numpy(dtype=float),
                                  "throughput": p["value"].to_numpy(dtype=float),
                                  "basis": "printed"})
        frame.insert(0, "run_id", rid)
        for c in ("framework", "model", "precision", "num_nodes", "gpus_per_node",
                  "batch_size_per_device", "repeat", "case"):
            frame[c] = run[c]
        out.append(frame)
    cols = ["run_id", "framework", "model", "precision", "num_nodes", "gpus_per_node",
            "batch_size_per_device", "repeat", "case", "step", "timestamp", "throughput", "basis"]
    if not out:
        return pd.DataFrame(columns=cols)
    df = pd.concat(out, ignore_index=True)[cols]
    df["step"] = df["step"].astype("Int64")
    return df
