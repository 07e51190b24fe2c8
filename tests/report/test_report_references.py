"""`dlperf report LOG_DIR --references FILE`: page 1's reference table (bilingual), built
once (HTML, en + zh) for the bundled campaign (4x NVIDIA H200) with a references file of two
references measured on its GPU model, one of a report case measured on V100s (shown, marked:
it compares machines too) and one of no case (not shown). The results tables carry no
reference column: the ratios are on page 1 only."""

from __future__ import annotations

import html
import json
import re

import pytest
from changes.campaigns import BUNDLED
from cli._helpers import assert_one_clean_line, run_cli

pytestmark = pytest.mark.slow

OTHER_GPU = {"en": " (other GPU)", "zh": "（不同 GPU）"}
# The bundled medians (4x NVIDIA H200): amp/b256/1n4g 23,362.79 and fp32/b128/1n1g 2,998.16.
REFERENCES = """\
unit: samples/s
references:
  - {framework: PyTorch, model: resnet50, precision: amp, batch_size_per_device: 256,
     num_nodes: 1, gpus_per_node: 4, value: 22000, source: "NVIDIA DLE 24.03, H200",
     hardware: 4x NVIDIA H200}
  - {key: PyTorch/resnet50/fp32/b128/1n1g, value: 3100, source: "DLPerf <V100> & co",
     hardware: 4x H200}
  - {key: PyTorch/resnet50/fp32/b128/1n4g, value: 1449.48, source: "DLPerf seed 003",
     hardware: 8x V100-SXM2-16GB}
  - {framework: PyTorch, model: resnet50, precision: fp32, batch_size_per_device: 128,
     num_nodes: 4, gpus_per_node: 8, value: 10917.09, source: DLPerf,
     hardware: 8x V100-SXM2-16GB}
"""
V100_CASE = "PyTorch/resnet50/fp32/b128/1n4g"


@pytest.fixture(scope="module")
def refs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("refs") / "my-refs.yaml"
    path.write_text(REFERENCES, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory, dlperf_exe, refs_file):
    """One `dlperf report` of the bundled campaign with the references file."""
    out = tmp_path_factory.mktemp("references") / "out"
    done = run_cli(dlperf_exe, "report", BUNDLED, "--references", refs_file, "--to", "html",
                   "-o", out, timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def _rows(page: str, cls: str) -> list[list[str]]:
    """The text of every cell of the table of class `cls`, row by row (header first)."""
    table = re.search(rf'<table class="[^"]*\b{cls}\b[^"]*"[^>]*>(.*?)</table>', page, re.S)
    assert table, f"no {cls} table"
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)]
            for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.S)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_references_show_ratio_source_and_mark_other_gpus(built, lang):
    page = (built / f"report_{lang}.html").read_text(encoding="utf-8")
    rows = _rows(page, "dlperf-reference")[1:]
    ratios = sorted(r[5] for r in rows)
    assert len(rows) == 3  # the reference of no report case (4n8g) is not shown
    assert ratios == sorted(["1.06×", "0.97×", f"8.05×{OTHER_GPU[lang]}"]), ratios
    assert "DLPerf &lt;V100&gt; &amp; co" in page and "<V100>" not in page  # escaped
    assert not any("dlperf-reference" in t for t in re.findall(
        r'<table class="[^"]*dlperf-results[^"]*"', page))
    numbers = json.loads((built / f"report_{lang}.json").read_text(encoding="utf-8"))
    found = {r["case_key"]: r["ratio"] for r in numbers["references"]}
    assert V100_CASE not in found  # a ratio across GPU models is no verdict
    assert found == pytest.approx({"PyTorch/resnet50/amp/b256/1n4g": 23362.79 / 22000,
                                   "PyTorch/resnet50/fp32/b128/1n1g": 2998.16 / 3100}, abs=1e-5)


def test_results_tables_have_no_reference_column(built):
    page = (built / "report_en.html").read_text(encoding="utf-8")
    header = _rows(page, "dlperf-results")[0]
    assert header[-1] == "Scaling efficiency" and not [h for h in header if "reference" in h]


def test_without_references_there_is_no_reference_table(refs_file):
    from analysis.report import build

    rep = build(BUNDLED, lang="en")
    assert rep.references is None and "references" not in rep.numbers()
    assert rep.part("reference") is None
    assert build(BUNDLED, lang="zh", references=refs_file).part("reference") is not None


@pytest.mark.parametrize(("text", "why"), [
    ("references:\n  - {model: resnet50, value: 10, colour: red}\n",
     ("my-refs.yaml:2", "unknown key(s) colour")),
    ("references: [\n", ("my-refs.yaml:2", "not valid YAML")),
])
def test_a_bad_references_file_is_one_line_exit_2_before_kernels_start(tmp_path, dlperf_exe,
                                                                       text, why):
    bad = tmp_path / "my-refs.yaml"
    bad.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    done = run_cli(dlperf_exe, "report", BUNDLED, "--references", bad, "--to", "html",
                   "-o", out, timeout=120)
    assert done.returncode == 2, done.stderr
    assert_one_clean_line(done.stderr, *why)
    assert "parsing" not in done.stderr and "executing" not in done.stderr
    assert not out.exists() or not list(out.glob("report_*"))


def test_a_missing_references_file_is_one_line_exit_2(tmp_path, dlperf_exe):
    done = run_cli(dlperf_exe, "report", BUNDLED, "--references", tmp_path / "nope.yaml",
                   "--to", "html", "-o", tmp_path / "out", timeout=120)
    assert done.returncode == 2, done.stderr
    assert_one_clean_line(done.stderr, "nope.yaml: cannot read", "No such file")
