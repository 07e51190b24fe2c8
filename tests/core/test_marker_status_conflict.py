"""A done marker that contradicts status.json (a hand edit: the runner writes no such pair).
The marker, the run's own record, is followed by summarize and by a resume alike: a run whose
marker says it failed, or is another run's, is not counted even where status.json lists it
as done, and the stray's reason names both records; the count is the same once a resume has
rewritten status.json from the markers (markers and status as the runner wrote them, of the
bundled rn50_4gpu campaign)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis.campaign import records, resume
from analysis.campaign.spec import load
from analysis.collect import parse_paths
from analysis.strays import STATUS_NAME
from tests.conftest import ROOT

BUNDLED = ROOT / "data" / "raw_logs" / "rn50_4gpu"
RUN = "1n1g/resnet50_b128_fp32_2"
EDITS = {
    "says failed": ("ok", "false", 'says "ok": "false"'),
    "another run's": ("run_id", "1n1g/resnet50_b128_fp32_3",
                      "is another run's (run_id '1n1g/resnet50_b128_fp32_3': a copy)"),
}


def _edited(tmp_path: Path, key: str, value: str, run: str = RUN) -> Path:
    """The bundled campaign, `run`'s marker edited (`key` = `value`)."""
    out = tmp_path / "rn50_4gpu"
    shutil.copytree(BUNDLED, out)
    marker = out / f"{run}.done"
    record = json.loads(marker.read_text())
    assert record[key] != value
    marker.write_text(json.dumps(dict(record, **{key: value}), indent=1))
    return out


def _fp32_1n1g(out: Path) -> tuple[list[int], dict[str, str]]:
    """Repeats counted of the 1n1g fp32 case, and the stray reasons by file name."""
    result = parse_paths([out], cache=False)
    runs = result.runs[result.runs["run_id"].str.startswith("1n1g/resnet50_b128_fp32_")]
    strays = result.problems[result.problems["kind"] == "stray_log"]
    return sorted(runs["repeat"]), {Path(s).name: r for s, r in
                                    zip(strays["source"], strays["reason"], strict=True)}


def _resume_status(out: Path) -> dict:
    """status.json's row of RUN once a resume rewrote it from the files on disk."""
    spec = load(out / "campaign.yaml")
    rows = [dict(zip(("run_id", "state", "reason"), (r.run_id, *records.disk_state(r, out))))
            for r in spec.runs()]
    records.write_status(out, spec.name, rows)
    return next(r for r in rows if r["run_id"] == RUN)


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_marker_contradicting_status_is_followed_and_named(tmp_path, edit):
    key, value, said = EDITS[edit]
    out = _edited(tmp_path, key, value)
    status = json.loads((out / STATUS_NAME).read_text())
    assert next(r["state"] for r in status["runs"] if r["run_id"] == RUN) == "done"
    repeats, strays = _fp32_1n1g(out)
    assert repeats == [1, 3, 4, 5]
    reason = strays["resnet50_b128_fp32_2.log"]
    assert f"its done marker resnet50_b128_fp32_2.done {said}" in reason
    assert f"while {STATUS_NAME} lists it as done: the two records conflict" in reason
    # a resume reads the marker the same way: the run is failed, not done, and not re-run
    row = _resume_status(out)
    assert row["state"] == "failed" and said in row["reason"] and "not re-run" in row["reason"]
    assert RUN not in resume.done_markers(out)
    repeats, strays = _fp32_1n1g(out)
    assert repeats == [1, 3, 4, 5]
    assert f"{STATUS_NAME} lists it as failed" in strays["resnet50_b128_fp32_2.log"]


def test_a_copied_marker_is_not_the_run_it_names(tmp_path):
    """Run 4's marker edited to name run 2 stands for neither: run 2's own marker is compared
    on a resume, run 4 is not done."""
    out = _edited(tmp_path, "run_id", RUN, run="1n1g/resnet50_b128_fp32_4")
    done = resume.done_markers(out)
    assert done[RUN] == json.loads((out / f"{RUN}.done").read_text())
    assert "1n1g/resnet50_b128_fp32_4" not in done
