"""Ctrl-C while worker processes read the logs: one line, status 130, no process left."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

LINE = ("DLL 2026-11-21 10:{m:02d}:{s:02d}.{us:06d} - Epoch: 0 Iteration: {i}  train.loss : 6.5  "
        "train.total_ips : 800.00 img/s")


@pytest.fixture(scope="module")
def many_logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("interrupt")
    (root / "1n1g").mkdir()
    lines = [LINE.format(m=i // 60 % 60, s=i % 60, us=i, i=i) for i in range(1, 4001)]
    text = "\n".join(lines) + "\n"
    for k in range(300):
        (root / "1n1g" / f"r50_b64_amp_{k + 1}.log").write_text(text.replace("800.00", f"{800 + k}.00"))
    return root


def _in_session(sid: int) -> list[int]:
    """Processes of session `sid` (still running or not yet reaped)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:  # after ")": state ppid pgrp session
                out.append(int(entry.name))
    return out


def test_ctrl_c_stops_the_workers_too(dlperf_exe, many_logs, tmp_path):
    proc = subprocess.Popen([dlperf_exe, "parse", str(many_logs), "-o", str(tmp_path / "o.parquet"),
                             "-j", "2", "--no-cache"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(_in_session(proc.pid)) < 2 and proc.poll() is None:  # a worker runs
            assert time.monotonic() < deadline, "no worker process started"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and err.strip() == "dlperf: interrupted", err
    deadline = time.monotonic() + 10
    while _in_session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _in_session(proc.pid) == []
    assert not (tmp_path / "o.parquet").exists()
