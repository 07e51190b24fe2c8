"""The launch notebook as a campaign's record.

``dlperf run`` runs the campaign in its own process (so that Ctrl-C and SIGTERM reach the runner
directly), then executes ``notebooks/00_launch.ipynb`` with ``dry_run = True`` into
``<out>/00_launch.ipynb``: the plan, every node's command and the status, all read from the
folder, so the record shows what the campaign left (done, failed, pending) without running
anything again. Running the same notebook with ``dry_run = False`` is the notebook way to run a
campaign.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from analysis import config
from analysis.fsutil import atomic_path

NOTEBOOK = "00_launch.ipynb"


def record_launch_notebook(out: Path, spec_path: str | Path, backend: str | None) -> Path:
    """Execute the launch notebook read-only for the campaign in `out`; the record's path.

    Raises whatever papermill or the kernel raises; the record is written atomically, so a
    failure leaves the previous record (or none), never half of one.
    """
    from analysis.notebook_run import execute_notebook, kernel

    target = Path(out) / NOTEBOOK
    # the kernel talks over IPC sockets in a private folder (no TCP), and dies with the record
    with tempfile.TemporaryDirectory(prefix="dlperf-launch-") as folder, kernel(folder) as km:
        with atomic_path(target) as tmp:
            execute_notebook(
                config.NOTEBOOKS_DIR / NOTEBOOK, tmp,
                {"spec_path": str(Path(spec_path).resolve()), "spec_inline": None,
                 "backend": backend, "dry_run": True, "out_dir": str(Path(out).resolve()),
                 "progress": False, "time_budget": None}, km, folder)
    return target
