"""The report's last sections are notebook-native (issue 11, deliverable 1): descriptions,
environment, problems, scripts, logs and the changes section are Markdown from the prose
templates or pandas Stylers, each from one Report method that a notebook cell calls, never
an HTML fragment; text from logs, records and file names stays text in both."""

from __future__ import annotations

import ast
import json
import re
import shutil
from urllib.parse import unquote

import nbformat
import pytest
import synth
from conftest import ROOT, TOPO
from pandas.io.formats.style import Styler

from analysis.report import build, styled
from analysis.report.build import cell_html
from analysis.report.prose import Markdown

LOG_LINE = 'train: epoch 0, iter 55, loss: <script>alert("x")</script> cost $\\frac$ *a*'
HOST = "node<1>*$x$"


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("sections") / "a&b logs"
    paths = synth.write_campaign(root, configs=((1, 1), (1, 2)), repeats=2, extra_line=LOG_LINE)
    synth.write_markers(root, paths)
    h200 = (TOPO.parent.parent / "h200_x4" / "topo.txt").read_text()
    (root / "node1.env.json").write_text(json.dumps(synth.env_record(HOST, h200)))
    shutil.copy(TOPO, root / "topo_node2.txt")
    return root


@pytest.fixture(scope="module")
def reports(logs):
    return {lang: build(logs, lang=lang, link_base=logs.parent) for lang in ("en", "zh")}


def test_sections_are_markdown_or_stylers(reports):
    for rep in reports.values():
        for method in ("descriptions", "environment", "scripts", "campaign_yaml"):
            assert type(getattr(rep, method)()) is Markdown, method
        for method in ("topology", "commands", "log_table", "problems"):
            assert isinstance(getattr(rep, method)(), Styler), method
        fragments = [x for x in rep.cells() if isinstance(x, styled.Fragment)]
        # the stylesheet, and the logs: a paragraph with the folded list under it
        assert fragments == [rep.style(), rep.logs()]


def test_the_notebook_calls_one_section_method_per_cell(reports):
    nb = nbformat.read(ROOT / "notebooks" / "20_report.ipynb", as_version=4)
    calls = []
    for cell in nb.cells[3:]:
        call = ast.parse(cell.source).body[0].value
        calls.append(call.func.attr + ("" if not call.args else f"({call.args[0].value})"))
    assert not [c for c in calls if c.startswith("section")]
    assert calls[calls.index("chart(trace)") + 1:] == [
        "descriptions", "environment", "topology", "heading(problems)", "problems", "scripts",
        "commands", "campaign_yaml", "heading(logs)", "logs"]
    assert calls[calls.index("gpt_configurations") + 1:][:6] == [
        "part(reproduce)", "caveats", "part(reference)", "changes_text", "changes_table",
        "changes_chart"]
    assert calls[:2] == ["title_block", "part(findings)"]
    # the notebook's cells are the Report's cells, in the same order
    rep = reports["en"]
    shown = [x for x in rep.cells() if x is not None]
    called = [getattr(rep, c.split("(")[0])(*re.findall(r"\((\w+)\)", c)) for c in calls]
    assert len([x for x in called if x is not None]) == len(shown) - 1  # less the stylesheet


def test_log_text_stays_text(reports):
    rep = reports["en"]
    problems = rep.problems().to_html()
    assert "<script>alert" not in problems
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; cost $\\frac$ *a*" in problems
    assert re.search(r'<td [^>]*class="[^"]*dlperf-code[^"]*"[^>]*><code>train: epoch', problems)
    assert 'class="dlperf-table dlperf-problems tex2jax_ignore mathjax_ignore"' in problems
    page = rep.section("problems")
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_record_values_are_escaped_in_markdown(reports):
    for rep in reports.values():
        md = str(rep.environment())
        assert "node&lt;1&gt;\\*\\$x\\$" in md  # Markdown, HTML and MathJax syntax escaped
        html = cell_html(rep.environment())
        assert "node&lt;1&gt;*$x$" in html and "<1>" not in html and "<em>" not in html.split(
            "node&lt;1&gt;")[1][:20]


