"""ruff is part of the test suite, so CI keeps the code lint-clean."""

import subprocess
import sys
from pathlib import Path


def test_ruff_check_is_clean(root):
    ruff = Path(sys.executable).parent / "ruff"
    r = subprocess.run([str(ruff), "check", "--output-format", "concise", "analysis", "workloads", "tests",
                        "benchmarks"], cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
