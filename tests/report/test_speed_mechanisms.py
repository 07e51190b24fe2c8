"""How a report build avoids work (issue 11, item 11): mechanisms, not timings.

- papermill writes the executed notebook once, when it has run (not before and after every
  cell, re-encoding the growing notebook with its images some 60 times per language);
- one HTML exporter serves every language of a build, its templates compiled once;
- the per-iteration chart is drawn once when saved (no layout engine, not even a disabled
  one, which makes matplotlib draw the figure a second time) and its panel titles are not
  placed by measuring each panel's tick labels;
- the kernel starts before the logs are parsed and runs its warm-up meanwhile, silently (the
  notebook's execution counts start at 1), and the notebooks run in it;
- the publisher does not import the charts' libraries (matplotlib, seaborn).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jinja2
import matplotlib.axis
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from analysis import notebook_run, plots, stats
from analysis.collect import parse_paths
from analysis.notebook_run import kernel
from analysis.report import publish

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

KERNELSPEC = {"name": "python3", "language": "python", "display_name": "Python 3"}


def test_executed_notebook_is_written_once_when_it_has_run(tmp_path):
    out = tmp_path / "out.ipynb"
    nb = new_notebook(metadata={"kernelspec": KERNELSPEC}, cells=[
        new_code_cell("out = None", metadata={"tags": ["parameters"]}),
        new_code_cell("import os\nprint('exists' if os.path.exists(out) else 'absent')")])
    src = tmp_path / "check.ipynb"
    nbformat.write(nb, src)
    with kernel(tmp_path) as km:
        publish.execute(out, {"out": str(out)}, km, tmp_path, notebook=src)
    done = nbformat.read(out, as_version=4)
    printed = "".join(o.get("text", "") for o in done.cells[-1].outputs)
    assert printed.strip() == "absent"  # papermill's default saves before the first cell


def _report_like(lang: str) -> nbformat.NotebookNode:
    md = "## Results\n\n| case | samples/s |\n|---|---|\n| 1n1g | 380 |"
    return new_notebook(metadata={"kernelspec": KERNELSPEC}, cells=[
        new_markdown_cell(f"# {lang}"),
        new_code_cell("", outputs=[new_output("display_data", {"text/markdown": md,
                                                               "text/plain": "md"})])])


def test_one_html_exporter_compiles_its_templates_once_for_every_language(monkeypatch):
    compiled = []
    original = jinja2.Environment.compile

    def counting(self, *args, **kwargs):
        compiled.append(args[1] if len(args) > 1 else kwargs.get("name"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    exporter = publish.html_exporter()
    nb_en, nb_zh = _report_like("en"), _report_like("zh")
    publish.html_page(exporter, nb_en, "en")  # the first export compiles the templates
    assert compiled, "the first export compiles the templates"
    compiled.clear()
    en, zh = (publish.html_page(exporter, nb, lang) for nb, lang in ((nb_en, "en"),
                                                                     (nb_zh, "zh")))
    assert compiled == []
    assert '<html lang="en">' in en and '<html lang="zh">' in zh
    monkeypatch.setattr(jinja2.Environment, "compile", original)
    assert zh == publish.html_page(publish.html_exporter(), nb_zh, "zh")  # as a fresh one gives


def _trace_figure(tmp_path):
    paths = synth.write_campaign(tmp_path / "logs", configs=((1, 1), (1, 2), (1, 4), (1, 8),
                                                                 (2, 8)), repeats=2,
                                 groups=(("fp32", 128), ("amp", 256)))
    result = parse_paths([tmp_path / "logs"])
    assert len(paths) == 20
    return plots.iteration_traces(stats.iteration_throughput(result), "zh", window=(20, 120),
                                  runs=stats.run_throughput(result))


def test_trace_chart_is_drawn_once_without_measuring_panels_for_their_titles(
        tmp_path, monkeypatch):
    fig = _trace_figure(tmp_path)
    assert len([ax for ax in fig.axes if ax.get_title()]) == 10
    assert fig.get_layout_engine() is None
    draws, measured = [], []
    fig.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    original = matplotlib.axis.Axis.get_tightbbox

    def counting(self, *args, **kwargs):
        measured.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axis.Axis, "get_tightbbox", counting)
    assert fig.svg().startswith(b"<?xml")
    assert len(draws) == 1
    assert measured == []
    for ax in fig.axes:  # each title just above its panel, as matplotlib would place it
        assert ax.title.get_position()[1] == 1.0


def test_tokens_stand_for_labels_in_any_language():
    from analysis.i18n import Translator
    from analysis.plots import Tokens

    tokens = Tokens()
    kind = tokens("chart.interval_min_max", confidence="")
    assert tokens("chart.interval_min_max", confidence="") == kind  # one label, one token
    legend = tokens("chart.interval_legend", kind=f"{kind} / {kind}", widest="1.2%")
    for lang in ("en", "zh"):
        tr = Translator(lang)
        one = tr("chart.interval_min_max", confidence="")
        assert tokens.text(f"[{legend}]", tr) == "[" + tr(
            "chart.interval_legend", kind=f"{one} / {one}", widest="1.2%") + "]"


def test_each_chart_is_built_once_for_both_languages_and_draws_as_if_built_for_each(
        tmp_path, monkeypatch):
    import importlib

    from analysis.report import prepared

    build = importlib.import_module("analysis.report.build")
    synth.write_campaign(tmp_path / "logs", configs=((1, 1), (1, 4), (2, 8)), repeats=3,
                         groups=(("fp32", 128), ("amp", 256)))
    prepared.save(prepared.compute(tmp_path / "logs"), tmp_path / "data")
    shared = prepared.load(tmp_path / "data")  # as the report kernel reads it
    alone = prepared.load(tmp_path / "data")
    alone.charts = None  # each chart built for its language
    chart_functions = ("throughput_vs_devices", "speedup_vs_ideal", "iteration_traces",
                       "repeat_spread")
    built = []
    for name in chart_functions:
        original = getattr(plots, name)
        monkeypatch.setattr(plots, name, lambda *a, _f=original, _n=name, **k: (
            built.append(_n), _f(*a, **k))[1])
    drawn = {}
    for lang in ("en", "zh", "en"):
        for chart in ("throughput", "speedup", "trace", "spread"):
            drawn[lang, chart] = build.Report(shared, lang=lang).chart(chart).svg()
    assert sorted(built) == sorted(chart_functions)  # once each, for every language
    built.clear()
    for (lang, chart), svg in drawn.items():  # the same bytes as a chart of its own
        assert svg == build.Report(alone, lang=lang).chart(chart).svg(), (lang, chart)
    assert len(built) == len(drawn)  # the charts of their own were built each time


def test_shared_charts_follow_each_reports_measured_window(tmp_path):
    import importlib

    from analysis.report import prepared

    build = importlib.import_module("analysis.report.build")
    synth.write_campaign(tmp_path / "logs", configs=((1, 1),), repeats=2)
    prepared.save(prepared.compute(tmp_path / "logs"), tmp_path / "data")
    shared = prepared.load(tmp_path / "data")
    windows = []
    for warmup in (20, 50):
        fig = build.Report(shared, "en", method="window", warmup=warmup).chart("trace")
        windows.append([t.get_text() for t in fig.legends[0].get_texts()][-1])
    assert windows[0] != windows[1] and "50" in windows[1], windows


def test_a_kernel_started_early_runs_its_warm_up_silently_then_the_notebook(tmp_path):
    src, out = tmp_path / "warm.ipynb", tmp_path / "out.ipynb"
    nbformat.write(new_notebook(metadata={"kernelspec": KERNELSPEC}, cells=[
        new_code_cell("x = None", metadata={"tags": ["parameters"]}),
        new_code_cell("print(warmed + 1)")]), src)
    with kernel(tmp_path) as km:
        notebook_run.start(km, tmp_path, "warmed = 41")
        assert km.has_kernel  # started before the notebook: nbclient starts no other
        pid = km.provisioner.process.pid
        publish.execute(out, {}, km, tmp_path, notebook=src)
        assert km.provisioner.process.pid == pid
    cells = [c for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"]
    assert "".join(o.get("text", "") for o in cells[-1].outputs).strip() == "42"
    assert [c.execution_count for c in cells] == [1, 2]


def test_the_kernel_starts_before_the_logs_are_parsed(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    order = []
    start, compute = notebook_run.start, publish.prepared.compute

    def starting(km, folder, warm_up=""):
        order.append(("start", warm_up))
        return start(km, folder, warm_up)

    def parsing(*args, **kwargs):
        order.append(("parse", None))
        return compute(*args, **kwargs)

    monkeypatch.setattr(notebook_run, "start", starting)
    monkeypatch.setattr(publish.prepared, "compute", parsing)
    publish.publish(logs, tmp_path / "out", langs="en", to="html", progress=None)
    assert order == [("start", publish.KERNEL_WARM_UP), ("parse", None)]


def test_the_publisher_imports_no_chart_library():
    code = ("import json, sys\nimport analysis.report.publish\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('matplotlib', 'seaborn'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=300)
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_a_warm_up_that_fails_leaves_the_notebook_as_it_would_be(tmp_path):
    src, out = tmp_path / "warm.ipynb", tmp_path / "out.ipynb"
    nbformat.write(new_notebook(metadata={"kernelspec": KERNELSPEC}, cells=[
        new_code_cell("print(41 + 1)")]), src)
    with kernel(tmp_path) as km:
        notebook_run.start(km, tmp_path, "raise ValueError('warm-up failed')")
        publish.execute(out, {}, km, tmp_path, notebook=src)
    (cell,) = nbformat.read(out, as_version=4).cells
    assert [o.get("text", "").strip() for o in cell.outputs] == ["42"]  # no error shown
    assert cell.execution_count == 1
