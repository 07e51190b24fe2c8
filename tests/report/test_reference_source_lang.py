"""A reference's source in the report's language: ``source_zh`` of the references file in a
Chinese report (page 1's sentence and the reference table), ``source`` elsewhere and
wherever no translation is given."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from analysis.report.build import build
from analysis.report.sections.reference import source_text

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu"
REFS = ROOT / "examples" / "references" / "rn50_4gpu.yaml"


def test_source_text_falls_back_to_the_source():
    row = pd.Series({"source": "NVIDIA page", "source_zh": "NVIDIA 页面"})
    assert source_text(row, "zh") == "NVIDIA 页面" and source_text(row, "en") == "NVIDIA page"
    assert source_text(pd.Series({"source": "x", "source_zh": ""}), "zh") == "x"
    assert source_text(pd.Series({"source": "x"}), "zh") == "x"


def test_chinese_report_names_the_sources_in_chinese():
    zh = build(RN50, lang="zh", references=REFS)
    findings = str(zh.part("findings"))
    assert "NVIDIA DLE 24.03 在 H200 上的测试配置" in findings
    assert "figures supplied" not in findings
    sources = [s for s in zh.part("reference").data.iloc[:, 0] if s]
    assert sources and all(re.search("[\u4e00-\u9fff]", s) for s in sources), sources
    en = build(RN50, lang="en", references=REFS)
    assert "figures supplied to this project" in str(en.part("findings"))
