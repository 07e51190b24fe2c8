"""GPT parallel strategies side by side: what tensor and pipeline parallelism cost against data
parallelism and one GPU, the pipeline bubble measured beside the theory, memory per GPU.

`strategies(summary, runs)` gives one row per GPT case (a summary row with a ``case``) with:

- ``layout`` DP×TP×PP, ``micro_batch``, ``global_batch`` and ``micro_batches``: micro-batches
  each pipeline runs per iteration, m = global batch / (micro-batch × DP);
- ``samples_per_s`` (the summary's median over repeats, all GPUs together),
  ``samples_per_s_per_gpu`` = samples_per_s / GPUs, ``tflops_per_gpu`` (the summary's, by
  the formula the logs state), ``memory_framework_mib`` (median of the runs' framework
  allocator peaks) and ``memory_sampled_mib`` (median of the runs' nvidia-smi peaks of the
  fullest GPU) per GPU;
- ``efficiency_vs_1gpu`` = samples/s per GPU of the case / samples/s of the 1-GPU case of
  the same model (framework, precision, hidden, layers, heads, sequence, vocabulary) at the
  same micro-batch (``baseline_case``): a per-GPU ratio, 1.0 = linear scaling;
- ``efficiency_vs_dp`` = samples/s per GPU of the case / samples/s per GPU of the pure
  data-parallel case (DP = GPUs) of the same model, micro-batch and GPU count
  (``dp_case``); NaN for the DP case itself;
- PP cases (PP > 1): ``bubble_measured`` = 1 − samples/s per GPU of the case / that of
  the same layout without pipeline stages (DP×TP×1 on DP·TP GPUs, ``no_pp_case``: the
  1-GPU case for pure PP), so that the losses of TP or DP are not counted as bubble;
  ``bubble_theoretical`` = (p − 1)/(m + p − 1); ``bubble_imbalanced`` the loss of the same
  schedule over stages unequal by model FLOPs (:func:`stage_flops`,
  :func:`imbalanced_bubble`); ``bubble_note`` says what the difference is made of;
- TP cases (TP > 1): ``tp_lost`` = 1 − samples/s per GPU of the case / that of the same
  layout without tensor parallelism (DP×1×PP, ``no_tp_case``: the 1-GPU case for pure TP;
  2D 2×2 against DP 2), the share of the per-GPU throughput TP costs;
- ``efficiency_vs_1gpu_low`` / ``_high``: ``efficiency_vs_1gpu`` at the ends of the case's
  interval, against the 1-GPU case's median;
- ``dp_impl`` and ``hosts``: what its runs state (:mod:`analysis.stats.gpt_runs`);
  ``other_impl`` / ``other_host``: the baseline cases that ran another data-parallel
  implementation (a ratio over one carries its cost) or on other hosts;
- ``order_unresolved``: the neighbours in efficiency whose ranges overlap this case's
  (:func:`overlapping_neighbours`);
- ``reason``: why a comparison is NaN (no such case was measured, or it has no
  throughput), '' when none is; ``notes``: the reason, the baselines that differ, the
  unresolved order and the bubble note, in one line.

The baseline of a bubble (one micro-batch per iteration in this campaign's cases) steps the
optimizer after every micro-batch, a PP case after m of them: the baseline carries m times
the optimizer steps per sample, so ``bubble_measured`` is, if anything, an underestimate.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.stats import gpt_runs
from analysis.stats.gpt_flops import (
    GPT_DEFAULT_VOCAB,
    NO_RECOMPUTATION,
    FlopsFormula,
    known_formula,
)

#: Run fields that name the model a case trains (same values: same model size).
MODEL_FIELDS = ("framework", "precision", "hidden_size", "num_layers", "num_heads",
                "seq_length", "vocab_size")
#: Run fields taken from the parsed runs of each case.
RUN_FIELDS = ("data_parallel", "tensor_parallel", "pipeline_parallel", "global_batch_size",
              "hidden_size", "num_layers", "num_heads", "seq_length", "vocab_size")

COLUMNS = ("case", "group", "num_devices", "layout", "dp_impl", "data_parallel",
           "tensor_parallel", "pipeline_parallel", "micro_batch", "global_batch",
           "micro_batches", "hidden_size", "num_layers", "samples_per_s",
           "samples_per_s_per_gpu", "tflops_per_gpu", "memory_framework_mib",
           "memory_sampled_mib", "baseline_case", "efficiency_vs_1gpu",
           "efficiency_vs_1gpu_low", "efficiency_vs_1gpu_high", "dp_case", "efficiency_vs_dp",
           "no_pp_case", "bubble_measured", "bubble_theoretical", "bubble_imbalanced",
           "bubble_note", "no_tp_case", "tp_lost", "hosts", "other_impl", "other_host",
           "order_unresolved", "reason", "notes")
#: Baseline columns, in the order a row's notes name them.
BASELINES = ("baseline_case", "dp_case", "no_tp_case", "no_pp_case")
#: Baseline column -> the ratio columns measured over it.
RATIOS_OVER = {"baseline_case": ("efficiency_vs_1gpu",), "dp_case": ("efficiency_vs_dp",),
               "no_tp_case": ("tp_lost",), "no_pp_case": ("bubble_measured",)}


def strategies(summary: pd.DataFrame, runs: pd.DataFrame,
               run_hosts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per GPT case of `summary` (analysis.stats.summary) with the columns of
    COLUMNS, as the module docstring defines them; `runs` is the parsed runs frame
    (``ParseResult.runs``), which gives each case's DP/TP/PP sizes, model fields and DP
    implementation; `run_hosts` maps a run id to its host
    (``analysis.env.describe.run_hosts``; None: hosts unknown, none compared).
    Sorted by model, GPU count, then DP, TP, PP descending."""
    cases = _cases(summary, runs)
    if cases.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    facts = gpt_runs.case_runs(runs, run_hosts)
    rows = [_row(case, cases, facts.get(str(case["case"]), gpt_runs.UNKNOWN))
            for _, case in cases.iterrows()]
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    out = _differing_baselines(out)
    out["order_unresolved"] = [()] * len(out)
    for _, group in out.groupby(["hidden_size", "num_layers", "num_devices"], sort=False):
        for a, b in overlapping_neighbours(group):
            for case, other in ((a, b), (b, a)):
                i = out.index[out["case"] == case][0]
                out.at[i, "order_unresolved"] = (*out.at[i, "order_unresolved"], other)
    out["notes"] = [_notes(r, out) for _, r in out.iterrows()]
    return out.sort_values(["hidden_size", "num_layers", "num_devices", "data_parallel",
                            "tensor_parallel", "pipeline_parallel"],
                           ascending=[True, True, True, False, False, False],
                           kind="stable").reset_index(drop=True)


