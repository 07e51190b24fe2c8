"""`analysis.shell.run_command`: the one wrapper for external commands."""

from __future__ import annotations

import os
import sys
import time

import pytest

from analysis.errors import DLPerfError, UsageError
from analysis.shell import (
    CommandError,
    CommandNotFoundError,
    CommandTimeoutError,
    CompletedCommand,
    run_command,
)

PY = sys.executable


def test_success_returns_output_and_exit_code():
    res = run_command([PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)"], 30)
    assert isinstance(res, CompletedCommand)
    assert (res.returncode, res.stdout, res.stderr, res.ok) == (0, "out\n", "err\n", True)
    assert res.argv == (PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)")
    assert res.duration_s > 0


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


def test_input_is_sent_to_stdin():
    res = run_command([PY, "-c", "import sys; print(sys.stdin.read().upper())"], 30, input="abc")
    assert res.stdout == "ABC\n"


@pytest.mark.parametrize("argv", ["nvidia-smi topo -m", b"ls", [], ["ls", 3]])
def test_argv_must_be_a_list_of_strings(argv):
    with pytest.raises(UsageError, match="run_command"):
        run_command(argv, 5)


def test_timeout_must_be_positive():
    with pytest.raises(UsageError, match="timeout must be a positive"):
        run_command(["true"], 0)
