"""The one way DLPerf Suite runs an external command.

Every external program (nvidia-smi, lscpu, ssh, sbatch, torchrun, ...) goes through this module,
always as an argument list (never a shell string):

- :func:`run_command` runs a command to its end: a timeout that kills the whole process group,
  and, on failure, a :class:`CommandError` that carries the command, its output and exit code;
- :func:`start_process` starts a long-running child (a node agent, a workload, a sampler) and
  returns a :class:`Process` to poll, wait for or stop while the caller does other work.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
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


#: Where a child's stream goes besides a file object: nowhere, a pipe read by
#: :meth:`Process.communicate`, or (stderr only) the same place as stdout.
DEVNULL, PIPE, STDOUT = subprocess.DEVNULL, subprocess.PIPE, subprocess.STDOUT


class Process:
    """A child started by :func:`start_process`; it runs until it ends or is stopped."""

    def __init__(self, popen: subprocess.Popen, argv: tuple[str, ...], new_session: bool):
        self._popen, self.argv, self._group = popen, argv, new_session

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once ended (``-N`` when killed by signal N), else ``None``."""
        return self._popen.returncode

    def poll(self) -> int | None:
        return self._popen.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait up to `timeout` seconds (forever when ``None``); the exit status, or ``None``
        when it is still running."""
        try:
            return self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def send(self, data: bytes) -> None:
        """Write `data` to the child's stdin (started with ``stdin=PIPE``) and flush it."""
        self._popen.stdin.write(data)
        self._popen.stdin.flush()

    def close_stdin(self) -> None:
        """Close the child's stdin (it reads EOF); nothing when it has none or it is closed."""
        if self._popen.stdin is not None:
            try:
                self._popen.stdin.close()
            except OSError:  # the child is gone: a broken pipe
                pass
            self._popen.stdin = None  # communicate() would flush the closed file

    def kill(self) -> None:
        """SIGKILL the child (and its process group when started in a new session)."""
        if self._popen.poll() is not None:
            return
        if self._group:
            # its children (a shell's pipeline, a launcher's workers) die with it and cannot
            # keep our pipes open
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._popen.pid, signal.SIGKILL)
                return
        self._popen.kill()

    def communicate(self, timeout: float) -> tuple[str, str]:
        """Wait for the end and return what went to ``PIPE`` streams (as text); past `timeout`
        the child is killed and :class:`CommandTimeoutError` is raised."""
        try:
            out, err = self._popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            out, err = _drain(self._popen)
            raise CommandTimeoutError(self.argv, timeout, _text(out), _text(err)) from None
        return _text(out), _text(err)


def start_process(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                  cwd: str | os.PathLike | None = None, stdout=None, stderr=None,
                  new_session: bool = False, stdin=DEVNULL) -> Process:
    """Start ``argv`` (no shell) and return at once.

    stdin is ``/dev/null``, or with ``stdin=PIPE`` a pipe fed by :meth:`Process.send`;
    `stdout`/`stderr` are ``None`` (inherited), a binary file object,
    :data:`DEVNULL`, :data:`PIPE` or (stderr) :data:`STDOUT`. ``env`` replaces the whole
    environment when given. ``new_session`` puts the child in its own session, so that
    :meth:`Process.kill` stops its process group and a terminal's Ctrl-C does not reach it.
    A program that cannot be started raises :class:`CommandNotFoundError` / :class:`CommandError`.
    """
    args = _check_argv(argv)
    if stdin not in (DEVNULL, PIPE):
        raise UsageError(f"start_process stdin must be DEVNULL or PIPE, not {stdin!r}")
    try:
        popen = subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=stderr,
                                 env=dict(env) if env is not None else None, cwd=cwd,
                                 start_new_session=new_session)
    except (FileNotFoundError, NotADirectoryError) as exc:
        if cwd is not None and not os.path.isdir(cwd):  # not the program: its folder is missing
            raise CommandError(args, None, reason=f"cannot be started: its working directory "
                                                  f"{os.fspath(cwd)!r} does not exist") from None
        raise CommandNotFoundError(args, None, reason=f"cannot be started: {exc.strerror}") from None
    except OSError as exc:
        raise CommandError(args, None, reason=f"cannot be started: {exc}") from None
    return Process(popen, args, new_session)


def _drain(proc: subprocess.Popen) -> tuple[bytes | None, bytes | None]:
    """What a killed child printed; nothing when a grandchild escaped its group and still
    holds a pipe."""
    try:
        return proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        return b"", b""


def run_command(argv: Sequence[str], timeout: float, check: bool = True,
                env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None
                ) -> CompletedCommand:
    """Run ``argv`` (no shell) and return what it printed.

    ``timeout`` is in seconds; past it the command and its children are killed and
    :class:`CommandTimeoutError` is raised. ``env`` replaces the whole environment when given.
    With ``check`` (default) a non-zero exit raises :class:`CommandError`; a missing program
    always raises :class:`CommandNotFoundError`.
    """
    if not timeout or timeout <= 0:
        raise UsageError(f"run_command timeout must be a positive number of seconds, not {timeout!r}")
    proc = start_process(argv, env=env, cwd=cwd, stdout=PIPE, stderr=PIPE, new_session=True)
    out, err = proc.communicate(timeout)
    if check and proc.returncode != 0:
        raise CommandError(proc.argv, proc.returncode, out, err)
    return CompletedCommand(proc.argv, proc.returncode, out, err)
