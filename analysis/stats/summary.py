"""Per-case statistics: median of repeats, interval, speedup, efficiency, GPT TFLOP/s."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.collect import ParseResult
from analysis.stats import gpt_flops
from analysis.stats.per_run import _case_key, run_throughput

#: Vocabulary size OneFlow GPT uses when the log does not state one (docs/formats.md §3).
GPT_DEFAULT_VOCAB = 51200
SUMMARY_COLUMNS = [
    "framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
    "batch_size_per_device", "case", "group", "repeats", "throughput_median",
    "throughput_mean", "throughput_std", "throughput_min", "throughput_max", "ci_low",
    "ci_high", "speedup", "scaling_efficiency", "memory_mib_max", "latency_ms",
    "tflops_per_gpu", "tflops_formula", "tflops_per_gpu_seed002", "outliers", "problems",
]


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
            memory_mib_max=_memory_mib_max(g),
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


def _memory_mib_max(g: pd.DataFrame) -> float:
    """The case's peak MiB: each run's nvidia-smi peak, else its allocator peak."""
    per_run = g["memory_sampled_mib"].combine_first(g["memory_framework_mib"])
    return float(per_run.max()) if per_run.notna().any() else np.nan


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
