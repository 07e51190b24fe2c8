"""Item 10: faults reach the user as one clear line with the right exit status, never as a
traceback, and never leave a half-written file behind."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import cli

from ._helpers import ONE_RUN_DIR, ROOT, assert_one_clean_line, run_cli

TOPO = ROOT / "tests" / "data" / "topology"


def _some_topology_file():
    return next(p for p in sorted(TOPO.rglob("*.txt")))


def test_unwritable_output_is_one_line_naming_it(dlperf_exe, tmp_path):
    r = run_cli(dlperf_exe, "parse", ONE_RUN_DIR, "-o", "/proc/dlperf-no-such-dir/obs.csv")
    assert r.returncode == 1
    assert_one_clean_line(r.stderr, "/proc/dlperf-no-such-dir: No such file or directory")


def test_output_on_a_folder_is_one_line(dlperf_exe, tmp_path):
    r = run_cli(dlperf_exe, "env", "-o", tmp_path, "--timeout", "2")
    assert r.returncode == 1
    assert_one_clean_line(r.stderr, str(tmp_path), "Is a directory")
    assert list(tmp_path.iterdir()) == []


def test_file_size_limit_fails_cleanly_and_leaves_no_partial_file(dlperf_exe, tmp_path):
    """A write that fails half-way (RLIMIT_FSIZE: EFBIG) leaves neither the output nor a
    temporary file."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    out = tmp_path / "obs.csv"
    r = run_cli(dlperf_exe, "parse", ONE_RUN_DIR, "-o", out, preexec_fn=limit)
    assert r.returncode == 1
    assert_one_clean_line(r.stderr, str(out), "File too large")
    assert list(tmp_path.iterdir()) == []


def _can_mount_in_a_namespace(folder) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "tmpfs", str(folder)],
                           capture_output=True)
    return probe.returncode == 0


def test_full_disk_fails_cleanly_and_leaves_no_partial_file(dlperf_exe, tmp_path):
    """A real full disk: a 128 KiB tmpfs in a private mount namespace (ENOSPC)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not _can_mount_in_a_namespace(mnt):
        pytest.fail("cannot mount a tmpfs in a private mount namespace: run the tests as root "
                    "on a machine where `unshare -m` works (util-linux, installed by make setup)")
    script = ('mount -t tmpfs -o size=128k tmpfs "$1" || exit 99; '
              '"$2" parse "$3" -o "$1/obs.csv"; echo "rc=$?"; ls -A "$1"')
    r = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(mnt), dlperf_exe,
                        str(ONE_RUN_DIR)], capture_output=True, text=True, timeout=180)
    assert r.stdout.strip().splitlines() == ["rc=1"], r.stdout  # and the tmpfs is empty
    assert_one_clean_line(r.stderr, f"{mnt}/obs.csv", "No space left on device")


def test_ctrl_c_is_one_line_and_status_130(tmp_path):
    """A real SIGINT while `dlperf topo -` waits for its input."""
    code = ("import os, signal, sys, threading\n"
            "from analysis.cli import main\n"
            "threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
            "sys.exit(main(['topo', '-']))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    try:
        proc.wait(timeout=120)  # stdin stays open: only the signal ends the read
        err = proc.stderr.read()
    finally:
        proc.kill()
        proc.stdin.close()
    assert proc.returncode == 130, err
    assert err.strip() == "dlperf: interrupted"


def _wait_until_reading_a_pipe(pid: int, limit_s: float = 60) -> None:
    """Until the process sleeps in a pipe read (its start-up is over)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        if "pipe_read" in wchan or "pipe_wait" in wchan:
            return
        time.sleep(0.1)
    raise AssertionError(f"process {pid} never waited on its input (wchan {wchan!r})")


def test_sigint_to_the_console_script(dlperf_exe):
    proc = subprocess.Popen([dlperf_exe, "topo", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until_reading_a_pipe(proc.pid)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err.strip() == "dlperf: interrupted", err


def test_reader_gone_is_quiet(dlperf_exe):
    """`dlperf topo FILE | (exit)`: stdout closed before dlperf writes."""
    proc = subprocess.Popen([dlperf_exe, "topo", _some_topology_file()], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 1 and err == "", err


def test_non_utf8_output_name_is_printed_escaped(dlperf_exe, tmp_path):
    out = os.fsdecode(bytes(tmp_path) + b"/obs\xff.csv")
    r = subprocess.run([dlperf_exe, "parse", str(ONE_RUN_DIR), "-o", out], capture_output=True,
                       timeout=180)
    assert r.returncode == 0, r.stderr
    assert b"obs\\xff.csv" in r.stdout and b"Traceback" not in r.stderr


def test_a_bug_is_one_line_unless_debugging(monkeypatch, capsys, data_dir):
    from analysis.cli import topo

    def broken(args):
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(topo, "run", broken)  # stands for any bug in a subcommand
    assert cli.main(["topo", "-"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == ["dlperf: internal error: ZeroDivisionError: division by zero "
                                "(run with DLPERF_DEBUG=1 for the traceback)"]
    monkeypatch.setenv("DLPERF_DEBUG", "1")
    assert cli.main(["topo", "-"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err


@pytest.mark.parametrize("fmt", ["markdown", "csv"])
def test_full_disk_behind_stdout_is_one_line(dlperf_exe, fmt):
    with open("/dev/full", "w") as full:
        r = subprocess.run([dlperf_exe, "topo", str(_some_topology_file()), "--format", fmt],
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1
    assert_one_clean_line(r.stderr, "No space left on device")
