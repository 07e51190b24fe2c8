"""Find log files, run the right parser on each, and assemble the validated tidy frames.

One bad file never hides the good ones: every failure becomes a row of the problems
frame (and a flag on its run), unless `strict` asks for the first one to be raised.
A run is counted once: a second file of the same role in one run (``x.log`` beside
``x.log.gz``) or a run whose log has the same content as another's is a ``duplicate_run``.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import re
import signal
import stat
import traceback
import zlib
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis import metrics as M
from analysis import parse_cache, parsers, schema
from analysis.checks import check_parsed
from analysis.discover import Found, NoKnownLogsError, NoLogsError, find_logs, is_probed_name
from analysis.duplicate_runs import drop_copies, signature
from analysis.errors import LogProblemError, UsageError
from analysis.fsutil import display_path, printable
from analysis.gpu_samples import in_run_time, own_samples
from analysis.layout import meta_from_path, node_index
from analysis.logtext import MAX_BYTES_ENV, LogText, max_log_bytes
from analysis.parsers._fields import to_int
from analysis.parsers._prefix import first_lines, rule_rows
from analysis.parsers.base import META_FIELDS, ParsedLog
from analysis.problems import Problem, excerpt, strict_failures, to_frame
from analysis.user_meta import (
    MAX_COUNT,
    MetaFiles,
    accumulation_counts,
    against_path,
    is_count,
    merge_meta,
    stated_global_batch,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NoKnownLogsError", "NoLogsError", "ParseResult", "parse_paths"]

#: Problems not reported for the logs of nodes other than node 0 when node 0 trained.
_QUIET_ON_OTHER_NODES = ("unknown_format", "no_training_lines")
_INT_META = ("num_nodes", "gpus_per_node", "batch_size_per_device", "global_batch_size",
             "repeat", "data_parallel", "tensor_parallel", "pipeline_parallel", "seq_length",
             "num_layers", "hidden_size", "num_heads", "vocab_size")
#: Case fields a file's path states, by which a file no parser reads joins its case.
_PATH_CASE = ("model", "precision", "num_nodes", "gpus_per_node", "batch_size_per_device")
_RUN_CASE = ("framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
             "batch_size_per_device", "global_batch_size", "case", "group")
_VISIBLE = re.compile(rb"\S")
#: How missing_metadata tells users to state what the log does not.
_STATE_IT = ("state it: --meta num_nodes=N,gpus_per_node=G,batch_size_per_device=B, a "
             "dlperf-meta.yaml or <stem>.meta.yaml beside the log, or the DLPerf layout "
             "<N>n<G>g/<model>_b<bsz>_<precision>_<repeat>.log")


class _BuiltOnFirstUse:
    """A frame of `ParseResult`: the one given (or set), else built when first read from
    what `parse_paths` kept (observations from `parts`, runs from their rows, problems from
    their list), so that a caller working on the records imports no pandas."""

    def __init__(self, build) -> None:
        self.build = build

    def __set_name__(self, owner, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, result, owner=None):
        if result is None:
            raise AttributeError(self.slot[1:])  # a field without default
        if getattr(result, self.slot, None) is None:
            setattr(result, self.slot, self.build(result))
        return getattr(result, self.slot)

    def __set__(self, result, frame) -> None:
        setattr(result, self.slot, frame)
        if self.slot == "_problems":  # the list no longer says what the frame does
            result.problem_rows = None


@dataclass
class ParseResult:
    """The three tidy frames of a parse: observations, runs and problems.

    `parse_paths` keeps what each file gave (`parts`: (run row, ParsedLog, source) of every
    file read), the runs' rows and the problems found, and builds each frame from them on
    first use: the per-run figures and the summary (:mod:`analysis.stats`) are computed from
    `parts`, :meth:`run_records` and :meth:`problem_list` without them. A result made from
    frames (a Parquet export) has no `parts`.
    """

    observations: pd.DataFrame = _BuiltOnFirstUse(
        lambda r: _observations_frame(r.parts or []))  # schema.OBSERVATIONS
    runs: pd.DataFrame = _BuiltOnFirstUse(lambda r: _runs_frame(r.run_rows))  # schema.RUNS
    problems: pd.DataFrame = _BuiltOnFirstUse(
        lambda r: to_frame(r.problem_rows))  # schema.PROBLEMS
    parts: list[tuple[dict, ParsedLog, str]] | None = field(default=None, repr=False,
                                                             compare=False)
    #: files found under the paths, and of them those skipped as not logs (a README.txt)
    files_found: int | None = field(default=None, compare=False)
    files_skipped: int | None = field(default=None, compare=False)
    #: where per-run figures are kept between calls (`parse_paths(cache=True)`), else None
    figures: parse_cache.RunFigures | None = field(default=None, repr=False, compare=False)
    #: the rows and problems `runs` and `problems` are built from (None: made from frames)
    run_rows: list[dict] | None = field(default=None, repr=False, compare=False)
    problem_rows: list[Problem] | None = field(default=None, repr=False, compare=False)
    _records: list[dict] | None = field(default=None, init=False, repr=False, compare=False)
    _frame_parts: list | None = field(default=None, init=False, repr=False, compare=False)

    def run_records(self) -> list[dict]:
        """The runs as the `runs` frame holds them, one dict per run (a missing value as
        None), without building the frame when the parse kept their rows (made once: the
        rows do not change after the parse)."""
        if self.run_rows is None or self._runs is not None:
            return records_of(self.runs)
        if self._records is None:
            self._records = [run_record(row) for row in self.run_rows]
        return self._records

    def problem_list(self) -> list[Problem]:
        """The problems, as :class:`~analysis.problems.Problem` values, in the frame's order."""
        return self.problem_rows if self.problem_rows is not None else \
            problems_of(self.problems)

    def replace_problems(self, kinds, found: list[Problem]) -> None:
        """The problems of `kinds` replaced by `found` (summarize's case problems)."""
        rows = self.problem_list()
        kept = [p for p in rows if p.kind not in kinds]
        if found or len(kept) != len(rows):
            self.problem_rows, self._problems = kept + found, None

    def runs_with(self, metric: str) -> set[str]:
        """The ids of the runs that have observations of `metric`."""
        return {str(row["run_id"]) for row, parsed, _ in self.parsed_parts()
                if metric in parsed.obs.metrics()}

    def summary(self, **kwargs) -> pd.DataFrame:
        from analysis.stats import summarize

        return summarize(self, **kwargs)

    def observation_frames(self, rows: int | None = None) -> Iterable[pd.DataFrame]:
        """The observations frame in consecutive parts of about `rows` rows (default
        :data:`FRAME_ROWS`), built one at a time from `parts`: what writing it to a file
        needs, without holding it whole."""
        if self._observations is not None or self.parts is None:
            yield self.observations
        else:
            yield from observation_frames(self.parts, rows or FRAME_ROWS)

    def parsed_parts(self) -> list[tuple[dict, ParsedLog, str]]:
        """`parts`, or for a result made from frames the same rebuilt from its observations
        (once): every figure is computed from parts alone."""
        if self.parts is not None:
            return self.parts
        if self._frame_parts is None:
            self._frame_parts = _parts_of_frame(self.observations)
        return self._frame_parts

    def parsed_by_run(self) -> dict[str, list[ParsedLog]]:
        """What each run's files gave, by run id."""
        out: dict[str, list[ParsedLog]] = {}
        for row, parsed, _ in self.parsed_parts():
            out.setdefault(row["run_id"], []).append(parsed)
        return out


