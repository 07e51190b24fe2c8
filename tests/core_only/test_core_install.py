"""The core install (numpy, pandas, pyarrow, pyyaml, pydantic) runs parse, summarize, compare,
check, store and a campaign's dry run: none of them may need an optional extra (matplotlib,
babel, papermill, ...). .ci/run also runs this file in a venv that has only the core."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import analysis.changes

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("run_without_extras.py")
CAMPAIGN = "data/raw_logs/rn50_4gpu"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RUNNER), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_the_comparison_layer_imports_without_the_report_extra():
    modules = [f"analysis.changes.{m.name}" for m in pkgutil.iter_modules(analysis.changes.__path__)]
    done = _run("--import", "analysis.collect", "analysis.stats", "analysis.env.folder_records",
                "analysis.env.describe", *modules)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args", [
    ["summarize", CAMPAIGN],
    ["parse", CAMPAIGN, "-o", "{tmp}/runs.parquet"],
    ["compare", CAMPAIGN, CAMPAIGN],
    ["check", CAMPAIGN, "--references", "examples/references/dlperf_pytorch_resnet50_v100.yaml"],
    ["store", "add", CAMPAIGN, "--store", "{tmp}/store"],
    ["run", "examples/campaigns/smoke.yaml", "--dry-run"],
], ids=lambda a: a[0] if a[0] != "store" else "store-add")
def test_core_commands_run_on_the_bundled_campaign(tmp_path, args):
    done = _run(*(a.format(tmp=tmp_path) for a in args))
    assert done.returncode in (0, 1), done.stderr  # check/compare may say "slower" (1)
    assert "internal error" not in done.stderr and "not installed" not in done.stderr, done.stderr
    assert done.stdout.strip()


def test_store_list_and_trend_after_an_add(tmp_path):
    assert _run("store", "add", CAMPAIGN, "--store", str(tmp_path)).returncode == 0
    for action in ("list", "trend"):
        done = _run("store", action, "--store", str(tmp_path))
        assert done.returncode == 0 and "not installed" not in done.stderr, done.stderr
