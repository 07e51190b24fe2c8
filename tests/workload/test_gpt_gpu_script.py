"""The CPU-runnable parts of benchmarks/gpt_gpu.py (the GPT timing script run on an H200)."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gg():
    spec = importlib.util.spec_from_file_location("gpt_gpu", ROOT / "benchmarks" / "gpt_gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_case_names_add_technique_suffixes(gg):
    assert gg.case_argv("compile32x2-bp-lc") == (1, [
        "--micro-batch-size", "32", "--global-batch-size", "64", "--compile",
        "--param-dtype", "bf16", "--loss-chunk-tokens", "16384"])
    assert gg.case_argv("dp2-compile8-flash") == (2, [
        "--micro-batch-size", "8", "--compile", "--sdpa-backend", "flash"])
    with pytest.raises(SystemExit, match="unknown case 'compile8-nope'"):
        gg.case_argv("compile8-nope")


def _gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.timeout(60)
def test_a_command_past_its_time_limit_ends_with_its_children(gg):
    """torchrun's workers are grandchildren of the script: killing torchrun alone would
    leave a worker holding the GPU while the next case starts."""
    child = ("import subprocess, sys, time; "
             "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
             "print(p.pid, flush=True); time.sleep(120)")
    t0 = time.monotonic()
    rc, text = gg.run_command([sys.executable, "-c", child], dict(os.environ), timeout_s=3)
    assert rc is None and time.monotonic() - t0 < 30
    assert _gone(int(text.split()[0]))


def test_a_command_within_its_time_limit_gives_its_exit_status_and_output(gg):
    rc, text = gg.run_command([sys.executable, "-c", "print('out'); import sys; sys.exit(3)"],
                              dict(os.environ), timeout_s=60)
    assert (rc, text.strip()) == (3, "out")
