"""Energy of each run from its GPUs' ``power.draw`` samples (the nvidia-smi sidecar, the run's
GPUs only: :mod:`analysis.gpu_samples`), and per case energy per sample and samples/s per watt.

Per GPU (a sidecar file and an index), the samples inside the run's training window (its
first to last timestamped training line) are integrated by the trapezoid rule; the run's
energy is their sum, its power each GPU's energy over the time its samples span, summed. A
note says why a run has no energy: no timestamps, a clock that goes back, a GPU with fewer
than two samples in the window (``[N/A]`` is not measured, never 0 W), samples spanning less
than MIN_COVERAGE of it or leaving a gap, another number of GPUs than the run used. Samples
that begin or end further inside the window than EDGE_INTERVALS give the power, no energy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from analysis import checks
from analysis import metrics as M
from analysis.collect import ParseResult
from analysis.parsers._shapes import dated

if TYPE_CHECKING:
    import pandas as pd

#: Least part of the window the samples of each GPU must span.
MIN_COVERAGE = 0.5
#: Sampling intervals (the samples' median) that may pass at either end of the window
#: before the first sample or after the last: more, and the samples do not cover it.
EDGE_INTERVALS = 2.0
#: The summary's columns of :func:`case_figures`.
CASE_COLUMNS = ("power_w", "energy_per_sample_j", "samples_per_s_per_w", "energy_window_s")
#: Columns of :func:`run_energy`.
COLUMNS = ["run_id", "energy_j", "power_w", "window_s", "gpus", "power_samples", "note"]
#: Per-run columns (schema.PER_RUN) of a run :func:`per_run_columns` has no row for.
NONE = {"energy_j": np.nan, "power_w": np.nan, "energy_window_s": np.nan,
        "energy_note": "no power samples of the run (none sampled, the tool printed [N/A], "
                       "or those beside it are not its: foreign_gpu_sample)"}


def run_energy(result: ParseResult) -> pd.DataFrame:
    """One row per run: energy (J) and mean power (W, all its GPUs) over its training window,
    the window (s), the GPUs integrated, the power samples used, and a note (why no energy,
    '' when there is one)."""
    import pandas as pd

    return pd.DataFrame(_energy_rows(result, result.run_records()), columns=COLUMNS)


def _energy_rows(result: ParseResult, runs: list[dict]) -> list[dict]:
    """:func:`run_energy`'s rows, one per run of `runs` (:meth:`ParseResult.run_records`)."""
    windows, power = _from_parts(result.parsed_parts())
    back = {str(p.run_id) for p in result.problem_list() if p.kind == "timestamps_backwards"}
    out = []
    for run in runs:
        rid, n = str(run["run_id"]), run["num_devices"]
        out.append(_one_run(rid, None if n is None else int(n), windows.get(rid),
                            power.get(rid, {}), rid in back))
    return out


def per_run_columns(result: ParseResult, runs: list[dict]) -> dict[str, dict]:
    """Run id -> the per-run frame's energy columns (``energy_j``, ``power_w``,
    ``energy_window_s``, ``energy_note``) of `runs` (:meth:`ParseResult.run_records`)."""
    rows = _energy_rows(result, runs)
    return {r["run_id"]: {"energy_j": r["energy_j"], "power_w": r["power_w"],
                          "energy_window_s": r["window_s"], "energy_note": r["note"]}
            for r in rows}


def case_figures(runs: list[dict]) -> dict[str, float]:
    """The summary's energy columns (CASE_COLUMNS) for one case's per-run records: medians
    over the runs with both a throughput and a power."""
    power, thr, window = (np.array([r[c] for r in runs], dtype=float)
                          for c in ("power_w", "throughput", "energy_window_s"))
    ok = np.isfinite(power) & np.isfinite(thr) & (thr > 0) & (power > 0)
    if not ok.any():
        return dict.fromkeys(CASE_COLUMNS, np.nan)
    return {"power_w": float(np.median(power[ok])),
            "energy_per_sample_j": float(np.median(power[ok] / thr[ok])),
            "samples_per_s_per_w": float(np.median(thr[ok] / power[ok])),
            "energy_window_s": float(np.median(window[ok]))}


