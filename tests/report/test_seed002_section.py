"""Seed 002's own GPT figures beside ours, both by its 96 convention, in one labelled table
after the strategies (never on page 1), and nothing of it in a report without GPT cases."""

from __future__ import annotations

import json

import pytest
from changes.campaigns import BUNDLED, ROOT

from analysis.report.build import build
from analysis.report.sections.seed002 import SEED002, seed_gpus

GPT = ROOT / "data" / "raw_logs" / "gpt_4gpu"


@pytest.fixture(scope="module")
def reports():
    return {lang: build(GPT, lang=lang) for lang in ("en", "zh")}


def test_seed_case_names_give_gpus_and_global_batch():
    assert [seed_gpus(s.case) for s in SEED002] == [(1, 2), (8, 16), (8, 16)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_seed_rows_then_ours_of_the_same_shape_by_the_96_convention(reports, lang):
    styler = reports[lang].part("seed002")
    frame = styler.data
    assert list(frame.iloc[:3, 1]) == [s.case for s in SEED002]
    assert list(frame.iloc[:3, -1]) == ["49.4", "48.0", "31.3"]
    assert frame.iloc[0, 4] == "406.16" and frame.iloc[1, 5] == "12,404"
    ours = frame.iloc[3:]
    assert len(ours) and all(c.endswith("_1536x16") for c in ours.iloc[:, 1])
    summary = reports[lang].summary.set_index("case")
    for case, value in zip(ours.iloc[:, 1], ours.iloc[:, -1]):
        assert value == f"{summary.loc[case, 'tflops_per_gpu_seed002']:.1f}"
    assert "96" in frame.columns[-1]  # the column names its convention
    html = styler.to_html()
    assert ("96 convention" if lang == "en" else "96 口径") in html
    assert "OneFlow 0.3.5" in html and "V100-SXM2-16GB" in html


def test_not_on_page_one_and_not_in_a_report_without_gpt():
    cells = [("".join(c["source"])) for c in json.loads(
        (ROOT / "notebooks" / "20_report.ipynb").read_text())["cells"]]
    at = next(i for i, c in enumerate(cells) if 'part("seed002")' in c)
    assert at > next(i for i, c in enumerate(cells) if "gpt_strategies()" in c)
    assert build(BUNDLED).part("seed002") is None


def test_our_rows_give_n_beside_samples_per_s():
    """Our medians beside seed 002's published ones carry their n, as on page 1."""
    from pathlib import Path

    from analysis.report.build import build

    rep = build(Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "gpt_4gpu",
                lang="en")
    frame = rep.part("seed002").data.set_index("case")
    assert frame.loc["DP_4x1x1_32_1536x16", "samples/s"] == "240.24 (n = 3)"
    assert frame.loc["DP_1x1x1_2_1536x16", "samples/s"] == "4.92"  # seed 002: no n published
