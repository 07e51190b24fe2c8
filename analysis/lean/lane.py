"""The lean lane end to end: find the logs, read each (or take its cached read), check that
the full path would see exactly these runs without a problem, and compute the summary rows.
Returns None as soon as anything is outside what the lane reads exactly (see the package
docstring); the caller then runs the full path."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from analysis.discover import Found, find_logs
from analysis.errors import DLPerfError
from analysis.layout import meta_from_names
from analysis.lean import dll_pytorch, oneflow_cnn
from analysis.lean.cache import FolderStore
from analysis.lean.read import LeanRead
from analysis.lean.sniff import HEAD
from analysis.logtext import BYTES_PER_LINE, has_glued_bar, has_launcher_tags, max_log_bytes
from analysis.stats import case_stats
from analysis.user_meta import FOLDER_FILE, INT_KEYS, STEM_SUFFIX, MetaFiles, is_count

#: The lean readers: the first whose MARKER is in a log's first 4 KiB reads it.
READERS = (dll_pytorch, oneflow_cnn)
#: Names of the logs the lane reads (no gzip, no sidecars, no JSON backends).
SUFFIXES = (".log", ".txt", ".out")
#: Run fields the summary groups cases by, and the order of its rows.
CASE_FIELDS = ("framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
               "batch_size_per_device", "case", "group")
ORDER = ("framework", "model", "precision", "batch_size_per_device", "case", "num_devices",
         "num_nodes")


def read_log(path: str, limit: int) -> LeanRead | None:
    """A lean read of the log at `path`, or None: unreadable, over `limit` bytes, anything
    the full path would clean (gzip, CR, ANSI escapes, launcher tags, bytes that are not
    UTF-8, progress bars glued to the next line; the readers look for rank prefixes at the
    top), or of no lean family."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit // BYTES_PER_LINE:
                return None  # may pass the full path's byte or line cap: it reads what it can and says so
            data = fh.read(size + 1)  # a buffer of the cap's size would cost more than reading
    except OSError:
        return None
    if len(data) != size or data[:2] == b"\x1f\x8b" \
            or b"\r" in data or b"\x1b" in data or has_launcher_tags(data) \
            or has_glued_bar(data):
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    head = data[:HEAD]
    reader = next((r for r in READERS if r.MARKER in head), None)
    return None if reader is None else reader.read(data)


def _read_all(paths: list[str], limit: int, jobs: int | None) -> list[LeanRead | None]:
    from analysis.parse_pool import ordered_map

    return ordered_map(_Reader(limit), paths, jobs)