def overlapping_neighbours(group: pd.DataFrame) -> list[tuple[str, str]]:
    """(a, b) for each two cases of `group` (rows of :func:`strategies`) next to each other
    when ordered by ``efficiency_vs_1gpu``, best first, whose low–high ranges overlap (b's
    high reaches a's low): the repeats do not tell which of the two scales better."""
    ranked = group.dropna(subset=["efficiency_vs_1gpu"]).sort_values(
        "efficiency_vs_1gpu", ascending=False)
    pairs = zip(ranked.iloc[:-1].itertuples(), ranked.iloc[1:].itertuples())
    return [(a.case, b.case) for a, b in pairs
            if b.efficiency_vs_1gpu_high >= a.efficiency_vs_1gpu_low]


def _differing_baselines(out: pd.DataFrame) -> pd.DataFrame:
    """``other_impl`` and ``other_host`` of every row of `out`: its baseline cases (each
    once, in BASELINES order, its own case left out) that ran another data-parallel
    implementation (both with one) or on another set of hosts (both known)."""
    impl = dict(zip(out["case"], out["dp_impl"]))
    hosts = dict(zip(out["case"], out["hosts"]))
    other_impl, other_host = [], []
    for _, r in out.iterrows():
        refs = [c for c in dict.fromkeys(str(r[f]) for f in BASELINES) if c and c != r["case"]]
        other_impl.append(tuple(c for c in refs if r["dp_impl"] and impl.get(c)
                                and impl[c] != r["dp_impl"]))
        other_host.append(tuple(c for c in refs if r["hosts"] and hosts.get(c)
                                and set(hosts[c]) != set(r["hosts"])))
    return out.assign(other_impl=other_impl, other_host=other_host)


