"""The publisher draws the stock report's charts while the kernel imports and builds the
tables (issue 11, item 11): two processes on two cores. Mechanisms, not timings:

- the images and texts the kernel shows are those it would draw itself from the same data;
- the kernel shows the publisher's drawings (it does not draw them again);
- a notebook other than the stock one draws its own charts (its cells may change a figure);
- a drawing that fails fails the kernel's chart cell, with the reason.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.errors import DLPerfError
from analysis.report import prepared, publish
from analysis.report.build import CHARTS, Report

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

#: A 1 x 1 PNG no chart draws.
SENTINEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("charts") / "logs"
    synth.write_campaign(root, configs=((1, 1), (1, 4), (2, 8)), repeats=3,
                         groups=(("fp32", 128), ("amp", 256)))
    return root


def test_the_publishers_drawings_are_what_the_kernel_would_draw(logs, tmp_path):
    plan = prepared.ChartPlan(CHARTS, ("en", "zh"), "dlperf")
    data = prepared.compute(logs)
    prepared.save(data, tmp_path / "drawn", plan)
    prepared.draw_charts(data, tmp_path / "drawn", plan)
    prepared.save(prepared.compute(logs), tmp_path / "own")  # no plan: the kernel draws
    drawn = prepared.load(tmp_path / "drawn", wait_s=1)
    own = prepared.load(tmp_path / "own", wait_s=1)
    shown = 0
    for lang in ("zh", "en"):  # any order: each language's drawing is its own file
        for name in CHARTS:
            theirs, ours = Report(drawn, lang).chart(name), Report(own, lang).chart(name)
            if ours is None:
                assert theirs is None, name  # no data: nothing drawn (the gpt chart here)
                continue
            assert isinstance(theirs, prepared.DrawnChart), name
            assert theirs._repr_png_() == ours._repr_png_(), (lang, name)
            assert repr(theirs) == repr(ours), (lang, name)  # the notebook's text/plain
            shown += 1
    assert shown == 8


def test_the_kernel_shows_the_publishers_drawings(logs, tmp_path, monkeypatch):
    """The publisher writes a sentinel image in place of each chart it draws: the report
    shows a sentinel for each of them, so the kernel did not draw them again; it drew only
    those it claimed (each drawn once, by one of the two)."""
    drawn_here, written = [], []
    original_draw, original_write = prepared.draw_charts, prepared._write

    def draw(data, folder, plan, stop=lambda: False):
        assert plan == prepared.ChartPlan(CHARTS, ("en", "zh"), "dlperf")
        drawn_here.extend(original_draw(data, folder, plan, stop))
        return drawn_here

    def write(path, data):
        written.append(path.name)
        original_write(path, SENTINEL_PNG if path.suffix == ".png" else data)

    monkeypatch.setattr(prepared, "draw_charts", draw)
    monkeypatch.setattr(prepared, "_write", write)
    out = publish.publish(logs, tmp_path / "out", langs="en,zh", to="html", progress=None)
    assert "throughput" in drawn_here  # the publisher starts before the kernel can
    assert len(written) == len(set(written))
    sentinel = base64.b64encode(SENTINEL_PNG).decode()
    for lang in ("en", "zh"):
        html = out.files[lang]["html"].read_text(encoding="utf-8")
        pngs = [n for n in written if n.endswith(f".{lang}.png")]
        assert pngs == [f"{n}.{lang}.png" for n in drawn_here if n != "gpt"]
        assert html.count(sentinel) == len(pngs), lang
        assert html.count("data:image/png;base64,") >= 4


def test_a_kernel_waiting_for_a_chart_draws_the_last_one_no_one_started(logs, tmp_path):
    import threading

    plan = prepared.ChartPlan(CHARTS, ("en", "zh"), "dlperf")
    data = prepared.compute(logs)
    folder = tmp_path / "data"
    prepared.save(data, folder, plan)
    charts = folder / prepared.CHARTS_DIR
    assert prepared.claim(charts, "throughput", "publisher")  # started, not drawn yet

    def publisher_finishes():
        data.charts = {}
        for lang in ("en", "zh"):
            fig = Report(data, lang).chart("throughput")
            prepared._write(charts / f"throughput.{lang}.txt", repr(fig))
            prepared._write(charts / f"throughput.{lang}.png", fig._repr_png_())

    drawer = threading.Timer(1.5, publisher_finishes)
    drawer.start()
    try:
        loaded = prepared.load(folder, wait_s=60)
        own = prepared.load(folder, wait_s=1)
        own.charts = {}
        first = Report(loaded, "en").chart("throughput")  # waits, drawing others meanwhile
    finally:
        drawer.join()
    by = {name: prepared.claimed_by(charts, name) for name in CHARTS}
    assert by["throughput"] == "publisher" and "kernel" in by.values(), by
    assert by["spread"] == "kernel", by  # the last chart first
    assert first._repr_png_() == Report(own, "en").chart("throughput")._repr_png_()
    for lang in ("en", "zh"):
        for name in CHARTS:
            theirs, ours = Report(loaded, lang).chart(name), Report(own, lang).chart(name)
            assert (theirs is None) == (ours is None), (lang, name)
            if ours is not None:
                assert theirs._repr_png_() == ours._repr_png_(), (lang, name, by[name])
                assert not (charts / f"{name}.{lang}.png").exists() or by[name] == "publisher"


def test_another_notebook_draws_its_own_charts(tmp_path):
    copy = tmp_path / "my_report.ipynb"
    copy.write_bytes(publish.REPORT_NOTEBOOK.read_bytes())
    assert publish.chart_plan(copy, ["en"], "dlperf", None, None) is None
    plan = publish.chart_plan(publish.REPORT_NOTEBOOK, ["en", "zh"], "window", 10, 50)
    assert plan == prepared.ChartPlan(CHARTS, ("en", "zh"), "window", 10, 50)


def test_a_drawing_that_fails_fails_the_chart_cell(logs, tmp_path):
    plan = prepared.ChartPlan(("throughput", "no_such_chart"), ("en",), "dlperf")
    data = prepared.compute(logs)
    prepared.save(data, tmp_path / "data", plan)
    prepared.draw_charts(data, tmp_path / "data", plan)
    loaded = prepared.load(tmp_path / "data", wait_s=1)
    assert isinstance(Report(loaded, "en").chart("throughput"), prepared.DrawnChart)
    with pytest.raises(DLPerfError, match="no_such_chart.*UnknownNameError"):
        Report(loaded, "en").chart("no_such_chart")
    with pytest.raises(DLPerfError, match="drawn for en, not 'zh'"):
        Report(loaded, "zh").chart("throughput")


_HALF_IMPORTED = """
import sys, threading, time
sys.path.insert(0, sys.argv[1])
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from analysis.report import prepared
threading.Thread(target=__import__, args=("IPython",), daemon=True).start()
time.sleep(0.3)  # the other thread is inside IPython's import, as the build thread was
if sys.argv[2] == "fixed":
    prepared.ipython_imported()
FigureCanvasAgg(Figure())  # matplotlib's first canvas reads IPython.version_info
print("drawn")
"""


@pytest.mark.parametrize("fixed", [True, False])
def test_charts_wait_for_an_ipython_another_thread_is_importing(tmp_path, fixed):
    """A fresh-clone CI run failed a chart with "partially initialized module 'IPython' has
    no attribute 'version_info'": the publisher drew while its build thread imported
    IPython. An IPython whose import takes 1 s stands in for the real one here; without
    `ipython_imported` first the canvas fails, as it did."""
    fake = tmp_path / "IPython"
    fake.mkdir()
    (fake / "__init__.py").write_text("import time\ntime.sleep(1.0)\nversion_info = (9, 0)\n"
                                      "def get_ipython():\n    return None\n")
    done = subprocess.run([sys.executable, "-c", _HALF_IMPORTED, str(tmp_path),
                           "fixed" if fixed else "not"], capture_output=True, text=True,
                          timeout=60)
    if fixed:
        assert done.returncode == 0 and done.stdout == "drawn\n", done.stderr
    else:  # the failure the fix prevents, so that this test can tell
        assert "partially initialized module 'IPython'" in done.stderr
