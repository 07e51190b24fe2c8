"""ruff and the layer contracts are part of the test suite, so CI keeps them."""

import subprocess
import sys
from pathlib import Path


def test_ruff_check_is_clean(root):
    ruff = Path(sys.executable).parent / "ruff"
    r = subprocess.run([str(ruff), "check", "--output-format", "concise", "analysis", "workloads", "tests",
                        "benchmarks"], cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_layer_contracts_are_kept(root):
    """import-linter (pyproject.toml): e.g. changes never imports report, the node agent
    imports the standard library only."""
    lint = Path(sys.executable).parent / "lint-imports"
    r = subprocess.run([str(lint), "--no-cache"], cwd=root, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and " 0 broken" in r.stdout, r.stdout[-3000:] + r.stderr
