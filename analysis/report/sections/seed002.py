"""Seed 002's own GPT figures beside ours, both by seed 002's 96 convention (its TFLOP/s
count the recomputed forward pass: 96·B·s·l·h²·(1 + s/6h + V/16lh) FLOPs a step), in one
labelled table after the strategies: the one place the 96 convention is shown as
TFLOP/s of a case. Page 1 keeps the model FLOPs (72 formula); the 96 figure is there only
to set ours beside a report that used it. Seed 002's rows are its published medians (its
README): OneFlow 0.3.5 on 8× V100-SXM2-16GB, FP16, activation checkpointing; its TFLOP/s
are ours, computed from its latency with the 96 formula (V = 51200). Ours are the cases of
the same model shape (hidden 1536, 16 layers)."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from analysis.plots.gpt import CASE_NAME
from analysis.report import styled, tables
from analysis.report.sections import register
from analysis.report.sections.gpt_cases import _order, gpu_peak

#: Seed 002's model shape, which our rows are chosen by.
HIDDEN, LAYERS = 1536, 16


class SeedRow(NamedTuple):
    case: str
    latency_ms: float
    memory_mib: int
    samples_per_s: float
    tflops_96: float


#: Seed 002's figures as its README gives them (TFLOP/s: 96 formula from its latency).
SEED002 = (SeedRow("DP_1x1x1_2_1536x16", 406.16, 11066, 4.92, 49.4),
           SeedRow("DP_8x1x1_16_1536x16", 417.95, 12404, 38.28, 48.0),
           SeedRow("MP_1x8x1_16_1536x16", 642.13, 6264, 24.92, 31.3))


def seed_gpus(case: str) -> tuple[int, int]:
    """(GPUs, global batch) of a seed 002 case name (``DP_8x1x1_16_1536x16``: 8, 16)."""
    m = CASE_NAME.match(case)
    return int(m["dp"]) * int(m["tp"]) * int(m["pp"]), int(m["gbs"])


def seed_shape_cases(rep) -> pd.DataFrame:
    """Our GPT cases of seed 002's model shape that have a TFLOP/s by its 96 convention."""
    configs = tables.gpt_configurations(rep.summary, rep.result.runs)
    if configs.empty or "tflops_per_gpu_seed002" not in configs:
        return configs.iloc[:0]
    return configs[(configs["hidden_size"] == HIDDEN) & (configs["num_layers"] == LAYERS)
                   & configs["tflops_per_gpu_seed002"].notna()]


def one_gpu_tflops(rep) -> tuple[float, float] | None:
    """(ours, seed 002's) TFLOP/s of one GPU by the 96 convention, for page 1's pointer to
    this table; None without a 1-GPU case of seed 002's model shape."""
    ours = rep.shared(seed_shape_cases)
    ours = ours[ours["num_devices"] == 1]
    seed = [s for s in SEED002 if seed_gpus(s.case)[0] == 1]
    if ours.empty or not seed:
        return None
    return float(ours["tflops_per_gpu_seed002"].iloc[0]), seed[0].tflops_96


@register("seed002")
def seed002(rep):
    tr = rep.tr
    ours = rep.shared(seed_shape_cases)
    if ours.empty:
        return None
    gpu = gpu_peak(rep.envs)[0] or tr("report.unknown")
    precisions = "/".join(sorted({str(p).upper() for p in ours["precision"].dropna()}))
    columns = [tr("seed002.col.source"), tr("col.case"), tr("gpt_cases.col.gpus"),
               tr("seed002.col.gbs"), tr("gpt_cases.col.step"), tr("seed002.col.memory"),
               tr("seed002.col.samples"), tr("seed002.col.tflops")]
    rows = []
    for i, s in enumerate(SEED002):
        gpus, gbs = seed_gpus(s.case)
        rows.append([tr("seed002.source_seed") if i == 0 else "", s.case, tr.int(gpus),
                     tr.int(gbs), tr.num(s.latency_ms, 2),
                     tr.int(s.memory_mib, group=True), tr.num(s.samples_per_s, 2),
                     tr.num(s.tflops_96, 1)])
    for i, r in enumerate(_order(ours).itertuples(index=False)):
        rows.append([tr("seed002.source_ours", gpu=gpu, precision=precisions)
                     if i == 0 else "", str(r.case), tr.int(r.num_devices),
                     tr.int(r.global_batch_size), tr.num(r.latency_ms, 2),
                     tr.int(r.memory_sampled_mib, group=True)
                     if pd.notna(r.memory_sampled_mib) else "-",
                     tr("headline.with_n", value=tr.num(r.throughput_median, 2),
                        n=int(r.repeats)) if pd.notna(r.repeats)
                     else tr.num(r.throughput_median, 2),
                     tr.num(r.tflops_per_gpu_seed002, 1)])
    frame = pd.DataFrame(rows, columns=columns)
    return styled.table(frame, "seed002", "tlrrrrrr",
                        caption=[tr("seed002.heading"), tr("seed002.caption"),
                                 tr("seed002.note_seed"), tr("seed002.note_ours")])
