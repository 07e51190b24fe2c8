"""A GPT case whose baselines ran another data-parallel implementation says so once, and
its TP loss is not called "the same layout" of a baseline that ran something else."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from analysis.report.build import build

GPT = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "gpt_4gpu"


@pytest.fixture(scope="module", params=["en", "zh"])
def notes(request):
    html = build(GPT, lang=request.param).gpt_strategies().to_html()
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))
    return request.param, {m.group(1): m.group(2) for m in
                           re.finditer(r"\[\d+\] (\S+?)[:：] ?(.*?)(?=\[\d+\] |$)", text)}


def test_2d_note_names_the_fsdp2_cost_once(notes):
    lang, by_case = notes
    note = by_case["2D_2x2x1_16_1536x16"]
    if lang == "en":
        assert "same layout" not in note
        assert "TP loss measured against DP_2x1x1_16_1536x16, which runs DDP where this case " \
               "runs FSDP2: the loss (†) includes the cost of FSDP2 over DDP" in note
        # the other baseline (DP 4) is named with the column whose ratio it is, DP 2 once
        assert "efficiency vs DP is against DP_4x1x1_32_1536x16, which runs DDP where this " \
               "case runs FSDP2: the ratio (†) includes the cost of FSDP2 over DDP" in note
        assert note.count("DP_2x1x1_16_1536x16") == 1 and note.count("DP_4x1x1_32_1536x16") == 1
    else:
        assert "同一布局" not in note and note.count("DP_2x1x1_16_1536x16") == 1


def test_a_baseline_of_the_same_implementation_keeps_the_plain_sentence(notes):
    lang, by_case = notes
    if lang == "en":
        assert "PP loss measured against MP_1x2x1_8_2304x24 (the same layout without pipeline " \
               "stages)" in by_case["MP_PP_1x2x2_64_2304x24"]


def test_ratios_over_another_implementation_are_marked():
    data = build(GPT, lang="en").gpt_strategies().data
    # the first model's rows, by the chart's labels (its 8 cases, then the next model's row)
    assert (data.iloc[0, 0], data.iloc[9, 0]) == ("hidden size 1536 × 16 layers",
                                                  "hidden size 2304 × 24 layers")
    table = data.iloc[1:9].set_index("case")
    row = table.loc["2D 2×2×1 B16"]
    assert row["efficiency vs DP"] == "44.8%†" and row["TP: share lost"] == "55.4%†"
    assert row["efficiency vs 1 GPU"] == "40.5%"  # one GPU: no data parallelism to differ
    assert not table.loc["DP 4×1×1 B32"].astype(str).str.endswith("†").any()