@dataclass
class FileRead:
    """What reading one file gave: its parse (None when no parser read it) and problems."""

    path: Path
    parsed: ParsedLog | None
    problems: list[Problem]
    family: str = ""  # "" when no parser recognised it
    digest: bytes = b""  # content_key of the cleaned text, to find runs read twice
    skip: bool = field(default=False)  # a JSON file beside the logs that is not a log
    signature: object = None  # duplicate_runs.signature of `parsed`, kept with it in the cache


def _read_file(path: Path, family: str | None, explicit: bool, max_bytes: int,
               dlperf_only: bool = False, keyed: bool = True) -> FileRead:
    """Read and parse one file; never raises for what the file holds. With `dlperf_only`,
    only as many of its first lines as its family's DLPerf rule reads are parsed
    (:func:`~analysis.parsers._prefix.first_lines`). Its copy signature has its index keys
    unless not `keyed` (a log read again only to confirm a copy)."""
    source = str(path)
    if family is None and _zero_bytes(path):  # nothing to open, clean or sniff
        return _unknown_format(path, explicit, LogText(source, b""))
    try:
        log = LogText.read(path, source, max_bytes)
    except (OSError, EOFError, zlib.error) as exc:
        return FileRead(path, None, [Problem(source, None, "unreadable_file", f"cannot read: {exc}")])
    except MemoryError:  # one file too big for this machine: the others are still read
        return FileRead(path, None, [Problem(
            source, None, "unreadable_file", "cannot read: not enough memory for it (set "
            f"{MAX_BYTES_ENV} lower to read only its beginning)")])
    parser = parsers.get(family) if family else parsers.detect(log.data)
    if parser is None:
        return _unknown_format(path, explicit, log)
    parts = first_lines(log, parser.late_markers, parser.rule_lines) if dlperf_only else (log,)
    for part in parts:
        try:
            parsed = parser.parse(part)
        except Exception as exc:  # a parser bug must not hide the other files
            return _parser_error(path, parser, log, exc)
        if parsed.obs.blocks and log.line_ranks:
            for b in parsed.obs.blocks:
                if (b["rank"] < 0).all():
                    b["rank"] = log.ranks_at(b["line"])
        check_parsed(parsed, part)
        if part is log:
            break
        if parser.dlperf_has_read(parsed):
            parsed = rule_rows(parsed)
            break
    return FileRead(path, parsed, log.problems + parsed.problems, parser.name,
                    content_key(log.data), signature=signature(parsed, keyed))


def _zero_bytes(path: Path) -> bool:
    """Whether `path` is a regular file of no bytes (a pipe or a /proc file states size 0
    but holds lines: those are read)."""
    try:
        st = os.stat(path)
    except OSError:
        return False  # reading it says why
    return st.st_size == 0 and stat.S_ISREG(st.st_mode)


def _unknown_format(path: Path, explicit: bool, log: LogText) -> FileRead:
    """What a file no parser recognises gives: an `unknown_format` problem (empty or blank,
    or of no family), or nothing for a JSON file beside the logs and for a ``.txt``,
    ``.out`` or ``.err`` file found by walking (discover.PROBED_SUFFIXES: a README, notes)."""
    if not explicit and (path.name.endswith((".json", ".json.gz")) or is_probed_name(path.name)):
        return FileRead(path, None, [], skip=True)  # some other file beside the logs
    head = log.head(4096).decode("utf-8", "replace")
    first = next((ln for ln in head.splitlines() if ln.strip()), "")
    reason = ("the file is empty or blank" if not _VISIBLE.search(log.data) else
              f"no parser recognises this file (families: {', '.join(parsers.names())})")
    return FileRead(path, None, log.problems + [
        Problem(log.source, None, "unknown_format", reason, first)])


#: Bytes at each end of a log that its content key covers.
CONTENT_KEY_SPAN = 64 << 10


