"""The one way DLPerf Suite runs an external command.

Every external program (nvidia-smi, lscpu, ssh, sbatch, torchrun, ...) goes through
:func:`run_command`: an argument list (never a shell string), a timeout that kills the whole
process group, and, on failure, a :class:`CommandError` that carries the command, its output and
its exit code.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from analysis.errors import DLPerfError, UsageError

#: How much of stdout/stderr an error message quotes (the attributes keep all of it).
_MESSAGE_TAIL = 2000


@dataclass(frozen=True)
class CompletedCommand:
    """A command that ran to its end (whatever its exit code, when ``check=False``)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class CommandError(DLPerfError):
    """An external command failed, timed out or could not be started.

    ``argv`` is the argument list, ``returncode`` the exit status (``None`` when the command did
    not end by itself), ``stdout``/``stderr`` what it printed before it ended.
    """

    def __init__(self, argv: Sequence[str], returncode: int | None, stdout: str = "",
                 stderr: str = "", reason: str | None = None):
        self.argv = tuple(argv)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.reason = reason or f"exited with code {returncode}"
        msg = f"command `{self.command}` {self.reason}"
        detail = (stderr.strip() or stdout.strip())[-_MESSAGE_TAIL:]
        if detail:
            msg += "\n    " + detail.replace("\n", "\n    ")
        super().__init__(msg)

    @property
    def command(self) -> str:
        """The command as one shell-quoted line, for messages only."""
        return shlex.join(self.argv)


class CommandNotFoundError(CommandError):
    """The program does not exist (not on PATH, or the path is wrong)."""


class CommandTimeoutError(CommandError):
    """The command ran past its timeout and was killed with its process group."""

    def __init__(self, argv: Sequence[str], timeout: float, stdout: str = "", stderr: str = ""):
        super().__init__(argv, None, stdout, stderr, reason=f"timed out after {timeout:g} s")
        self.timeout = timeout


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def _check_argv(argv: Sequence[str]) -> tuple[str, ...]:
    if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence):
        raise UsageError(f"run_command needs an argument list, not {type(argv).__name__} {argv!r}")
    if not argv:
        raise UsageError("run_command needs a non-empty argument list")
    bad = [a for a in argv if not isinstance(a, (str, os.PathLike))]
    if bad:
        raise UsageError(f"run_command arguments must be strings; got {bad!r} in {list(argv)!r}")
    return tuple(os.fspath(a) for a in argv)


def _kill_group(proc: subprocess.Popen) -> None:
    # The command runs in its own session, so its children (a shell's pipeline, a launcher's
    # workers) die with it and cannot keep our pipes open.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def run_command(argv: Sequence[str], timeout: float, check: bool = True,
                env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None,
                input: str | None = None) -> CompletedCommand:
    """Run ``argv`` (no shell) and return what it printed.

    ``timeout`` is in seconds; past it the command and its children are killed and
    :class:`CommandTimeoutError` is raised. ``env`` replaces the whole environment when given.
    With ``check`` (default) a non-zero exit raises :class:`CommandError`; a missing program
    always raises :class:`CommandNotFoundError`.
    """
    args = _check_argv(argv)
    if not timeout or timeout <= 0:
        raise UsageError(f"run_command timeout must be a positive number of seconds, not {timeout!r}")
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            args, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True)
    except FileNotFoundError as exc:
        raise CommandNotFoundError(args, None, reason=f"cannot be started: {exc.strerror}") from None
    except (PermissionError, OSError) as exc:
        raise CommandError(args, None, reason=f"cannot be started: {exc}") from None
    data = input.encode() if input is not None else None
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a grandchild escaped the group and holds a pipe
            out, err = b"", b""
        raise CommandTimeoutError(args, timeout, _text(out), _text(err)) from None
    result = CompletedCommand(args, proc.returncode, _text(out), _text(err),
                              time.monotonic() - start)
    if check and result.returncode != 0:
        raise CommandError(args, result.returncode, result.stdout, result.stderr)
    return result
