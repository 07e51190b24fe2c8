"""A done run whose log and marker are gone while its status.json row names another run's
log: the row's run was counted as present (the other run's log was taken for its own), and
``--strict`` passed with one run fewer and nothing said. A log that another run's row or done
marker claims is not the row's: the run is ``missing_log``, as when its row names its own
log. On a copy of a real campaign folder, markers and status.json as the runner wrote them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.discover import find_logs
from analysis.errors import LogProblemError

REAL = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu"
RUN1, RUN2 = "resnet50_b128_fp32_1", "resnet50_b128_fp32_2"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The real campaign's 1n1g runs, run 2's log and marker gone."""
    out = tmp_path / "camp"
    shutil.copytree(REAL / "1n1g", out / "1n1g")
    shutil.copy(REAL / "status.json", out / "status.json")
    for suffix in (".log", ".done", ".gpu.csv"):
        (out / "1n1g" / f"{RUN2}{suffix}").unlink(missing_ok=True)
    return out


def _point_row(out: Path, run_id: str, log: str, drop: str | None = None) -> None:
    """Make `run_id`'s status row name `log`; drop the row of `drop`."""
    path = out / "status.json"
    status = json.loads(path.read_text())
    status["runs"] = [r for r in status["runs"] if r["run_id"] != drop]
    for row in status["runs"]:
        if row["run_id"] == run_id:
            row["log"] = log
    path.write_text(json.dumps(status, indent=1))


def _problems(out: Path) -> list[tuple[str, str, str | None]]:
    return [(p.kind, Path(p.source).name, p.run_id) for p in find_logs([out])[1]]


def test_a_row_naming_another_runs_log_is_missing_log(folder):
    _point_row(folder, f"1n1g/{RUN2}", f"1n1g/{RUN1}.log")
    assert _problems(folder) == [("missing_log", "status.json", f"1n1g/{RUN2}")]
    with pytest.raises(LogProblemError, match=f"status.json.*missing_log.*1n1g/{RUN2}"):
        parse_paths([folder], strict=True)


def test_a_log_claimed_by_another_runs_marker_alone_is_not_the_rows(folder):
    """Run 1's row gone too: its done marker still says whose the log is."""
    _point_row(folder, f"1n1g/{RUN2}", f"1n1g/{RUN1}.log", drop=f"1n1g/{RUN1}")
    assert ("missing_log", "status.json", f"1n1g/{RUN2}") in _problems(folder)


def test_a_row_naming_its_own_log_elsewhere_spelled_is_not_flagged(folder):
    shutil.copytree(REAL / "1n1g", folder / "1n1g", dirs_exist_ok=True)  # run 2 intact
    _point_row(folder, f"1n1g/{RUN2}", f"1n1g/{RUN2}.log")
    assert _problems(folder) == []