def content_key(data: bytes) -> bytes:
    """What finds a log read twice (a repeat copied under another name or folder): the size
    of its cleaned text and the CRC-32 of its first and of its last 64 KiB. Only logs with
    equal keys are read again and compared whole (``duplicate_run`` when equal): hashing
    every whole file cost more than parsing the lines the DLPerf rules read."""
    span = CONTENT_KEY_SPAN
    view = memoryview(data)[:_text_end(data)]
    head, tail = zlib.crc32(view[:span]), zlib.crc32(view[-span:]) if len(view) > span else 0
    return len(view).to_bytes(8, "little") + head.to_bytes(4, "little") + tail.to_bytes(4, "little")


def _text_end(data: bytes) -> int:
    """Where a log's text ends before its trailing whitespace: a copy that gained a newline
    at its end (``echo >>``) is the same log."""
    tail = data[-CONTENT_KEY_SPAN:].rstrip()
    return len(data) - CONTENT_KEY_SPAN + len(tail) if tail and len(data) > CONTENT_KEY_SPAN \
        else len(data.rstrip())


def _parser_error(path: Path, parser, log: LogText, exc: Exception) -> FileRead:
    tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return FileRead(path, None, log.problems + [
        Problem(str(path), None, "parser_error", f"{parser.name} parser failed: {tb}")],
        parser.name)


def _files_read(members: list[Found]) -> list[Found]:
    """The files of a run that are read: the first of each role (see `_read_run`), and every
    probed file (``x.err`` beside ``x.log``): each may turn out not to be a log."""
    roles: dict[tuple[int, str], Path] = {}
    out = []
    for f in _by_preference(members):
        role, probed = _role(f.path.name), is_probed_name(f.path.name)
        if role not in roles or probed:
            out.append(f)
            if not probed:
                roles.setdefault(role, f.path)
    return out


def _by_preference(members: list[Found]) -> list[Found]:
    """`members` with probed files (``.out``, ``.txt``, ``.err``, in that order) after the
    others: of ``x.log`` and ``x.err``, the log is the run's (stable otherwise)."""
    def rank(f: Found) -> int:
        name = f.path.name[:-3] if f.path.name.endswith(".gz") else f.path.name
        return next((i + 1 for i, suf in enumerate((".out", ".txt", ".err"))
                     if name.endswith(suf) and is_probed_name(name)), 0)

    return members if len(members) == 1 else sorted(members, key=rank)


@lru_cache(maxsize=1 << 16)
def _role(name: str) -> tuple[int, str]:
    """What a file (by name) is to its run: (node, kind); two files of one role are one too
    many (cached: asked several times per file while a run is assembled)."""
    node = node_index(name)
    name = name[:-3] if name.endswith(".gz") else name
    kind = ".gpu.csv" if name.endswith(".gpu.csv") else (".mem" if name.endswith(".mem") else "log")
    return node, kind


def _stated_meta(path_meta: dict, stated: list[tuple[str, dict]]) -> tuple[dict, dict]:
    """Path fields overridden by the user's (meta files, then --meta); and each key's origin."""
    meta, origin = dict(path_meta), dict.fromkeys(path_meta, "the path")
    for where, fields in stated:
        meta.update(fields)
        origin.update(dict.fromkeys(fields, where))
    return meta, origin


def _merge_meta(run_id: str, source: str, stated: dict, origin: dict, parsed: ParsedLog | None,
                problems: list[Problem]) -> dict:
    """Stated fields overridden by log-stated ones; each disagreement becomes a problem."""
    meta = dict(stated)
    if parsed is None:
        return meta
    for key, val in parsed.meta.items():
        if val is None:
            continue
        if key in _INT_META and not is_count(to_int(val)):
            problems.append(Problem(
                source, parsed.meta_lines.get(key), "impossible_value",
                f"the log says {key}={excerpt(str(val), 40)}, not a count from 1 to "
                f"{MAX_COUNT:,}; not used", run_id=run_id))
            continue
        old = meta.get(key)
        if old is not None and str(old) != str(val):
            line = parsed.meta_lines.get(key)
            world = parsed.parameters.get("world_size") \
                if key in ("num_nodes", "gpus_per_node") else None
            said = f"{key}={val}" + (f" (its world_size={world})" if world else "")
            problems.append(Problem(
                source, line, "metadata_conflict",
                f"{origin.get(key, 'the path')} says {key}={old}, the log says {said}; "
                "using the log's value", run_id=run_id))
        meta[key] = val
    _world_size_against_stated(run_id, source, meta, origin, parsed, problems)
    return meta


def _world_size_against_stated(run_id: str, source: str, meta: dict, origin: dict,
                               parsed: ParsedLog, problems: list[Problem]) -> None:
    """A ``metadata_conflict`` when the log's ``world_size`` (its devices in all) is not
    the nodes x GPUs a meta file or --meta states (the parser compares it with the path's
    alone, and says so itself): the devices stay the stated ones, as against the path,
    while the log's global batch is batch_size x world_size."""
    ws = to_int(parsed.parameters.get("world_size"))
    n, g = to_int(meta.get("num_nodes")), to_int(meta.get("gpus_per_node"))
    if not ws or ws <= 0 or not n or not g or n * g == ws \
            or any(p.kind == "metadata_conflict" for p in parsed.problems):
        return
    where = " and ".join(dict.fromkeys(origin.get(k, "the path")
                                       for k in ("num_nodes", "gpus_per_node")))
    problems.append(Problem(
        source, None, "metadata_conflict",
        f"{where} says {n}n{g}g ({n * g} devices), the log says world_size={ws}: per-device "
        "figures, speedup and scaling efficiency count the stated devices, while the log's "
        "global batch is batch_size x world_size", run_id=run_id))