def test_log_links_work_and_are_escaped(reports, logs):
    rep = reports["zh"]
    html = str(rep.logs())
    hrefs = re.findall(r'<a href="([^"]+)">([^<]+)</a>', html)
    # percent-encoded (no '&' left to escape): a '#' or '?' in a name would cut the path
    assert len(hrefs) == 4 and all(h.startswith("a%26b%20logs/1n") for h, _ in hrefs)
    for href, name in hrefs:
        assert (logs.parent / unquote(href)).is_file()
        assert href.endswith(name)
    assert "4 次运行的主日志位于 <code>a&amp;b logs/</code>" in html
    assert '<details class="dlperf-logs-list"><summary>全部文件（带链接）</summary>' in html
    assert "本报告使用的全部 4 个文件" in rep.log_table().to_html()


def test_topology_matrices_keep_their_colours_and_hosts(reports):
    rep = reports["en"]
    html = rep.topology().to_html()
    assert HOST.replace("<", "&lt;").replace(">", "&gt;") in html  # a host column, escaped
    assert "topo_node2" in html
    assert html.count("background-color") >= 2
    columns = list(rep.topology().data.columns)  # 4 GPUs of one host, 8 of the other
    assert columns[:2] == ["Host", ""] and columns.index("GPU7") < columns.index("CPU Affinity")
    md = str(rep.environment())
    assert md.count("```text") == 0 and "Legend:" not in md  # once: the coloured matrices


def test_commands_are_one_template_and_the_arguments_that_vary(reports):
    table = reports["en"].commands()
    html = table.to_html()
    assert "<caption><code>" not in html and "Command: <code>" in html  # the template
    assert "tex2jax_ignore" in html


def test_changes_section_is_markdown_a_table_and_a_chart(logs, tmp_path):
    other = tmp_path / "base"
    synth.write_campaign(other, configs=((1, 1), (1, 2)), repeats=2)
    rep = build(logs, lang="zh", baseline=other)
    text, table, chart = rep.section_cells("changes")
    assert type(text) is Markdown and text.startswith('<a id="sec-changes"></a>')
    assert "## 与比较基线相比的变化" in text and "方法：" in text
    assert isinstance(table, Styler) and 'class="dlperf-table dlperf-changes"' in table.to_html()
    assert hasattr(chart, "_repr_svg_")
    assert build(logs, lang="en").section_cells("changes") == []
    # the contents line lists it where the page shows it: after the key numbers
    anchors = [a for a, _ in rep.contents()]
    assert anchors[:2] == ["sec-changes", "sec-results"] and anchors[-1] == "sec-logs"


def test_logs_list_every_file_of_each_run():
    """rn50_4gpu: 40 runs' main logs, each with its nvidia-smi samples beside it, and the
    2n2g runs' second node's log and samples: all 100 files read, each linked."""
    rep = build(ROOT / "data" / "raw_logs" / "rn50_4gpu", lang="en", link_base=ROOT)
    assert "40 runs&#x27; main logs in <code>data/raw_logs/rn50_4gpu/</code>" in rep.logs()
    assert "100 files in all" in rep.logs()
    table = rep.log_table()
    assert len(table.data) == 40
    assert table.caption.startswith("All 100 files of this report")
    html = table.to_html()
    row = table.data[table.data["log file"] == "2n2g/resnet50_b256_amp_3.log"].iloc[0]
    assert re.findall(r">([^<]+)</a>", row["other files of the run"]) == [
        ".gpu.csv", ".node1.gpu.csv", ".node1.log"]
    assert 'href="data/raw_logs/rn50_4gpu/2n2g/resnet50_b256_amp_3.node1.log"' in html
