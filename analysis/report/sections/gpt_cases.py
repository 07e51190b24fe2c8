"""Page 1 of a GPT report: every case in one row, grouped by model size (a row naming the
model) and strategy as seed 002 groups them (DP, MP, 2D, PP, …; a rule above each group),
in the columns LLM performance tables use today
(NVIDIA Megatron-Bridge: GBS, MBS, TP, PP, the data-parallel implementation, tokens/s and
model TFLOP/s per GPU; llm-foundry: MFU and HFU).

Model TFLOP/s are the model's FLOPs (the 72 formula the workload's logs state: no
recomputation). MFU divides them by the GPU's datasheet dense BF16 peak; the matmul rate
measured with ``dlperf env --matmul`` is the second denominator: from the runs' own env
records when they hold one, else from ``matmul.json`` beside the logs (a record of that
probe on a host of the kind the runs used), with where and when it was measured; said to
be missing where neither exists. HFU counts the recomputed forward pass only for runs that recomputed
activations; seed 002's 96 convention, which counts it always, is not on this page."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.env import describe
from analysis.env.folder_records import load_env
from analysis.plots.gpt import GROUP_ORDER
from analysis.report import styled, tables
from analysis.report.sections import register
from analysis.report.sections.gpt_strategies import case_facts
from analysis.stats import gpt_flops, gpt_runs

#: Dense BF16 tensor-core peak per GPU (TFLOP/s) by the name nvidia-smi gives: NVIDIA's H200
#: datasheet gives 1,979 (SXM) and 1,671 (NVL) TFLOP/s "with sparsity", twice the dense rate.
DENSE_BF16_PEAK = {"NVIDIA H200": 989.5, "NVIDIA H200 NVL": 835.5}
#: Spread of a case's repeats ((max − min) / median, %) above which the table says so.
SPREAD_NOTE_PCT = 5.0
ALIGN = "lrlrrbrrb"  # b: a cell of two lines (samples/s and its range; two MFUs)


def gpu_peak(envs) -> tuple[str, float | None]:
    """(the GPU model of the runs, its dense BF16 peak or None when unknown or when the
    records name several models)."""
    models = {describe.pick(e.record, "gpu_model") for e in envs} - {None, ""}
    if len(models) != 1:
        return ("; ".join(sorted(map(str, models))), None)
    model = str(models.pop())
    return model, DENSE_BF16_PEAK.get(model)


#: A record of ``dlperf env --matmul`` beside the logs, for campaigns whose runs' own env
#: records hold no matmul rate (the probe loads the GPUs, so it never runs beside a run).
MATMUL_FILE = "matmul.json"


@dataclass(frozen=True)
class MatmulRate:
    """The measured dense bf16 matmul rate (median over the GPUs of each GPU's median)."""

    tflops: float
    measured_at: str  # ISO date-time (UTC)
    size: int
    same_host: bool  # the probe's GPU UUIDs are the runs' GPUs
    source: str  # the record's file name
    first_block: float | None = None  # median over the GPUs of the first timed block
    #: the 5th percentile of the slowest GPU's blocks and the 95th of the fastest's (TFLOP/s)
    lowest_block: float | None = None
    highest_block: float | None = None
    #: how long each GPU was timed (s, median over the GPUs)
    probe_seconds: float | None = None
    blocks: int = 0
    products: int = 0  # per block
    warmup: int = 0  # products before the first block


def _uuids(record: dict) -> set[str]:
    return {str(g.get("uuid")) for g in record.get("gpus") or [] if isinstance(g, dict)
            and g.get("uuid")}


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _per_gpu(gpus: list[dict], key: str) -> list[float]:
    """The positive numbers the GPUs' entries hold under `key`, sorted."""
    return sorted(float(g[key]) for g in gpus
                  if isinstance(g.get(key), (int, float)) and g[key] > 0)


def matmul_rate(envs, log_dir: str | Path | None) -> MatmulRate | None:
    """The matmul rate of the runs' own env records (same host), else of ``matmul.json``
    in `log_dir` (same host when its GPU UUIDs are the runs'), else None."""
    run_uuids = set().union(*(_uuids(e.record) for e in envs)) if envs else set()
    found = [e for e in envs if isinstance(e.record.get("matmul"), dict)]
    path = Path(log_dir) / MATMUL_FILE if log_dir else None
    if not found and path is not None and path.is_file():
        found = [load_env(path, Path(log_dir))]
    for e in found:
        m = e.record["matmul"]
        if isinstance(m.get("tflops_median"), (int, float)) and m["tflops_median"] > 0:
            gpus = [g for g in m.get("gpus") or [] if isinstance(g, dict)]
            firsts, lows, highs, seconds, blocks = (
                _per_gpu(gpus, key) for key in
                ("tflops_first", "tflops_p5", "tflops_p95", "seconds", "blocks"))
            return MatmulRate(float(m["tflops_median"]), str(m.get("measured_at") or ""),
                              int(m.get("size") or 0), bool(_uuids(e.record) & run_uuids),
                              e.name, _median(firsts), lows[0] if lows else None,
                              highs[-1] if highs else None, _median(seconds),
                              int(_median(blocks) or 0), int(m.get("iters") or 0),
                              int(m.get("warmup") or 0))
    return None


def _order(configs: pd.DataFrame) -> pd.DataFrame:
    rank = {g: i for i, g in enumerate(GROUP_ORDER)}
    return configs.assign(
        _size=configs["hidden_size"].fillna(0) * configs["num_layers"].fillna(0),
        _group=[rank.get(str(g), len(rank)) for g in configs["group"]],
    ).sort_values(["_size", "_group", "num_devices", "case"], kind="stable")


@register("gpt_configurations")
def gpt_configurations(rep):
    tr = rep.tr
    configs = tables.gpt_configurations(rep.summary, rep.result.runs)
    if configs.empty:
        return None
    facts = rep.shared(case_facts)
    gpu, peak = gpu_peak(rep.envs)
    formulas = {gpt_flops.label(str(f)) for f in configs["tflops_formula"].dropna() if f}
    model_flops = formulas == {"72"}  # the model's FLOPs, no recomputation counted
    mixed = configs["precision"].dropna().nunique() > 1  # else rows read as one model
    recomputed = bool(peak) and any(f.recompute for f in facts.values())
    several_hosts = len({h for f in facts.values() for h in f.hosts}) > 1
    rate = matmul_rate(rep.envs, rep.log_dir) if peak and model_flops else None
    flops_header = (tr("col.tflops_by", formula=" / ".join(sorted(formulas)))
                    if formulas else tr("col.tflops"))
    columns = [tr("col.case")]
    columns += [tr("col.precision")] if mixed else []
    columns += [tr("gpt_cases.col.gpus"), tr("gpt_cases.col.dp_impl"),
               tr("gpt_cases.col.batch"), tr("gpt_cases.col.step"),
               tr("gpt_cases.col.samples"),
               tr("gpt_cases.col.tokens"), flops_header,
               tr(("gpt_cases.col.mfu_both" if rate.same_host
                   else "gpt_cases.col.mfu_both_other") if rate
                  else "gpt_cases.col.mfu", gpu=gpu)
               if peak else "MFU"]
    columns += [tr("gpt_cases.col.hfu")] if recomputed else []
    columns += [tr("gpt_cases.col.host")] if several_hosts else []
    rows, first_of_group, last_model, last_group = [], [], None, None
    for r in _order(configs).itertuples(index=False):
        f = facts.get(str(r.case), gpt_runs.UNKNOWN)
        size = gpt_runs.model_size(f.parameters)
        model = tr("gpt_cases.model" if size else "gpt_cases.model_unsized", size=size,
                   hidden=tr.int(r.hidden_size), layers=tr.int(r.num_layers))
        if model != last_model:  # a row of its own names the model, as seed 002's groups
            rows.append([model] + [""] * (len(columns) - 1))
        first_of_group.append((model, r.group) != (last_model, last_group)
                              and model == last_model)
        last_model, last_group = model, r.group
        tokens = (r.throughput_median * f.seq_length / r.num_devices
                  if f.seq_length and pd.notna(r.throughput_median) else float("nan"))
        mfu = (r.tflops_per_gpu / peak if peak and model_flops
               and pd.notna(r.tflops_per_gpu) else float("nan"))
        samples = tables.throughput_text(r, tr, rep.disagreements, r.repeats)
        if pd.notna(r.interval_low):
            samples += "\n" + tr.num(r.interval_low, 1) + tr("punct.range") + tr.num(
                r.interval_high, 1)
        rows.append([str(r.case)] + ([str(r.precision)] if mixed else []) + [
            tr.int(r.num_devices), _dp_impl(rep, r, f),
            f"{tr.int(r.global_batch_size)} / {tr.int(r.batch_size_per_device)}",
            tr.num(r.latency_ms, 1), samples, tr.int(tokens, group=True) if pd.notna(tokens) else "-",
            tr.num(r.tflops_per_gpu, 1), _mfu(rep, r, mfu, rate)]
            + ([_hfu(rep, r, f, peak, mfu)] if recomputed else [])
            + (["; ".join(f.hosts) or "-"] if several_hosts else []))
    frame = pd.DataFrame(rows, columns=columns)
    align = ALIGN[:1] + "l" * mixed + ALIGN[1:] + "r" * recomputed + "t" * several_hosts
    model_rows = frame.iloc[:, 1].eq("")
    styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
    styles.loc[model_rows, :] = "font-weight: bold"
    # a rule above the first case of each strategy group (DP, MP, 2D, PP, ...)
    starts = [i for i, first in zip(frame.index[~model_rows], first_of_group) if first]
    styles.loc[starts, :] = "border-top: 1.5px solid #888"
    return styled.table(frame, "gpt-cases", align, cell_styles=styles,
                        caption=_notes(rep, configs, facts, gpu, peak, model_flops, rate))


def _mfu(rep, r, mfu: float, rate: MatmulRate | None) -> str:
    """'62.3 %' against the peak; with a measured rate, that MFU on a second line."""
    if pd.isna(mfu):
        return "-"
    text = rep.tr.percent(mfu)
    return text + ("\n" + rep.tr.percent(r.tflops_per_gpu / rate.tflops) if rate else "")


def _dp_impl(rep, r, f: gpt_runs.CaseRuns) -> str:
    """'DDP', 'FSDP2'; '–' without data parallelism; 'not stated' where the runs of a
    data-parallel case do not say."""
    if f.dp_impl:
        return f.dp_impl
    dp = r.data_parallel
    return "–" if pd.isna(dp) or int(dp) <= 1 else rep.tr("gpt_cases.not_stated")


def _hfu(rep, r, f: gpt_runs.CaseRuns, peak: float | None, mfu: float) -> str:
    """Hardware FLOPs utilisation: with recomputation, the 96 convention's FLOPs (which
    count the recomputed forward pass) over the peak; without, the MFU."""
    if f.recompute is None or not peak:
        return "-"
    if not f.recompute:
        return rep.tr.percent(mfu) if pd.notna(mfu) else "-"
    value = r.tflops_per_gpu_seed002
    return rep.tr.percent(value / peak) if pd.notna(value) else "-"


def _memory_note(rep, configs: pd.DataFrame) -> str:
    """Where nvidia-smi saw more than the framework's allocator peak, the largest gap
    and its case (memory per GPU is in the strategies table)."""
    gap = configs["memory_sampled_mib"] - configs["memory_framework_mib"]
    if not gap.notna().any() or gap.max() <= 0:
        return rep.tr("gpt_cases.note_memory")
    row = configs.loc[gap.idxmax()]
    return rep.tr("gpt_cases.note_memory_gap", case=row["case"],
                   smi=rep.tr.int(row["memory_sampled_mib"], group=True),
                   framework=rep.tr.int(row["memory_framework_mib"], group=True),
                   gap=rep.tr.int(gap.max(), group=True))


def _notes(rep, configs: pd.DataFrame, facts: dict, gpu: str, peak: float | None,
           model_flops: bool, rate: MatmulRate | None = None) -> list[str]:
    """What the columns count, which repeats disagree, what the campaign did not
    record."""
    tr = rep.tr
    out = [tr("gpt_cases.note_columns"), tables.tflops_note(configs, tr),
           _memory_note(rep, configs)]
    wide = configs[configs["spread_pct"] > SPREAD_NOTE_PCT]
    if len(wide):
        out.append(tr("gpt.spread_note", pct=tr.percent(SPREAD_NOTE_PCT / 100, 0),
                      cases=tr.join([tr("gpt.spread_case", case=c,
                                            pct=tr.percent(p / 100))
                                     for c, p in zip(wide["case"], wide["spread_pct"])])))
    if peak and model_flops:
        out.append(tr("gpt_cases.note_mfu", gpu=gpu, peak=tr.num(peak, 1)))
    elif not model_flops:
        out.append(tr("gpt_cases.note_no_mfu"))
    else:
        out.append(tr("gpt_cases.note_no_peak", gpu=gpu or tr("report.unknown")))
    if rate:
        out.append(tr("gpt_cases.note_matmul_same" if rate.same_host
                      else "gpt_cases.note_matmul_other",
                      rate=tr.num(rate.tflops, 1), size=rate.size, file=rate.source,
                      when=rate.measured_at.replace("T", " ")[:16] + " UTC"))
        if rate.probe_seconds and rate.lowest_block and rate.highest_block \
                and rate.first_block:
            # the first blocks run above what the GPU sustains, and which block is
            # divided by moves every MFU of the second line: say how it was measured
            out.append(tr("gpt_cases.note_matmul_probe", blocks=rate.blocks,
                          products=rate.products, warmup=rate.warmup,
                          seconds=tr.num(rate.probe_seconds, 0),
                          low=tr.num(rate.lowest_block, 0),
                          high=tr.num(rate.highest_block, 0),
                          first=tr.num(rate.first_block, 0),
                          rate=tr.num(rate.tflops, 1),
                          factor=tr.num(rate.tflops / rate.first_block, 2)))
    elif peak and model_flops:
        out.append(tr("gpt_cases.note_matmul"))
    recompute = {f.recompute for f in facts.values()}
    if recompute == {False}:
        out.append(tr("gpt_cases.note_hfu_none"))
    elif True in recompute:
        out.append(tr("gpt_cases.note_hfu_some", cases=tr.join(
            sorted(c for c, f in facts.items() if f.recompute))))
    impls = {f.dp_impl for f in facts.values()} - {""}
    if len(impls) > 1:
        out.append(tr("gpt_cases.note_dp_impl", impls=tr.join(sorted(impls))))
    hosts = {h for f in facts.values() for h in f.hosts}
    if len(hosts) == 1:
        out.append(tr("gpt_cases.note_one_host", host=hosts.pop()))
    elif len(hosts) > 1:
        out.append(tr("gpt_cases.note_hosts", count=len(hosts), hosts=tr.join(sorted(hosts))))
    return out
