"""SIGTERM taken as Ctrl-C: ``kill``, ``timeout`` or a cancelled CI job stops ``dlperf run``
and ``dlperf report`` as Ctrl-C does (they clean up and say "interrupted") instead of
letting them die where they stand."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


def trap_sigterm():
    """Make SIGTERM raise KeyboardInterrupt (with the signal's name) in the main thread;
    returns the handler it replaced for :func:`restore_sigterm`, None where signals cannot
    be handled (a thread other than the main one)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_term(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    try:
        return signal.signal(signal.SIGTERM, on_term)
    except ValueError:
        return None


def restore_sigterm(old) -> None:
    """Put back the handler :func:`trap_sigterm` replaced (nothing when it replaced none)."""
    if old is not None:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within: SIGTERM raises KeyboardInterrupt, as Ctrl-C does."""
    old = trap_sigterm()
    try:
        yield
    finally:
        restore_sigterm(old)
