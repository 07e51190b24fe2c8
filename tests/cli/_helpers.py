"""Helpers of the CLI tests: run the installed `dlperf` console script for real."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "data" / "raw_logs" / "rn50_4gpu"
ONE_RUN_DIR = CAMPAIGN / "1n1g"


def run_cli(exe: str, *args, **kwargs) -> subprocess.CompletedProcess:
    """`dlperf ARGS` in a child process; text output captured."""
    kwargs.setdefault("timeout", 180)
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, **kwargs)


def assert_one_clean_line(stderr: str, *needles: str) -> None:
    """stderr is one `dlperf: …` line holding every needle, and no traceback."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dlperf: "), stderr
    for needle in needles:
        assert needle in lines[0], (needle, stderr)
