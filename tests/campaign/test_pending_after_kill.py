"""A runner killed mid-campaign leaves status.json as it last wrote it: a run it finished
since still reads `pending` there, and its done marker is the record that counts."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.env.folder_records import load_campaign


def test_a_finished_run_is_not_pending_whatever_status_json_says(tmp_path: Path):
    """Run 1 finished (its marker and log), run 2 cut off (a partial log), run 3 never
    started; status.json, written at the start, lists all three pending: the report said
    all 3 "never started" beside run 1's figure (attack83 killrep)."""
    runs = [f"1n1g/resnet50_b128_amp_{k}" for k in (1, 2, 3)]
    (tmp_path / "status.json").write_text(json.dumps(
        {"runs": [{"run_id": r, "state": "pending"} for r in runs]}))
    (tmp_path / "1n1g").mkdir()
    (tmp_path / f"{runs[0]}.log").write_text("a finished log\n")
    (tmp_path / f"{runs[0]}.done").write_text(json.dumps(
        {"run_id": runs[0], "ok": True, "state": "done"}))
    (tmp_path / f"{runs[1]}.log.partial").write_text("cut off\n")
    camp = load_campaign(tmp_path)
    assert camp.planned == 3
    assert camp.pending == runs[1:]