def _derived_counts(row: dict, problems: list[Problem]) -> None:
    """Devices and global batch computed from stated counts that pass MAX_COUNT (nodes x
    GPUs x batch of counts each allowed) are impossible: not used, and said so."""
    for key in ("num_devices", "global_batch_size"):
        if row[key] is not None and not is_count(row[key]):
            problems.append(Problem(
                row["source"], None, "impossible_value",
                f"{key} would be {row[key]:,} (more than {MAX_COUNT:,}); not used",
                run_id=row["run_id"]))
            row[key] = None


def parse_paths(paths: Iterable[str | Path], family: str | None = None,
                strict: bool = False, meta: Mapping | Iterable[Mapping] | None = None,
                max_bytes: int | str | None = None, dlperf_only: bool = False,
                jobs: int | None = None, cache: bool = False,
                require_runs: bool = False, figures: tuple | None = None) -> ParseResult:
    """Parse every log under `paths` (files or folders, searched recursively).

    `family` forces one parser instead of sniffing each file. `meta` states run fields the
    logs and paths do not (``{"num_nodes": 2, "gpus_per_node": 8}``, see
    :mod:`analysis.user_meta`; meta files beside the logs are read too). `max_bytes` caps the
    decompressed bytes read per file (default ``$DLPERF_MAX_LOG_BYTES`` or 256 MiB). With
    `strict`, the first problem raises LogProblemError; otherwise problems are returned as data.
    With `dlperf_only` (for the ``dlperf`` throughput method and nothing else), a log whose
    family's DLPerf rule reads only its first lines is parsed only that far: its figure is
    the same, the observations hold the rows the rule reads of those lines (`rule_rows`),
    problems are those of the lines read.
    `jobs` processes read the files when there are many (default: one per CPU core; 1: this
    process only); the frames are the same in every case. With `cache`, what each file gave
    is kept between calls (:mod:`analysis.parse_cache`) and an unchanged file is not read again.
    `figures` (method names, warmup, measure) has each run read measured where it is read, by
    :func:`~analysis.stats.per_run.figures_where_read` (in the workers, in parallel):
    :func:`~analysis.stats.per_run.run_records` with the same methods and window then takes
    those figures when the run's final row and problems are those it was measured with.
    Raises NoLogsError when `paths` hold no log at all, and with `require_runs`,
    NoKnownLogsError when files were found but none is a log of a known format (no run).
    Returns a ParseResult with frames `observations` (schema.OBSERVATIONS), `runs`
    (schema.RUNS) and `problems` (schema.PROBLEMS).
    """
    if family:
        parsers.get(family)  # fail fast on an unknown name
    if figures:  # and on methods or window counts the workers could not use
        from analysis.stats import methods
        from analysis.stats.per_run import window_counts

        for name in figures[0]:
            methods.get(name)
        window_counts(*figures[1:])
    user_meta = merge_meta(meta)
    limit = max_log_bytes(max_bytes)
    paths = [p if isinstance(p, str) else os.fspath(p) for p in paths]
    for p in paths:
        if p.endswith(".parquet") and os.path.isfile(p):
            raise UsageError(f"{display_path(p)} is a `dlperf parse` export, not a log: parsing "
                             "reads logs; `dlperf compare`, `check` and `store add` take exports")
    with gc_paused():
        result = _parse(paths, family, user_meta, limit, dlperf_only, jobs, cache, figures)
    failures = strict_failures(result.problem_list()) if strict else []
    if failures:
        p = failures[0]
        raise LogProblemError(p.source, p.line, f"{p.kind}: {p.reason}", p.text)
    if require_runs and not result.run_rows:
        raise NoKnownLogsError(paths, result.files_found, result.files_skipped,
                               [p.kind for p in result.problem_list()])
    return result


def _parse(paths: list[str], family: str | None, user_meta: dict, limit: int,
           dlperf_only: bool, jobs: int | None, cache: bool,
           asked: tuple | None = None) -> ParseResult:
    """`parse_paths` of the files as they are now (through the per-file cache with `cache`)."""
    files, all_problems = find_logs(paths)
    by_run: dict[tuple[str, str], list[Found]] = {}
    for f in files:
        by_run.setdefault(f.run_key, []).append(f)

    read_run = partial(_read_run, family=family, limit=limit, meta_files=MetaFiles(),
                       user_meta=user_meta, dlperf_only=dlperf_only)
    groups = list(by_run.values())
    figures = parse_cache.RunFigures() if cache or asked else None
    read_new = partial(_read_and_measure, read_run, asked) if asked else read_run
    if cache:
        runs = _read_runs_cached(groups, read_run, read_new, jobs, {
            "family": family, "max_bytes": limit, "dlperf_only": dlperf_only}, figures)
    else:
        runs = map_in_processes(read_new, groups, jobs)
    skipped = sum(len(g) if run is None else sum(r.skip for r in run.reads.values())
                  for g, run in zip(groups, runs, strict=True))
    runs = _leave_out_strays(groups, runs, all_problems)
    kept = drop_copies(runs, all_problems, limit,
                       lambda f: _read_file(f.path, f.family, True, limit, keyed=False).signature)
    for run in kept:
        all_problems += run.problems
    run_rows = _place_unread_runs(kept)
    if not run_rows and not all_problems:  # nothing found, or only files that are no logs
        names = [str(p) for p in paths]
        raise NoKnownLogsError(names, len(files), skipped, []) if files else NoLogsError(names)

    kinds: dict[str, dict[str, None]] = {}  # per run, its problems' kinds in first-seen order
    for p in all_problems:  # a loop, not a pandas groupby: one Python call per run there
        kinds.setdefault(p.run_id, {})[p.kind] = None
    for row in run_rows:
        row["problems"] = ";".join(kinds.get(row["run_id"], ()))
    placed = {id(row) for row in run_rows}
    if asked:
        _keep_made_figures([run for run in kept if id(run.row) in placed], figures)
    obs_parts = [part for run in kept if id(run.row) in placed for part in run.obs_parts]
    return ParseResult(None, None, None, obs_parts, files_found=len(files),
                       files_skipped=skipped, figures=figures, run_rows=run_rows,
                       problem_rows=all_problems)


