"""Logs in a campaign folder that the campaign did not run (analysis.strays): left out of the
runs and figures, each a `stray_log` problem; a folder without markers or status is read as
before; a cached read does not hide a stray added or a marker removed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import parse_cache
from analysis.collect import parse_paths
from tests.conftest import ROOT

SRC = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"
STEM = "resnet50_b128_fp32_{}"
OLD = time.time() - 3600  # older than SETTLE_S: results may be kept


def _campaign(tmp_path: Path, status: bool = True, markers: bool = True,
              stray: bool = True) -> Path:
    """camp/1n1g with runs 1 and 2 of a bundled case (logs, markers), camp/status.json
    listing them done, and run 3's log planted without a marker (a stray)."""
    camp = tmp_path / "camp"
    cfg = camp / "1n1g"
    cfg.mkdir(parents=True)
    for i in (1, 2):
        shutil.copy(SRC / f"{STEM.format(i)}.log", cfg)
        if markers:
            shutil.copy(SRC / f"{STEM.format(i)}.done", cfg)
    if stray:
        shutil.copy(SRC / f"{STEM.format(3)}.log", cfg)
    if status:
        runs = [{"run_id": f"1n1g/{STEM.format(i)}", "state": "done",
                 "log": f"1n1g/{STEM.format(i)}.log"} for i in (1, 2)]
        (camp / "status.json").write_text(json.dumps({"campaign": "rn50_4gpu", "runs": runs}))
    return camp


def _strays(result) -> list[tuple[str, str]]:
    p = result.problems[result.problems["kind"] == "stray_log"]
    return [(Path(s).name, r) for s, r in zip(p["source"], p["reason"], strict=True)]


