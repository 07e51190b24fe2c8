"""Notebook parameters are checked as the command line checks options: a wrong type is one
UsageError naming the parameter (it was a raw TypeError further down, or worse, ``"no"`` read
as true), and a file the notebook writes may not be one it reads, nor a link."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from analysis import notebook_params
from analysis.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "data" / "raw_logs" / "rn50_4gpu"
PARAMS = ('log_dir = None\nsummary_csv = None\ncache = True\ncompare_unrecorded = False\n'
          'persist = 2\ncase = "*"\nthreshold = "2%"\n')


def _check(**given):
    injected = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in given.items())
    history = ["", "import analysis", PARAMS, injected, "check()"]
    namespace = {"log_dir": None, "summary_csv": None, "cache": True,
                 "compare_unrecorded": False, "persist": 2, "case": "*", "threshold": "2%",
                 **given}
    notebook_params.check(history, namespace)


@pytest.mark.parametrize("given, message", [
    ({"log_dir": 123}, "log_dir=123 must be a path (text) or None"),
    ({"persist": 2.5}, "persist=2.5 must be an integer >= 1"),
    ({"case": 5}, "case=5 must be text"),
    ({"compare_unrecorded": "no"}, "compare_unrecorded='no' must be True or False"),
    ({"cache": "no"}, "cache='no' must be True or False"),
])
def test_a_parameter_of_the_wrong_type_is_one_usage_error(given, message):
    with pytest.raises(UsageError, match="notebook parameter " + message.replace("(", r"\(")
                       .replace(")", r"\)").replace("*", r"\*")):
        _check(**given)


def test_a_threshold_is_checked_as_every_threshold_is():
    with pytest.raises(UsageError, match="threshold must be a percentage with its sign"):
        _check(threshold="0.5")


def test_parameters_of_the_right_type_pass(tmp_path):
    _check(log_dir=str(CAMPAIGN), cache=False, persist=3, case="*/1n1g", threshold="0.5%",
           summary_csv=str(tmp_path / "summary.csv"))


def test_an_output_that_is_an_input_log_or_a_link_is_refused(tmp_path):
    log = CAMPAIGN / "1n1g" / "resnet50_b128_fp32_1.log"
    with pytest.raises(UsageError, match="it is one of the input files"):
        _check(log_dir=str(CAMPAIGN), summary_csv=str(log))
    link = tmp_path / "summary.csv"
    link.symlink_to(tmp_path / "precious.txt")
    with pytest.raises(UsageError, match="it is a symbolic link"):
        _check(log_dir=str(CAMPAIGN), summary_csv=str(link))


def test_analyse_notebook_does_not_overwrite_a_log_named_as_its_summary(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(CAMPAIGN / "1n1g", logs / "1n1g")
    log = logs / "1n1g" / "resnet50_b128_fp32_1.log"
    before = log.read_bytes()
    with pytest.raises(pm.PapermillExecutionError):
        pm.execute_notebook(str(ROOT / "notebooks" / "10_analyse.ipynb"),
                            str(tmp_path / "out.ipynb"), cwd=str(tmp_path), progress_bar=False,
                            parameters={"log_dir": str(logs), "summary_csv": str(log)})
    nb = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    [error] = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "error"]
    assert error.traceback == [f"UsageError: refusing to write {log}: it is one of the input "
                               "files"]
    assert log.read_bytes() == before