def _notes(row: pd.Series, out: pd.DataFrame) -> str:
    """The row's notes in one line: why a comparison is missing, the ratios over a baseline
    of another implementation or host, an unresolved order, what the bubble is made of."""
    impl = dict(zip(out["case"], out["dp_impl"]))
    hosts = dict(zip(out["case"], out["hosts"]))
    parts = [row["reason"]] if row["reason"] else []

    def over(refs) -> list[str]:  # the ratio columns measured over any of `refs`
        return [c for f in BASELINES if row[f] in refs for c in RATIOS_OVER[f]
                if pd.notna(row[c])]

    for base in dict.fromkeys(impl[r] for r in row["other_impl"]):
        ratios = over([r for r in row["other_impl"] if impl[r] == base])
        parts.append(f"{', '.join(ratios) or 'a ratio'} over {base} (this case "
                     f"{row['dp_impl']}): includes {row['dp_impl']}'s cost over {base}")
    if row["other_host"]:
        others = sorted({h for r in row["other_host"] for h in hosts[r]})
        parts.append(f"{', '.join(over(row['other_host'])) or 'a ratio'} over runs on "
                     f"another host ({', '.join(others)}; this case {', '.join(row['hosts'])})")
    for field, what in (("no_tp_case", "tp_lost"), ("no_pp_case", "bubble_measured")):
        ref = row[field]
        if ref and ref != row["baseline_case"] and ref not in row["other_impl"]:
            parts.append(f"{what} against {ref}")
    if row["order_unresolved"]:
        parts.append(f"range overlaps {' and '.join(row['order_unresolved'])}'s: "
                     "order not resolved")
    if row["bubble_note"]:
        parts.append(row["bubble_note"])
    return "; ".join(parts)


def stage_flops(layers: int, hidden: float, seq: float, vocab: float, pp: int,
                formula: FlopsFormula = NO_RECOMPUTATION) -> np.ndarray:
    """Model FLOPs of one sequence through each of `pp` stages by `formula` (forward and
    backward; gpt_flops): a transformer layer is factor·s·h²·(1 + s/(6h)), the logit layer
    factor/vocab_divisor·s·h·V (6·s·h·V in both conventions) on the last stage; layers split
    as ``workloads.gpt.parallel.stage_layers`` splits them (even, earlier stages take the
    remainder)."""
    base, extra = divmod(int(layers), int(pp))
    counts = np.array([base + (1 if i < extra else 0) for i in range(int(pp))], dtype=float)
    per_layer = formula.factor * seq * hidden**2 * (1.0 + seq / (6.0 * hidden))
    flops = counts * per_layer
    flops[-1] += formula.factor / formula.vocab_divisor * seq * hidden * vocab
    return flops


def imbalanced_bubble(stage_work: np.ndarray, micro_batches: float) -> float:
    """Share of p GPUs' time idle when m micro-batches cross stages of work tᵢ: the first
    crosses all stages (Σtᵢ), the other m − 1 follow at the slowest stage's pace;
    1 − m·Σtᵢ / (p·((m − 1)·max tᵢ + Σtᵢ))."""
    p, m = len(stage_work), float(micro_batches)
    total, slowest = float(stage_work.sum()), float(stage_work.max())
    return 1.0 - m * total / (p * ((m - 1.0) * slowest + total))


