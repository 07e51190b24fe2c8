"""One exception hierarchy for the whole suite; messages name the offending value."""

from __future__ import annotations


class DLPerfError(Exception):
    """Base class of every error raised on purpose by DLPerf Suite."""


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
