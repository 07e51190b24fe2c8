"""Resuming a campaign folder that holds stray logs (no done marker or ``status.json`` names
them: planted, or left by an earlier campaign) says on stderr, in one line, which files they
are and that they are not counted, as ``dlperf summarize`` leaves them out (``stray_log``);
a folder without strays says nothing of them (real processes of the test workload in
sleeper.py, on the local backend)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)
import yaml

from analysis.cli import main
from analysis.collect import parse_paths

pytestmark = pytest.mark.slow

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"
NOTE = "stray file(s) in"


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "strays", "workload": "test_sleeper", "precisions": ["fp32"],
        "batch_sizes": [1], "devices": ["1n1g"], "repeats": 1, "iterations": 150,
        "retries": 0, "options": {"marker": f"dlperf-t-{uuid.uuid4().hex[:8]}",
                                  "seconds": 0.2}}))
    return spec


def _run(spec: Path, out: Path, capsys) -> str:
    assert main(["run", str(spec), "-o", str(out), "--no-progress"]) == 0
    return capsys.readouterr().err


def test_a_resume_names_the_stray_logs_it_does_not_count(tmp_path, capsys):
    spec, out = _spec(tmp_path), tmp_path / "out"
    assert NOTE not in _run(spec, out, capsys)
    assert NOTE not in _run(spec, out, capsys)  # a clean resume: no stray, nothing said
    planted = sorted(BUNDLED.glob("*_fp32_*.log"))  # 5 logs of an earlier campaign
    for log in planted:
        shutil.copy(log, out / "1n1g" / log.name)
    (out / "old.log").write_text(planted[0].read_text())
    err = _run(spec, out, capsys)
    # before: nothing said of them
    lines = [line for line in err.splitlines() if NOTE in line]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"strays: 6 stray file(s) in {out} that no done marker or "
                               "status.json names, not counted as this campaign's runs: ")
    named = lines[0].split("runs: ", 1)[1]
    assert named.endswith(", … (6 in all)") and named.count(".log") == 5
    shown = named.removesuffix(", … (6 in all)").split(", ")
    every = {"old.log", *(f"1n1g/{log.name}" for log in planted)}
    assert set(shown) < every and len(shown) == 5
    # summarize leaves the same files out as strays
    problems = parse_paths([out], cache=False).problems
    assert set(problems.loc[problems["kind"] == "stray_log", "source"]) == {
        str(out / name) for name in every}
