"""analysis.report.sections.gpt_strategies: the GPT strategies table in English and Chinese (cases
by the configurations chart's labels under a row naming their model, a caption line mapping
those labels to case names), its note on the definitions, and no table without GPT cases."""

from __future__ import annotations

import html

import pandas as pd

from analysis.report.prose import Markdown
from analysis.report.sections.gpt_strategies import COLUMNS, definitions, section

CASES = [  # case, GPUs, DP, TP, PP, global batch, samples/s
    ("DP_1x1x1_8_1024x8", 1, 1, 1, 1, 8, 100.0),
    ("DP_2x1x1_16_1024x8", 2, 2, 1, 1, 16, 190.0),
    ("PP_1x1x2_32_1024x8", 2, 1, 1, 2, 32, 150.0),
    ("MP_1x4x1_8_1024x8<b>", 4, 1, 4, 1, 8, 200.0),
]


def frames():
    summary = pd.DataFrame([{
        "framework": "PyTorch", "precision": "bf16", "case": c[0], "group": "G",
        "num_devices": c[1], "batch_size_per_device": 8, "throughput_median": c[6],
        "tflops_per_gpu": 300.0, "memory_framework_mib": 20000.0, "memory_sampled_mib": 21000.0,
    } for c in CASES])
    runs = pd.DataFrame([{
        "case": c[0], "data_parallel": c[2], "tensor_parallel": c[3], "pipeline_parallel": c[4],
        "global_batch_size": c[5], "hidden_size": 1024, "num_layers": 8, "num_heads": 16,
        "seq_length": 1024, "vocab_size": 51200,
    } for c in CASES])
    return summary, runs


def notes(styler) -> dict[str, str]:
    """The notes under the table (its caption's numbered lines), by their number."""
    lines = styler.caption.split("<br>")[2:]  # after the title and the names line
    return {line.split("] ", 1)[0] + "]": html.unescape(line.split("] ", 1)[1]) for line in lines}


def test_english_table():
    styler = section(*frames(), "en")
    table, note = styler.data.set_index("case"), notes(styler)
    assert len(table.columns) == len(COLUMNS) - 1
    # one row names the model, as the chart's panel title; then each case by its bar label
    # (a name the chart cannot read its sizes from stays the name, there as here)
    assert list(table.index) == ["hidden size 1024 × 8 layers", "G 1×1×1 B8", "G 2×1×1 B16",
                                 "G 1×1×2 B32", "MP_1x4x1_8_1024x8<b>"]
    assert (table.iloc[0] == "").all()
    assert styler.caption.split("<br>")[1] == (
        "A row names its case as the charts do (strategy group, DP×TP×PP, global batch B) "
        "under its model; the notes, page 1 and the logs give the case name: "
        "DP_1x1x1_8_1024x8 is G 1×1×1 B8 under hidden size 1024 × 8 layers.")
    pp = table.loc["G 1×1×2 B32"]
    assert pp["micro-batches m"] == "4"
    assert (pp["efficiency vs 1 GPU"], pp["PP loss (measured)"], pp["bubble, theory"]) \
        == ("75.0%", "25.0%", "20.0%")
    assert note[pp["note"]].startswith(
        "PP_1x1x2_32_1024x8: measured PP loss 5.0 pp beyond the (p−1)/(m+p−1) bubble; ")
    tp = table.loc["MP_1x4x1_8_1024x8<b>"]
    assert tp["TP: share lost"] == "50.0%" and tp["efficiency vs DP"] == "-"
    assert note[tp["note"]] == "MP_1x4x1_8_1024x8<b>: no DP case of this model at 4 GPUs"
    assert tp["memory per GPU (MiB)"] == "20,000"


def test_chinese_table_and_escaped_case_names():
    styler = section(*frames(), "zh")
    assert "相对单卡 效率" in styler.data.columns
    assert styler.data.iloc[0, 0] == "隐藏层大小 1024 × 8 层"
    assert notes(styler)[styler.data.loc[4, "说明"]] == "MP_1x4x1_8_1024x8<b>：没有该模型 4 卡的数据并行用例"
    page = styler.to_html()
    assert "MP_1x4x1_8_1024x8&lt;b&gt;" in page and "<b>" not in page


def test_definitions_in_both_languages():
    en, zh = definitions("en"), definitions("zh")
    assert isinstance(en, Markdown) and en.count("\n- ") == 6
    assert "(p−1)/(m+p−1)" in en and "per-GPU ratio" in en
    assert "相对单卡效率" in zh


def test_no_gpt_cases_no_table():
    summary = pd.DataFrame({"case": [""], "throughput_median": [1.0]})
    assert section(summary, pd.DataFrame({"case": [""]}), "en") is None


def test_note_names_a_comparison_case_without_throughput():
    summary, runs = frames()
    summary.loc[0, "throughput_median"] = float("nan")
    styler = section(summary, runs, "zh")
    assert notes(styler)[styler.data.loc[2, "说明"]] \
        == "DP_2x1x1_16_1024x8：对比用例 DP_1x1x1_8_1024x8 没有吞吐率"
