"""A finished run of a `dlperf run` folder that lost a file: its log gone beside a done
marker saying it finished (`missing_log`), or its done marker gone while status.json lists
it as done and its log is there (`missing_done_marker`: counted, as status.json says); or
whose records conflict: its marker says it finished while status.json lists it as failed (a
hand edit: the runner rebuilds status.json from the markers), counted as its marker says
with a `status_conflict` problem, while one listed as pending (a runner stopped between
writing the marker and the status) is counted without one. On a copy of a real campaign
folder, markers and status.json as the runner wrote them."""

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


def _counted_and_problems(out: Path) -> tuple[list[str], list[tuple[str, str]]]:
    found, problems = find_logs([out])
    counted = sorted({f.run_id for f in found if not f.stray})
    return counted, [(p.kind, Path(p.source).name) for p in problems]


def test_the_intact_folder_counts_every_run_with_no_problem(folder):
    counted, problems = _counted_and_problems(folder)
    assert len(counted) == ALL and problems == []


def test_a_done_run_whose_log_is_gone_is_a_problem_naming_its_marker(folder):
    (folder / "1n1g" / f"{RUN2}.log").unlink()  # its GPU samples and env record stay
    assert _counted_and_problems(folder)[1] == [("missing_log", f"{RUN2}.done")]
    result = parse_paths([folder])
    [lost] = [p for p in result.problem_list() if p.kind == "missing_log"]
    assert lost.source == str(folder / "1n1g" / f"{RUN2}.done") and "not counted" in lost.reason
    (folder / "1n1g" / f"{RUN2}.gpu.csv").unlink()
    with pytest.raises(LogProblemError, match=f"{RUN2}.done.*missing_log.*not counted"):
        parse_paths([folder], strict=True)


def test_a_failed_run_without_a_log_is_no_missing_log(folder):
    marker = folder / "1n1g" / f"{RUN2}.done"
    marker.write_text(marker.read_text().replace('"ok": true', '"ok": false', 1))
    (folder / "1n1g" / f"{RUN2}.log").unlink()
    assert ("missing_log", f"{RUN2}.done") not in _counted_and_problems(folder)[1]


def test_a_run_listed_done_whose_marker_is_gone_is_counted_and_flagged(folder):
    (folder / "1n1g" / f"{RUN2}.done").unlink()
    counted, problems = _counted_and_problems(folder)
    assert f"1n1g/{RUN2}" in counted and len(counted) == ALL
    assert problems == [("missing_done_marker", f"{RUN2}.done")]
    with pytest.raises(LogProblemError, match="missing_done_marker.*status.json lists"):
        parse_paths([folder], strict=True)


def test_a_status_only_folder_of_another_tool_is_not_flagged(folder):
    for marker in (folder / "1n1g").glob("*.done"):
        marker.unlink()  # no run of the folder has a marker: status.json is its record
    counted, problems = _counted_and_problems(folder)
    assert len(counted) == ALL and problems == []


def test_a_run_listed_done_whose_log_and_marker_are_both_gone_is_a_problem(folder):
    """Nothing said the run was lost: its figures left the median in silence."""
    for suffix in (".log", ".done", ".gpu.csv"):
        (folder / "1n1g" / f"{RUN2}{suffix}").unlink(missing_ok=True)
    counted, problems = _counted_and_problems(folder)
    assert f"1n1g/{RUN2}" not in counted and len(counted) == ALL - 1
    assert problems == [("missing_log", "status.json")]
    with pytest.raises(LogProblemError, match=f"status.json.*missing_log.*1n1g/{RUN2}.*not counted"):
        parse_paths([folder], strict=True)


def _listed_as(folder: Path, state: str) -> None:
    status = json.loads((folder / "status.json").read_text())
    for row in status["runs"]:
        if row["run_id"] == f"1n1g/{RUN2}":
            row["state"] = state
    (folder / "status.json").write_text(json.dumps(status))


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
