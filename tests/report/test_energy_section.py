"""The report's energy section on the real H200 campaign (tests/data/energy_h200): the
summary's figures, how they were measured, in both languages; left out without power."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from analysis.report.build import build, cell_html

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_energy_section_shows_the_summary_figures_and_the_method(lang):
    rep = build(ROOT / "tests" / "data" / "energy_h200", lang=lang)
    html = cell_html(rep.energy())
    s = rep.summary.set_index("num_devices")
    for devices in (1, 2):
        assert rep.tr.num(s.loc[devices, "energy_per_sample_j"], 4) in html
        assert rep.tr.num(s.loc[devices, "samples_per_s_per_w"]) in html
        assert rep.tr.num(s.loc[devices, "power_w"], 0) in html
        assert f">{rep.tr.num(s.loc[devices, 'energy_window_s'], 1)}<" in html
    # about 39 s of training per run: no caveat of short windows; at 13 s there is one
    short = "Windows under 30 s" if lang == "en" else "窗口短于 30 s"
    assert short not in html
    from analysis.report.sections.energy import section

    assert short in cell_html(section(rep.summary.assign(energy_window_s=13.0), rep.runs, rep.tr))
    assert ("every 500 ms" if lang == "en" else "每 500 ms") in html
    assert "<code>power.draw</code>" in html and 'id="sec-energy"' in html
    assert html.index('id="sec-energy"') < html.index("<table")
    assert rep.energy() in rep.cells()


def test_no_power_samples_no_section():
    # rn50_4gpu was sampled before power was: no energy figure, no empty section
    rep = build(ROOT / "data" / "raw_logs" / "rn50_4gpu")
    assert rep.summary["energy_per_sample_j"].isna().all()
    assert rep.energy() is None


def test_the_report_notebook_calls_the_section_after_the_method():
    nb = nbformat.read(ROOT / "notebooks" / "20_report.ipynb", as_version=4)
    sources = [c.source.strip() for c in nb.cells if c.cell_type == "code"]
    assert sources[sources.index("rep.method_section()") + 1] == "rep.energy()"


def test_runs_without_energy_are_named_with_why(tmp_path):
    import re
    import shutil

    src = ROOT / "tests" / "data" / "energy_h200"
    shutil.copytree(src, tmp_path / "energy_h200")
    csv = tmp_path / "energy_h200" / "1n1g" / "resnet50_b256_amp_2.gpu.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines[:1] + [re.sub(r"[\d.]+ W$", "[N/A]", ln) for ln in lines[1:]]))
    rep = build(tmp_path / "energy_h200")
    html = cell_html(rep.energy())
    assert "No energy for 1 run, left out of the medians: 1n1g/resnet50_b256_amp_2 (no power " \
           "samples" in html
    # the 1-GPU case stands on its other repeat alone
    one = rep.runs.set_index("run_id").loc["1n1g/resnet50_b256_amp_1"]
    assert rep.summary.set_index("num_devices").loc[1, "power_w"] == one["power_w"]
