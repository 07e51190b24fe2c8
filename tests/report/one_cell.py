"""One cell run in a report build's kernel, forked from this process where it can be (as a
publisher's is): the publisher scripts of test_forked_kernel.py, each run as a new process,
import it (``sys.path`` gets this folder appended: its head stays the publisher's own)."""

from __future__ import annotations

from pathlib import Path


def run_cell(folder: Path, cell: str) -> tuple[bool, list]:
    """(whether the kernel was forked, the cell's outputs); the notebooks are written in
    `folder`, which is also the kernels' folder."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    import analysis.report.build  # noqa: F401 - what a publisher has imported when it forks
    from analysis.report import publish
    from analysis.report.kernels import Kernels

    src = folder / "cell.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(cell)], metadata={"kernelspec": {
        "name": "python3", "language": "python", "display_name": "Python 3"}}), src)
    kernels = Kernels(folder, fork=True)
    km = kernels.manager("python3")
    try:
        kernels.start(km)
        nb = publish.execute(folder / "out.ipynb", {}, src, None, kernels, km)
    finally:
        kernels.shutdown(km)
    return kernels.forked, nb.cells[0].outputs


def printed(outputs: list) -> str:
    """What the cell printed, stripped."""
    return "".join(o.get("text", "") for o in outputs).strip()
