"""Run one function over many items in forked processes, results in the items' order.

Parsing is CPU-bound Python and numpy: threads do not help, processes do. With `jobs`
processes, this one takes every `jobs`-th item itself and `jobs` − 1 forked children take
the others (item k goes to process k mod `jobs`, which spreads the costly and cheap items
of a sorted list evenly); each child sends its results back through a pipe in pickled
batches as it goes, read here by one thread per child. No executor: starting one, and
leaving this process idle while its workers run, cost more than reading a thousand small
logs (``dlperf summarize``). Few items are done in this process alone.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence

from analysis.shell import fork_worker

#: Below this many items, one process does them all.
MIN_ITEMS = 48
#: Results a child pickles and sends at a time.
BATCH = 32


def default_jobs() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def ordered_map(fn: Callable, items: Sequence, jobs: int | None = None) -> list:
    """``[fn(x) for x in items]``, spread over `jobs` processes (default: every core) when
    there are at least MIN_ITEMS items. The children inherit `fn` and the items; what `fn`
    returns (or raises) must pickle. An exception in `fn` is raised here as it would be in
    one process."""
    jobs = min(default_jobs() if jobs is None else jobs, len(items))
    if jobs <= 1 or len(items) < MIN_ITEMS or not hasattr(os, "fork"):
        return [fn(x) for x in items]
    results: list = [None] * len(items)
    children = []
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
        if stream is not None:
            stream.flush()
    try:
        for k in range(1, jobs):  # every child is forked before any reader thread starts
            children.append(_Child(fn, items, range(k, len(items), jobs)))
        for child in children:
            child.start_reading(results)
        for i in range(0, len(items), jobs):
            results[i] = fn(items[i])
        for child in children:
            child.finish()
    finally:
        for child in children:
            child.stop()
    return results


class _Child:
    """A forked process computing `fn` of `items[i]` for i in `share`."""

    def __init__(self, fn: Callable, items: Sequence, share: range) -> None:
        self.share = share
        self.error: BaseException | None = None
        self.done = False
        read_end, write_end = os.pipe()
        self.pid = fork_worker()
        if self.pid == 0:  # the child: never returns
            os.close(read_end)
            _serve(fn, items, share, write_end)
        os.close(write_end)
        self.pipe = os.fdopen(read_end, "rb")
        self.thread: threading.Thread | None = None

    def start_reading(self, results: list) -> None:
        self.thread = threading.Thread(target=self._read, args=(results,), daemon=True)
        self.thread.start()

    def _read(self, results: list) -> None:
        try:
            while True:
                kind, payload = pickle.load(self.pipe)
                if kind == "results":
                    for i, value in payload:
                        results[i] = value
                elif kind == "error":
                    self.error = payload
                    return
                else:
                    self.done = True
                    return
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            self.error = RuntimeError(f"a worker process ended without its results ({exc!r})")

    def finish(self) -> None:
        """Wait for the child's results; raise its error."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        if not self.done:
            raise RuntimeError("a worker process ended without its results")

    def stop(self) -> None:
        """Reap the child: it exits once it has sent its results; one that has not (an error
        or Ctrl-C here or there) is killed first."""
        if self.pid:
            try:
                if not self.done:
                    os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ChildProcessError, ProcessLookupError):
                pass
            self.pid = 0
        if self.thread is not None:
            self.thread.join()
        self.pipe.close()


def _serve(fn: Callable, items: Sequence, share: range, write_end: int) -> None:
    """The child's work: results in batches, then "done", or the error; then exit."""
    code = 0
    try:
        with os.fdopen(write_end, "wb") as out:
            batch = []
            try:
                for i in share:
                    batch.append((i, fn(items[i])))
                    if len(batch) == BATCH:
                        pickle.dump(("results", batch), out, pickle.HIGHEST_PROTOCOL)
                        batch = []
                pickle.dump(("results", batch), out, pickle.HIGHEST_PROTOCOL)
                pickle.dump(("done", None), out)
            except BaseException as exc:  # noqa: BLE001 - sent to the parent, raised there
                try:
                    pickle.dump(("error", exc), out, pickle.HIGHEST_PROTOCOL)
                except Exception:  # noqa: BLE001 - an exception that does not pickle
                    text = "".join(traceback.format_exception(exc)).strip()
                    pickle.dump(("error", RuntimeError(text)), out, pickle.HIGHEST_PROTOCOL)
    except BaseException:  # noqa: BLE001 - the parent is gone or the pipe broke
        code = 1
    finally:
        os._exit(code)
