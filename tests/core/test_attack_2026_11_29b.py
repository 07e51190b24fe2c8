"""Inputs of a fifth attack on cases, campaigns and the store: a copied run that lost a line,
a stated global batch the layout path does not give, an inline nvidia-smi block of more GPUs
than the run's, campaigns differing only in argument dumps, an unreadable done marker and
repeats run under other NCCL settings. Built in tmp_path from the bundled ResNet-50 campaign
(data/raw_logs/rn50_4gpu: three repeats on 1 node of 4 GPUs, batch 128)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis.collect import parse_paths

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"


def _kinds(result) -> list[str]:
    return list(result.problems["kind"])


def _logs_only(tmp_path: Path, runs=(1, 2, 3)) -> Path:
    folder = tmp_path / "1n4g"
    folder.mkdir(parents=True)
    for i in runs:
        shutil.copy(RN50 / f"{STEM}{i}.log", folder)
    return folder


# --- 5. a copy of a run that lost one line -------------------------------------------------

@pytest.mark.parametrize("lost", ["last", "PARAMETER"])
def test_a_copy_that_lost_a_line_is_one_run(tmp_path, lost):
    """The copy of run 1 as run 4, less its Summary line or its PARAMETER header, was counted
    as a fourth repeat: its training lines are run 1's, stamp for stamp."""
    folder = _logs_only(tmp_path)
    lines = (folder / f"{STEM}1.log").read_text().splitlines(keepends=True)
    kept = lines[:-1] if lost == "last" else [ln for ln in lines if "PARAMETER" not in ln]
    assert len(kept) == len(lines) - 1
    (folder / f"{STEM}4.log").write_text("".join(kept))
    result = parse_paths([tmp_path], cache=False)
    assert sorted(result.runs["run_id"]) == [f"1n4g/{STEM}{i}" for i in (1, 2, 3)]
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    assert len(dup) == 1
    assert dup["source"].iloc[0].endswith(f"{STEM}4.log")
    assert f"{STEM}1.log" in dup["reason"].iloc[0]


def test_a_rerun_with_other_stamps_is_another_repeat(tmp_path):
    """The same lines an hour later (another run of the same job) stay a repeat of their own."""
    folder = _logs_only(tmp_path, (1,))
    text = (folder / f"{STEM}1.log").read_text()
    (folder / f"{STEM}2.log").write_text(text.replace("2026-11-21 20:", "2026-11-21 21:"))
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 2
    assert "duplicate_run" not in _kinds(result)
