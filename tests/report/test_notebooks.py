"""Each notebook executed with papermill on small data; the numbers it writes are asserted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import papermill as pm
import pytest
import synth
from conftest import ROOT, expected_medians

from analysis import config, lab_contents, notebook_params, report
from analysis.errors import UsageError

pytestmark = pytest.mark.slow
NOTEBOOKS = ROOT / "notebooks"


def _failed_outputs(name, out_dir, **params):
    """The error outputs of `name` executed with `params`, which must make it fail."""
    with pytest.raises(pm.PapermillExecutionError):
        _run(name, out_dir, **params)
    nb = nbformat.read(out_dir / name, as_version=4)
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if o.output_type == "error"]


def _run(name, out_dir, **params):
    out = out_dir / name
    pm.execute_notebook(str(NOTEBOOKS / name), str(out), parameters=params, cwd=str(out_dir),
                        progress_bar=False)
    return nbformat.read(out, as_version=4)


@pytest.mark.parametrize(("name", "default"), [
    ("10_analyse.ipynb", 'log_dir = "data/raw_logs/gpt_4gpu"'),  # one campaign: data/raw_logs
    ("20_report.ipynb", "log_dir = None"),  # pools the two GPT campaigns' runs of one case
    ("30_compare.ipynb", "log_dir = None"),
    ("40_trends.ipynb", 'store_dir = "data/example_store"')])
def test_notebooks_are_thin_and_committed_clean(name, default):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", [])]
    assert tagged == [1], "one parameters cell, right after the imports"
    for c in code:  # a parameter a line: the parameters cell may be longer
        assert not c.outputs and c.execution_count is None, "commit notebooks without outputs"
        assert "def " not in c.source
        assert len(c.source.splitlines()) <= (20 if c is code[1] else 15)
    assert default in code[1].source


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebooks_are_committed_as_lab_saves_them(name):
    # make lab saves a tracked notebook of notebooks/ in this form: committed otherwise, a
    # save would change the file (git status: modified)
    text = (NOTEBOOKS / name).read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    assert nbformat.writes(lab_contents.stripped(nb)) + "\n" == text


def test_analyse_notebook(campaign, tmp_path):
    nb = _run("10_analyse.ipynb", tmp_path, log_dir=str(campaign),
              summary_csv=str(tmp_path / "summary.csv"))
    summary = pd.read_csv(tmp_path / "summary.csv")
    got = {(r.num_nodes, r.gpus_per_node): r.throughput_median for r in summary.itertuples()}
    for k, v in expected_medians().items():
        assert got[k] == pytest.approx(v, rel=1e-4)
    assert list(summary["repeats"]) == [3, 3, 3]
    assert summary.loc[summary["num_devices"] == 1, "speedup"].item() == pytest.approx(1.0)
    pngs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "image/png" in o.get("data", {})]
    assert len(pngs) == 4  # throughput, speedup, traces, spread
    # each chart is a widget (values on hover) that keeps its PNG for viewers without a kernel
    assert all("application/vnd.jupyter.widget-view+json" in o["data"] for o in pngs)
    # the lines the fixture's script line spoils, as the report counts them
    assert "3 problem(s) in 3 run(s)" in _text(nb)


def _text(nb) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_analyse_notebook_lists_the_problems_the_report_lists(campaign, tmp_path, monkeypatch):
    """10_analyse showed only what parsing found: a run whose done marker says it failed
    and an outlier repeat, which the report lists, were missing."""
    logs = tmp_path / "logs"
    shutil.copytree(campaign, logs)
    (logs / "1n8g" / "r50_b128_fp32_4.done").write_text(json.dumps(
        {"run_id": "1n8g/r50_b128_fp32_4", "ok": False, "state": "failed",
         "reason": "1n8g needs 8 GPUs on this host; it has 4"}))
    # a fourth 1-GPU repeat 20 % below the other three: an outlier
    monkeypatch.setitem(synth.PER_DEVICE, ("fp32", 128), synth.PER_DEVICE[("fp32", 128)] * 0.8)
    slow = logs / "1n1g" / "r50_b128_fp32_4.log"
    slow.write_text(synth.oneflow_cnn_log(1, 1, 128, "fp32", 4))
    slow.with_suffix(".done").write_text(json.dumps({"rc": 0}))  # a run of the campaign
    nb = _run("10_analyse.ipynb", tmp_path, log_dir=str(logs))
    [frame] = [c for c in nb.cells if c.source.startswith("found = problems.gathered(")]
    shown = "".join(o.get("text", "") + o.get("data", {}).get("text/html", "")
                    for o in frame.outputs)
    # the fixture's 3, a failed run, an outlier, and the outlier's case: its spread is wide
    assert "6 problem(s) in 6 run(s)" in shown
    assert "did not finish (failed): 1n8g needs 8 GPUs on this host; it has 4" in shown
    assert "outlier" in shown and "1n1g/r50_b128_fp32_4" in shown and "wide_spread" in shown
    assert len(report.build(logs).problems().data) == 6


def test_report_notebook_numbers(campaign, tmp_path):
    nb = _run("20_report.ipynb", tmp_path, log_dir=str(campaign), lang="zh",
              numbers_json=str(tmp_path / "n.json"), title="测试报告 <b>x</b>")
    numbers = json.loads((tmp_path / "n.json").read_text())
    assert numbers["lang"] == "zh" and numbers["runs"] == 9 and numbers["problems"] == 3
    speedups = {(c["num_nodes"], c["gpus_per_node"]): c["speedup"] for c in numbers["cases"]}
    want = expected_medians()
    assert speedups[(2, 8)] == pytest.approx(want[(2, 8)] / want[(1, 1)], rel=1e-3)
    html = "".join(o["data"].get("text/html", "") + o["data"].get("text/markdown", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs if "data" in o)
    assert "# 测试报告 &lt;b&gt;x&lt;/b&gt;" in html  # the title is escaped too


@pytest.mark.parametrize(("name", "params", "message"), [
    # a relative path is under the project folder: the message names where it looked
    ("10_analyse.ipynb", {"log_dir": "no/such"}, "UsageError: no such log folder: {project}/no/such"),
    ("20_report.ipynb", {"log_dir": "."}, "NoLogsError: no logs found under ."),
    ("30_compare.ipynb", {"log_dir": "no/such"}, "UsageError: no such log folder: {project}/no/such"),
    ("40_trends.ipynb", {"store_dir": "nostore"}, "UsageError: no such store: {project}/nostore "
                                                  "(make one with `dlperf store add LOG_DIR "
                                                  "--store {project}/nostore`)"),
    ("20_report.ipynb", {"log_dir": ".", "threshold": "2 percent"},
     "UsageError: threshold must be a percentage with its sign between 0% and 100%, such as "
     "2% or 0.5% (write 2% for two percent), not '2 percent'"),
    ("40_trends.ipynb", {"store_dir": "/"}, "UsageError: / is not a results store: it has no "
                                            "campaigns/ folder (make one with `dlperf store "
                                            "add LOG_DIR --store /`)")])
def test_a_bad_parameter_shows_one_line_not_a_traceback(name, params, message, tmp_path):
    [error] = _failed_outputs(name, tmp_path, **params)
    assert error.traceback == [message.format(project=config.PROJECT_DIR)]


@pytest.mark.parametrize(("name", "params", "written"), [
    ("10_analyse.ipynb", {"log_dir": "data/x", "summary_csv": "summary.csv"}, "summary.csv"),
    ("30_compare.ipynb", {"log_dir": "data/x", "compare_csv": "c.csv", "campaign_base": "data/x",
                          "campaign_new": "data/x"}, "c.csv"),
    ("40_trends.ipynb", {"store_dir": "store", "trend_csv": "t.csv"}, "t.csv")])
def test_relative_paths_are_under_the_project_folder_wherever_the_kernel_runs(
        name, params, written, campaign, tmp_path, monkeypatch):
    """In JupyterLab the kernel runs in notebooks/, under papermill in the caller's folder,
    and 00_launch read paths under the project folder: `log_dir = "data/raw_logs/x"` meant
    three things. Every notebook now reads them under the project folder, as the CLI run
    there does."""
    from analysis.changes import sources, store

    project = tmp_path / "project"
    shutil.copytree(campaign, project / "data" / "x")
    store.add(project / "store", sources.load(str(project / "data" / "x")))
    monkeypatch.setenv("DLPERF_PROJECT_DIR", str(project))
    kernel_dir = tmp_path / "notebooks"  # where Lab starts the kernel
    kernel_dir.mkdir()
    _run(name, kernel_dir, **params)
    assert (project / written).is_file() and not (kernel_dir / written).exists()


@pytest.mark.parametrize("name", ["00_launch.ipynb", "10_analyse.ipynb", "20_report.ipynb",
                                  "30_compare.ipynb", "40_trends.ipynb"])
def test_a_misspelt_parameter_is_an_error_not_a_run_on_the_defaults(name, tmp_path):
    # papermill only warns of `-p log_dirr x` and runs on the bundled data: a wrong answer
    [error] = _failed_outputs(name, tmp_path, log_dirr="x", store_dirr="x")
    assert error.traceback[0].startswith("UsageError: unknown notebook parameters "
                                         "'log_dirr'")
    assert "'store_dirr'" in error.traceback[0] and "this notebook takes:" in error.traceback[0]
    assert len(error.traceback) == 1


def test_a_misspelt_parameter_names_the_closest_one():
    history = ["", "import analysis", 'log_dir = None\nmethod = "dlperf"\nlang: str = "en"',
               '# Parameters\nlog_dirr = "x"\nlang = "zh"\n', "analysis.check()"]
    with pytest.raises(UsageError) as exc:
        notebook_params.check(history)
    assert str(exc.value) == ("unknown notebook parameter 'log_dirr' (did you mean 'log_dir'?); "
                              "this notebook takes: log_dir, method, lang")
    notebook_params.check(history[:3])  # run by hand in JupyterLab: nothing injected
    notebook_params.check([*history[:3], '# Parameters\nlang = "zh"\n'])


# 30_compare.ipynb is executed with real logs in tests/changes/test_frameworks_notebook.py.


def test_a_folder_under_home_is_found_as_a_shell_would_find_it(campaign, tmp_path, monkeypatch):
    # log_dir = "~/runs" in a notebook was "no such log folder: ~/runs (relative to …)"
    monkeypatch.setenv("HOME", str(campaign.parent))
    _run("10_analyse.ipynb", tmp_path, log_dir=f"~/{campaign.name}",
         summary_csv=str(tmp_path / "summary.csv"))
    assert list(pd.read_csv(tmp_path / "summary.csv")["repeats"]) == [3, 3, 3]


def test_launch_out_dir_is_under_the_project_folder_as_spec_path_is(tmp_path, monkeypatch):
    """00_launch read spec_path under the project folder but out_dir under the kernel's
    folder (notebooks/ in JupyterLab): `out_dir = "data/raw_logs/x"` wrote the logs to
    notebooks/data/raw_logs/x."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("DLPERF_PROJECT_DIR", str(project))
    kernel_dir = tmp_path / "notebooks"
    kernel_dir.mkdir()
    out = kernel_dir / "00_launch.ipynb"
    pm.execute_notebook(str(NOTEBOOKS / "00_launch.ipynb"), str(out), cwd=str(kernel_dir),
                        parameters={"out_dir": "data/raw_logs/x", "spec_path": str(
                            ROOT / "examples" / "campaigns" / "smoke.yaml")}, progress_bar=False)
    nb = nbformat.read(out, as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert f"out {project / 'data' / 'raw_logs' / 'x'}\n" in text
    assert str(kernel_dir / "data") not in text


def test_project_path_reads_a_notebook_path_parameter():
    assert config.project_path("data/x") == config.PROJECT_DIR / "data" / "x"
    assert config.project_path("/abs/x") == Path("/abs/x")
    assert config.project_path("~/x") == Path.home() / "x"
    assert config.project_path(None) is None and config.project_path("") is None


@pytest.mark.parametrize("name", ["10_analyse.ipynb", "30_compare.ipynb"])
@pytest.mark.parametrize("params", [{"method": "windw"}, {"lang": "fr"}, {"warmup": -5}])
def test_a_bad_value_fails_in_the_check_cell_before_the_logs_are_parsed(name, params,
                                                                       tmp_path):
    """10_analyse and 30_compare parsed every log before a misspelt method or language (or
    a negative warm-up) failed further down; the check cell now refuses it first, in one
    line (20_report already did)."""
    with pytest.raises(pm.PapermillExecutionError):
        _run(name, tmp_path, **params)
    nb = nbformat.read(tmp_path / name, as_version=4)
    failed = [c for c in nb.cells if c.cell_type == "code"
              and any(o.output_type == "error" for o in c.outputs)]
    assert len(failed) == 1 and failed[0].source.startswith("notebook_params.check(")
    [error] = [o for o in failed[0].outputs if o.output_type == "error"]
    assert len(error.traceback) == 1
    assert error.traceback[0].startswith(("UsageError: ", "UnknownNameError: "))
    assert str(next(iter(params.values()))) in error.traceback[0]


@pytest.mark.parametrize("name", ["10_analyse.ipynb", "20_report.ipynb"])
def test_a_warmup_the_dlperf_method_does_not_read_is_an_error(name, tmp_path):
    # 20_report: report.build checks it, as the CLI and the other notebooks' check cell do
    [error] = _failed_outputs(name, tmp_path, warmup=30)
    assert error.traceback == ["UsageError: warmup has no effect with the dlperf method, which "
                               "reads neither option; leave it out, or choose the window method "
                               "(warmup and measure) or reported (warmup)"]
