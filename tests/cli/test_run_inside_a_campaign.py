"""`dlperf run -o OUT` refuses an OUT inside another campaign's folder (one above it holding a
campaign status.json), before anything runs or moves: that campaign accounts for every log
under it, so a second campaign written into its subfolder was read as taking over its logs.
OUT itself a campaign folder (a resume) is still run."""

from __future__ import annotations

import json

import pytest
import yaml

from ._helpers import assert_one_clean_line, run_cli
from .test_outputs_outside_stores import _snapshot

STATUS = {"campaign": "outer", "runs": [
    {"run_id": "1n1g/resnet50_b2_fp32_1", "state": "done", "log": "1n1g/resnet50_b2_fp32_1.log"}]}


@pytest.fixture
def outer(tmp_path):
    """tmp_path/C, a campaign folder (status.json, a log), and a tiny CPU campaign spec."""
    camp = tmp_path / "C"
    (camp / "1n1g").mkdir(parents=True)
    (camp / "status.json").write_text(json.dumps(STATUS))
    (camp / "1n1g" / "resnet50_b2_fp32_1.log").write_text("a log\n")
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump({
        "name": "tiny", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [2],
        "devices": ["1n1g"], "repeats": 1, "iterations": 8, "retries": 0, "timeout": 240}))
    return tmp_path


@pytest.mark.parametrize("out, options", [("C/1n1g", []), ("C/1n1g", ["--fresh"]),
                                          ("C/old/x", []), ("C/1n1g", ["--dry-run"]),
                                          ("link/x", [])])
def test_run_refuses_an_output_folder_inside_a_campaign(dlperf_exe, outer, out, options):
    (outer / "link").symlink_to(outer / "C")
    before = _snapshot(outer / "C")
    r = run_cli(dlperf_exe, "run", outer / "spec.yaml", "-o", outer / out, "--no-progress",
                *options, timeout=600)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert_one_clean_line(r.stderr, "inside the campaign folder", str(outer / "C"))
    assert _snapshot(outer / "C") == before and sorted(p.name for p in outer.iterdir()) == [
        "C", "link", "spec.yaml"]


def test_run_resumes_into_a_campaign_folder_itself(dlperf_exe, outer):
    """The campaign folder itself is no folder inside another campaign's: its plan is run."""
    (outer / "C" / "status.json").write_text(json.dumps({"campaign": "tiny", "runs": []}))
    (outer / "C" / "1n1g" / "resnet50_b2_fp32_1.log").unlink()
    r = run_cli(dlperf_exe, "run", outer / "spec.yaml", "-o", outer / "C", "--dry-run")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "inside the campaign folder" not in r.stderr


@pytest.mark.parametrize("held, out", [("C", "C/1n1g"), ("C/1n1g", "C")])
def test_run_refuses_a_folder_above_or_below_one_another_run_holds(dlperf_exe, tmp_path, held,
                                                                   out):
    """Two `dlperf run`, one into a folder inside the other's, started at the same moment:
    neither has written its status.json when the other looks, but each holds its folder's
    lock from its start, so the later to take it is refused and leaves nothing behind."""
    from analysis.campaign.records import campaign_lock

    (tmp_path / "spec.yaml").write_text(yaml.safe_dump({
        "name": "tiny", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [2],
        "devices": ["1n1g"], "repeats": 1, "iterations": 8, "retries": 0, "timeout": 240}))
    with campaign_lock(tmp_path / held):
        before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
        r = run_cli(dlperf_exe, "run", tmp_path / "spec.yaml", "-o", tmp_path / out,
                    "--no-progress", timeout=600)
        after = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert r.returncode != 0, (r.stdout, r.stderr)
    assert_one_clean_line(r.stderr, "another `dlperf run`", str(tmp_path / held),
                          "would write each other's logs")
    assert after == before
