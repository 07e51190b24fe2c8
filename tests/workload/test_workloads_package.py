"""The built-in workloads live in the top-level ``workloads`` package, apart from the analysis
library: they import only the standard library and torch, and run where ``analysis`` (and its
dependencies) cannot be imported."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import analysis

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = set(sys.stdlib_module_names) | {"__future__", "torch", "workloads"}

#: Run in a child: make every import of `analysis` fail, then run the module named in argv[1]
#: as __main__ with the remaining arguments.
BLOCKED_RUN = """
import importlib.abc, runpy, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "analysis":
            raise ModuleNotFoundError(f"blocked by the test: {name}")
        return None

sys.meta_path.insert(0, Block())
module, sys.argv = sys.argv[1], [sys.argv[1], *sys.argv[2:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def imported_top_names(path: Path) -> set[str]:
    """Top-level names of the absolute imports in one source file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_analysis_holds_no_workload():
    assert not (ROOT / "analysis" / "workload").exists()
    assert importlib.util.find_spec("analysis.workload") is None
    subpackages = {m.name for m in pkgutil.walk_packages(analysis.__path__, "analysis.")}
    assert not [m for m in subpackages if "workload" in m.split(".")[1:] or
                m.startswith("analysis.workload.")]


def test_workloads_import_only_the_standard_library_and_torch():
    files = sorted((ROOT / "workloads").rglob("*.py"))
    assert {"resnet", "gpt"} <= {p.parent.name for p in files}
    bad = {str(p.relative_to(ROOT)): sorted(imported_top_names(p) - ALLOWED) for p in files}
    assert not {k: v for k, v in bad.items() if v}


def run_blocked(module: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", BLOCKED_RUN, module, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


def test_the_block_works():
    proc = run_blocked("analysis.cli", "--help")
    assert proc.returncode != 0 and "blocked by the test: analysis" in proc.stderr


@pytest.mark.slow
def test_resnet_workload_runs_without_the_analysis_library():
    proc = run_blocked("workloads.resnet", "--image-size", "32", "--width", "8", "--batch-size",
                       "2", "--iterations", "3", "--precision", "fp32", "--device", "cpu")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("DLL ") and "PARAMETER " in lines[0]
    assert sum(" Iteration: " in x for x in lines) == 3 and "Summary: " in lines[-1]


def test_gpt_workload_help_without_the_analysis_library():
    proc = run_blocked("workloads.gpt", "--help")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "--tensor-model-parallel-size" in proc.stdout


@pytest.mark.parametrize("module", ["workloads.resnet", "workloads.gpt"])
def test_an_unknown_secret_option_is_named_in_the_log_without_its_value(module, capsys):
    options = importlib.import_module(f"{module}.options")
    with pytest.raises(SystemExit) as exc:
        options.parse_args(["--hf-token", "hf_tok_LEAK_42", "--db-password=pw-LEAK-99", "LEAK"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "LEAK" not in err
    assert "unrecognized arguments: --hf-token --db-password and 3 value(s), not printed" in err