@contextmanager
def gc_paused():
    """Python's cyclic garbage collector held off for the block: a parse makes hundreds of
    thousands of small dicts and lists that form no cycles (stores' heads, rows, problems;
    reference counting frees them), and the collector's passes over them took ~15 % of the
    CPU of a `summarize` on a filled cache. Forked workers inherit the pause."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_and_measure(read_run, asked: tuple, members: list[Found]) -> _Run | None:
    """`read_run` of one run, then its figures by `asked` (method names, warmup, measure),
    made from its row and problems as they are after reading it (see `_keep_made_figures`)."""
    run = read_run(members)
    if run is not None and run.main.family and not parsers.get(run.main.family).sidecar:
        from analysis.stats.per_run import figures_where_read

        record = run_record(dict(run.row, problems=";".join(
            dict.fromkeys(p.kind for p in run.problems if p.run_id == run.row["run_id"]))))
        files = [str(p) for p in run.reads]
        try:
            run.figures = (files, figures_where_read(
                record, [part for _, part, _ in run.obs_parts], run.problems, files, *asked))
        except Exception:  # noqa: BLE001 - the parent measures the run again and fails as it
            run.figures = None  # did, only for a run it counts (not a duplicate or a stray)
    return run


def _keep_made_figures(runs: list[_Run], figures: parse_cache.RunFigures) -> None:
    """The figures made where `runs` were read, for `run_records` to take (each under the
    digest it was made with); none for a run id that names two runs (their parts merge)."""
    count: dict[str, int] = {}
    for run in runs:
        count[run.row["run_id"]] = count.get(run.row["run_id"], 0) + 1
    for run in runs:
        if run.figures is not None and count[run.row["run_id"]] == 1:
            figures.add_made(run.row["run_id"], *run.figures)


def run_record(row: dict) -> dict:
    """A run's row as :meth:`ParseResult.run_records` gives it (RUN_FIELDS, printable)."""
    return {c: _printable(row[c]) for c in RUN_FIELDS}


def _leave_out_strays(groups: list[list[Found]], runs: list[_Run | None],
                      problems: list[Problem]) -> list[_Run]:
    """The runs read, less the strays of campaign folders (:mod:`analysis.strays`): each
    of those is a `stray_log` problem instead (its own problems are not the campaign's)."""
    out = []
    for members, run in zip(groups, runs, strict=True):
        if run is None:
            continue
        why = next((f.stray for f in members if f.stray), "")
        if not why:
            out.append(run)
            continue
        others = len(run.reads) - 1
        more = f" (nor its {others} other file{'s' * (others > 1)})" if others else ""
        problems.append(Problem(
            str(run.main.path), None, "stray_log",
            f"{why}: a log the campaign did not run; not counted{more}",
            run_id=run.row["run_id"]))
    return out


def _read_runs_cached(groups: list[list[Found]], read_run, read_new, jobs: int | None,
                      how: dict, figures: parse_cache.RunFigures) -> list[_Run | None]:
    """`read_run` of every group, through the parse cache: runs whose files are all kept
    are assembled here from what they gave, the others read by `read_new` (in `jobs`
    processes) and kept.
    Each run whose main log has an entry is added to `figures` (its figures are kept there)."""
    stores: dict[str, parse_cache.FolderCache] = {}
    known: dict[Path, FileRead] = {}
    for members in groups:
        for f in members:
            store = stores.get(f.run_key[0])
            if store is None:
                store = stores[f.run_key[0]] = parse_cache.FolderCache(f.run_key[0], how)
            hit = store.get(f.path, f.explicit, f.real_path)
            if hit is not None:
                fields, parsed, problems, sig = hit
                known[f.path] = FileRead(f.path, parsed, problems, fields["family"],
                                         bytes.fromhex(fields["digest"]), fields["skip"], sig)
    todo = [i for i, members in enumerate(groups)
            if any(f.path not in known for f in _files_read(members))]
    unread = set(todo)
    runs = [None if i in unread else read_run(members, known=known)
            for i, members in enumerate(groups)]
    kept: dict[Path, str] = {}  # entry names of the files read now and kept
    for i, run in zip(todo, map_in_processes(read_new, [groups[i] for i in todo], jobs), strict=True):
        runs[i] = run
        for f in groups[i]:
            read = run.reads.get(f.path) if run is not None else None
            if read is not None and not any(p.kind == "unreadable_file" for p in read.problems):
                name = stores[f.run_key[0]].put(f.path, f.explicit, {
                    "family": read.family, "digest": read.digest.hex(), "skip": read.skip},
                    read.parsed, read.problems, f.real_path, read.signature)
                if name is not None:
                    kept[f.path] = name
    for i, (members, run) in enumerate(zip(groups, runs, strict=True)):
        main = next((f for f in members if run is not None and f.path == run.main.path), None)
        if main is None:
            continue
        unchanged = i not in unread
        name = (parse_cache.entry_name(main.real_path or os.path.realpath(main.path))
                if unchanged else kept.get(main.path))
        if name is not None:
            figures.add(run.row["run_id"], stores[main.run_key[0]], name,
                        [str(p) for p in run.reads], unchanged)
    for store in stores.values():
        store.save()
    return runs


#: Below this many runs, this process reads them all: starting workers costs more.
MIN_PARALLEL = 48


