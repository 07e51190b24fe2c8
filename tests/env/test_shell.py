"""`analysis.shell`: the one wrapper for external commands (run_command, start_process)."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from analysis.errors import DLPerfError, UsageError
from analysis.shell import (
    PIPE,
    STDOUT,
    CommandError,
    CommandNotFoundError,
    CommandTimeoutError,
    CompletedCommand,
    run_command,
    start_process,
)

PY = sys.executable


def test_success_returns_output_and_exit_code():
    res = run_command([PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)"], 30)
    assert isinstance(res, CompletedCommand)
    assert (res.returncode, res.stdout, res.stderr, res.ok) == (0, "out\n", "err\n", True)
    assert res.argv == (PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)")


def test_failure_error_carries_command_output_and_exit_code():
    argv = [PY, "-c", "import sys; print('partial'); sys.exit('boom: bad flag')"]
    with pytest.raises(CommandError) as info:
        run_command(argv, 30)
    err = info.value
    assert isinstance(err, DLPerfError)
    assert err.argv == tuple(argv) and err.returncode == 1
    assert err.stdout == "partial\n" and err.stderr == "boom: bad flag\n"
    assert "exited with code 1" in str(err) and "boom: bad flag" in str(err)
    assert err.command.startswith(PY) and "sys.exit" in str(err)


def test_check_false_returns_the_failure():
    res = run_command([PY, "-c", "raise SystemExit(7)"], 30, check=False)
    assert res.returncode == 7 and not res.ok


def test_missing_program():
    with pytest.raises(CommandNotFoundError) as info:
        run_command(["no-such-tool-dlperf", "--version"], 5)
    assert info.value.returncode is None
    assert "no-such-tool-dlperf --version" in str(info.value)


def test_timeout_kills_the_process_group_and_keeps_partial_output(tmp_path):
    pidfile = tmp_path / "child.pid"
    # a shell whose child (sleep) would keep our pipes open if only the shell were killed
    script = f"echo started; sleep 60 & echo $! > {pidfile}; wait"
    t0 = time.monotonic()
    with pytest.raises(CommandTimeoutError) as info:
        run_command(["sh", "-c", script], 1.0)
    assert time.monotonic() - t0 < 8
    err = info.value
    assert err.timeout == 1.0 and err.returncode is None
    assert err.stdout == "started\n" and err.argv[0] == "sh"
    assert "timed out after 1 s" in str(err)
    child = int(pidfile.read_text())
    for _ in range(50):  # the kill is asynchronous: give the kernel a moment
        if not _alive(child):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"grandchild {child} survived the timeout")


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie waiting for its (late) reaper counts as dead."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_env_and_cwd(tmp_path):
    res = run_command([PY, "-c", "import os; print(os.environ['ONLY'], os.getcwd())"], 30,
                      env={"ONLY": "this", "PATH": os.environ.get("PATH", "")}, cwd=tmp_path)
    assert res.stdout.split() == ["this", str(tmp_path)]


@pytest.mark.parametrize("argv", ["nvidia-smi topo -m", b"ls", [], ["ls", 3]])
def test_argv_must_be_a_list_of_strings(argv):
    with pytest.raises(UsageError, match="run_command"):
        run_command(argv, 5)


def test_timeout_must_be_positive():
    with pytest.raises(UsageError, match="timeout must be a positive"):
        run_command(["true"], 0)


def test_start_process_returns_at_once_and_reports_the_exit(tmp_path):
    out = tmp_path / "out.txt"
    t0 = time.monotonic()
    with open(out, "wb") as f:
        proc = start_process([PY, "-c", "import sys, time; time.sleep(1); print('o'); "
                                        "print('e', file=sys.stderr); sys.exit(4)"],
                             stdout=f, stderr=STDOUT)
    assert time.monotonic() - t0 < 0.9 and proc.poll() is None and proc.returncode is None
    assert proc.wait(0.05) is None  # still running
    assert proc.wait() == 4 and proc.returncode == 4
    assert sorted(out.read_text().split()) == ["e", "o"]


def test_start_process_stdin_is_closed_and_pipes_are_text():
    proc = start_process([PY, "-c", "import sys; print(repr(sys.stdin.read())); "
                                    "print('warn', file=sys.stderr)"], stdout=PIPE, stderr=PIPE)
    assert proc.communicate(30) == ("''\n", "warn\n")


def test_start_process_missing_program_and_bad_argv():
    with pytest.raises(CommandNotFoundError, match="no-such-tool-dlperf"):
        start_process(["no-such-tool-dlperf"])
    with pytest.raises(UsageError):
        start_process("sleep 1")


def test_start_process_kill_stops_its_session(tmp_path):
    pidfile = tmp_path / "child.pid"
    proc = start_process(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], new_session=True)
    for _ in range(100):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.05)
    proc.kill()
    assert proc.wait(10) == -9
    child = int(pidfile.read_text())
    for _ in range(50):
        if not _alive(child):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"grandchild {child} survived kill()")


def test_communicate_past_its_timeout_kills_and_raises():
    proc = start_process([PY, "-c", "import time; print('started', flush=True); time.sleep(60)"],
                         stdout=PIPE, stderr=PIPE, new_session=True)
    with pytest.raises(CommandTimeoutError) as info:
        proc.communicate(1.0)
    assert info.value.stdout == "started\n" and proc.returncode == -9


def test_shell_is_the_only_module_that_starts_processes():
    """Every external command of the package goes through analysis.shell (issue 9, item 23)."""
    root = Path(__file__).resolve().parents[2] / "analysis"
    starts = re.compile(r"\bsubprocess\b|\bos\.(system|popen|spawn\w*|exec\w*|fork)\b"
                        r"|\bpty\.spawn\b|asyncio\.create_subprocess")
    offenders = [f"{p.relative_to(root.parent)}:{n}" for p in sorted(root.rglob("*.py"))
                 if p.name != "shell.py"
                 for n, line in enumerate(p.read_text().splitlines(), 1) if starts.search(line)]
    assert offenders == []


def test_start_process_stdin_pipe_is_fed_and_closed():
    """stdin=PIPE: what send() writes reaches the child, close_stdin() gives it EOF (the ssh
    backend sends the environment so, and the remote agent stops at EOF)."""
    p = start_process([PY, "-c", "import sys; print(sys.stdin.readline().strip()); "
                                 "print(sys.stdin.read() == '')"], stdin=PIPE, stdout=PIPE)
    p.send(b"hello\n")
    p.close_stdin()
    p.close_stdin()  # twice is fine
    out, _ = p.communicate(30)
    assert out.split() == ["hello", "True"] and p.returncode == 0
    with pytest.raises(UsageError, match="stdin must be DEVNULL or PIPE"):
        start_process([PY, "-c", "pass"], stdin=STDOUT)
