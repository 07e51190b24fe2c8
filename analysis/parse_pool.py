"""Run one function over many items in worker processes, results in the items' order.

Parsing is CPU-bound Python and numpy: threads do not help, processes do. Few items are
done in this process (starting workers costs more than it saves).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

#: Below this many items, one process does them all.
MIN_ITEMS = 48


def default_jobs() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def ordered_map(fn: Callable, items: Sequence, jobs: int | None = None) -> list:
    """``[fn(x) for x in items]``, spread over `jobs` processes (default: every core) when
    there are at least MIN_ITEMS items. `fn` and the items must pickle; an exception in `fn`
    is raised here as it would be in one process."""
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1 or len(items) < MIN_ITEMS:
        return [fn(x) for x in items]
    from concurrent.futures import ProcessPoolExecutor  # ~0.1 s: only when a pool is used
    from multiprocessing import get_all_start_methods, get_context

    chunk = max(1, len(items) // (jobs * 8))
    ctx = get_context("fork" if "fork" in get_all_start_methods() else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return list(pool.map(fn, items, chunksize=chunk))
