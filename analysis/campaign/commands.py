"""External commands and their text: the one command wrapper and shell quoting.

``run_command`` is :func:`analysis.shell.run_command` when that module exists; until then
this package carries its own wrapper with the same signature and error.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Sequence

from analysis.errors import DLPerfError
from analysis.redact import redact_argv  # secrets are hidden by analysis.redact only

try:  # the suite-wide wrapper, when present
    from analysis.shell import CommandError, run_command  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the other engineer's module

    class CommandError(DLPerfError):
        """An external command failed or timed out; carries argv, output and exit code."""

        def __init__(self, argv, returncode, stdout="", stderr="", reason=""):
            self.argv, self.returncode = list(argv), returncode
            self.stdout, self.stderr = stdout or "", stderr or ""
            what = reason or f"exit status {returncode}"
            tail = (self.stderr or self.stdout).strip()[-500:]
            super().__init__(f"{shlex.join(self.argv)}: {what}" + (f"\n{tail}" if tail else ""))

    def run_command(argv, timeout, check=True, env=None, cwd=None):
        """Run `argv` (a list, never a shell string) with a timeout; CompletedProcess or
        CommandError (non-zero exit under `check`, timeout, missing program)."""
        argv = [str(a) for a in argv]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  env=None if env is None else dict(env), cwd=cwd)
        except subprocess.TimeoutExpired as exc:
            raise CommandError(argv, None, exc.stdout or "", exc.stderr or "",
                               f"timed out after {timeout} s") from None
        except OSError as exc:
            raise CommandError(argv, None, reason=str(exc)) from None
        if check and proc.returncode != 0:
            raise CommandError(argv, proc.returncode, proc.stdout, proc.stderr)
        return proc

__all__ = ["CommandError", "run_command", "redact_argv", "shell_join", "render_shell"]


def shell_join(argv: Sequence[str]) -> str:
    """A POSIX shell line that runs exactly `argv` (every word quoted)."""
    return " ".join(shlex.quote(str(a)) for a in argv)


_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")


def render_shell(argv: Sequence[str]) -> str:
    """Like :func:`shell_join`, but ``{{NAME}}`` inside a word becomes ``"${NAME}"``, expanded
    by the shell at run time (used for values only a batch job knows, such as the master
    host). Everything else stays single-quoted; placeholders are the only expansion."""
    words = []
    for a in map(str, argv):
        parts, pos = [], 0
        for m in _PLACEHOLDER.finditer(a):
            if m.start() > pos:
                parts.append(shlex.quote(a[pos:m.start()]))
            parts.append(f'"${{{m.group(1)}}}"')
            pos = m.end()
        if pos < len(a) or not parts:
            parts.append(shlex.quote(a[pos:]))
        words.append("".join(parts))
    return " ".join(words)
