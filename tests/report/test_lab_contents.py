"""The JupyterLab of `make lab` saves the notebooks of notebooks/ that git tracks as they are
committed (analysis.lab_contents.save_as_committed), so that running and saving one leaves
`git status` clean; other notebooks keep their outputs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
from types import SimpleNamespace

import nbformat
import pytest
from conftest import ROOT
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from analysis import lab_contents


def _run_by_hand(nb: dict) -> dict:
    """`nb` as JupyterLab saves it after Run All: outputs, counts, the kernel's language_info."""
    nb = copy.deepcopy(nb)
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            cell["execution_count"] = i
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x\n"}]
            cell["metadata"]["scrolled"] = True
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.7",
                                       "pygments_lexer": "ipython3"}
    return nb


def _save(path: str, content: dict) -> dict:
    model = {"type": "notebook", "content": content}
    lab_contents.save_as_committed(model, path, SimpleNamespace(root_dir=str(ROOT)))
    return model["content"]


def test_a_tracked_notebook_of_notebooks_is_saved_as_committed():
    text = (ROOT / "notebooks" / "10_analyse.ipynb").read_text(encoding="utf-8")
    saved = _save("notebooks/10_analyse.ipynb", _run_by_hand(nbformat.reads(text, 4)))
    assert nbformat.writes(nbformat.from_dict(saved)) + "\n" == text


@pytest.mark.parametrize("path", ["reports/rn50_4gpu/report_en.ipynb",  # committed with outputs
                                  "notebooks/my_own.ipynb"])  # not tracked: the user's
def test_other_notebooks_keep_their_outputs(path):
    nb = _run_by_hand(nbformat.reads((ROOT / "notebooks" / "40_trends.ipynb").read_text(), 4))
    assert _save(path, copy.deepcopy(nb)) == nb


def _wait(coroutine):
    """The result of `coroutine`, run on a loop of its own (the browser tests keep one running
    in this thread)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_checkpoints_are_kept_out_of_the_log_folders(tmp_path):
    """Opening a log in Lab left data/…/1n1g/.ipynb_checkpoints/<log>-checkpoint.log, which
    the next parse of data/ read as one more run (42 runs, 15 cases instead of 41, 14)."""
    served = tmp_path / "project"
    (served / "data" / "1n1g").mkdir(parents=True)
    (served / "data" / "1n1g" / "x_1.log").write_text("a log\n")
    files = AsyncLargeFileManager(root_dir=str(served))  # Jupyter server's own
    files.checkpoints = lab_contents.TreeCheckpoints(root_dir=str(served),
                                                     root=str(tmp_path / "checkpoints"))
    _wait(files.create_checkpoint("data/1n1g/x_1.log"))  # Lab asks for it on opening the log
    assert sorted(p.name for p in served.rglob("*")) == ["1n1g", "data", "x_1.log"]
    assert (tmp_path / "checkpoints" / "data" / "1n1g" / "x_1-checkpoint.log").read_text() == \
        "a log\n"
    [listed] = _wait(files.list_checkpoints("data/1n1g/x_1.log"))
    assert listed["id"] == "checkpoint"
