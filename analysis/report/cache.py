"""Parse a log folder once per report build: the language-independent data of a report
(parsed logs, statistics, environment/topology/campaign records, the suite's commit) kept
as a pickle in a cache folder next to the outputs.

The cache key covers every file under LOG_DIR (relative path, size, modification time),
the explicit env/topology files, the method settings and the analysis code itself
(its ``*.py`` files' modification times), so a changed log, setting or parser never serves
stale numbers. Writers go through a lock file and an atomic rename; a reader that finds
the lock waits for the writer (the publisher parses while the kernels start) instead of
parsing a second time. The pickle is only ever read from the folder the report is written
to, by the same user.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import __version__, config
from analysis.collect import ParseResult
from analysis.report import inputs
from analysis.report.inputs import CampaignInput, EnvInput, TopoInput

#: Bumped when the pickled layout changes.
CACHE_VERSION = 1
PREFIX = "dlperf-data-"
#: How long a reader waits for another process that holds the lock (seconds).
LOCK_WAIT_S = 120.0
_CODE_DIR = Path(__file__).resolve().parent.parent  # the analysis package


@dataclass
class Prepared:
    """Everything a report shows that does not depend on the language."""

    log_dir: Path
    result: ParseResult
    runs: pd.DataFrame
    summary: pd.DataFrame
    trace: pd.DataFrame
    envs: list[EnvInput]
    topologies: list[TopoInput]
    campaign: CampaignInput
    suite_commit: str = ""


def _listify(x) -> list:
    return [] if not x else ([x] if isinstance(x, (str, Path)) else list(x))


def _stat_rows(paths, root: Path | None = None) -> list[str]:
    rows = []
    for p in paths:
        try:
            st = p.stat()
        except OSError:
            continue
        name = p.relative_to(root).as_posix() if root else str(p.resolve())
        rows.append(f"{name}\t{st.st_size}\t{st.st_mtime_ns}")
    return rows


def fingerprint(log_dir: Path, env=None, topology=None, method: str = "dlperf",
                warmup: int | None = None, measure: int | None = None) -> str:
    """Hex key of the data a report of `log_dir` with these settings would show."""
    root = Path(log_dir)
    h = hashlib.sha256()
    head = [str(CACHE_VERSION), __version__, str(root.resolve()), method, str(warmup),
            str(measure)]
    h.update("\n".join(head).encode())
    files = sorted(p for p in root.rglob("*") if p.is_file())
    h.update("\n".join(_stat_rows(files, root)).encode())
    extra = [Path(p) for p in _listify(env) + _listify(topology)]
    h.update("\n".join(_stat_rows(extra)).encode())
    code = sorted(_CODE_DIR.rglob("*.py"))
    h.update("\n".join(_stat_rows(code, _CODE_DIR)).encode())
    return h.hexdigest()[:20]


def suite_commit() -> str:
    """`git rev-parse --short HEAD` of the project ('' when git or the repository is absent)."""
    from analysis.shell import run_command

    try:
        done = run_command(["git", "rev-parse", "--short", "HEAD"], timeout=10, check=False,
                           cwd=config.PROJECT_DIR)
    except Exception:  # no git, no repository, a timeout: the commit is just unknown
        return ""
    return done.stdout.strip() if done.ok else ""


def compute(log_dir=None, env=None, topology=None, method: str = "dlperf",
            warmup: int | None = None, measure: int | None = None) -> Prepared:
    """Parse and summarise (no cache)."""
    from analysis import stats
    from analysis.collect import parse_paths

    root = inputs.resolve_log_dir(log_dir)
    result = parse_paths([root])
    runs = stats.run_throughput(result, method=method, warmup=warmup, measure=measure)
    summary = stats.summarize(result, method=method, warmup=warmup, measure=measure, runs=runs)
    trace = stats.iteration_throughput(result)
    envs, topos, camp = inputs.gather(root, env, topology)
    return Prepared(root, result, runs, summary, trace, envs, topos, camp, suite_commit())


def _lock_age(lock: Path) -> float:
    """Seconds since `lock` was made (infinite when there is none)."""
    try:
        return time.time() - lock.stat().st_mtime
    except OSError:
        return float("inf")


def _load(path: Path) -> Prepared | None:
    try:
        with open(path, "rb") as fh:
            data = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        return None
    return data if isinstance(data, Prepared) else None


def prepare(log_dir=None, env=None, topology=None, method: str = "dlperf",
            warmup: int | None = None, measure: int | None = None,
            cache_dir: str | Path | None = None) -> Prepared:
    """The report data of `log_dir`: from `cache_dir` when a pickle of the same key is
    there (or another process is writing it), else computed and stored there."""
    if not cache_dir:
        return compute(log_dir, env, topology, method, warmup, measure)
    root = inputs.resolve_log_dir(log_dir)
    folder = Path(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{PREFIX}{fingerprint(root, env, topology, method, warmup, measure)}.pkl"
    lock = path.with_suffix(".lock")
    data = _load(path) if path.exists() else None
    if data is not None:
        return data
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        fd = None
    if fd is None:  # another process is writing it: wait (a lock older than
        # LOCK_WAIT_S is left over from a crash and ignored), then read
        while _lock_age(lock) < LOCK_WAIT_S:
            time.sleep(0.02)
        data = _load(path) if path.exists() else None
        return data if data is not None else compute(root, env, topology, method, warmup,
                                                     measure)
    try:
        os.close(fd)
        data = compute(root, env, topology, method, warmup, measure)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        for old in folder.glob(f"{PREFIX}*.pkl"):  # one data set per output folder
            if old != path:
                old.unlink(missing_ok=True)
    finally:
        lock.unlink(missing_ok=True)
    return data
