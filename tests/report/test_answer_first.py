"""The report answers first (issue 11): page-1 key numbers with n and the caveats that change
how they read, seed-shaped tables, per-family method text with a real log line, precision
labels that say what ran, sections without data left out, Chinese that reads as Chinese.
Built without a kernel (``build``); the published PDF is checked in test_publish.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.i18n import Translator, load_catalogue
from analysis.report import prose, tables
from analysis.report.build import build, cell_html, pick_title
from analysis.report.precision import precision_label
from analysis.report.sections import key_numbers as headline
from analysis.report.sections.charts import has_data
from analysis.report.sections.descriptions import precision_labels
from analysis.stats.agreement import method_agreement
from analysis.stats.precision import precision_ratios

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu"
GPT_TABLE = ROOT / "tests" / "data" / "oneflow_gpt" / "table"
TF_BERT = ROOT / "tests" / "data" / "dll_tensorflow" / "tf_bert"
#: Columns the report reads from stats.summarize (the stats engineer's contract, issue 11).
CONTRACT = ("interval_low", "interval_high", "interval_kind", "memory_framework_mib",
            "memory_sampled_mib", "memory_framework_max_mib", "memory_sampled_max_mib",
            "memory_flag", "spread_pct", "repeats")


@pytest.fixture(scope="module")
def rn50():
    return {lang: build(RN50, lang=lang) for lang in ("en", "zh")}


@pytest.fixture(scope="module")
def gpt():
    return build(GPT_TABLE, lang="en")


def _text(obj) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell_html(obj)))


def test_summary_has_every_column_the_report_reads(rn50):
    missing = [c for c in CONTRACT if c not in rn50["en"].summary.columns]
    assert missing == [], f"stats.summarize lacks {missing}: the report cannot show them"
    assert callable(precision_ratios) and callable(method_agreement)


def _case(n, g, thr, repeats=5, precision="fp32", bsz=128):
    return dict(framework="PyTorch", model="resnet50", precision=precision, num_nodes=n,
                gpus_per_node=g, num_devices=n * g, batch_size_per_device=bsz, case="",
                group="", repeats=repeats, throughput_median=thr, speedup=thr / 3000.0,
                scaling_efficiency=thr / 3000.0 / (n * g), spread_pct=0.4)


def test_largest_configuration_prefers_the_real_node_over_a_same_host_one():
    s = pd.DataFrame([_case(1, 1, 3000.0), _case(1, 4, 11661.87), _case(2, 2, 11700.0)])
    simulated = {("PyTorch", "resnet50", "fp32", 128, 2, 2)}
    frame = headline.key_numbers(s, Translator("en"), simulated)
    row = frame.iloc[0].tolist()
    assert row[1] == "3,000.00 (n = 5)"
    assert row[2] == "1n4g" and row[3] == "11,661.87 (n = 5)"  # not 2n2g's higher 11,700
    only = headline.key_numbers(s.iloc[[0, 2]], Translator("en"), simulated)
    assert only.iloc[0, 2] == "2n2g (one host)"  # said where it is the only 4-GPU row


def test_no_gpt_sections_without_gpt_cases(rn50):
    rep = rn50["en"]
    assert rep.gpt_configurations() is None and rep.gpt_strategies() is None
    assert rep.heading("gpt_parallel") is None and rep.gpt_strategy_definitions() is None
    assert rep.chart("gpt") is None


def test_key_numbers_of_the_rn50_campaign(rn50):
    en = rn50["en"].key_numbers().data
    # every group's largest is 1n4g: the headers name it
    assert list(en.columns) == ["group", "1 GPU, samples/s", "largest configuration",
                                "samples/s at 1n4g", "Speedup", "Scaling efficiency",
                                "AMP / FP32", "spread at 1n4g"]
    amp = en[en["group"].str.contains("AMP")].iloc[0]
    assert amp["largest configuration"] == "1n4g"
    # each median with its n, and the repeats' min–max on the line below
    assert amp["samples/s at 1n4g"] == "23,362.79 (n = 5)\n23,254.82–23,399.37"
    assert amp["1 GPU, samples/s"] == "6,046.57 (n = 5)\n6,006.60–6,061.02"
    assert amp["Speedup"] == "3.86×"
    assert re.fullmatch(r"2\.\d\d× \(b256 / b128\)", amp["AMP / FP32"])  # the header names them
    zh = rn50["zh"].key_numbers().data
    assert zh.iloc[0, 1].startswith("6,046.57（n = 5）\n") and zh.iloc[0, 4] == "3.86 倍"


def test_caveats_follow_the_answer(rn50):
    rep = rn50["en"]
    text = _text(rep.caveats())
    assert "Synthetic data" in text
    assert "2n2g" in text and "one machine" in text  # the nodes' env records name one host
    assert "n = 5" in text and "min–max" in text
    cells = rep.cells()
    # style, title, key findings, key numbers, (GPT table), the command that reproduces
    # it, caveats: the answer, then how to read it, on page 1 before any section
    assert cells.index(rep.caveats()) == 6
    assert cells.index(rep.part("findings")) == 2
    assert cells.index(rep.part("reproduce")) == 5


def test_missing_environment_is_a_caveat(tmp_path):
    import shutil

    logs = tmp_path / "logs"
    shutil.copytree(TF_BERT, logs)
    assert "No environment record" in _text(build(logs, lang="en").caveats())


def test_results_show_framework_memory_first_interval_kind_and_n(rn50):
    t = rn50["en"].results().data
    cols = list(t.columns)
    assert cols.index("memory, framework peak (MiB)") < cols.index("memory, nvidia-smi (MiB)")
    assert "interval (min–max)" in cols and "n" in cols
    fp32 = t.iloc[4:8]
    assert fp32["memory, framework peak (MiB)"].tolist()[2] == "16,394"  # the log's own peak
    assert "(max 18,161)" in " ".join(fp32["memory, nvidia-smi (MiB)"])  # the transient sample


def test_method_text_is_the_family_rule_with_a_real_line(rn50, gpt):
    text = str(rn50["en"].method_section())
    assert "DLLogger PyTorch" in text and "OneFlow" not in text
    line = re.search(r"```text\n(.*)\n```", text).group(1)
    src = re.search(r"line (\d+) of `([^`]+)`", text)
    logged = (RN50 / src.group(2)).read_text().splitlines()[int(src.group(1)) - 1]
    assert line == logged.strip()
    assert "Iteration: 25 " in line  # the first line of the window the rule measured (25-125)
    g = str(gpt.method_section())
    assert "latency (s/iteration)" in g and "DLLogger" not in g and "Iteration > 5" not in g
    assert "Speedup" not in g and "Intervals" not in g  # no table of the report shows them
    zh = str(rn50["zh"].method_section())
    assert "PyTorch 运行（40 次；日志为 DLLogger PyTorch 格式）。** DLPerf 规则：" in zh


def test_gpt_report_has_its_cases_table_and_no_empty_sections(gpt):
    t = gpt.gpt_configurations().data
    assert list(t.columns)[:4] == ["case", "GPUs", "DP impl.", "GBS / MBS"]
    big = t[t["GPUs"] == "32"].iloc[0]
    assert big[["case", "GBS / MBS"]].tolist() == ["MP_PP_1x8x4_512_2304x24", "512 / 16"]
    assert all("(n = 1)" in c for c in t["samples/s (n) min–max"] if c)
    assert gpt.results() is None
    assert gpt.heading("charts") is not None and has_data(gpt, "gpt")  # its own chart
    assert gpt.chart("throughput") is None and gpt.chart("speedup") is None
    assert gpt.key_numbers() is None
    assert gpt.chart("spread") is None  # n = 1: no spread to draw
    assert gpt.heading("results") is None  # its table is on page 1: no empty heading
    assert gpt.gpt_strategies() is not None and gpt.heading("gpt_parallel") is not None


def test_precision_labels_say_what_ran():
    tr = Translator("en")
    assert precision_label("fp32", {}, True, tr) == "FP32 (TF32 off)"
    # another workload's TF32 flag: its reach is not known, so only "on" is claimed
    assert precision_label("fp32", {"tf32": ["True"]}, False, tr) == "FP32 (TF32 on)"
    # the built-in workload's switch covers the convolutions too (a ResNet's FLOPs)
    assert precision_label("fp32", {"tf32": ["True"]}, True, tr) == \
        "FP32 (TF32 on for matmuls and convolutions)"
    assert precision_label("fp32", {}, False, tr) == "FP32"  # nothing said, nothing claimed
    assert precision_label("amp", {}, True, tr) == "AMP (FP16 autocast, dynamic loss scaling)"
    assert precision_label("bf16", {}, False, tr) == "BF16 (BF16 autocast, no loss scaling)"
    assert precision_label("amp", {"static_loss_scale": ["128"]}, False, tr) == \
        "AMP (FP16 autocast, static loss scale 128)"
    assert precision_label("amp", {}, True, Translator("zh")) == \
        "AMP（FP16 自动混合精度，动态损失缩放）"
    assert precision_label("fp32", {"tf32": ["True"]}, True, Translator("zh")) == \
        "FP32（矩阵乘与卷积均开启 TF32）"


def test_precision_labels_read_the_runs_of_that_precision():
    """The Megatron fixtures: the amp runs state fp16 (bf16 False), another run bf16; the
    amp label is FP16, not BF16 taken from the other run."""
    rep = build(ROOT / "tests" / "data" / "megatron", lang="en")
    assert precision_labels(rep) == ["AMP (FP16 autocast)", "BF16 (BF16 autocast, no loss scaling)"]


def test_title_per_language():
    assert pick_title("ResNet-50 on H200|H200 上的 ResNet-50", "zh") == "H200 上的 ResNet-50"
    assert pick_title("ResNet-50 on H200|H200 上的 ResNet-50", "en") == "ResNet-50 on H200"
    assert pick_title("Same", "zh") == "Same" and pick_title(None, "en") == ""


def test_log_text_in_prose_is_text_not_markup():
    assert "<script>" not in prose.md("<script>alert(1)</script> *x*")
    html = cell_html(prose.Markdown(f"a {prose.code('<b>`x`</b>')}"))
    assert "<b>" not in html and "&lt;b&gt;" in html
    block = prose.code_block("```\n<img src=x>")
    assert "<img" not in cell_html(prose.Markdown(block))
    # a URL in a title stays text: no link that took the escaped ')' into its address
    title = cell_html(prose.Markdown(prose.md("H200 (details: https://example.com/run42)")))
    assert "<a" not in title and "https://example.com/run42)" in title


def test_methods_that_disagree_are_marked_next_to_the_number():
    row = pd.Series(_case(1, 1, 3000.0))
    tr = Translator("en")
    key = tables.case_key(row)
    # the warning on a line of its own: the cell breaks there and nowhere else
    assert tables.throughput_text(row, tr, {key: 0.072}) == "3,000.00\n⚠ methods differ 7.2%"
    assert tables.throughput_text(row, tr, {}) == "3,000.00"
    s = pd.DataFrame([_case(1, 1, 3000.0), _case(1, 4, 11661.87)])
    frame = headline.key_numbers(s, tr, disagree={key: 0.072})
    assert frame.iloc[0, 1] == "3,000.00 (n = 5)\n⚠ methods differ 7.2%"  # on page 1 too
    assert frame.iloc[0, 3] == "11,661.87 (n = 5)"


def test_chinese_reads_as_chinese():
    cat = load_catalogue()
    zh = " ".join(v["zh"] for v in cat.values())
    for calque in ("测试活动", "测试负载", "没有运行被标记", "次重复的中位数"):
        assert calque not in zh, calque
    cjk, latin = "[\u4e00-\u9fff]", "[A-Za-z0-9]"
    tight = [k for k, v in cat.items()
             if re.search(f"{cjk}{latin}|{latin}{cjk}", v["zh"])]
    assert tight == [], f"no space between Chinese and Latin words: {tight}"
    tr = Translator("zh")
    assert tr.join(["OneFlow", "PyTorch", "TensorFlow"]) == "OneFlow、PyTorch 和 TensorFlow"
    assert tr("punct.colon") == "："


def test_nan_spread_and_missing_pairs_read_as_dashes():
    s = pd.DataFrame([_case(1, 1, 3000.0)]).assign(spread_pct=np.nan)
    frame = headline.key_numbers(s, Translator("en"))
    assert frame.iloc[0, -1] == "-" and frame.iloc[0, -2] == "-"


def test_each_notebook_section_is_one_library_call():
    import ast

    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "20_report.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs for c in code)  # committed without outputs
    start = next(i for i, c in enumerate(code) if "report.build(" in c.source)
    sections = code[start + 1:]
    assert len(sections) >= 15
    for cell in sections:
        body = ast.parse(cell.source).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), cell.source
        call = body[0].value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute), cell.source
        assert isinstance(call.func.value, ast.Name) and call.func.value.id == "rep", cell.source
    order = [c.source.split("(")[0] for c in sections]
    assert order.index("rep.key_numbers") < order.index("rep.results") < order.index(
        "rep.method_section") < order.index("rep.chart")  # the answer first, the appendix last
    assert order[-2:] == ["rep.heading", "rep.logs"]  # the appendix: ... scripts, logs
    assert order.index("rep.scripts") > order.index("rep.chart")


def test_an_nvidia_smi_peak_below_the_allocator_peak_is_explained(rn50):
    """rn50_4gpu fp32: the framework's peak (16,296 MiB at 1n1g) above every nvidia-smi
    sample (12,971, flat over the training steps): the results say the framework counts
    iteration 1, where cuDNN's autotuning ran, and what training held; never that the
    samples "missed" a peak."""
    results = rn50["en"].results()
    caption = results.caption
    assert "iteration 1 included, where cuDNN&#x27;s autotuning" in caption
    assert "(FP32 (TF32 on): 1n1g, 1n2g, 1n4g, and 2n2g)" in caption
    assert "training held about the nvidia-smi figure" in caption
    assert "missed" not in caption
    zh = rn50["zh"].results().caption
    assert "包括第 1 次迭代" in zh and "错过" not in zh
    summary = rn50["en"].summary
    assert (summary["memory_framework_mib"] > summary["memory_sampled_mib"]).any()


def test_a_group_whose_logs_name_no_model_says_so(data_dir):
    """LiBai's log.txt has no config dump: its run has no model, and page 1 and the results
    table called its group 'OneFlow nan, amp, bsz 4'."""
    for lang, said in (("en", "OneFlow model unknown, AMP, bsz 4"),
                       ("zh", "OneFlow 模型未知，AMP，每卡批大小 4")):
        rep = build(data_dir / "libai", lang=lang)
        first = rep.key_numbers().data.iloc[:, 0].tolist()
        results = rep.results().data.iloc[:, 0].tolist()
        assert said in first and said in results
        assert not any("nan" in str(c) for c in first + results)


def test_cases_no_run_measured_are_named_not_counted_as_repeats(data_dir):
    """OneFlow CNN's 2n8g case is a non-master log only (no training lines): n = 0. Page 1
    said 'Few repeats: n = 0–2 per case' and the descriptions 'Each case was repeated 0–2
    times; the median of the repeats is the result'. A folder whose every case is n = 0
    (OneFlow models: no DLPerf rule) showed dashes under 'n = 0 per case; the medians are
    shown without an interval'. Unmeasured cases now have their own caveat; the repeats
    are those of the measured cases."""
    cnn = build(data_dir / "oneflow_cnn", lang="en")
    caveats = str(cnn.caveats())
    assert ("**No throughput**: no run gave a throughput in 1 of the 4 cases; their rows show "
            "dashes, and Problems says why for each run.") in caveats
    assert "n = 1–2 per case" in caveats and "n = 0" not in caveats
    assert "repeated 1–2 times" in str(cnn.descriptions())
    models = build(data_dir / "oneflow_models", lang="zh")
    caveats = str(models.caveats())
    assert "**没有吞吐率**：2 个用例中有 2 个没有任何一次运行得出吞吐率" in caveats
    assert "重复次数少" not in caveats
    assert "重复 0 次" not in str(models.descriptions())


def test_framework_versions_the_runs_report_are_punctuated_per_language(rn50):
    """The descriptions' framework line joined the versions the runs report with an ASCII
    '; ' and ', ' in Chinese too ('…git 70d99e998b49); 日志中记录的版本：torch 2.11.0+cu130, cuda 13.0')."""
    en = str(rn50["en"].descriptions()).replace("\\", "")  # Markdown escapes
    zh = str(rn50["zh"].descriptions()).replace("\\", "")
    assert "; as the runs report: torch 2.11.0+cu130, cuda 13.0, cudnn 91900" in en
    assert "；日志中记录的版本：torch 2.11.0+cu130，cuda 13.0，cudnn 91900，nccl 2.28.9" in zh
    line = next(x for x in zh.splitlines() if "日志中记录的版本" in x)
    assert ";" not in line and ", " not in line.split("日志中记录的版本")[1]


def test_memory_sources_read_in_the_report_language(data_dir):
    """The method's memory bullet named the framework's peak in English inside the Chinese
    report ('`max_allocated_mib` column', 'Megatron-LM `max allocated` memory lines')."""
    zh = str(build(RN50.parent / "gpt_4gpu", lang="zh").method_section())
    assert "`max_allocated_mib` 列（`torch.cuda.max_memory_allocated`）" in zh
    assert "column" not in zh
    megatron = str(build(data_dir / "megatron", lang="zh").method_section())
    assert "Megatron-LM 日志中的 `max allocated` 显存行" in megatron
    assert "memory lines" not in megatron
    en = str(build(data_dir / "megatron", lang="en").method_section())
    assert "Megatron-LM `max allocated` memory lines" in en


def test_no_speedup_chart_without_two_device_counts():
    """TF BERT ran on one GPU only: the report drew a speedup chart of a single point."""
    rep = build(TF_BERT, lang="en")
    assert has_data(rep, "throughput") and not has_data(rep, "speedup")
    assert rep.chart("speedup") is None
