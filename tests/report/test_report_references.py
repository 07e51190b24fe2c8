"""`dlperf report LOG_DIR --references FILE` (issue 12, item 2): the results tables' bilingual
"vs reference" column and the note under them, built once (HTML, en + zh) for the bundled
campaign (4x NVIDIA H200) with a references file of two references measured on its GPUs, one
of a report case measured on V100s (left out, named under the table) and one of no case."""

from __future__ import annotations

import html
import json
import re

import pytest
from changes.campaigns import BUNDLED
from cli._helpers import assert_one_clean_line, run_cli

pytestmark = pytest.mark.slow

COLUMN = {"en": "vs reference", "zh": "对比参考值"}
NOTE = {"en": "shown only where its hardware (GPU model and count) is the runs'",
        "zh": "仅当参考值的硬件（GPU 型号和数量）与本次运行相同时才显示"}
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
#: The column's cells other than "–" (8 rows in all), once the runs' GPUs reach the match.
EXPECTED = ["0.97× (DLPerf <V100> & co)", "1.06× (NVIDIA DLE 24.03, H200)"]
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


def _results(page: str) -> tuple[list[str], str]:
    """The results tables (those with a "vs reference" column, last): that column's cells,
    and the tables' text (their caption holds the note)."""
    cells, texts = [], []
    for table in re.findall(r"<table[^>]*>(.*?)</table>", page, re.S):
        rows = [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                 for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)]
                for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]
        if rows and rows[0] and rows[0][-1] in COLUMN.values():
            cells += [r[-1] for r in rows[1:]]
            texts.append(html.unescape(re.sub(r"<[^>]+>", " ", table)))
    assert cells, "no results table with a vs reference column"
    return cells, " ".join(texts)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_reference_measured_on_other_gpus_gives_no_ratio_and_is_named(built, lang):
    page = (built / f"report_{lang}.html").read_text(encoding="utf-8")
    cells, text = _results(page)
    assert len(cells) == 8
    assert "seed 003" not in "".join(cells)  # the V100 figure of fp32/1n4g: no 8.05× ratio
    assert V100_CASE in text and "8x V100-SXM2-16GB" in text and NOTE[lang] in text
    assert "4n8g" not in text  # a reference of no report case is not about the report
    numbers = json.loads((built / f"report_{lang}.json").read_text(encoding="utf-8"))
    assert V100_CASE not in {r["case_key"] for r in numbers["references"]}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_references_on_the_runs_gpus_show_the_ratio_and_source(built, lang):
    page = (built / f"report_{lang}.html").read_text(encoding="utf-8")
    cells, _text = _results(page)
    assert sorted(c for c in cells if c != "–") == EXPECTED
    assert "DLPerf &lt;V100&gt; &amp; co" in page and "<V100>" not in page  # escaped
    numbers = json.loads((built / f"report_{lang}.json").read_text(encoding="utf-8"))
    ratios = {r["case_key"]: r["ratio"] for r in numbers["references"]}
    assert ratios == pytest.approx({"PyTorch/resnet50/amp/b256/1n4g": 23362.79 / 22000,
                                    "PyTorch/resnet50/fp32/b128/1n1g": 2998.16 / 3100}, abs=1e-5)


def test_without_references_there_is_no_column(refs_file):
    from analysis.report import build

    rep = build(BUNDLED, lang="en")
    page = "".join(rep.section(s) for s in rep.sections())  # without the stylesheet
    assert rep.references is None and "references" not in rep.numbers()
    assert COLUMN["en"] not in page and NOTE["en"] not in page
    with_refs = build(BUNDLED, lang="zh", references=refs_file).html()
    assert COLUMN["zh"] in with_refs and NOTE["zh"] in with_refs


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
