"""Command lines as text: shell quoting for remote and batch-script command lines.

Commands are run by :mod:`analysis.shell` only; secrets are hidden by :mod:`analysis.redact`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

__all__ = ["render_shell", "fill_placeholders"]


#: The suite's own placeholders only: a user's ``{{HOME}}`` is a literal word, not an expansion.
_PLACEHOLDER = re.compile(r"\{\{(DLPERF_[A-Z0-9_]+)\}\}")


def render_shell(argv: Sequence[str]) -> str:
    """Like :func:`shlex.join`, but ``{{DLPERF_NAME}}`` inside a word becomes
    ``"${DLPERF_NAME}"``, expanded by the shell at run time (used for values only a batch job
    knows, such as the master host). Everything else stays single-quoted; placeholders are
    the only expansion."""
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


def fill_placeholders(word: str, values: dict[str, str], unknown: str = "") -> str:
    """`word` with each ``{{DLPERF_NAME}}`` replaced by ``values[NAME]`` — what the batch
    script expanded it to, for records and messages. A name without a value becomes
    `unknown` (formatted with ``name=``) when given, else it stays as written."""
    def value(m: re.Match) -> str:
        name = m.group(1)
        if name in values:
            return values[name]
        return unknown.format(name=name) if unknown else m.group(0)
    return _PLACEHOLDER.sub(value, str(word))
