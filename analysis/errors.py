"""One exception hierarchy for the whole suite; messages name the offending value."""

from __future__ import annotations

import os
import traceback

#: Set this environment variable (to anything but "" or "0") to see tracebacks.
DEBUG_VARIABLE = "DLPERF_DEBUG"


def debug() -> bool:
    """Tracebacks were asked for: ``DLPERF_DEBUG`` is set to anything but "" or "0"."""
    return os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def shown_value(value: object) -> str:
    """A value a user gave, for a message: a collection by its type alone (a YAML alias
    bomb's repr is exponential), anything else as repr cut to 80 characters."""
    if isinstance(value, (dict, list, tuple, set)):
        return f"a {type(value).__name__}"
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:80]}… ({len(text):,} characters)"


class DLPerfError(Exception):
    """Base class of every error raised on purpose by DLPerf Suite."""

    def _render_traceback_(self) -> list[str]:
        """What Jupyter shows for this error: the message alone, as the CLI prints it (the
        whole traceback when ``DLPERF_DEBUG`` is set)."""
        if debug():
            return "".join(traceback.format_exception(self)).splitlines()
        return [f"{type(self).__name__}: {self}"]


class UsageError(DLPerfError):
    """The caller asked for something that cannot work (bad option, unknown name)."""


class SchemaError(DLPerfError):
    """A frame does not match the declared schema."""


class UnknownNameError(UsageError):
    """A registry lookup failed; the message lists the valid names."""

    def __init__(self, kind: str, name: str, valid: list[str] | tuple[str, ...]):
        super().__init__(f"unknown {kind} {name!r}; valid: {', '.join(sorted(valid))}")
        self.kind, self.name, self.valid = kind, name, list(valid)


class LogProblemError(DLPerfError):
    """Raised in strict mode for the first problem met while reading logs."""

    def __init__(self, source: str, line: int | None, reason: str, text: str = ""):
        where = f"{source}:{line}" if line else source
        msg = f"{where}: {reason}"
        if text:
            msg += f"\n    {text[:200]}"
        super().__init__(msg)
        self.source, self.line, self.reason, self.text = source, line, reason, text
