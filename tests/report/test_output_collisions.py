"""Two outputs naming one file, and an output written into a results store.

30_compare with ``compare_csv`` and ``excluded_csv`` the same file ran with exit 0 and left
only the excluded list: the compared rows were written, then overwritten. Any two outputs
of one check naming the same file (by real path: links, ``..``) are refused, both named.
``dlperf env -o ST/runs/x.json`` wrote into a store (every later read of it: "damaged",
exit 2); ``parse -o`` took a store whose manifest was lost for none. Both now refuse."""

from __future__ import annotations

import shutil

import nbformat
import papermill as pm
import pytest
from conftest import ROOT, files_of

from analysis import notebook_params
from analysis.changes import store as results_store
from analysis.cli import main
from analysis.errors import UsageError


@pytest.mark.parametrize("second", ["same", "dots", "link"])
def test_two_output_parameters_naming_one_file_are_refused_naming_both(tmp_path, second):
    out = tmp_path / "rows.csv"
    (tmp_path / "sub").mkdir()
    (tmp_path / "to").symlink_to(tmp_path)
    other = {"same": out, "dots": tmp_path / "sub" / ".." / "rows.csv",
             "link": tmp_path / "to" / "rows.csv"}[second]
    with pytest.raises(UsageError, match=r"^refusing to write .*rows\.csv twice: compare_csv "
                                         r"and excluded_csv name the same file"):
        notebook_params.check_outputs({"compare_csv": str(out), "excluded_csv": str(other)})


def test_two_output_parameters_naming_two_files_pass(tmp_path):
    notebook_params.check_outputs({"compare_csv": str(tmp_path / "rows.csv"),
                                   "excluded_csv": str(tmp_path / "left_out.csv")})


def test_the_compare_notebook_refuses_one_file_for_both_outputs(campaign, tmp_path):
    out = tmp_path / "rows.csv"
    with pytest.raises(pm.PapermillExecutionError):
        pm.execute_notebook(str(ROOT / "notebooks" / "30_compare.ipynb"),
                            str(tmp_path / "out.ipynb"), cwd=str(tmp_path), progress_bar=False,
                            parameters={"log_dir": str(campaign), "campaign_base": None,
                                        "compare_csv": str(out), "excluded_csv": str(out)})
    nb = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    [error] = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "error"]
    assert error.traceback == [f"UsageError: refusing to write {out} twice: compare_csv and "
                               "excluded_csv name the same file, and one would overwrite the "
                               "other; give each its own file"]
    assert not out.exists()


@pytest.mark.parametrize("inside", ["runs/x.json", "x.json"])
def test_env_refuses_an_output_inside_a_store(store, inside, capsys):
    before = files_of(store)
    assert main(["env", "-o", str(store / inside), "--timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert f"refusing to write {store / inside}: it is inside the results store {store}" in err
    assert files_of(store) == before
    assert len(results_store.campaigns(store)) == 1  # was: "store … is damaged", exit 2


@pytest.mark.parametrize("command", [["env"], ["parse", "LOGS"]])
def test_a_store_whose_manifest_is_lost_is_still_one(campaign, store, tmp_path, command,
                                                     capsys):
    lost = tmp_path / "lost"
    shutil.copytree(store, lost)
    (lost / results_store.MANIFEST).unlink()  # its partitions are there: a store still
    before = files_of(lost)
    out = lost / "runs" / ("y.parquet" if "parse" in command else "y.json")
    argv = [str(campaign) if a == "LOGS" else a for a in command]
    assert main([*argv, "-o", str(out)]) == 2
    assert f"it is inside the results store {lost}" in capsys.readouterr().err
    assert files_of(lost) == before


@pytest.mark.parametrize("lookalike", ["campaigns folder", "other manifest"])
def test_a_folder_only_named_like_a_store_takes_outputs(campaign, tmp_path, lookalike):
    """A folder of log campaigns called ``campaigns/``, or one holding a dataset's own
    ``manifest.json``, is no store: writing beside them damages nothing, so it is allowed."""
    if lookalike == "campaigns folder":
        shutil.copytree(campaign, tmp_path / "campaigns" / "nightly")
    else:
        (tmp_path / results_store.MANIFEST).write_text('{"files": ["a.tfrecord"]}\n')
    out = tmp_path / "summary.csv"
    assert main(["parse", str(campaign), "-o", str(out)]) == 0
    assert out.is_file()
