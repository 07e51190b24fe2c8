"""Every parameter of every notebook is type-checked: one UsageError naming it, never a raw
TypeError further down (``-p campaign_base 5``) nor a silent skip (``-p campaign_base False``)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import papermill as pm
import pytest

from analysis import notebook_params
from analysis.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _parameters(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    [cell] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    return cell.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_parameter_has_a_type(path):
    names = notebook_params.assigned_names(_parameters(path))
    assert names
    assert [n for n in names if n not in notebook_params.TYPES] == []


def _check(path: Path, **given):
    cell = _parameters(path)
    namespace: dict = {}
    exec(cell, namespace)  # the notebook's defaults, then what papermill injects
    injected = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in given.items())
    namespace.update(given)
    notebook_params.check(["", cell, injected, "check()"], namespace)


@pytest.mark.parametrize("notebook, given, message", [
    ("30_compare.ipynb", {"campaign_base": 5}, "campaign_base=5 must be a path (text) or None"),
    ("30_compare.ipynb", {"campaign_base": False},
     "campaign_base=False must be a path (text) or None"),
    ("30_compare.ipynb", {"campaign_new": 2.5}, "campaign_new=2.5 must be a path (text)"),
    ("20_report.ipynb", {"log_base_url": 5}, "log_base_url=5 must be text or None"),
])
def test_a_campaign_or_url_parameter_of_the_wrong_type_is_one_usage_error(notebook, given,
                                                                         message):
    with pytest.raises(UsageError, match="notebook parameter " + message.replace("(", r"\(")
                       .replace(")", r"\)")):
        _check(ROOT / "notebooks" / notebook, **given)


def test_the_notebooks_defaults_pass():
    for path in NOTEBOOKS:
        _check(path)


def test_compare_notebook_names_the_parameter(tmp_path):
    with pytest.raises(pm.PapermillExecutionError):
        pm.execute_notebook(str(ROOT / "notebooks" / "30_compare.ipynb"),
                            str(tmp_path / "out.ipynb"), cwd=str(tmp_path), progress_bar=False,
                            parameters={"campaign_base": 5})
    nb = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    [error] = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "error"]
    assert error.traceback == ["UsageError: notebook parameter campaign_base=5 must be a path "
                               "(text) or None"]


def test_no_output_is_written_onto_a_file_any_input_names(tmp_path):
    """compare_csv onto a log of campaign_new, numbers_json onto the references file: each
    replaced the file it named (only log_dir and store_dir counted as inputs)."""
    campaign = tmp_path / "new" / "1n1g"
    campaign.mkdir(parents=True)
    log = campaign / "resnet50_b128_fp32_1.log"
    log.write_text("a log\n")
    refs = tmp_path / "refs.yaml"
    refs.write_text("references: []\n")
    for given in ({"campaign_new": str(tmp_path / "new"), "compare_csv": str(log)},
                  {"references": str(refs), "numbers_json": str(refs)},
                  {"log_dir": str(tmp_path / "new"), "summary_csv": str(log)}):
        with pytest.raises(UsageError, match="one of the input files"):
            notebook_params.check_outputs(given)
    notebook_params.check_outputs({"campaign_new": str(tmp_path / "new"),
                                   "compare_csv": str(tmp_path / "out.csv")})
    assert log.read_text() == "a log\n" and refs.read_text() == "references: []\n"
