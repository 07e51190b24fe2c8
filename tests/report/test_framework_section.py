"""The report's frameworks section (issue 11, item 8): frameworks side by side only where they
ran the same setting on identical hardware, with source and version, what was left out said
and why (log text escaped), the section absent when the runs hold one framework. Real logs:
the bundled PyTorch runs (4x H200, with env records) beside synthetic OneFlow runs of the
same setting on the same machine, and OneFlow runs on a V100 machine. One build; the
Chinese report and the one-framework report reuse its Prepared data."""

from __future__ import annotations

import dataclasses
import json
import shutil
import statistics

import nbformat
import pandas as pd
import pytest
import synth
from conftest import ROOT

from analysis.report.build import Report, build, cell_html

RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu"

H200 = "4x NVIDIA H200, Intel(R) Xeon(R) Processor (64 CPUs), 504 GiB, x86_64"
PYTORCH_MEDIAN = 2998.16  # dlperf summarize data/raw_logs/rn50_4gpu: fp32 b128 1n1g
ONEFLOW_MEDIAN = statistics.median(synth.throughput("fp32", 128, 1, 1, r) for r in (1, 2, 3))
HOSTILE_MODEL = "<b>net</b>*x*"


def _oneflow(root, record: dict, model: str = "resnet50") -> None:
    for log in synth.write_campaign(root, configs=((1, 1),)):
        log.write_text(log.read_text().replace("model = resnet50", f"model = {model}"))
        log.with_name(f"{log.stem}.node0.env.json").write_text(json.dumps(record))


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    logs = tmp_path_factory.mktemp("frameworks") / "logs"
    pytorch = logs / "pytorch" / "1n1g"
    pytorch.mkdir(parents=True)
    for path in (RN50 / "1n1g").glob("resnet50_b128_fp32_*"):
        shutil.copy(path, pytorch / path.name)
    h200 = json.loads((RN50 / "1n1g" / "resnet50_b128_fp32_1.node0.env.json").read_text())
    _oneflow(logs / "oneflow", h200)
    _oneflow(logs / "oneflow_v100", synth.env_record("v100-node"), model=HOSTILE_MODEL)
    return build(logs, lang="en")


def test_frameworks_on_the_same_hardware_are_side_by_side_with_source_and_version(two):
    styler = two.framework_comparison()
    t = styler.data.set_index("framework")
    assert sorted(t.index) == ["OneFlow", "PyTorch"]  # not the V100 OneFlow runs
    assert t.loc["OneFlow", "relative"] == "baseline"  # first by name
    assert t.loc["PyTorch", "relative"] == f"{PYTORCH_MEDIAN / ONEFLOW_MEDIAN:.2f}× OneFlow"
    assert t.loc["PyTorch", "median (samples/s)"] == f"{PYTORCH_MEDIAN:,.2f}"
    assert t.loc["PyTorch", "n"] == "5" and t.loc["OneFlow", "n"] == "3"
    assert t.loc["PyTorch", "version"].startswith("torch ")
    assert (t.loc["PyTorch", "source"], t.loc["OneFlow", "source"]) == ("pytorch", "oneflow")
    # one machine for every row: said once above the table, not repeated in a wide column
    assert "hardware" not in styler.data.columns and "note" not in styler.data.columns
    html = cell_html(styler)
    assert f"Hardware of every row: {H200}" in html and 'class="dlperf-table dlperf-frameworks"' in html


def test_what_is_left_out_is_said_with_the_reason_and_log_text_escaped(two):
    notes = two.framework_exclusions()
    html = cell_html(notes)
    assert "Left out of the comparison (1):" in html
    assert "no other framework ran this setting on this hardware" in html
    assert "8x Tesla V100-SXM2-16GB" in html and "(oneflow_v100)" in html
    assert "&lt;b&gt;net&lt;/b&gt;*x*" in html and "<b>net" not in html
    assert "nothing to compare" not in html


def test_the_section_is_in_the_report_and_its_contents_in_both_languages(two):
    assert ("sec-frameworks", "Frameworks compared") in two.contents()
    cells = two.cells()
    heading = two.heading("frameworks")
    assert heading in cells and cells.index(heading) + 1 == cells.index(
        next(c for c in cells if c is not None and getattr(c, "uuid", "") == "frameworks"))
    zh = Report(two.data, lang="zh")
    assert "## 框架对比" in zh.heading("frameworks")
    shown = zh.framework_comparison().data
    assert "框架" in shown.columns and "硬件" not in shown.columns
    assert f"各行的硬件：{H200}" in cell_html(zh.framework_comparison())
    assert "未参与比较（1 项）" in cell_html(zh.framework_exclusions())


def test_a_second_measurement_of_a_framework_is_shown_and_flagged_not_dropped(two):
    """The OneFlow runs again from a second folder, with their env records (same machine)."""
    runs, envs = two.data.runs, two.data.envs
    again = runs[runs["run_id"].str.startswith("oneflow/")].assign(
        run_id=lambda r: "again_" + r["run_id"],
        source=lambda r: r["source"].str.replace("/oneflow/", "/again_oneflow/"))
    copies = [dataclasses.replace(e, name="again_" + e.name) for e in envs
              if e.name.startswith("oneflow/")]
    assert len(again) == len(copies) == 3
    rep = Report(dataclasses.replace(two.data, runs=pd.concat([runs, again]),
                                     envs=envs + copies))
    t = rep.framework_comparison().data
    oneflow = t[t["framework"] == "OneFlow"]
    assert sorted(oneflow["source"]) == ["again_oneflow", "oneflow"]
    assert (oneflow["note"] == "duplicate: 2 measurements of OneFlow for this setting and "
            "hardware, all shown").all()
    # no single OneFlow measurement to divide by: no ratio rather than an arbitrary pick
    assert t.loc[t["framework"] == "PyTorch", "note"].item() == (
        "no ratio: the baseline OneFlow has 2 measurements here")


def test_nothing_comparable_says_so_instead_of_an_empty_table(two):
    runs = two.data.runs
    apart = dataclasses.replace(two.data, runs=runs[runs["source"].str.contains("oneflow_v100")
                                                     | (runs["framework"] == "PyTorch")])
    rep = Report(apart, lang="en")
    assert rep.heading("frameworks") is not None and rep.framework_comparison() is None
    text = cell_html(rep.framework_exclusions())
    assert "there is nothing to compare" in text and "Left out of the comparison (2):" in text


def test_one_framework_leaves_the_section_out(two):
    runs = two.data.runs
    alone = Report(dataclasses.replace(two.data, runs=runs[runs["framework"] == "PyTorch"]))
    assert alone.framework_comparison() is None and alone.framework_exclusions() is None
    assert alone.heading("frameworks") is None
    assert "sec-frameworks" not in dict(alone.contents())


def test_the_report_notebook_has_the_section_after_the_results():
    nb = nbformat.read(ROOT / "notebooks" / "20_report.ipynb", as_version=4)
    sources = [c.source.strip() for c in nb.cells if c.cell_type == "code"]
    at = sources.index("rep.results()")
    assert sources[at + 1:at + 4] == ['rep.heading("frameworks")', "rep.framework_comparison()",
                                      "rep.framework_exclusions()"]