def _one_run(rid: str, expected: int | None, window: tuple[float, float] | None,
             power: dict, clock_back: bool) -> dict:
    """The row of one run; `clock_back`: its log or samples go back in time, so the first to
    the last line is not how long it ran, and samples of two stretches of one clock
    interleave."""
    row = dict.fromkeys(COLUMNS, np.nan) | {"run_id": rid, "gpus": 0, "power_samples": 0,
                                            "note": ""}
    if not power:
        return row | {"note": NONE["energy_note"]}
    if clock_back:
        return row | {"note": "the clock of its log or of its power samples goes back "
                              "(timestamps_backwards): no window"}
    if window is None or not window[1] > window[0]:
        return row | {"note": "the log's training lines carry no dated timestamps: no window"}
    t0, t1 = window
    row["window_s"] = t1 - t0
    energy = watts = 0.0
    used = 0
    short = None  # why the samples do not cover the window, when they do not
    for (source, device), (ts, w) in sorted(power.items()):
        inside = (ts >= t0) & (ts <= t1)
        ts, w = ts[inside], w[inside]
        order = np.argsort(ts, kind="stable")
        ts, w = ts[order], w[order]
        span = float(ts[-1] - ts[0]) if ts.size >= 2 else 0.0
        if ts.size < 2 or span < MIN_COVERAGE * (t1 - t0):
            return row | {"note": f"GPU {device} of {source}: {ts.size} power sample(s) "
                                  f"spanning {span:.1f} s of the {t1 - t0:.1f} s window"}
        gap = _gap(ts)
        if gap is not None:
            return row | {"note": f"GPU {device} of {source}: no power sample for {gap:.1f} s "
                                  "inside the window, where the others come far more often "
                                  "(a clock step forward, or the sampler stalled)"}
        joules = float(np.trapezoid(w, ts))
        energy += joules
        watts += joules / span
        used += ts.size
        edge = EDGE_INTERVALS * float(np.median(np.diff(ts)))
        if short is None and (ts[0] - t0 > edge or t1 - ts[-1] > edge):
            short = (f"GPU {device} of {source}: power samples from {ts[0] - t0:.1f} s to "
                     f"{ts[-1] - t0:.1f} s of the {t1 - t0:.1f} s window (the rest not "
                     "sampled): power_w is their mean, no energy for the window")
    if expected is not None and len(power) < expected:
        return row | {"note": f"power samples of {len(power)} GPU(s), the run used {expected}"}
    if expected is not None and len(power) > expected:
        # nothing said which GPUs were the run's (no CUDA_VISIBLE_DEVICES record): summing
        # every sampled GPU would add other jobs' or idle GPUs' power to the run's
        return row | {"note": f"power samples of {len(power)} GPU(s), the run used {expected}: "
                              "which of them were the run's is not stated"}
    done = {"power_w": watts, "gpus": len(power), "power_samples": used}
    if short is not None:  # the trapezoid would be the energy of the sampled part only
        return row | done | {"note": short}
    return row | done | {"energy_j": energy}


def _gap(ts: np.ndarray) -> float | None:
    """The longest interval between sorted sample times `ts` when it is a jump as
    :func:`analysis.checks.forward_jumps` has one (JUMP_FACTOR times the median interval and
    JUMP_SECONDS longer): the trapezoid would draw a line across time the GPU was not
    sampled, or that did not pass (the clock stepped); None when there is none."""
    dt = np.diff(ts)
    dt = dt[dt > 0]
    if len(dt) < 3:
        return None
    median, longest = float(np.median(dt)), float(dt.max())
    far = longest > checks.JUMP_FACTOR * median and longest - median > checks.JUMP_SECONDS
    return longest if far else None


def _add_power(power: dict, key: tuple, ts: np.ndarray, watts: np.ndarray) -> None:
    old_ts, old_w = power.get(key, (np.empty(0), np.empty(0)))
    power[key] = (np.concatenate([old_ts, ts]), np.concatenate([old_w, watts]))


def _from_parts(parts: list) -> tuple[dict, dict]:
    """Per run id: its training window (first, last finite training timestamp; only for a
    run with power samples: no other needs one), and its power samples by (source, device):
    (timestamps, watts), finite ones only."""
    windows: dict[str, tuple[float, float]] = {}
    power: dict[str, dict] = {}
    for row, parsed, source in parts:
        for b, at in parsed.obs.rows(M.MEMORY, M.POWER_DRAW):
            at = at[np.isfinite(b["timestamp"][at]) & np.isfinite(b["value"][at])]
            for device in np.unique(b["device"][at]).tolist():
                rows = at[b["device"][at] == device]
                _add_power(power.setdefault(row["run_id"], {}), (source, device),
                           b["timestamp"][rows], b["value"][rows])
    for row, parsed, _ in parts:  # a window only where there are samples to put in it
        rid = row["run_id"]
        if rid not in power:
            continue
        for b, at in parsed.obs.rows(M.TRAIN):
            train = b["timestamp"][at]
            train = train[dated(train)]
            if train.size:
                lo, hi = windows.get(rid, (np.inf, -np.inf))
                windows[rid] = (min(lo, float(train.min())), max(hi, float(train.max())))
    return windows, power
