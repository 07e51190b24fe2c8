"""Energy of each run from its GPUs' power samples, and per case energy per sample and
samples/s per watt.

The samples are ``power.draw`` of the nvidia-smi sidecar (``<stem>.gpu.csv``: every 500 ms,
each GPU the run used; on Ampere and newer the board's average over the last second). Those
that are not the run's were left out when it was read (:mod:`analysis.gpu_samples`).

Window: the run's training lines, from the first timestamped one to the last (warm-up
iterations included). Per GPU (a sidecar file and an index: nodes number their GPUs alike),
the samples inside the window are integrated by the trapezoid rule; the run's energy is the
sum over its GPUs, its power the sum of each GPU's energy over the time its samples span.
A run's energy per sample is its power over its throughput (the method's figure), its
samples/s per watt the inverse. No energy, and a note saying why, when the log has no
timestamps, a GPU the run sampled has fewer than two power samples in the window (the tool
printed ``[N/A]``: not measured, never 0 W), the samples span less than half the window, or
fewer GPUs have power samples than the run used.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from analysis import metrics as M
from analysis.collect import ParseResult

#: Nominal interval of the campaign's sampler (analysis.campaign.node: ``-lms 500``).
SAMPLING = "nvidia-smi power.draw every 500 ms (the board's 1 s average on Ampere and newer)"
#: Least part of the window the samples of each GPU must span.
MIN_COVERAGE = 0.5
#: The summary's columns of :func:`case_figures`.
CASE_COLUMNS = ("power_w", "energy_per_sample_j", "samples_per_s_per_w", "energy_window_s")
#: Columns of :func:`run_energy`.
COLUMNS = ["run_id", "energy_j", "power_w", "window_s", "gpus", "power_samples", "note"]


def run_energy(result: ParseResult) -> pd.DataFrame:
    """One row per run: energy (J) and mean power (W, all its GPUs) over its training window,
    the window (s), the GPUs integrated, the power samples used, and a note (why no energy,
    '' when there is one)."""
    rows = [_one_run(rid, expected, train_ts, power)
            for rid, expected, train_ts, power in _runs(result)]
    return pd.DataFrame(rows, columns=COLUMNS)


def case_figures(energy: pd.DataFrame, runs: pd.DataFrame) -> dict[str, float]:
    """The summary's energy columns (CASE_COLUMNS) for one case, from `energy`
    (:func:`run_energy`) and the case's per-run frame: medians over the runs with both a
    throughput and a power."""
    power = energy.set_index("run_id")["power_w"].reindex(runs["run_id"]).to_numpy(dtype=float)
    thr = runs["throughput"].to_numpy(dtype=float)
    ok = np.isfinite(power) & np.isfinite(thr) & (thr > 0) & (power > 0)
    if not ok.any():
        return dict.fromkeys(CASE_COLUMNS, np.nan)
    window = energy.set_index("run_id")["window_s"].reindex(runs["run_id"]).to_numpy(dtype=float)
    return {"power_w": float(np.median(power[ok])),
            "energy_per_sample_j": float(np.median(power[ok] / thr[ok])),
            "samples_per_s_per_w": float(np.median(thr[ok] / power[ok])),
            "energy_window_s": float(np.median(window[ok]))}


def _one_run(rid: str, expected, train_ts: np.ndarray, power: dict) -> dict:
    row = dict.fromkeys(COLUMNS, np.nan) | {"run_id": rid, "gpus": 0, "power_samples": 0,
                                            "note": ""}
    train_ts = train_ts[np.isfinite(train_ts)]
    if not power:
        return row | {"note": "no power samples (none sampled, or the tool printed [N/A])"}
    if train_ts.size < 2:
        return row | {"note": "the log's training lines carry no timestamps: no window"}
    t0, t1 = float(train_ts.min()), float(train_ts.max())
    row["window_s"] = t1 - t0
    energy = watts = 0.0
    used = 0
    for (source, device), (ts, w) in sorted(power.items()):
        inside = (ts >= t0) & (ts <= t1)
        ts, w = ts[inside], w[inside]
        order = np.argsort(ts, kind="stable")
        ts, w = ts[order], w[order]
        span = float(ts[-1] - ts[0]) if ts.size >= 2 else 0.0
        if ts.size < 2 or span < MIN_COVERAGE * (t1 - t0):
            return row | {"note": f"GPU {device} of {source}: {ts.size} power sample(s) "
                                  f"spanning {span:.1f} s of the {t1 - t0:.1f} s window"}
        joules = float(np.trapezoid(w, ts))
        energy += joules
        watts += joules / span
        used += ts.size
    if expected is not None and len(power) < expected:
        return row | {"note": f"power samples of {len(power)} GPU(s), the run used {expected}"}
    return row | {"energy_j": energy, "power_w": watts, "gpus": len(power),
                  "power_samples": used}


def _runs(result: ParseResult) -> Iterator[tuple[str, int | None, np.ndarray, dict]]:
    """Per run: (run id, GPUs it used or None, its training timestamps, its power samples by
    (source, device): (timestamps, watts) with finite timestamps only)."""
    devices = result.runs.set_index("run_id")["num_devices"]
    for rid, blocks in _blocks_by_run(result):
        n = devices.get(rid)
        train, power = [], {}
        for source, b in blocks:
            phase = np.broadcast_to(np.asarray(b["phase"], dtype=object), (b["n"],))
            metric = np.broadcast_to(np.asarray(b["metric"], dtype=object), (b["n"],))
            train.append(b["timestamp"][phase == M.TRAIN])
            sel = (phase == M.MEMORY) & (metric == M.POWER_DRAW) & np.isfinite(b["timestamp"]) \
                & np.isfinite(b["value"])
            for device in np.unique(b["device"][sel]).tolist():
                rows = sel & (b["device"] == device)
                ts, w = power.get((source, device), (np.empty(0), np.empty(0)))
                power[(source, device)] = (np.concatenate([ts, b["timestamp"][rows]]),
                                           np.concatenate([w, b["value"][rows]]))
        yield (rid, None if n is None or pd.isna(n) else int(n),
               np.concatenate(train) if train else np.empty(0), power)


def _blocks_by_run(result: ParseResult) -> Iterator[tuple[str, list[tuple[str, dict]]]]:
    """(run id, [(source, observation block)]) from what the files gave, else from the
    observations frame (a result made from frames)."""
    if result.parts is not None:
        by_run: dict[str, list] = {}
        for row, parsed, source in result.parts:
            by_run.setdefault(row["run_id"], []).extend((source, b) for b in parsed.obs.blocks)
        yield from by_run.items()
        return
    obs = result.observations
    for rid, g in obs.groupby("run_id", observed=True, sort=False):
        yield str(rid), [(str(source), {
            "n": len(s), "phase": s["phase"].astype(str).to_numpy(dtype=object),
            "metric": s["metric"].astype(str).to_numpy(dtype=object),
            "timestamp": s["timestamp"].to_numpy(dtype=float),
            "value": s["value"].to_numpy(dtype=float),
            "device": s["device"].to_numpy(dtype=float, na_value=-1).astype(np.int64)})
            for source, s in g.groupby("source", observed=True, sort=False)]
