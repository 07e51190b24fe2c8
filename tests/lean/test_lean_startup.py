"""`dlperf summarize` on logs the lean lane reads imports neither pandas nor numpy (issue 10:
pandas alone costs more than the extract scripts' whole run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ._corpus import write_corpus

ROOT = Path(__file__).resolve().parents[2]


def _modules(args: list[str]) -> tuple[set[str], str]:
    code = ("import json, sys\nfrom analysis.cli import main\n"
            f"main({args!r})\nprint(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    *text, mods = out.splitlines()
    return set(json.loads(mods)), "\n".join(text)


def test_the_lean_lane_imports_no_pandas_and_no_numpy(tmp_path):
    # seed 2: repeats within 5 % of each other (a wider spread is flagged by the full path)
    root = write_corpus(tmp_path / "logs", files=10, iterations=130, seed=2)
    mods, text = _modules(["summarize", str(root), "--no-cache", "--format", "csv"])
    assert "PyTorch" in text
    assert not {"pandas", "numpy", "pyarrow", "yaml"} & mods


def test_the_full_path_still_runs_when_the_lane_steps_aside(tmp_path):
    root = write_corpus(tmp_path / "logs", files=5, iterations=130)
    (root / "pytorch" / "1n1g" / "notes.log").write_text("not a log\n")
    mods, text = _modules(["summarize", str(root), "--no-cache", "--format", "csv"])
    assert "pandas" in mods and "PyTorch" in text