def _settle(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        os.utime(path, (OLD, OLD))


def test_stray_without_marker_or_status_entry_is_left_out(tmp_path):
    camp = _campaign(tmp_path)
    result = parse_paths([camp])
    assert sorted(result.runs["repeat"]) == [1, 2]
    [(name, reason)] = _strays(result)
    assert name == f"{STEM.format(3)}.log"
    assert "no done marker" in reason and "not in status.json" in reason
    summary = result.summary()
    assert summary["repeats"].tolist() == [2]


def test_stray_whose_marker_says_failed(tmp_path):
    camp = _campaign(tmp_path, status=False)
    (camp / "1n1g" / f"{STEM.format(3)}.done").write_text(json.dumps(
        {"ok": False, "state": "failed", "reason": "exit status 1"}))
    result = parse_paths([camp / "1n1g"])
    assert sorted(result.runs["repeat"]) == [1, 2]
    [(_, reason)] = _strays(result)
    assert "done marker says failed (exit status 1)" in reason


def test_a_marker_without_ok_written_by_another_tool_counts(tmp_path):
    """Markers of other tools (``{"rc": 0, "commands": ...}``, no ``ok``) say the run is
    done, as reports read them; only ``"ok": false`` says it failed."""
    camp = _campaign(tmp_path, status=False)
    (camp / "1n1g" / f"{STEM.format(3)}.done").write_text(json.dumps({"rc": 0}))
    result = parse_paths([camp / "1n1g"])
    assert sorted(result.runs["repeat"]) == [1, 2, 3] and _strays(result) == []


def test_status_alone_makes_a_campaign_folder(tmp_path):
    """No markers: runs listed done in status.json count, the others are strays; the folder
    named below the campaign (its status.json in the parent) too."""
    camp = _campaign(tmp_path, markers=False)
    for named in (camp, camp / "1n1g"):
        result = parse_paths([named])
        assert sorted(result.runs["repeat"]) == [1, 2]
        assert [n for n, _ in _strays(result)] == [f"{STEM.format(3)}.log"]


def test_status_pending_is_named(tmp_path):
    camp = _campaign(tmp_path, markers=False)
    doc = json.loads((camp / "status.json").read_text())
    doc["runs"].append({"run_id": f"1n1g/{STEM.format(3)}", "state": "pending"})
    (camp / "status.json").write_text(json.dumps(doc))
    [(_, reason)] = _strays(parse_paths([camp]))
    assert "status.json lists it as pending" in reason


def test_folder_without_markers_or_status_is_read_as_before(tmp_path):
    camp = _campaign(tmp_path, status=False, markers=False)
    result = parse_paths([camp])
    assert sorted(result.runs["repeat"]) == [1, 2, 3]
    assert _strays(result) == []


def test_a_stray_named_on_the_command_line_is_read(tmp_path):
    camp = _campaign(tmp_path)
    result = parse_paths([camp / "1n1g" / f"{STEM.format(3)}.log"])
    assert result.runs["repeat"].tolist() == [3] and _strays(result) == []


def test_summarize_prints_strays_and_strict_fails(tmp_path):
    camp = _campaign(tmp_path)
    cli = [sys.executable, "-m", "analysis", "summarize", "--no-cache"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*cli, str(camp)], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "stray_log" in done.stderr + done.stdout
    strict = subprocess.run([*cli, "--strict", str(camp)], capture_output=True, env=env)
    assert strict.returncode == 3


def test_kept_result_does_not_hide_a_stray_added_later(tmp_path, monkeypatch):
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    camp = _campaign(tmp_path, stray=False)
    _settle(camp)
    assert len(parse_paths([camp], cache=True).runs) == 2
    assert len(parse_paths([camp], cache=True).runs) == 2  # kept
    shutil.copy(SRC / f"{STEM.format(3)}.log", camp / "1n1g")
    _settle(camp)
    result = parse_paths([camp], cache=True)
    assert len(result.runs) == 2 and len(_strays(result)) == 1


def test_kept_result_does_not_hide_a_marker_deleted_later(tmp_path, monkeypatch):
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    camp = _campaign(tmp_path, status=False, stray=False)
    _settle(camp)
    assert len(parse_paths([camp], cache=True).runs) == 2
    (camp / "1n1g" / f"{STEM.format(2)}.done").unlink()
    _settle(camp)
    result = parse_paths([camp], cache=True)
    assert result.runs["repeat"].tolist() == [1]
    assert [n for n, _ in _strays(result)] == [f"{STEM.format(2)}.log"]


def test_kept_result_follows_the_parent_status(tmp_path, monkeypatch):
    """camp/1n1g named: camp/status.json, outside the named folder, still decides."""
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    camp = _campaign(tmp_path, markers=False, stray=False)
    _settle(camp)
    assert len(parse_paths([camp / "1n1g"], cache=True).runs) == 2
    doc = json.loads((camp / "status.json").read_text())
    doc["runs"] = doc["runs"][:1]
    (camp / "status.json").write_text(json.dumps(doc))
    _settle(camp)
    result = parse_paths([camp / "1n1g"], cache=True)
    assert result.runs["repeat"].tolist() == [1] and len(_strays(result)) == 1


@pytest.mark.parametrize("name", ["rn50_4gpu", "gpt_4gpu", "gpt_4gpu_bf16w"])
def test_bundled_campaigns_have_no_strays(name):
    result = parse_paths([ROOT / "data" / "raw_logs" / name])
    assert _strays(result) == []


def test_a_log_planted_with_another_runs_marker_is_a_stray(tmp_path):
    """Run 3's log with run 1's marker copied beside it (its run_id says run 1), and not in
    status.json: it was counted as a third repeat; now a stray naming the marker's run_id."""
    camp = _campaign(tmp_path)
    shutil.copy(SRC / f"{STEM.format(1)}.done", camp / "1n1g" / f"{STEM.format(3)}.done")
    result = parse_paths([camp])
    assert sorted(result.runs["repeat"]) == [1, 2]
    [(name, reason)] = _strays(result)
    assert name == f"{STEM.format(3)}.log"
    assert f"run_id '1n1g/{STEM.format(1)}'" in reason and "not in status.json" in reason


def test_a_copied_marker_is_a_stray_where_status_lists_the_run(tmp_path):
    """The marker is the run's own record: a copy of another run's beside a log is followed
    over a status.json listing the run as done, and the conflict named."""
    camp = _campaign(tmp_path)
    shutil.copy(SRC / f"{STEM.format(1)}.done", camp / "1n1g" / f"{STEM.format(3)}.done")
    status = json.loads((camp / "status.json").read_text())
    status["runs"].append({"run_id": f"1n1g/{STEM.format(3)}", "state": "done"})
    (camp / "status.json").write_text(json.dumps(status))
    result = parse_paths([camp])
    assert sorted(result.runs["repeat"]) == [1, 2]
    [(_, reason)] = _strays(result)
    assert "status.json lists it as done: the two records conflict" in reason