def map_in_processes(fn, items: list, jobs: int | None = None) -> list:
    """``[fn(x) for x in items]``, spread over `jobs` forked processes (default: one per CPU
    core) when there are at least MIN_PARALLEL items. Workers ignore Ctrl-C: this process
    gets it, cancels what is left and waits for them, so none stays behind."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    jobs = min(jobs or cores or 1, len(items))
    if jobs <= 1 or len(items) < MIN_PARALLEL:
        return [fn(x) for x in items]
    context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else None)
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=signal.signal,
                               initargs=(signal.SIGINT, signal.SIG_IGN))
    # Ctrl-C is held back while workers are forked: one arriving mid-fork would interrupt the
    # child's fork handlers before it ignores SIGINT and print a stray traceback; held, it
    # reaches only this process once they are started
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:  # chunks of a few dozen runs: few pickled batches, yet an even spread
        try:
            results = pool.map(fn, items, chunksize=max(1, min(64, len(items) // (jobs * 4))))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return list(results)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Run:
    """One run while it is assembled: its row, parsed parts and problems."""

    row: dict
    main: FileRead
    relative_id: str  # as named under its command-line path (the same in a copied folder)
    folder: str  # the real folder of its files (`Found.run_key`)
    path_case: dict
    obs_parts: list[tuple[dict, ParsedLog, str]]
    problems: list[Problem]
    reads: dict[Path, FileRead] = field(default_factory=dict)  # what each file gave
    #: (files, {key: (digest, figure)}) when measured where read (`_read_and_measure`)
    figures: tuple | None = None


def _read_run(members: list[Found], family: str | None, limit: int, meta_files: MetaFiles,
              user_meta: dict, dlperf_only: bool = False,
              known: dict[Path, FileRead] | None = None) -> _Run | None:
    """Read the files of one run (one file per role) into its row; None when there is none.
    Files in `known` are not read again: what they gave is there."""
    rid = printable(members[0].run_id)  # as frames and problems give it
    # a run with GPU samples is read whole: which samples are its own, and its energy's
    # window, come from its log's last lines too
    dlperf_only = dlperf_only and all(_role(f.path.name)[1] == "log" for f in members)
    problems: list[Problem] = []
    reads: list[FileRead] = []
    every: dict[Path, FileRead] = {}
    roles: dict[tuple[int, str], Path] = {}
    for f in _by_preference(members):
        first = roles.get(_role(f.path.name))
        probed = is_probed_name(f.path.name)
        if first is not None and not probed:
            problems.append(Problem(
                str(f.path), None, "duplicate_run",
                f"a second file of this run beside {first}; only {first.name} is read",
                run_id=rid))
            continue
        read = (known or {}).get(f.path) or _read_file(f.path, family, f.explicit, limit,
                                                      dlperf_only)
        every[f.path] = read
        if first is not None:  # a probed file beside the run's log: a second log, or none
            if not read.skip:
                problems.append(Problem(
                    str(f.path), None, "duplicate_run",
                    f"a second log of this run beside {first}; only {first.name} is read",
                    run_id=rid))
            continue
        if not read.skip:  # a file that is no log does not take its role (x.err beside x.out)
            roles[_role(f.path.name)] = f.path
            reads.append(read)
    if not reads:
        return None
    main = _main_file(reads)
    parsed, fam = main.parsed, main.family
    main_trains = parsed is not None and M.TRAIN in parsed.obs.phases()
    trains = main_trains or any(r.parsed is not None and M.TRAIN in r.parsed.obs.phases()
                                for r in reads)
    for read in reads:
        probs = read.problems
        if main_trains and read is not main and node_index(read.path) > 0:
            # other nodes of a multi-node run print no training lines by design
            probs = [p for p in probs if p.kind not in _QUIET_ON_OTHER_NODES]
        problems += [_with_run(p, rid) for p in probs]
    path_meta = meta_from_path(main.path)
    for key in [k for k in _INT_META if k in path_meta and not is_count(path_meta[k])]:
        problems.append(Problem(str(main.path), None, "impossible_value",
                                f"the path says {key}={path_meta.pop(key)}, not a count "
                                f"from 1 to {MAX_COUNT:,}; not used", run_id=rid))
    stated = meta_files.for_log(main.path) + ([("--meta", user_meta)] if user_meta else [])
    merged, origin = _stated_meta(path_meta, stated)
    run_problems = [Problem(str(main.path), None, "metadata_conflict", why, run_id=rid)
                    for why in against_path(path_meta, merged, origin)]
    merged = _merge_meta(rid, str(main.path), merged, origin, parsed, run_problems)
    if parsed is not None:
        merged.setdefault("framework", parsers.get(fam).framework)
    row = _run_row(rid, str(main.path), fam, merged, parsed)
    _derived_counts(row, run_problems)
    # the dump's accumulation counts matter only against a stated global batch: not read
    # (a test of every dump key) for the runs that state none
    odd = stated_global_batch(row, origin, parsed is not None
                              and parsed.meta.get("global_batch_size") is not None,
                              accumulation_counts(parsed.parameters)
                              if parsed is not None and "global_batch_size" in origin
                              else set())
    if odd:
        run_problems.append(Problem(str(main.path), None, *odd, run_id=rid))
    obs_parts = []
    for read in reads:
        if read.parsed is not None:
            part = read.parsed
            if read is not main and parsers.get(read.family).sidecar:
                part = own_samples(read.path, part, parsed, main.path, rid, run_problems,
                                   row.get("gpus_per_node"))
            elif read is main and not parsers.get(read.family).sidecar:
                # nvidia-smi blocks printed into the log itself: held to its time alike
                part = in_run_time(read.path, part, parsed, main.path, rid, run_problems)
            obs_parts.append((row, part, str(read.path)))
            row["n_observations"] += len(part.obs)
            if read.parsed is not parsed:  # a copy: the row shares the main file's dict
                row["parameters"] = {**row["parameters"], **read.parsed.parameters}
    problems += run_problems + _run_level_problems(row, parsed, fam, trains)
    path_case = {k: path_meta[k] for k in _PATH_CASE if k in path_meta}
    return _Run(row, main, members[0].relative_id, members[0].run_key[0], path_case, obs_parts,
                problems, every)


def _place_unread_runs(runs: list[_Run]) -> list[dict]:
    """Rows of the runs; a run whose log no parser could read is no case of its own: it
    joins the case its path names when a run read in the same folder has that case (its
    problem then counts there, not its repeat), and has no row otherwise. A run of sidecar
    files alone (a crashed run's nvidia-smi samples beside an empty log) joins that case
    too, and keeps a row of its own where there is none."""
    def read_log(run: _Run) -> bool:
        return bool(run.main.family) and not parsers.get(run.main.family).sidecar

    cases: dict[tuple, list[dict]] = {}
    for run in runs:
        if read_log(run) and run.path_case:
            key = (run.folder, tuple(sorted(run.path_case.items())))
            cases.setdefault(key, []).append(run.row)
    rows = []
    for run in runs:
        if not read_log(run):
            key = (run.folder, tuple(sorted(run.path_case.items())))
            like = {tuple(r[k] for k in _RUN_CASE) for r in cases.get(key, [])}
            if run.path_case and len(like) == 1:
                run.row.update(zip(_RUN_CASE, next(iter(like))))
            elif not run.main.family:
                continue
        rows.append(run.row)
    return rows


def _with_run(p: Problem, rid: str) -> Problem:
    return p if p.run_id else Problem(p.source, p.line, p.kind, p.reason, p.text, rid)


def _main_file(reads: list[FileRead]) -> FileRead:
    """The run's log: node 0's non-sidecar file, else any non-sidecar, else the first."""
    def rank(read: FileRead):
        is_log = bool(read.family) and not parsers.get(read.family).sidecar
        return (not is_log, node_index(read.path) != 0, not read.family)

    return reads[0] if len(reads) == 1 else min(reads, key=rank)


def _run_row(rid: str, source: str, fam: str, meta: dict, parsed: ParsedLog | None) -> dict:
    row = {k: meta.get(k) for k in META_FIELDS}
    for k in _INT_META:
        if row[k] is not None:
            row[k] = int(row[k])
    _complete_devices(row, parsed)
    n, g, b = row["num_nodes"], row["gpus_per_node"], row["batch_size_per_device"]
    if row.get("num_devices") is None:
        row["num_devices"] = n * g if n is not None and g is not None else None
    if row["global_batch_size"] is None and row["num_devices"] and b is not None:
        row["global_batch_size"] = row["num_devices"] * b
    if row["repeat"] is None:
        row["repeat"] = 1
    row.update(run_id=rid, source=source, family=fam, n_observations=0, problems="",
               parameters=parsed.parameters if parsed else {})  # one dict to send back
    label = parsers.get(fam).case_label(row) if fam else None
    if label is not None:  # from the final fields: the log may correct the path
        row["case"], row["group"] = label
    row["case"] = row["case"] or ""
    row["group"] = row["group"] or ""
    return row


def _complete_devices(row: dict, parsed: ParsedLog | None) -> None:
    """Devices from the world size a log states (Megatron's argument dump): the total, and
    nodes or GPUs per node when the other is known and divides it."""
    try:
        world = int(parsed.parameters.get("world_size", "")) if parsed else 0
    except ValueError:
        world = 0
    if world < 1:
        return
    n, g = row["num_nodes"], row["gpus_per_node"]
    if n is None and g is not None and world % g == 0:
        row["num_nodes"] = world // g
    elif g is None and n is not None and world % n == 0:
        row["gpus_per_node"] = world // n
    if row["num_nodes"] is None or row["gpus_per_node"] is None:
        row["num_devices"] = world


def _run_level_problems(row: dict, parsed: ParsedLog | None, fam: str,
                        trains: bool) -> list[Problem]:
    """The run's missing training lines (`trains`: whether any of its files, e.g. the last
    node's of a Megatron run, has them) and missing run fields."""
    if parsed is None or not fam or parsers.get(fam).sidecar:
        return []
    out = []
    src, rid = row["source"], row["run_id"]
    if not trains:
        out.append(Problem(src, None, "no_training_lines",
                           f"no training lines found by the {fam} parser "
                           "(a non-master node's log, or the run died before training)",
                           run_id=rid))
    missing = [k for k in ("num_nodes", "gpus_per_node") if row[k] is None]
    if row["batch_size_per_device"] is None and row["global_batch_size"] is None:
        missing.append("batch_size_per_device")
    if missing:
        out.append(Problem(src, None, "missing_metadata",
                           f"unknown {', '.join(missing)}: {_STATE_IT}", run_id=rid))
    return out


def problems_of(df: pd.DataFrame) -> list[Problem]:
    """The rows of a problems frame (schema.PROBLEMS) as `Problem` values, in order."""
    return [Problem(source, None if line is None else int(line), kind, reason,
                    "" if text is None else text, run_id)
            for source, line, kind, reason, text, run_id in zip(
                df["source"], _none(df["line"]), df["kind"], df["reason"], _none(df["text"]),
                _none(df["run_id"]), strict=True)]


#: The columns of the runs frame, as :meth:`ParseResult.run_records` gives them.
RUN_FIELDS = schema.names(schema.RUNS)


def records_of(df: pd.DataFrame) -> list[dict]:
    """The rows of a frame as dicts, a missing value (NA, NaN, None) as None."""
    names = [str(c) for c in df.columns]
    return [dict(zip(names, row, strict=True))
            for row in zip(*(_none(df[c]) for c in df.columns), strict=True)] \
        if names else [{} for _ in range(len(df))]


def _none(column) -> list:
    """A frame column's values, a missing one as None (an argument dump is kept whole)."""
    out = column.tolist()
    return [None if not isinstance(v, (dict, list)) and schema.is_missing(v) else v for v in out]


def _runs_frame(rows: list[dict]) -> pd.DataFrame:
    import pandas as pd

    if not rows:
        return schema.empty(schema.RUNS)
    df = pd.DataFrame([{k: _printable(v) for k, v in row.items()} for row in rows])
    for c in schema.RUNS:
        if c.dtype == "Int64":
            df[c.name] = pd.array([None if v is None or v != v else int(v) for v in df[c.name]],
                                  dtype="Int64")
    return schema.coerce(df, schema.RUNS)


def _categorical(per_block: list[object], lengths: np.ndarray) -> pd.Categorical:
    """Categorical of blocks' values (a scalar, or an object array of the block's length),
    without hashing a row of a scalar block."""
    import pandas as pd

    cats: dict[str, int] = {}
    if all(isinstance(v, str) or v is None for v in per_block):
        codes = [cats.setdefault("" if v is None else v, len(cats)) for v in per_block]
        code_arr = np.repeat(np.array(codes, np.int32), lengths)
    else:
        parts = []
        for v, n in zip(per_block, lengths.tolist(), strict=True):
            if isinstance(v, str) or v is None:
                parts.append(np.full(n, cats.setdefault("" if v is None else v, len(cats)), np.int32))
            else:
                uniq, inv = np.unique(np.asarray(v, dtype=str), return_inverse=True)
                mapping = np.array([cats.setdefault(u, len(cats)) for u in uniq], dtype=np.int32)
                parts.append(mapping[inv])
        code_arr = np.concatenate(parts) if parts else np.empty(0, np.int32)
    return pd.Categorical.from_codes(code_arr, categories=[_printable(c) for c in cats])


def _printable(value):
    """Strings from odd file names (non-UTF-8, control characters) as ``\\xNN`` text."""
    return printable(value) if isinstance(value, str) else value


def _int_column(a: np.ndarray) -> pd.arrays.IntegerArray:
    import pandas as pd

    return pd.arrays.IntegerArray(a, a < 0)


#: Rows of one frame of :func:`observation_frames` (about: runs are not split).
FRAME_ROWS = 1 << 20


def observation_frames(parts: list[tuple[dict, ParsedLog, str]],
                       rows: int = FRAME_ROWS) -> Iterable[pd.DataFrame]:
    """schema.OBSERVATIONS frames of `parts` in order, each of about `rows` rows (at least
    one frame): written one after another they are the observations frame, never held
    whole (``dlperf parse -o``)."""
    chunk, held, done = [], 0, False
    for part in parts:
        chunk.append(part)
        held += sum(b["n"] for b in part[1].obs.blocks)
        if held >= rows:
            yield _observations_frame(chunk)
            chunk, held, done = [], 0, True
    if chunk or not done:
        yield _observations_frame(chunk)


def _observations_frame(parts: list[tuple[dict, ParsedLog, str]]) -> pd.DataFrame:
    blocks = [(row, b, src) for row, parsed, src in parts for b in parsed.obs.blocks]
    if not blocks:
        return schema.empty(schema.OBSERVATIONS)
    lengths = np.array([b["n"] for _, b, _ in blocks], np.int64)
    cols: dict[str, object] = {}
    for name in ("run_id", "family", "framework", "model", "precision"):
        cols[name] = _categorical([row[name] for row, _, _ in blocks], lengths)
    cols["source"] = _categorical([src for _, _, src in blocks], lengths)  # sidecars: their own
    for name in ("num_nodes", "gpus_per_node", "batch_size_per_device", "repeat"):
        per_block = np.array([-1 if row[name] is None else row[name] for row, _, _ in blocks],
                             np.int64)
        cols[name] = _int_column(np.repeat(per_block, lengths))
    cols["line"] = np.concatenate([b["line"] for _, b, _ in blocks]).astype(np.int64, copy=False)
    for name in ("rank", "device", "epoch", "step"):
        cols[name] = _int_column(np.concatenate([b[name] for _, b, _ in blocks]))
    for name in ("phase", "metric", "unit"):
        cols[name] = _categorical([b[name] for _, b, _ in blocks], lengths)
    cols["timestamp"] = np.concatenate([b["timestamp"] for _, b, _ in blocks])
    cols["value"] = np.concatenate([b["value"] for _, b, _ in blocks])
    import pandas as pd

    df = pd.DataFrame(cols, copy=False)[schema.names(schema.OBSERVATIONS)]
    return schema.validate(df, schema.OBSERVATIONS)


def _parts_of_frame(obs: pd.DataFrame) -> list[tuple[dict, ParsedLog, str]]:
    """`ParseResult.parts` of an observations frame: one ParsedLog per run and source file, a
    block per phase, metric and unit (rows in the frame's order; a missing integer -1, as
    parsers give it)."""
    cols = {c: obs[c].to_numpy(dtype=np.int64, na_value=-1)
            for c in ("line", "rank", "device", "epoch", "step")}
    cols.update({c: obs[c].to_numpy(dtype=np.float64, na_value=np.nan)
                 for c in ("timestamp", "value")})
    logs: dict[tuple, ParsedLog] = {}
    keys = ["run_id", "source", "phase", "metric", "unit"]
    for (rid, source, phase, metric, unit), rows in obs.groupby(
            keys, observed=True, sort=False, dropna=False).indices.items():
        parsed = logs.get((rid, source))
        if parsed is None:
            parsed = logs[rid, source] = ParsedLog(str(obs["family"].iat[rows[0]]))
        parsed.obs.blocks.append({"n": len(rows), "phase": str(phase), "metric": str(metric),
                                  "unit": str(unit), **{c: v[rows] for c, v in cols.items()}})
    return [({"run_id": str(rid)}, parsed, str(source)) for (rid, source), parsed in logs.items()]
