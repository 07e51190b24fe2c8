"""The report's "vs reference" column (analysis.report.vs_reference) shows a reference only
where it was measured on the runs' GPUs (model and count from their env records); the note
under the tables names the references left out and why, in English and Chinese."""

from __future__ import annotations

import pytest

from analysis import stats
from analysis.collect import parse_paths
from analysis.env import folder_records
from analysis.i18n import Translator
from analysis.report import vs_reference

from .campaigns import BUNDLED

FP32_1N1G, AMP_1N4G = "PyTorch/resnet50/fp32/b128/1n1g", "PyTorch/resnet50/amp/b256/1n4g"
# The bundled medians (H200): fp32/b128/1n1g 2,998.16, amp/b256/1n4g 23,362.79 samples/s.
REFERENCES = f"""\
unit: samples/s
references:
  - {{key: {FP32_1N1G}, value: 3100, source: "our H200 baseline", hardware: 4x NVIDIA H200}}
  - {{key: {FP32_1N1G}, value: 367.29, source: "DLPerf seed 003", hardware: 8x V100-SXM2-16GB}}
  - {{key: {AMP_1N4G}, value: 3137.44, source: "DLPerf seed 003", hardware: 8x V100-SXM2-16GB}}
  - {{key: PyTorch/resnet50/amp/b256/4n8g, value: 1, source: s, hardware: 8x V100-SXM2-16GB}}
"""


@pytest.fixture(scope="module")
def report_data():
    result = parse_paths([BUNDLED])
    runs = stats.run_throughput(result)
    summary = stats.summarize(result, runs=runs)
    envs, _topologies, _campaign = folder_records.gather(BUNDLED)
    return summary, runs, envs


@pytest.fixture()
def refs_file(tmp_path):
    path = tmp_path / "refs.yaml"
    path.write_text(REFERENCES, encoding="utf-8")
    return path


def test_only_references_measured_on_the_runs_gpus_give_a_ratio(report_data, refs_file):
    summary, runs, envs = report_data
    ratios = vs_reference.match(refs_file, summary, runs, envs)
    tr = Translator("en")
    assert vs_reference.cell(tr, ratios, FP32_1N1G) == "0.97× (our H200 baseline)"
    assert vs_reference.cell(tr, ratios, AMP_1N4G) == vs_reference.NO_REFERENCE  # V100 only
    assert [n["case_key"] for n in ratios.numbers()] == [FP32_1N1G]
    assert ratios.numbers()[0]["ratio"] == pytest.approx(2998.16 / 3100, abs=1e-5)
    cells = vs_reference.cells(tr, ratios, summary)
    assert sum(c != vs_reference.NO_REFERENCE for c in cells) == 1


@pytest.mark.parametrize("lang, says", [
    ("en", ["References not shown (2): measured on 8x V100-SXM2-16GB, the runs on 4x NVIDIA "
            f"H200: {FP32_1N1G}, {AMP_1N4G}.",
            "shown only where its hardware (GPU model and count) is the runs'"]),
    ("zh", ["未显示的参考值（2 个）： 参考值测于 8x V100-SXM2-16GB，本次运行于 4x NVIDIA H200："
            f"{FP32_1N1G}, {AMP_1N4G}。",
            "仅当参考值的硬件（GPU 型号和数量）与本次运行相同时才显示"]),
])
def test_the_note_names_each_reference_left_out_and_why(report_data, refs_file, lang, says):
    summary, runs, envs = report_data
    note = vs_reference.note(Translator(lang), vs_reference.match(refs_file, summary, runs, envs))
    for text in says:
        assert text in note
    assert "4n8g" not in note  # a reference of no report case is not about the report


def test_without_the_runs_no_reference_is_shown(report_data, refs_file):
    summary, _runs, _envs = report_data
    ratios = vs_reference.match(refs_file, summary)
    assert ratios.numbers() == []
    assert set(vs_reference.cells(Translator("en"), ratios, summary)) == {"–"}
    note = vs_reference.note(Translator("en"), ratios)
    assert ("References not shown (3): measured on 4x NVIDIA H200, the runs' GPUs not known: "
            f"{FP32_1N1G}; measured on 8x V100-SXM2-16GB, the runs' GPUs not known: "
            f"{FP32_1N1G}, {AMP_1N4G}.") in note
