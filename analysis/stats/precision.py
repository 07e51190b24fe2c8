"""FP32 → AMP: how much faster a case runs in reduced precision, per comparable pair of cases."""

from __future__ import annotations

import pandas as pd

#: Precision labels as the parsers write them (analysis.layout.normalize_precision): full
#: precision (TF32 counts: FP32 storage and arithmetic with TF32 tensor-core matmuls) and the
#: reduced ones (``fp16`` is normalised to ``amp``; kept here for frames built by hand).
FULL_PRECISIONS = ("fp32", "tf32")
REDUCED_PRECISIONS = ("amp", "fp16", "bf16")
#: What a pair shares besides the batch size.
PAIR_KEY = ["framework", "model", "num_nodes", "gpus_per_node", "case"]
RATIO_COLUMNS = [
    *PAIR_KEY[:4], "num_devices", "case", "group",
    "base_precision", "base_batch_size", "base_median", "base_repeats",
    "amp_precision", "amp_batch_size", "amp_median", "amp_repeats", "ratio", "same_batch",
]
#: A side's columns and their names behind its prefix.
_SIDE = {"precision": "precision", "batch_size_per_device": "batch_size",
         "throughput_median": "median", "repeats": "repeats"}


def precision_ratios(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per pair of cases (RATIO_COLUMNS), one in full precision (fp32, tf32) and one in
    reduced precision (amp, fp16, bf16), of the same framework, model, nodes, GPUs per node and
    case label: ratio = amp_median / base_median (samples/s). Pairs run at the same batch size
    per device where both precisions have one (``same_batch``), else each precision's largest,
    as NVIDIA's tables compare them. Every pair of precision labels is listed. Input: the frame
    of analysis.stats.summarize."""
    prec = summary["precision"].astype("string").str.lower().fillna("")
    frame = summary.assign(precision=prec)
    base = _side(frame[prec.isin(FULL_PRECISIONS)], "base")
    amp = _side(frame[prec.isin(REDUCED_PRECISIONS)], "amp").drop(columns=["num_devices",
                                                                             "group"])
    if base.empty or amp.empty:
        return pd.DataFrame(columns=RATIO_COLUMNS)
    pairs = base.merge(amp, on=PAIR_KEY, how="inner")
    pairs["same_batch"] = pairs["base_batch_size"] == pairs["amp_batch_size"]
    labels = [*PAIR_KEY, "base_precision", "amp_precision"]
    pairs = pairs.groupby(labels, dropna=False, sort=False, group_keys=False)[
        pairs.columns.tolist()].apply(_comparable)
    pairs["ratio"] = pairs["amp_median"].astype(float) / pairs["base_median"].astype(float)
    pairs["same_batch"] = pairs["same_batch"].astype(bool)
    pairs = pairs.sort_values([*PAIR_KEY, "base_precision", "amp_precision", "base_batch_size"],
                              kind="stable", na_position="last")
    return pairs[RATIO_COLUMNS].reset_index(drop=True)


def _side(rows: pd.DataFrame, prefix: str) -> pd.DataFrame:
    out = rows[[*PAIR_KEY, "num_devices", "group", *_SIDE]]
    return out.rename(columns={c: f"{prefix}_{name}" for c, name in _SIDE.items()})


def _comparable(pairs: pd.DataFrame) -> pd.DataFrame:
    """Of the batch-size combinations of one pair of precision labels: those at the same
    batch size, else the largest batch size of each precision."""
    same = pairs[pairs["same_batch"].fillna(False).astype(bool)]
    if not same.empty:
        return same
    top = (pairs["base_batch_size"] == pairs["base_batch_size"].max()) & (
        pairs["amp_batch_size"] == pairs["amp_batch_size"].max())
    return pairs[top.fillna(False).astype(bool)]
