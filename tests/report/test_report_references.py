"""`dlperf report LOG_DIR --references FILE` (issue 12, item 2): the results tables' bilingual
"vs reference" column and the note under them, built once (HTML, en + zh) for the bundled
campaign with a references file of two references that match a case and one that does not."""

from __future__ import annotations

import html
import json
import re

import pytest
from changes.campaigns import BUNDLED
from cli._helpers import assert_one_clean_line, run_cli

pytestmark = pytest.mark.slow

COLUMN = {"en": "vs reference", "zh": "对比参考值"}
NOTE = {"en": "context, not a verdict", "zh": "仅作对照，不作为判定"}
# The bundled medians: amp/b256/1n4g 23,362.79 and fp32/b128/1n1g 2,998.16 samples/s.
REFERENCES = """\
unit: samples/s
references:
  - {framework: PyTorch, model: resnet50, precision: amp, batch_size_per_device: 256,
     num_nodes: 1, gpus_per_node: 4, value: 22000, source: "NVIDIA DLE 24.03, H200"}
  - {key: PyTorch/resnet50/fp32/b128/1n1g, value: 3100, source: "DLPerf <V100> & co"}
  - {framework: PyTorch, model: resnet50, precision: fp32, batch_size_per_device: 128,
     num_nodes: 4, gpus_per_node: 8, value: 10917.09, source: DLPerf}
"""
#: (precision, node num, gpus/node) -> the cell expected; every other row shows "–".
EXPECTED = {("amp", "1", "4"): "1.06× (NVIDIA DLE 24.03, H200)",
            ("fp32", "1", "1"): "0.97× (DLPerf <V100> & co)"}


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


def _results(page: str) -> tuple[list[list[list[str]]], str]:
    """The results section: each table as rows of cell texts (header first), and its text."""
    found = re.search(r'<section class="dlperf-section" id="sec-results">(.*?)</section>',
                      page, re.S)
    assert found, "no results section"
    tables = []
    for body in re.findall(r"<table[^>]*>(.*?)</table>", found.group(1), re.S):
        tables.append([[html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                        for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)]
                       for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)])
    return tables, html.unescape(re.sub(r"<[^>]+>", " ", found.group(1)))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_matching_rows_show_the_ratio_and_source_the_others_a_dash(built, lang):
    page = (built / f"report_{lang}.html").read_text(encoding="utf-8")
    tables, text = _results(page)
    assert [t[0][-1] for t in tables] == [COLUMN[lang]] * 2  # amp group, fp32 group
    cells = {}
    for precision, table in zip(("amp", "fp32"), tables, strict=True):
        for row in table[1:]:
            cells[(precision, row[0], row[1])] = row[-1]
    assert len(cells) == 8, cells
    for key, cell in cells.items():
        assert cell == EXPECTED.get(key, "–"), (key, cell)
    assert "DLPerf &lt;V100&gt; &amp; co" in page and "<V100>" not in page  # escaped
    assert text.count("my-refs.yaml") == 2 and text.count(NOTE[lang]) == 2  # under each table
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
    assert COLUMN["zh"] in with_refs and "1.06× (NVIDIA DLE 24.03, H200)" in with_refs


@pytest.mark.parametrize(("text", "why"), [
    ("references:\n  - {model: resnet50, value: 10, colour: red}\n",
     ("my-refs.yaml:2", "unknown key(s) colour")),
    ("references: [\n", ("my-refs.yaml line 2", "not valid YAML")),
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
    assert_one_clean_line(done.stderr, "cannot read references", "nope.yaml")
