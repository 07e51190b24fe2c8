"""The report of the committed GPT campaign (data/raw_logs/gpt_4gpu, workloads.gpt on H200):
framework PyTorch, torch listed as used, TFLOP/s labelled with their formula (72, the logs')
and written out under the table, MFU against the datasheet peak, what each case ran."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from analysis.i18n import Translator
from analysis.report import tables
from analysis.report.build import build

ROOT = Path(__file__).resolve().parents[2]
GPT = ROOT / "data" / "raw_logs" / "gpt_4gpu"


@pytest.fixture(scope="module")
def reports():
    return {lang: build(GPT, lang=lang) for lang in ("en", "zh")}


def _text(fragment: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", fragment))


def test_framework_is_pytorch_and_torch_is_used(reports):
    rep = reports["en"]
    assert set(rep.summary["framework"]) == {"PyTorch"}
    env = _text(rep.section("environment"))
    assert "Framework (torch) : 2.11.0" in env
    others = re.search(r"Other packages installed \(beside the framework\) : ([^\n]*?)   ", env)
    assert others is None or "torch " not in others.group(1).replace("torchvision", "")
    desc = re.sub(r"\s+", " ", _text(rep.section("descriptions")))
    assert "Framework : PyTorch 2.11.0" in desc
    assert "Precision : BF16 (BF16 autocast, no loss scaling)" in desc


def test_tflops_columns_name_their_formula(reports):
    """Page 1 shows the model's TFLOP/s (the 72 formula the logs state) and MFU; seed 002's
    96 convention, which counts a recomputation that never ran, is not on it."""
    rep = reports["en"]
    table = rep.gpt_configurations()
    frame = table.data.set_index("case")
    assert "TFLOP/s per GPU (72 formula)" in frame.columns
    assert not [c for c in frame.columns if "96" in c]
    by_case = rep.summary.set_index("case")
    tflops = by_case.loc["DP_1x1x1_8_1536x16", "tflops_per_gpu"]
    assert frame.loc["DP_1x1x1_8_1536x16", "TFLOP/s per GPU (72 formula)"] == f"{tflops:,.1f}"
    # MFU against the datasheet peak, then against the matmul rate measured on another
    # 4x H200 host (data/raw_logs/gpt_4gpu/matmul.json: the median of its GPUs' medians)
    rate = json.loads((GPT / "matmul.json").read_text(encoding="utf-8"))["matmul"]
    medians = sorted(g["tflops_median"] for g in rate["gpus"])
    assert rate["tflops_median"] == pytest.approx((medians[1] + medians[2]) / 2, abs=0.051)
    # the header says on page 1 where the rate was measured, not only the note under it
    column = "MFU vs NVIDIA H200 peak / vs matmul measured on another host"
    assert frame.loc["DP_1x1x1_8_1536x16", column] == \
        f"{tflops / 989.5 * 100:.1f}%\n{tflops / rate['tflops_median'] * 100:.1f}%"
    note = table.caption
    assert "another host of the same kind" in note and "2026-11-28 20:36 UTC" in note
    assert f"/ {rate['tflops_median']:.1f} TFLOP/s" in note
    # the probe as it ran: each GPU timed for 30 s, its blocks' spread and its first block,
    # which ran above what the GPU sustains
    gpus = rate["gpus"]
    low, high = min(g["tflops_p5"] for g in gpus), max(g["tflops_p95"] for g in gpus)
    first = sorted(g["tflops_first"] for g in gpus)
    first = (first[1] + first[2]) / 2
    assert f"Each GPU was timed for 30 s after {rate['warmup']} warm-up products" in note
    assert f"90 % of the blocks ran at {low:,.0f}–{high:,.0f} TFLOP/s" in note
    assert f"the first block after the warm-up at {first:,.0f}" in note
    assert "is the sustained rate the second line divides by" in note
    assert f"would be {rate['tflops_median'] / first:.2f} times as large as printed" in note
    assert "72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))" in table.caption
    assert "96·B·s·l·h²" not in table.caption
    zh = reports["zh"].gpt_configurations().data
    assert "每卡 TFLOP/s（72 系数公式）" in zh.columns


def test_seed_convention_alone_where_the_logs_follow_it(data_dir):
    rep = build(data_dir / "oneflow_gpt")
    table = rep.gpt_configurations()
    assert "TFLOP/s per GPU (96 formula)" in table.data.columns
    assert "No MFU: the logs" in table.caption  # 96 counts recomputation: not model FLOPs
    note = tables.tflops_note(rep.summary, Translator("en"))
    assert note.count("96·B·s·l·h²") == 1 and "72·" not in note


def test_memory_gap_is_explained_under_the_table(reports):
    """nvidia-smi's peak beside the framework's: the largest gap (TP 2 x PP 2's last stage)
    named with both figures under page 1's table; memory per GPU is the strategies table's."""
    caption = reports["en"].gpt_configurations().caption
    assert ("nvidia-smi saw up to 25,579 MiB more (MP_PP_1x2x2_64_2304x24: 60,069 vs 34,490 "
            "MiB)") in caption
    assert "memory per GPU (MiB)" in reports["en"].gpt_strategies().data.columns


def test_page_one_says_what_ran(reports):
    """Case names grouped by model and strategy, the data-parallel implementation per case
    (from the argument dumps), parameters, tokens/s per GPU, and that every run had one
    host."""
    table = reports["en"].gpt_configurations()
    frame = table.data
    cases = frame["case"].tolist()
    assert cases[0] == "GPT 0.61B (h1536, 16 layers)" and frame.iloc[0, 1:].eq("").all()
    assert cases[1:5] == ["DP_1x1x1_8_1536x16", "DP_2x1x1_16_1536x16", "DP_4x1x1_32_1536x16",
                          "MP_1x2x1_8_1536x16"]
    assert cases[9] == "GPT 1.77B (h2304, 24 layers)"
    impl = dict(zip(frame["case"], frame["DP impl."]))
    assert impl["2D_2x2x1_16_1536x16"] == "FSDP2" and impl["DP_2x1x1_16_1536x16"] == "DDP"
    assert impl["PP_1x1x2_64_1536x16"] == "–"
    tokens = dict(zip(frame["case"], frame["tokens/s per GPU"]))
    assert tokens["DP_1x1x1_8_1536x16"] == "136,012"  # 66.41 samples/s x 2048 / 1
    assert "Every run ran on one host (vm" in table.caption
    assert "HFU equals MFU: no run recomputed" in table.caption


def test_runs_the_campaign_never_started_are_counted(reports):
    """The spec asks for 5 repeats of 14 cases; the lent machine's time allowed 41 runs. The
    29 left pending in status.json are a caveat on page 1 (en and zh), not silence; none
    failed."""
    caveats = str(reports["en"].caveats())
    assert "**Runs not made**: 29 of the 70 runs the campaign spec asks for did not finish" \
        in caveats
    assert "**Failed runs**" not in caveats
    assert "70 次运行中有 29 次未完成" in str(reports["zh"].caveats())


def test_a_status_file_that_is_not_one_is_named_and_left_out(tmp_path):
    from analysis.env.folder_records import load_campaign

    (tmp_path / "status.json").write_text('{"runs": [{"state": "pending"}]}')
    camp = load_campaign(tmp_path)
    assert camp.pending == [] and camp.planned == 0
    assert camp.unreadable == [("status.json", "not a campaign status: a run without 'run_id'")]


def test_cases_whose_repeats_disagree_are_named_under_the_table(reports):
    """2D 2x2 and TP 4 at hidden 1536: their repeats span 13.4 % and 10.0 % of the median,
    which only the spread chart showed; the table's notes name them, and only them."""
    caption = reports["en"].gpt_configurations().caption
    assert "Repeats that differ by more than 5%" in caption
    assert "MP_1x4x1_8_1536x16 (10.0%) and 2D_2x2x1_16_1536x16 (13.4%);" in caption
    assert "DP_2x1x1_16_1536x16" not in caption


def test_methods_that_disagree_are_marked_in_the_gpt_table(data_dir):
    """Page 1's caveat says numbers whose methods disagree are marked in the results; a
    GPT folder has no results table, so its configurations table carries the mark (the
    Megatron 2n8g run: elapsed time against its timestamps, 5.3 %), on its own line."""
    rep = build(data_dir / "megatron", lang="en")
    assert "**Methods disagree**" in str(rep.caveats())
    table = rep.gpt_configurations()
    marked = [c for c in table.data["samples/s (n) min–max"] if "methods differ" in c]
    assert marked == ["113.80 (n = 1)\n⚠ methods differ 5.3%"]
    assert re.search(r"white-space: pre;?\s*\}", table.to_html())
    zh = build(data_dir / "megatron", lang="zh").gpt_configurations().data
    assert [c for c in zh["吞吐率（samples/s，n）最小～最大"] if "⚠" in c] == [
        "113.80（n = 1）\n⚠ 方法间相差 5.3%"]


def test_gpt_rows_of_several_precisions_name_theirs(reports, data_dir):
    """Megatron's folder ran the same 1024x24 GPT in amp (4 and 16 GPUs) and bf16 (4 GPUs):
    without the precision the two 4-GPU rows read as one model at two batch sizes. A
    campaign of one precision (gpt_4gpu, bf16) has no precision column."""
    for lang, header in (("en", "precision"), ("zh", "精度")):
        table = build(data_dir / "megatron", lang=lang).gpt_configurations().data
        assert sorted(filter(None, table[header])) == ["amp", "amp", "bf16"]
        assert list(table.columns).index(header) == 1  # after the case
    assert "precision" not in reports["en"].gpt_configurations().data.columns


def test_chinese_spread_note_uses_full_width_parentheses(reports):
    """The note under the Chinese GPT table read '2D_2x2x1_16_1536x16 (12.5%)'."""
    caption = reports["zh"].gpt_configurations().caption
    assert "2D_2x2x1_16_1536x16（13.4%）" in caption and "(13.4%)" not in caption


def test_descriptions_name_the_suite_gpt_workload(reports):
    """The GPT campaign ran the suite's own GPT workload on synthetic tokens; the ResNet
    report's descriptions say what the benchmark was, the GPT report's said nothing."""
    en = re.sub(r"\s+", " ", _text(reports["en"].section("descriptions")))
    assert ("Benchmark : DLPerf Suite built-in workload: GPT, trained on synthetic data "
            "generated on the device") in en
    zh = re.sub(r"\s+", " ", _text(reports["zh"].section("descriptions")))
    assert "DLPerf Suite 内置 GPT，使用在 GPU 上生成的合成数据训练" in zh
