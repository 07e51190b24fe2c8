"""One campaign run per output folder: an exclusive lock on ``<out>/.campaign/lock``.

The lock is ``fcntl.flock`` on an open file, so the kernel releases it when the holder ends in
any way (``kill -9`` included): there is never a stale lock to remove by hand. The holder writes
its pid, host and start time into the file, so that a second run can say who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from analysis.errors import DLPerfError


class CampaignBusy(DLPerfError):
    """Another process runs a campaign in this output folder."""


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["since"])))
        return f"pid {int(info['pid'])} on host {info['host']}, running since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet recorded its pid and host"


@contextlib.contextmanager
def campaign_lock(out: str | os.PathLike) -> Iterator[Path]:
    """``with campaign_lock(out) as path:`` holds the folder's lock (its file is `path`), or
    raises :class:`CampaignBusy` at once (it never waits) naming the holder."""
    path = Path(out) / ".campaign" / "lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise CampaignBusy(
            f"campaign folder {path.parent.parent} is in use by another `dlperf run` "
            f"({holder}); wait for it to end or stop it, then run again") from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                              "since": time.time()}).encode(), 0)
    try:
        yield path
    finally:
        os.ftruncate(fd, 0)
        os.close(fd)  # closing the file releases the lock