class _Reader:
    """`read_log` with a limit, picklable for worker processes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __call__(self, path: str) -> LeanRead | None:
        return read_log(path, self.limit)


def _has_meta_file(found: Found, meta: MetaFiles) -> bool:
    """Whether a meta file states fields of `found`'s run (analysis.user_meta); True when
    its folder cannot be listed (the full path looks)."""
    names = meta.names(found.path.parent)  # beside the log as named
    return names is None or FOLDER_FILE in names or found.run_key[1] + STEM_SUFFIX in names


def run_rows(paths: Iterable[str | os.PathLike], jobs: int | None = None,
             cache: bool = True) -> list[dict] | None:
    """One row per run (run id, source, case fields and DLPerf figure: the columns of
    `analysis.stats.run_throughput` they share), in the full path's order; None when the
    lane does not read these logs."""
    try:
        found, problems = find_logs(paths)
    except DLPerfError:
        return None  # the full path says what is wrong
    if problems or not found or any(f.stray for f in found):
        return None  # the full path says what; strays of a campaign folder: it leaves them out
    limit = max_log_bytes()
    meta = MetaFiles()
    runs: dict[tuple[str, str], Found] = {}
    for f in found:
        if f.run_key in runs or not f.path.name.endswith(SUFFIXES) \
                or _has_meta_file(f, meta):
            return None  # a run of several files, a sidecar, or stated fields
        runs[f.run_key] = f
    stats, reads, todo = [], [], []
    stores: dict[str, FolderStore] = {}
    for f in found:
        try:
            st = os.stat(f.path)
        except OSError:
            return None
        if st.st_size == 0:
            return None  # an empty log: no lean read, and the full path flags it
        store = None
        if cache:
            store = stores.get(f.run_key[0]) or stores.setdefault(f.run_key[0],
                                                                  FolderStore(f.run_key[0]))
        got = store.get(f.path.name, st) if store is not None else None
        stats.append(st)
        reads.append(got)
        if got is None:
            todo.append(len(reads) - 1)
    for i, got in zip(todo, _read_all([str(found[i].path) for i in todo], limit, jobs)):
        if got is None:
            return None
        reads[i] = got
        if cache:
            stores[found[i].run_key[0]].put(found[i].path.name, stats[i], got)
    for store in stores.values():
        store.save()
    rows = [_run_row(f, read) for f, read in zip(found, reads)]
    if any(r is None for r in rows) or _duplicates(found, stats, reads):
        return None
    return rows


def _run_row(found: Found, read: LeanRead) -> dict | None:
    """The run's case fields (the path's, with the log's where it states them) and figure;
    None where the full path would report a problem (a field in conflict or missing)."""
    meta = meta_from_names(found.path.parent.name, found.run_key[1])
    if "case" in meta:
        return None  # GPT file names: not a lean family
    for key, value in read.stated.items():
        old = meta.get(key)
        if old is not None and str(old) != str(value):
            return None  # metadata_conflict
        meta[key] = value
    n, g, bsz = meta.get("num_nodes"), meta.get("gpus_per_node"), meta.get("batch_size_per_device")
    if n is None or g is None or bsz is None or not meta.get("model") \
            or not meta.get("precision"):
        return None
    if read.world_size is not None and read.world_size != n * g:
        return None  # the full path reports a conflict or takes nodes from the world size
    if not all(is_count(v) for k, v in meta.items() if k in INT_KEYS) \
            or not is_count(n * g * bsz):
        return None  # the full path reports an impossible_value
    row = {"run_id": found.run_id, "source": str(found.path),
           "framework": read.framework, "model": meta["model"], "precision": meta["precision"],
           "num_nodes": int(n), "gpus_per_node": int(g), "num_devices": int(n) * int(g),
           "batch_size_per_device": int(bsz), "case": "", "group": ""}
    row["throughput"] = read.throughput(row["num_devices"] * row["batch_size_per_device"])
    row["configuration"] = read.configuration
    return row


def _duplicates(found: list[Found], stats: list, reads: list[LeanRead]) -> bool:
    """Whether two runs could be one log read twice (the full path drops the copy and says
    so): same size and same read, in one folder or under one relative name; then compared."""
    seen: dict[tuple, int] = {}
    for i, (f, st, read) in enumerate(zip(found, stats, reads)):
        sig = (st.st_size, read.elapsed, tuple(sorted(read.stated.items())))
        for key in ((sig, "folder", f.run_key[0]), (sig, "id", f.relative_id)):
            j = seen.setdefault(key, i)
            if j != i and _same_bytes(found[j].path, f.path):
                return True
    return False


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return True  # not sure: let the full path decide


def summary_rows(paths: Iterable[str | os.PathLike], jobs: int | None = None,
                 cache: bool = True,
                 spread_threshold: float = case_stats.DEFAULT_SPREAD_THRESHOLD
                 ) -> list[dict] | None:
    """The rows `analysis.stats.summarize` gives for the dlperf method (its SUMMARY columns
    that do not need the full path: no latency, TFLOP/s or outliers), or None when the lane
    does not read these logs, or a case is flagged (its runs state different
    configurations, or spread more than `spread_threshold`): the full path says why."""
    runs = run_rows(paths, jobs, cache)
    if runs is None:
        return None
    cases: dict[tuple, list[dict]] = {}
    for r in runs:
        cases.setdefault(tuple(r[c] for c in CASE_FIELDS), []).append(r)
    rows = []
    for members in cases.values():
        row = {c: members[0][c] for c in CASE_FIELDS}
        row.update(case_stats.throughput_stats([r["throughput"] for r in members]))
        if len({r["configuration"] for r in members}) > 1 \
                or case_stats.spread_flagged(row["spread_pct"], spread_threshold):
            return None
        row.update(case_stats.memory_stats((), ()))
        row["problems"] = 0
        row["flags"] = ""
        rows.append(row)
    case_stats.add_speedup(rows)
    rows.sort(key=lambda r: tuple(r[c] for c in ORDER))
    return rows