def _cases(summary: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The GPT rows of `summary` with the run fields of each case (its first run stating
    them) and derived micro-batch counts."""
    gpt = summary[summary["case"].fillna("") != ""].copy()
    if gpt.empty:
        return gpt
    have = [f for f in RUN_FIELDS if f in runs.columns]
    stated = runs[runs["case"].fillna("") != ""].groupby("case", sort=False)[have].first()
    for field in RUN_FIELDS:
        values = gpt["case"].map(stated[field]) if field in have else pd.Series(np.nan, gpt.index)
        gpt[field] = _floats(values)
    gpt["vocab_size"] = gpt["vocab_size"].fillna(GPT_DEFAULT_VOCAB)
    for field in ("data_parallel", "tensor_parallel", "pipeline_parallel"):
        gpt[field] = gpt[field].fillna(1)
    for field in ("num_devices", "throughput_median"):
        gpt[field] = _floats(gpt[field])
    gpt["micro_batch"] = _floats(gpt["batch_size_per_device"])
    gpt["micro_batches"] = gpt["global_batch_size"] / (gpt["micro_batch"] * gpt["data_parallel"])
    gpt["per_gpu"] = gpt["throughput_median"] / gpt["num_devices"]
    return gpt.reset_index(drop=True)


def _floats(values: pd.Series) -> np.ndarray:
    """`values` as float64, NaN for what is missing or not a number (Int64 NA included)."""
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _same_model(cases: pd.DataFrame, case: pd.Series) -> pd.Series:
    """Mask of `cases` that train the model `case` trains at its micro-batch."""
    mask = cases["micro_batch"] == case["micro_batch"]
    for field in MODEL_FIELDS:
        mask &= cases[field].astype(object).eq(case[field]) | (cases[field].isna() & pd.isna(case[field]))
    return mask


def _pick(cases: pd.DataFrame, mask: pd.Series) -> pd.Series | None:
    """The first case under `mask`, one with a throughput first; None when none is."""
    found = cases[mask]
    if found.empty:
        return None
    measured = found[np.isfinite(found["per_gpu"].to_numpy(dtype=float, na_value=np.nan))]
    return (found if measured.empty else measured).iloc[0]


def _ratio(case: pd.Series, ref: pd.Series | None, reasons: list, missing: str = "") -> float:
    """Per-GPU throughput of `case` / that of `ref`: NaN when `ref` is None (`missing` says
    why, when it is not said already); a reason, once, when `ref` has no throughput."""
    if ref is None:
        reasons.extend([missing] if missing else [])
        return np.nan
    why = f"the comparison case {ref['case']} has no throughput"
    if not np.isfinite(float(ref["per_gpu"])) and why not in reasons:
        reasons.append(why)
    return float(case["per_gpu"]) / float(ref["per_gpu"])


def _row(case: pd.Series, cases: pd.DataFrame, facts: gpt_runs.CaseRuns) -> dict:
    """One output row: the case's figures and its comparisons (module docstring); `facts`
    what its runs state."""
    dp, tp, pp = (int(case[f]) for f in ("data_parallel", "tensor_parallel", "pipeline_parallel"))
    gpus, m = case["num_devices"], case["micro_batches"]
    model = _same_model(cases, case)
    reasons = []
    one = _layout_case(cases, model, 1, 1, 1)
    eff_one = _ratio(case, one, reasons, "no 1-GPU case of this model at micro-batch "
                     f"{_text(case['micro_batch'])}")
    is_dp = dp == gpus and tp == 1 and pp == 1
    ref = None if is_dp else _layout_case(cases, model, gpus, 1, 1)
    eff_dp = np.nan if is_dp else _ratio(case, ref, reasons, "no DP case of this model at "
                                         f"{_text(gpus)} GPUs")
    no_pp = _without(cases, model, case, "pipeline_parallel", one, reasons) if pp > 1 else None
    no_tp = _without(cases, model, case, "tensor_parallel", one, reasons) if tp > 1 else None
    row = {
        "case": case["case"], "group": case["group"], "num_devices": gpus,
        "layout": f"{dp}×{tp}×{pp}", "dp_impl": facts.dp_impl, "data_parallel": dp, "tensor_parallel": tp,
        "pipeline_parallel": pp, "micro_batch": case["micro_batch"],
        "global_batch": case["global_batch_size"], "micro_batches": m,
        "hidden_size": case["hidden_size"], "num_layers": case["num_layers"],
        "samples_per_s": case["throughput_median"], "samples_per_s_per_gpu": case["per_gpu"],
        "tflops_per_gpu": case["tflops_per_gpu"],
        "memory_framework_mib": case["memory_framework_mib"],
        "memory_sampled_mib": case["memory_sampled_mib"],
        "baseline_case": "" if one is None else one["case"], "efficiency_vs_1gpu": eff_one,
        **dict(zip(("efficiency_vs_1gpu_low", "efficiency_vs_1gpu_high"),
                   _repeat_range(case, eff_one))),
        "dp_case": "" if ref is None else ref["case"], "efficiency_vs_dp": eff_dp,
        "no_pp_case": "" if no_pp is None else no_pp["case"], "bubble_measured": np.nan,
        "bubble_theoretical": np.nan, "bubble_imbalanced": np.nan, "bubble_note": "",
        "no_tp_case": "" if no_tp is None else no_tp["case"],
        "tp_lost": 1.0 - _ratio(case, no_tp, reasons) if tp > 1 else np.nan,
        "hosts": facts.hosts,
    }
    if pp > 1:
        row.update(_bubble(case, pp, m, 1.0 - _ratio(case, no_pp, reasons), reasons))
    row["reason"] = "; ".join(reasons)
    return row


def _repeat_range(case: pd.Series, efficiency: float) -> tuple[float, float]:
    """`efficiency` (a per-GPU ratio over a baseline's median) scaled by the case's interval
    ends over its median: the ratio at the min and max of its repeats for n < 7; the ratio
    itself at both ends when the case has no interval."""
    med, low, high = (case.get(c) for c in ("throughput_median", "interval_low",
                                            "interval_high"))
    if pd.notna(low) and pd.notna(high) and med:
        return efficiency * float(low) / float(med), efficiency * float(high) / float(med)
    return efficiency, efficiency


def _layout_case(cases: pd.DataFrame, model: pd.Series, dp, tp, pp) -> pd.Series | None:
    """The case of `model` (a mask: same model and micro-batch) laid out DP×TP×PP."""
    return _pick(cases, model & (cases["num_devices"] == dp * tp * pp)
                 & (cases["data_parallel"] == dp) & (cases["tensor_parallel"] == tp)
                 & (cases["pipeline_parallel"] == pp))


def _without(cases: pd.DataFrame, model: pd.Series, case: pd.Series, field: str,
             one: pd.Series | None, reasons: list) -> pd.Series | None:
    """The case of the same model and micro-batch with `case`'s layout but `field` (TP or
    PP) 1, on as many fewer GPUs; the 1-GPU case `one` where that is the layout (its
    absence is said already); None, with a reason, when it was not measured."""
    sizes = {f: int(case[f]) for f in ("data_parallel", "tensor_parallel", "pipeline_parallel")}
    sizes[field] = 1
    if set(sizes.values()) == {1}:
        return one
    found = _layout_case(cases, model, *sizes.values())
    if found is None:
        reasons.append(f"no {sizes['data_parallel']}×{sizes['tensor_parallel']}×"
                       f"{sizes['pipeline_parallel']} case of this model at micro-batch "
                       f"{_text(case['micro_batch'])}")
    return found


def _bubble(case: pd.Series, pp: int, m: float, measured: float, reasons: list) -> dict:
    """The bubble columns of a PP case (module docstring); `measured` the share of its
    per-GPU throughput lost against the same layout without pipeline stages."""
    if not np.isfinite(m) or m < 1:
        reasons.append("micro-batches per pipeline unknown (global batch not stated)")
        return {"bubble_measured": measured}
    theory = (pp - 1) / (m + pp - 1)
    fields = [case[f] for f in ("num_layers", "hidden_size", "seq_length")]
    skewed = np.nan
    if all(pd.notna(x) for x in fields):
        formula = known_formula(str(case.get("tflops_formula", "") or "")) or NO_RECOMPUTATION
        work = stage_flops(int(fields[0]), float(fields[1]), float(fields[2]),
                           float(case["vocab_size"]), pp, formula)
        skewed = imbalanced_bubble(work, m)
    return {"bubble_measured": measured, "bubble_theoretical": theory,
            "bubble_imbalanced": skewed,
            "bubble_note": _bubble_note(measured, theory, skewed, work if np.isfinite(skewed) else None)}


def _bubble_note(measured: float, theory: float, skewed: float, work) -> str:
    """What the measured bubble is made of, in one line."""
    if not np.isfinite(measured):
        return "no 1-GPU case to measure against"
    excess = (measured - theory) * 100.0
    parts = [f"{excess:+.1f} pp beyond the (p−1)/(m+p−1) bubble"]
    if work is not None:
        heavy = (work.max() / work.min() - 1.0) * 100.0
        parts.append(f"unequal stages (slowest +{heavy:.1f} % FLOPs, logit layer on the last) "
                     f"predict {skewed * 100:.1f} %")
        rest = (measured - skewed) * 100.0
        if rest > 0:
            parts.append(f"{rest:.1f} pp more: p2p transfers and schedule overhead")
        else:
            parts.append(f"{-rest:.1f} pp less than FLOPs predict: stage time is not "
                         "proportional to FLOPs (the logit layer is one large matmul) and "
                         "the baseline steps the optimizer after every micro-batch")
    return "; ".join(parts)


def _text(value) -> str:
    """A count as text ('8'; '?' when unknown)."""
    return "?" if pd.isna(value) else f"{float(value):g}"
