"""Three things a reader of the bundled reports relies on: MFU against the measured matmul
rate says where that rate came from (the runs' own GPUs, or another host of the kind); log
links follow `--log-base-url` wherever the report is opened; the charts name FP32 as it ran
("FP32 (TF32 on)"), as the tables do; and, in the HTML, sorting a grouped table keeps each
row under its group."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT
from matplotlib.text import Text

from analysis.env.folder_records import EnvInput
from analysis.errors import UsageError
from analysis.report import build
from analysis.report.sections.gpt_cases import matmul_rate

RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu"
GPT = ROOT / "data" / "raw_logs" / "gpt_4gpu"


def _record(uuids, tflops=None, name="x.env.json") -> EnvInput:
    rec = {"gpus": [{"uuid": u} for u in uuids]}
    if tflops is not None:
        rec["matmul"] = {"tflops_median": tflops, "measured_at": "2026-11-28T19:04:57+00:00",
                         "size": 8192,
                         "gpus": [{"uuid": u, "tflops_first": 800.0, "tflops_p5": tflops - 10,
                                   "tflops_median": tflops, "tflops_p95": tflops + 10}
                                  for u in uuids]}
    return EnvInput(name, rec)


def test_the_runs_own_rate_comes_first_and_is_the_same_host(tmp_path):
    (tmp_path / "matmul.json").write_text(json.dumps(_record(["GPU-b"], 650.0).record))
    rate = matmul_rate([_record(["GPU-a"], 700.0), _record(["GPU-a"])], tmp_path)
    assert rate.tflops == 700.0 and rate.same_host and rate.source == "x.env.json"
    assert rate.first_block == 800.0
    assert (rate.lowest_block, rate.highest_block) == (690.0, 710.0)
    assert rate.probe_seconds is None  # the record states no timed seconds


def test_a_rate_beside_the_logs_says_whether_its_gpus_are_the_runs(tmp_path):
    (tmp_path / "matmul.json").write_text(json.dumps(_record(["GPU-b"], 650.0).record))
    other = matmul_rate([_record(["GPU-a"])], tmp_path)
    assert other.tflops == 650.0 and not other.same_host and other.source == "matmul.json"
    same = matmul_rate([_record(["GPU-b"])], tmp_path)
    assert same.same_host
    assert matmul_rate([_record(["GPU-a"])], tmp_path / "nowhere") is None


def test_log_links_point_under_the_base_url():
    rep = build(RN50, lang="en", log_base_url="https://example.org/logs/rn50_4gpu")
    assert rep.log_base_url == "https://example.org/logs/rn50_4gpu/"
    table = rep.log_table().to_html()
    assert 'href="https://example.org/logs/rn50_4gpu/1n1g/resnet50_b128_fp32_1.log"' in table
    assert 'href="https://example.org/logs/rn50_4gpu/2n2g/resnet50_b256_amp_1.node1.log"' in table
    assert "../" not in table
    summary = str(rep.logs()).split("<details")[0]
    assert '<a href="https://example.org/logs/rn50_4gpu/">' in summary
    assert "relative to the report" not in summary
    plain = build(RN50, lang="en", link_base=ROOT / "reports" / "rn50_4gpu")
    assert 'href="../../data/raw_logs/rn50_4gpu/1n1g/' in plain.log_table().to_html()
    assert "relative to the report" in str(plain.logs())


@pytest.mark.parametrize("url", ["ftp://example.org/", "example.org/logs", "https://a b/",
                                 "https://x.example/?q=1", "https://x.example/logs#frag"])
def test_a_base_url_that_is_not_http_is_refused(url):
    with pytest.raises(UsageError, match="--log-base-url"):
        build(RN50, lang="en", log_base_url=url)


@pytest.mark.parametrize(("lang", "fp32"), [("en", "FP32 (TF32 on)"), ("zh", "FP32（开启 TF32）")])
def test_chart_legends_name_fp32_as_it_ran(lang, fp32):
    rep = build(RN50, lang=lang)
    for chart in ("throughput", "speedup", "spread", "trace"):
        texts = [t.get_text() for t in rep.chart(chart).findobj(Text)]
        assert any(fp32 in t for t in texts), (chart, texts)
        assert not [t for t in texts if t in ("fp32", "amp")], chart  # no bare log names


@pytest.mark.slow
def test_sorting_a_grouped_table_keeps_rows_in_their_group(browser, tmp_path):
    from analysis.report.publish import publish

    done = publish(RN50, tmp_path, langs="en", to="html", progress=None)
    page = browser.new_page()
    page.goto(done.files["en"]["html"].as_uri())
    table = page.locator("table.dlperf-results").first

    def groups():
        rows = table.locator("tbody tr").evaluate_all(
            "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))")
        out, label = {}, None
        for row in rows:
            label = row[0] or label
            out.setdefault(label, []).append((row[4], row[7]))  # batch per GPU, throughput
        return out, [r[0] for r in rows]

    before, _ = groups()
    table.locator("thead th", has_text="Throughput").click()
    after, labels = groups()
    page.close()
    assert {k: sorted(v) for k, v in after.items()} == {k: sorted(v) for k, v in before.items()}
    assert sum(bool(x) for x in labels) == len(before)  # one label per group, in its first row
    for rows in after.values():  # descending within each group after the first click
        values = [float(t.replace(",", "")) for _, t in rows]
        assert values == sorted(values, reverse=True) or values == sorted(values)


def test_a_gpt_report_says_what_it_compares_and_the_model_sizes():
    intro = str(build(GPT, lang="en").title_block())
    assert ("training throughput, per-GPU efficiency and MFU of GPT 0.61B and 1.77B (PyTorch, "
            "BF16) on 1 to 4 GPUs under data, tensor and pipeline parallelism") in intro


def test_a_report_without_power_samples_says_why_it_has_no_energy():
    from analysis.report.sections.caveats import headline_caveats

    assert any("No energy figures" in c for c in headline_caveats(build(RN50, lang="en")))
    energy = build(ROOT / "tests" / "data" / "energy_h200", lang="en")
    assert not any("No energy figures" in c for c in headline_caveats(energy))
    assert energy.energy() is not None


def test_reproduce_checks_out_the_commit_that_made_the_runs():
    gpt = str(build(GPT, lang="en").part("reproduce"))
    assert "git checkout d4d70ec2d722ab6363efd70f4a096f8cf214bdc2\ndlperf run " in gpt
    assert "made by DLPerf Suite commit d4d70ec, not by the one" in gpt
    assert "did not record the suite commit" not in gpt
    rn50 = str(build(RN50, lang="en").part("reproduce"))
    assert "git checkout" not in rn50
    # no commit recorded: the box says HEAD's workload is not known to be the one that ran
    assert "did not record the suite commit that made them" in rn50
    # 00_launch.ipynb is the launch record (status.json is the status record)
    assert "launch record \\(`00_launch.ipynb`" in rn50 and "status record" not in rn50


def test_run_settings_give_the_repeats_made_beside_the_spec():
    """The GPT spec asks for 5 repeats a case; 2-3 were made: Test Scripts says both."""
    gpt = str(build(GPT, lang="en").scripts())
    assert "5 in the spec; 2–3 made \\(see the caveats\\)" in gpt  # Markdown-escaped
    rn50 = str(build(RN50, lang="en").scripts())
    assert "in the spec" not in rn50  # 5 asked, 5 made
