"""The report's "vs reference" column (analysis.report.baseline) shows a reference only
where it was measured on the runs' GPUs (model and count from their env records); the note
under the tables names the references left out and why, in English and Chinese."""

from __future__ import annotations

import pytest

from analysis import stats
from analysis.collect import parse_paths
from analysis.env import folder_records
from analysis.report import baseline

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
    ratios = baseline.match(refs_file, summary, runs, envs)
    assert [n["case_key"] for n in ratios.numbers()] == [FP32_1N1G]  # AMP_1N4G: V100 only
    assert ratios.numbers()[0]["ratio"] == pytest.approx(2998.16 / 3100, abs=1e-5)
    assert ratios.numbers()[0]["source"] == "our H200 baseline"
    excluded = ratios.table.set_index("case_key")["excluded"].fillna("")
    assert excluded[AMP_1N4G] != "" and "4n8g" not in set(ratios.table["case_key"])


def test_without_the_runs_no_reference_is_shown(report_data, refs_file):
    summary, _runs, _envs = report_data
    ratios = baseline.match(refs_file, summary)
    assert ratios.numbers() == []
    assert len(ratios.table) == 3  # matched, each left out: the runs' GPUs are not known
