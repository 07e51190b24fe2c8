"""A file a notebook writes inside a results store it reads is refused, as one onto the
manifest or through a link is: 40_trends with ``trend_csv`` = ``STORE/runs/x.csv`` wrote it,
and every later read of the store said "damaged" (exit 2) until the file was removed."""

from __future__ import annotations

import nbformat
import papermill as pm
import pytest
from conftest import ROOT

from analysis import notebook_params
from analysis.changes import sources, trend
from analysis.changes import store as results_store
from analysis.errors import UsageError


@pytest.fixture(scope="module")
def store(campaign, tmp_path_factory):
    folder = tmp_path_factory.mktemp("outputs") / "store"
    results_store.add(folder, sources.load(str(campaign)))
    return folder


def _files(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("inside", ["runs/x.csv", "summary/t.csv", "t.csv",
                                    "runs/../campaigns/t.csv"])
def test_an_output_inside_a_store_the_notebook_reads_is_refused(store, inside):
    for given in ({"store_dir": str(store), "trend_csv": str(store / inside)},
                  {"store": str(store), "numbers_json": str(store / inside)}):
        with pytest.raises(UsageError, match=r"^refusing to write .*: it is inside the "
                                             rf"results store {store}, which it would damage"):
            notebook_params.check_outputs(given)


def test_an_output_beside_the_store_is_written(store, tmp_path):
    notebook_params.check_outputs({"store_dir": str(store), "trend_csv": str(tmp_path / "t.csv")})
    notebook_params.check_outputs({"store_dir": str(store),
                                   "trend_csv": str(store.parent / "store_trend.csv")})


def test_the_trends_notebook_leaves_its_store_readable(store, tmp_path):
    before = {p: p.read_bytes() for p in _files(store)}
    with pytest.raises(pm.PapermillExecutionError):
        pm.execute_notebook(str(ROOT / "notebooks" / "40_trends.ipynb"),
                            str(tmp_path / "out.ipynb"), cwd=str(tmp_path), progress_bar=False,
                            parameters={"store_dir": str(store),
                                        "trend_csv": str(store / "runs" / "x.csv")})
    nb = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    [error] = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "error"]
    assert len(error.traceback) == 1
    assert error.traceback[0].startswith(f"UsageError: refusing to write {store}/runs/x.csv")
    assert {p: p.read_bytes() for p in _files(store)} == before
    assert len(trend.trend(store)) > 0  # was: "store … is damaged: runs/x.csv: not a partition"
