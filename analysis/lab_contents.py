"""How the JupyterLab of ``make lab`` stores files (scripts/jupyter_server_config.py sets both):

- :func:`save_as_committed`, its ``pre_save_hook``: the notebooks of notebooks/ that git tracks
  are saved as committed (:func:`stripped`: no outputs, no execution counts, cell metadata only
  its tags, ``language_info`` only its name), so running and saving one leaves ``git status``
  clean; the outputs stay in the open tab.
- :class:`TreeCheckpoints`, its checkpoints: Lab keeps a copy of each file it opens; beside a
  log under data/ (Jupyter's ``.ipynb_checkpoints/``) that copy would be read as one more run."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from jupyter_server.services.contents.filecheckpoints import AsyncFileCheckpoints
from traitlets import Unicode, default

from analysis import config
from analysis.shell import CommandError, run_command


def stripped(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """`nb` as committed (in place)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        tags = cell.metadata.get("tags")
        cell.metadata = nbformat.NotebookNode({"tags": tags} if tags else {})
    info = nb.metadata.get("language_info")
    if info:  # a kernel adds its version, lexer, mimetype…: they change with the venv
        nb.metadata["language_info"] = nbformat.NotebookNode({"name": info.get("name", "python")})
    return nb


def tracked(path: str | Path) -> bool:
    """Whether `path` is a file git tracks (False outside a git checkout, or without git)."""
    path = Path(path)
    try:
        done = run_command(["git", "ls-files", "--error-unmatch", "--", path.name], 10,
                           check=False, cwd=path.parent)
    except (OSError, CommandError):
        return False
    return done.returncode == 0


def save_as_committed(model: dict, path: str, contents_manager, **_kwargs) -> None:
    """Jupyter's ``FileContentsManager.pre_save_hook``: a notebook of the project's notebooks/
    that git tracks is written as committed. Others keep their outputs: a user's own, and the
    executed records committed with theirs (reports/, the logs' 00_launch.ipynb)."""
    if model.get("type") != "notebook" or model.get("content") is None:
        return
    file = Path(contents_manager.root_dir, path).resolve()
    if file.parent == config.NOTEBOOKS_DIR.resolve() and tracked(file):
        model["content"] = stripped(nbformat.from_dict(model["content"]))


class TreeCheckpoints(AsyncFileCheckpoints):
    """Checkpoints in a tree of their own (``root``, default the project's
    ``.ipynb_checkpoints/``, which git ignores) that mirrors the served folders, instead of a
    ``.ipynb_checkpoints/`` beside each file."""

    root = Unicode(help="folder of the checkpoint tree").tag(config=True)

    @default("root")
    def _root_default(self):
        return str(config.PROJECT_DIR / ".ipynb_checkpoints")

    def checkpoint_path(self, checkpoint_id: str, path: str) -> str:
        parent, _, name = path.strip("/").rpartition("/")
        base, ext = os.path.splitext(name)
        folder = Path(self.root, parent)
        with self.perm_to_403():
            folder.mkdir(parents=True, exist_ok=True)
        return str(folder / f"{base}-{checkpoint_id}{ext}")
