"""The git clean filter of the committed notebooks (``.gitattributes``; scripts/setup.sh
configures it): git stores a notebook as committed — no outputs, no execution counts, cell
metadata only its tags, ``language_info`` only its name — so running and saving one in
JupyterLab leaves ``git status`` clean while the file on disk keeps its outputs.

``python -m analysis.notebook_strip`` reads a notebook on stdin and writes it stripped."""

from __future__ import annotations

import sys

import nbformat


def stripped(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """`nb` as committed (in place)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        tags = cell.metadata.get("tags")
        cell.metadata = nbformat.NotebookNode({"tags": tags} if tags else {})
    info = nb.metadata.get("language_info")
    if info:  # a kernel adds its version, lexer, mimetype…: they change with the venv
        nb.metadata["language_info"] = {"name": info.get("name", "python")}
    return nb


def main() -> int:
    text = sys.stdin.read()
    # what is not a notebook (a merge conflict) is stored as it is: git must not lose it
    try:
        nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except ValueError:  # not JSON, or not a notebook
        sys.stdout.write(text)
        return 0
    sys.stdout.write(nbformat.writes(stripped(nb)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
