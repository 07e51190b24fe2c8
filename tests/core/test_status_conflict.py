"""A finished run whose done marker says it finished while status.json lists it as failed (a
hand edit: the runner rebuilds status.json from the markers): counted, as its marker says,
with a ``status_conflict`` problem naming the marker; one listed as pending (a runner stopped
between writing the marker and the status) is counted without one. On a copy of a real
campaign folder, markers and status.json as the runner wrote them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.discover import find_logs
from analysis.errors import LogProblemError

REAL = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu"
RUN2 = "resnet50_b128_fp32_2"
ALL = len(list((REAL / "1n1g").glob("*.log")))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The real campaign's 1n1g runs with its status.json (other configs' rows kept)."""
    out = tmp_path / "camp"
    shutil.copytree(REAL / "1n1g", out / "1n1g")
    shutil.copy(REAL / "status.json", out / "status.json")
    return out


def _listed_as(folder: Path, state: str) -> None:
    status = json.loads((folder / "status.json").read_text())
    for row in status["runs"]:
        if row["run_id"] == f"1n1g/{RUN2}":
            row["state"] = state
    (folder / "status.json").write_text(json.dumps(status))


def _counted_and_problems(out: Path) -> tuple[list[str], list[tuple[str, str]]]:
    found, problems = find_logs([out])
    counted = sorted({f.run_id for f in found if not f.stray})
    return counted, [(p.kind, Path(p.source).name) for p in problems]


def test_a_run_marked_done_and_listed_failed_is_counted_and_the_conflict_said(folder):
    _listed_as(folder, "failed")
    counted, problems = _counted_and_problems(folder)
    assert f"1n1g/{RUN2}" in counted and len(counted) == ALL
    assert problems == [("status_conflict", f"{RUN2}.done")]
    with pytest.raises(LogProblemError, match="status_conflict.*lists it as failed"):
        parse_paths([folder], strict=True)


def test_a_run_marked_done_and_listed_pending_is_counted_without_a_problem(folder):
    _listed_as(folder, "pending")
    counted, problems = _counted_and_problems(folder)
    assert f"1n1g/{RUN2}" in counted and len(counted) == ALL
    assert problems == []
