"""Atomic file writes: a reader sees the old file or the whole new one, never a half.

Every file the suite writes for a user (CLI outputs, done markers, status, reports) goes
through :func:`atomic_path`: the content is written to a temporary file in the target's
folder and renamed over the target only when complete; on any error (a full disk, Ctrl-C)
the temporary file is removed and the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text"]


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `target`; rename it onto `target` when the block ends.

    The temporary file is hidden (leading dot), marked ``.tmp`` and ends with `target`'s
    suffix (or `suffix`), so writers that choose a format by extension still see the right one.
    """
    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or ".tmp" + target.suffix,
                               dir=folder)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


def atomic_write_bytes(target: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `target` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(target: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `target` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding=encoding)
