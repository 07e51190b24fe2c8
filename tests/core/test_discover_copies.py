"""A log folder opened in Jupyter holds checkpoint copies of the logs viewed there; they are
not runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from analysis import parse_paths

RN50 = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"


def test_jupyter_checkpoint_copies_are_not_runs(tmp_path):
    folder = tmp_path / "1n1g"
    shutil.copytree(RN50, folder)
    alone = parse_paths([tmp_path], cache=False)
    copies = folder / ".ipynb_checkpoints"
    copies.mkdir()
    first = sorted(folder.glob("*.log"))[0]
    shutil.copy(first, copies / f"{first.stem}-checkpoint.log")
    with_copies = parse_paths([tmp_path], cache=False)
    assert with_copies.runs["run_id"].tolist() == alone.runs["run_id"].tolist()
    assert len(alone.runs) == len(list(folder.glob("*.log")))
