"""Frames shaped as `analysis.stats` returns them, small enough to read: a ResNet-50 campaign
with 1n4g and 2n2g at 4 devices (their throughputs 0.2 % apart, as in rn50_4gpu) and GPT
parallel configurations of two model sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd

LAYOUTS = ((1, 1), (1, 2), (1, 4), (2, 2))
#: Throughput per device of each precision; 1n4g and 2n2g differ by 0.2 %, as in rn50_4gpu.
PER_DEVICE = {"fp32": 2998.0, "amp": 6046.0}
REPEATS = 5


def _int_columns(df: pd.DataFrame) -> pd.DataFrame:
    for c in ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device"):
        if c in df.columns:
            df[c] = df[c].astype("Int64")
    return df


def make_summary(frameworks=("PyTorch",), precisions=("amp", "fp32"), intervals=True):
    rows = []
    for fw in frameworks:
        for prec in precisions:
            for nodes, gpus in LAYOUTS:
                n = nodes * gpus
                eff = 1.0 if n == 1 else 0.97 - 0.002 * (nodes - 1)
                med = PER_DEVICE[prec] * n * eff
                row = dict(framework=fw, model="resnet50", precision=prec, num_nodes=nodes,
                           gpus_per_node=gpus, num_devices=n, batch_size_per_device=256,
                           case="", group="", repeats=REPEATS, throughput_median=med,
                           throughput_min=med * 0.99, throughput_max=med * 1.004,
                           speedup=med / PER_DEVICE[prec], scaling_efficiency=eff,
                           latency_ms=np.nan, tflops_per_gpu=np.nan)
                if intervals:
                    row.update(interval_low=med * 0.995, interval_high=med * 1.002,
                               interval_kind="min–max")
                rows.append(row)
    return _int_columns(pd.DataFrame(rows))


def make_runs(summary: pd.DataFrame, outlier_repeat: int | None = None) -> pd.DataFrame:
    rows = []
    for r in summary.itertuples(index=False):
        for k in range(1, REPEATS + 1):
            rows.append(dict(r._asdict(), run_id=f"{r.num_nodes}n{r.gpus_per_node}g/"
                             f"{r.framework}_{r.precision}_{k}", repeat=k,
                             throughput=r.throughput_median * (1 + 0.001 * (k - 3)),
                             outlier=k == outlier_repeat))
    return _int_columns(pd.DataFrame(rows))


def make_trace(runs: pd.DataFrame, steps: int = 30) -> pd.DataFrame:
    parts = []
    for r in runs.itertuples(index=False):
        step = np.arange(1, steps + 1)
        parts.append(pd.DataFrame({
            "run_id": r.run_id, "framework": r.framework, "model": r.model,
            "precision": r.precision, "num_nodes": r.num_nodes, "gpus_per_node": r.gpus_per_node,
            "batch_size_per_device": r.batch_size_per_device, "repeat": r.repeat,
            "case": r.case, "step": step, "timestamp": step * 0.1,
            "throughput": r.throughput * np.where(step < 5, 0.6, 1.0), "basis": "timestamps"}))
    return _int_columns(pd.concat(parts, ignore_index=True))


GPT_CASES = (  # group, dp, tp, pp, global batch, hidden, layers, latency ms, TFLOP/s, memory
    ("DP", 1, 1, 1, 8, 1536, 16, 121.0, 513.6, 26601.0),
    ("DP", 2, 1, 1, 16, 1536, 16, 131.7, 472.0, 34471.0),
    ("MP", 1, 2, 1, 8, 1536, 16, 93.9, 331.1, 23877.0),
    ("PP", 1, 1, 2, 64, 1536, 16, 588.4, 422.6, 54003.0),
    ("DP", 1, 1, 1, 8, 2304, 24, 346.1, 532.1, 58897.0),
    ("MP", 1, 2, 1, 8, 2304, 24, 234.2, 393.2, 43005.0),
)
FORMULA_72 = "72*B*s*l*h^2*(1+s/(6h)+V/(12*l*h))"


def make_gpt_summary() -> pd.DataFrame:
    rows = []
    for group, dp, tp, pp, gbs, hidden, layers, lat, tflops, mem in GPT_CASES:
        n = dp * tp * pp
        rows.append(dict(framework="PyTorch", model="gpt", precision="bf16", num_nodes=1,
                         gpus_per_node=n, num_devices=n, batch_size_per_device=8,
                         case=f"{group}_{dp}x{tp}x{pp}_{gbs}_{hidden}x{layers}", group=group,
                         repeats=5, throughput_median=gbs / lat * 1000, throughput_min=np.nan,
                         throughput_max=np.nan, speedup=np.nan, scaling_efficiency=np.nan,
                         latency_ms=lat, tflops_per_gpu=tflops, tflops_formula=FORMULA_72,
                         tflops_per_gpu_seed002=tflops * 96 / 72 * 0.97,
                         memory_framework_mib=mem, memory_sampled_mib=mem * 1.1))
    return _int_columns(pd.DataFrame(rows))
