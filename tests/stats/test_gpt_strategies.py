"""analysis.stats.gpt_parallel: GPT strategies against one GPU and DP, the pipeline bubble,
on a constructed summary with answers known by hand and on the committed H200 campaign."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.collect import parse_paths
from analysis.config import RAW_LOGS_DIR
from analysis.stats.gpt_flops import SEED002
from analysis.stats.gpt_parallel import COLUMNS, imbalanced_bubble, stage_flops, strategies
from analysis.stats.summary import summarize

#: case, group, GPUs, DP, TP, PP, micro-batch, global batch, hidden, samples/s, memory
CASES = [
    ("DP_1x1x1_8_1024x8", "DP", 1, 1, 1, 1, 8, 8, 1024, 100.0, 20000.0),
    ("DP_2x1x1_16_1024x8", "DP", 2, 2, 1, 1, 8, 16, 1024, 190.0, 21000.0),
    ("MP_1x2x1_8_1024x8", "MP", 2, 1, 2, 1, 8, 8, 1024, 120.0, 12000.0),
    ("PP_1x1x2_32_1024x8", "DP_PP", 2, 1, 1, 2, 8, 32, 1024, 150.0, 15000.0),
    ("PP_1x1x4_32_1024x8", "DP_PP", 4, 1, 1, 4, 8, 32, 1024, 200.0, 9000.0),
    ("MP_1x2x1_8_2048x8", "MP", 2, 1, 2, 1, 8, 8, 2048, 50.0, 30000.0),
]


def constructed():
    summary = pd.DataFrame([{
        "framework": "PyTorch", "model": "gpt", "precision": "bf16", "case": c[0], "group": c[1],
        "num_devices": c[2], "batch_size_per_device": c[6], "throughput_median": c[9],
        "tflops_per_gpu": 1.0, "memory_framework_mib": c[10], "memory_sampled_mib": c[10] + 1000,
    } for c in CASES] + [{"framework": "PyTorch", "model": "resnet50", "precision": "amp",
                          "case": "", "group": "", "num_devices": 1,
                          "batch_size_per_device": 256, "throughput_median": 3000.0}])
    runs = pd.DataFrame([{
        "case": c[0], "data_parallel": c[3], "tensor_parallel": c[4], "pipeline_parallel": c[5],
        "global_batch_size": c[7], "hidden_size": c[8], "num_layers": 8, "num_heads": 16,
        "seq_length": 1024, "vocab_size": 51200,
    } for c in CASES])
    return strategies(summary, runs).set_index("case")


def test_columns_and_one_row_per_gpt_case():
    got = constructed()
    assert list(got.reset_index().columns) == list(COLUMNS)
    assert sorted(got.index) == sorted(c[0] for c in CASES)
    assert got.loc["PP_1x1x4_32_1024x8", "layout"] == "1×1×4"


def test_efficiency_against_one_gpu_is_per_gpu():
    got = constructed()
    assert got.loc["DP_1x1x1_8_1024x8", "efficiency_vs_1gpu"] == pytest.approx(1.0)
    assert got.loc["DP_2x1x1_16_1024x8", "efficiency_vs_1gpu"] == pytest.approx(0.95)
    assert got.loc["MP_1x2x1_8_1024x8", "efficiency_vs_1gpu"] == pytest.approx(0.60)
    assert got.loc["MP_1x2x1_8_1024x8", "tp_lost"] == pytest.approx(0.40)
    assert got.loc["MP_1x2x1_8_1024x8", "baseline_case"] == "DP_1x1x1_8_1024x8"


def test_efficiency_against_dp_at_the_same_gpu_count():
    got = constructed()
    assert got.loc["MP_1x2x1_8_1024x8", "efficiency_vs_dp"] == pytest.approx(60 / 95)
    assert got.loc["PP_1x1x2_32_1024x8", "efficiency_vs_dp"] == pytest.approx(75 / 95)
    assert got.loc["MP_1x2x1_8_1024x8", "dp_case"] == "DP_2x1x1_16_1024x8"
    assert math.isnan(got.loc["DP_2x1x1_16_1024x8", "efficiency_vs_dp"])  # the DP case itself
    assert got.loc["DP_2x1x1_16_1024x8", "reason"] == ""


def test_pipeline_bubble_measured_beside_theory():
    got = constructed()
    pp2 = got.loc["PP_1x1x2_32_1024x8"]
    assert pp2["micro_batches"] == 4  # 32 / (8 x 1)
    assert pp2["bubble_measured"] == pytest.approx(0.25)  # 1 - 75 / 100
    assert pp2["bubble_theoretical"] == pytest.approx(1 / 5)  # (2-1)/(4+2-1)
    assert "+5.0 pp beyond" in pp2["bubble_note"]
    pp4 = got.loc["PP_1x1x4_32_1024x8"]
    assert pp4["bubble_measured"] == pytest.approx(0.5)
    assert pp4["bubble_theoretical"] == pytest.approx(3 / 7)
    assert math.isnan(got.loc["MP_1x2x1_8_1024x8", "bubble_measured"])


def test_missing_comparison_cases_give_nan_with_a_reason():
    got = constructed()
    pp4 = got.loc["PP_1x1x4_32_1024x8"]
    assert math.isnan(pp4["efficiency_vs_dp"])
    assert pp4["reason"] == "no DP case of this model at 4 GPUs"
    wide = got.loc["MP_1x2x1_8_2048x8"]  # hidden 2048: another model, no 1-GPU or DP case
    assert math.isnan(wide["efficiency_vs_1gpu"]) and math.isnan(wide["tp_lost"])
    assert wide["reason"] == ("no 1-GPU case of this model at micro-batch 8; "
                              "no DP case of this model at 2 GPUs")


def test_memory_framework_first_sampled_beside():
    got = constructed()
    assert got.loc["MP_1x2x1_8_1024x8", ["memory_framework_mib", "memory_sampled_mib"]].tolist() \
        == [12000.0, 13000.0]


def test_unequal_stages_by_flops():
    assert imbalanced_bubble(np.array([1.0, 1.0]), 4) == pytest.approx(1 / 5)  # equal: theory
    assert imbalanced_bubble(np.array([1.0, 2.0]), 3) == pytest.approx(5 / 14)  # 1 - 9/(2*7)
    work = stage_flops(5, 1024, 1024, 51200, 2)  # 3 layers, then 2 layers + logit layer
    layer = 72.0 * 1024 * 1024**2 * (1 + 1024 / (6 * 1024))
    assert work.tolist() == pytest.approx([3 * layer, 2 * layer + 6.0 * 1024 * 1024 * 51200])


def test_no_gpt_cases_gives_an_empty_frame():
    summary = pd.DataFrame({"case": [""], "throughput_median": [1.0]})
    assert list(strategies(summary, pd.DataFrame({"case": [""]})).columns) == list(COLUMNS)


@pytest.fixture(scope="module")
def campaign():
    parsed = parse_paths([RAW_LOGS_DIR / "gpt_4gpu"])
    return strategies(summarize(parsed), parsed.runs).set_index("case")


def test_h200_campaign_figures(campaign):
    """The README's GPT-on-H200 figures (every case on the same four GPUs): DP2 90.7 / 92.7 %,
    DP4 90.4 %, TP2 63 / 73 % of the one-GPU per-GPU throughput, PP2 18.2 % lost against the
    11.1 % bubble (m = 64 / 8 = 8)."""
    eff = campaign["efficiency_vs_1gpu"]
    assert eff["DP_2x1x1_16_1536x16"] == pytest.approx(120.536387 / 2 / 66.412087, rel=1e-6)
    assert round(eff["DP_2x1x1_16_1536x16"] * 100, 1) == 90.7
    assert round(eff["DP_2x1x1_16_2304x24"] * 100, 1) == 92.7
    assert round(eff["DP_4x1x1_32_1536x16"] * 100, 1) == 90.4
    assert round(eff["MP_1x2x1_8_1536x16"] * 100, 1) == 63.3
    assert round(eff["MP_1x2x1_8_2304x24"] * 100, 1) == 73.1
    assert round(campaign.loc["MP_1x2x1_8_1536x16", "efficiency_vs_dp"] * 100, 1) == 69.7
    assert round(campaign.loc["MP_1x2x1_8_2304x24", "efficiency_vs_dp"] * 100, 1) == 78.8
    pp = campaign.loc["PP_1x1x2_64_1536x16"]
    assert pp["micro_batches"] == 8
    assert round(pp["bubble_measured"] * 100, 1) == 18.2
    assert pp["bubble_theoretical"] == pytest.approx(1 / 9)
    assert round(pp["bubble_imbalanced"] * 100, 1) == 19.0
    assert round(pp["efficiency_vs_dp"] * 100, 1) == 90.1
    assert pp["memory_sampled_mib"] == 54003  # the fuller GPU: the last stage (README)
    # the campaign has no DP4 case of the larger model: its 4-GPU cases say so
    no_dp = campaign.index[campaign["reason"] != ""]
    assert sorted(no_dp) == ["2D_2x2x1_16_2304x24", "MP_1x4x1_8_2304x24", "MP_PP_1x2x2_64_2304x24"]
    assert {r.split("; ")[0] for r in campaign.loc[no_dp, "reason"]} \
        == {"no DP case of this model at 4 GPUs"}
    assert campaign.loc["MP_PP_1x2x2_64_2304x24", "reason"].endswith(
        "; no 1×1×2 case of this model at micro-batch 8")
    assert round(eff["MP_PP_1x2x2_64_2304x24"] * 100, 1) == 62.2
    assert round(campaign.loc["PP_1x1x4_64_1536x16", "bubble_measured"] * 100, 1) == 38.7


def test_nullable_dtypes_and_a_comparison_case_without_throughput():
    """As summarize gives them: Int64 counts; a 1-GPU case whose runs gave no throughput is
    named, with NaN and a reason, not mistaken for a missing case."""
    summary = pd.DataFrame([{
        "framework": "PyTorch", "precision": "bf16", "case": c[0], "group": c[1],
        "num_devices": c[2], "batch_size_per_device": c[6], "throughput_median": c[9],
        "tflops_per_gpu": 1.0, "memory_framework_mib": np.nan, "memory_sampled_mib": c[10],
    } for c in CASES[:3]]).astype({"num_devices": "Int64", "batch_size_per_device": "Int64"})
    summary.loc[0, "throughput_median"] = np.nan
    runs = pd.DataFrame([{"case": c[0], "data_parallel": c[3], "tensor_parallel": c[4],
                          "pipeline_parallel": c[5], "global_batch_size": c[7],
                          "hidden_size": c[8], "num_layers": 8, "num_heads": 16,
                          "seq_length": 1024, "vocab_size": pd.NA} for c in CASES[:3]])
    runs = runs.astype({"data_parallel": "Int64", "global_batch_size": "Int64",
                        "vocab_size": "Int64"})
    got = strategies(summary, runs).set_index("case")
    tp = got.loc["MP_1x2x1_8_1024x8"]
    assert tp["baseline_case"] == "DP_1x1x1_8_1024x8" and math.isnan(tp["efficiency_vs_1gpu"])
    assert tp["reason"] == "the comparison case DP_1x1x1_8_1024x8 has no throughput"
    assert tp["efficiency_vs_dp"] == pytest.approx(60 / 95)


def test_stage_flops_follow_the_stated_formula():
    """With seed 002's 96 convention (recomputation counted) the layers weigh 4/3 more and
    the logit layer the same: the stages are less unequal."""
    layer96 = 96.0 * 1024 * 1024**2 * (1 + 1024 / (6 * 1024))
    work = stage_flops(4, 1024, 1024, 51200, 2, SEED002)
    assert work.tolist() == pytest.approx([2 * layer96, 2 * layer96 + 6.0 * 1024 * 1024 * 51200])


def test_combined_layouts_are_measured_against_the_layout_without_tp_or_pp(campaign):
    """TP 2 × PP 2's bubble is measured against TP 2 (its TP losses are not bubble: 14.8 %
    against the 15.3 % that unequal stages predict, where against one GPU it would be
    37.8 %), and 2D 2×2's TP loss against DP 2; TP 2 × PP 2 has no 1×1×2 case to measure
    its TP loss against."""
    mp_pp = campaign.loc["MP_PP_1x2x2_64_2304x24"]
    assert mp_pp["no_pp_case"] == "MP_1x2x1_8_2304x24"
    tp2 = campaign.loc["MP_1x2x1_8_2304x24"]
    assert mp_pp["bubble_measured"] == pytest.approx(
        1 - mp_pp["samples_per_s_per_gpu"] / tp2["samples_per_s_per_gpu"])
    assert round(mp_pp["bubble_measured"] * 100, 1) == 14.8
    assert round(mp_pp["bubble_imbalanced"] * 100, 1) == 15.3
    assert math.isnan(mp_pp["tp_lost"]) and mp_pp["no_tp_case"] == ""
    two_d = campaign.loc["2D_2x2x1_16_1536x16"]
    dp2 = campaign.loc["DP_2x1x1_16_1536x16"]
    assert two_d["no_tp_case"] == "DP_2x1x1_16_1536x16"
    assert two_d["tp_lost"] == pytest.approx(
        1 - two_d["samples_per_s_per_gpu"] / dp2["samples_per_s_per_gpu"])
    # pure layouts: against one GPU, as before
    pp2 = campaign.loc["PP_1x1x2_64_1536x16"]
    assert pp2["no_pp_case"] == "DP_1x1x1_8_1536x16"
    assert pp2["bubble_measured"] == pytest.approx(1 - pp2["efficiency_vs_1gpu"])
    tp = campaign.loc["MP_1x2x1_8_1536x16"]
    assert tp["tp_lost"] == pytest.approx(1 - tp["efficiency_vs_1gpu"])
