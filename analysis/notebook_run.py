"""Run a notebook with papermill on an ordinary, private kernel.

The kernel is papermill's own: nbclient starts it from the notebook's kernel spec (``python3``
is this interpreter's ipykernel) and stops it when the notebook has run, has failed or was
interrupted (Ctrl-C, or SIGTERM taken as Ctrl-C: ``analysis.interrupt``). Two settings make
it private to the caller's `folder` (a private temporary folder, mode 0700):

- it talks to papermill over IPC sockets in `folder`, with its connection file there,
  instead of TCP on loopback: no other user can reach it, and ipykernel has no reason to
  warn that it "is running over TCP without encryption";
- it runs in `folder`, so nothing from the caller's folder lands on its ``sys.path``.

It is killed when it is done rather than asked to stop (``shutdown_kernel="immediate"``):
the notebook is complete once its last cell has replied, and a kernel asked to stop while
it executes (Ctrl-C) prints a traceback of its closed sockets on the caller's terminal.
"""

from __future__ import annotations

from pathlib import Path


def kernel_config(folder: str | Path):
    """nbclient settings that put the kernel's sockets and connection file in `folder`."""
    from traitlets.config import Config

    folder = Path(folder)
    return Config({"KernelManager": {"transport": "ipc", "ip": str(folder / "kernel"),
                                     "connection_file": str(folder / "kernel.json")}})


def execute_notebook(notebook: str | Path, out: str | Path, parameters: dict,
                     folder: str | Path, kernel_name: str | None = None):
    """Execute `notebook` with `parameters` into `out` in a new kernel private to `folder`
    (its working folder too); the executed notebook. Raises what papermill raises
    (``PapermillExecutionError`` for a failed cell, after writing `out`).

    `out` is written once, when the notebook has run (or failed): papermill's default, a
    save before and after every cell, re-encodes a growing notebook with its images for a
    file no one reads before the run ends."""
    import papermill as pm

    return pm.execute_notebook(str(notebook), str(out), parameters=parameters,
                               kernel_name=kernel_name, progress_bar=False, log_output=False,
                               request_save_on_cell_execute=False,
                               config=kernel_config(folder),
                               resources={"metadata": {"path": str(folder)}},
                               shutdown_kernel="immediate")
