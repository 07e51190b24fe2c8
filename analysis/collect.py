"""Find log files, run the right parser on each, and assemble the validated tidy frames.

One bad file never hides the good ones: every failure becomes a row of the problems
frame (and a flag on its run), unless `strict` asks for the first one to be raised.
"""

from __future__ import annotations

import traceback
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import metrics as M
from analysis import parsers, schema
from analysis.checks import check_parsed
from analysis.errors import LogProblemError, UsageError
from analysis.layout import gpt_case, gpt_group, meta_from_path, node_index, run_stem
from analysis.logtext import LogText
from analysis.parsers.base import META_FIELDS, ParsedLog
from analysis.problems import Problem, to_frame

#: Suffixes (before an optional .gz) of files picked up when walking a folder.
WALK_SUFFIXES = (".log", ".out", ".mem", ".gpu.csv", ".json")
#: File names never taken for logs when walking a folder (records the suite writes itself).
IGNORED_NAMES = ("env.json", "status.json", "campaign.json", "summary.json")
#: Problems not reported for the logs of nodes other than node 0 when node 0 trained.
_QUIET_ON_OTHER_NODES = ("unknown_format", "no_training_lines")
_INT_META = ("num_nodes", "gpus_per_node", "batch_size_per_device", "global_batch_size",
             "repeat", "data_parallel", "tensor_parallel", "pipeline_parallel", "seq_length",
             "num_layers", "hidden_size", "num_heads", "vocab_size")


@dataclass
class ParseResult:
    """The three tidy frames of a parse: observations, runs and problems."""

    observations: pd.DataFrame  # schema.OBSERVATIONS
    runs: pd.DataFrame  # schema.RUNS
    problems: pd.DataFrame  # schema.PROBLEMS

    def summary(self, **kwargs) -> pd.DataFrame:
        from analysis.stats import summarize

        return summarize(self, **kwargs)


def _walk(path: Path) -> list[Path]:
    out = []
    for p in sorted(path.rglob("*")):
        if not p.is_file() or p.name in IGNORED_NAMES or p.name.endswith(".env.json"):
            continue
        name = p.name[:-3] if p.name.endswith(".gz") else p.name
        if name.endswith(WALK_SUFFIXES):
            out.append(p)
    return out


def discover(paths: Iterable[str | Path]) -> list[tuple[Path, str, bool]]:
    """(file, run id, named explicitly) for every file under `paths`, in a stable order."""
    found: list[tuple[Path, str, bool]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for f in _walk(path):
                rel = f.parent.relative_to(path).as_posix()
                rid = run_stem(f) if rel == "." else f"{rel}/{run_stem(f)}"
                found.append((f, rid, False))
        elif path.is_file():
            found.append((path, run_stem(path), True))
        else:
            raise UsageError(f"no such file or folder: {path}")
    return found


def _read_one(path: Path, family: str | None, explicit: bool) -> tuple[ParsedLog | None, list[Problem], str]:
    """Parse one file; returns (parsed or None, problems, family name or '')."""
    source = str(path)
    try:
        log = LogText.read(path, source)
    except (OSError, EOFError, zlib.error) as exc:
        return None, [Problem(source, None, "unreadable_file", f"cannot read: {exc}")], ""
    parser = parsers.get(family) if family else parsers.detect(log.head())
    if parser is None:
        if not explicit and path.name.endswith((".json", ".json.gz")):
            return None, [], "skip"  # some other JSON file living next to the logs
        first = next((ln for ln in log.decode().splitlines() if ln.strip()), "")
        return None, log.problems + [Problem(
            source, None, "unknown_format",
            f"no parser recognises this file (families: {', '.join(parsers.names())})",
            first[:200])], ""
    try:
        parsed = parser.parse(log)
    except Exception as exc:  # a parser bug must not hide the other files
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return None, log.problems + [Problem(source, None, "parser_error",
                                             f"{parser.name} parser failed: {tb}")], parser.name
    if parsed.obs.blocks:
        ranks_known = bool(log.line_ranks)
        if ranks_known:
            for b in parsed.obs.blocks:
                if (b["rank"] < 0).all():
                    b["rank"] = log.ranks_at(b["line"])
    check_parsed(parsed, log)
    return parsed, log.problems + parsed.problems, parser.name


def _merge_meta(run_id: str, source: str, path_meta: dict, parsed: ParsedLog | None,
                problems: list[Problem]) -> dict:
    """Path fields overridden by log-stated ones; each disagreement becomes a problem."""
    meta = dict(path_meta)
    if parsed is None:
        return meta
    for key, val in parsed.meta.items():
        if val is None:
            continue
        old = meta.get(key)
        if old is not None and str(old) != str(val):
            line = parsed.meta_lines.get(key)
            problems.append(Problem(
                source, line, "metadata_conflict",
                f"the path says {key}={old}, the log says {key}={val}; using the log's value",
                run_id=run_id))
        meta[key] = val
    return meta


def parse_paths(paths: Iterable[str | Path], family: str | None = None,
                strict: bool = False) -> ParseResult:
    """Parse every log under `paths` (files or folders, searched recursively).

    `family` forces one parser instead of sniffing each file. With `strict`, the first
    problem raises LogProblemError; otherwise problems are returned as data.
    Returns a ParseResult with frames `observations` (schema.OBSERVATIONS), `runs`
    (schema.RUNS) and `problems` (schema.PROBLEMS).
    """
    if family:
        parsers.get(family)  # fail fast on an unknown name
    files = discover(paths)
    by_run: dict[str, list[tuple[Path, bool]]] = {}
    for f, rid, explicit in files:
        by_run.setdefault(rid, []).append((f, explicit))

    all_problems: list[Problem] = []
    run_rows: list[dict] = []
    obs_parts: list[tuple[dict, ParsedLog, str]] = []
    for rid, members in by_run.items():
        parsed_files = []
        file_problems: dict[Path, list[Problem]] = {}
        for path, explicit in members:
            parsed, probs, fam = _read_one(path, family, explicit)
            if fam == "skip":
                continue
            file_problems[path] = probs
            parsed_files.append((path, parsed, fam))
        if not parsed_files:
            continue
        main = _main_file(parsed_files)
        path, parsed, fam = main
        main_trains = parsed is not None and M.TRAIN in parsed.obs.phases()
        for fpath, probs in file_problems.items():
            if main_trains and fpath is not path and node_index(fpath) > 0:
                # other nodes of a multi-node run print no training lines by design
                probs = [p for p in probs if p.kind not in _QUIET_ON_OTHER_NODES]
            all_problems += [_with_run(p, rid) for p in probs]
        run_problems: list[Problem] = []
        meta = _merge_meta(rid, str(path), meta_from_path(path), parsed, run_problems)
        if parsed is not None:
            meta.setdefault("framework", parsers.get(fam).framework)
        row = _run_row(rid, str(path), fam, meta, parsed)
        for spath, sparsed, _ in parsed_files:
            if sparsed is not None:
                obs_parts.append((row, sparsed, str(spath)))
                row["n_observations"] += len(sparsed.obs)
                if sparsed is not parsed:
                    row["parameters"].update(sparsed.parameters)
        run_problems += _run_level_problems(row, parsed, fam)
        all_problems += run_problems
        run_rows.append(row)

    problems = to_frame(all_problems)
    if strict and all_problems:
        p = all_problems[0]
        raise LogProblemError(p.source, p.line, f"{p.kind}: {p.reason}", p.text)
    kinds = problems.groupby("run_id")["kind"].agg(lambda s: ";".join(dict.fromkeys(s)))
    for row in run_rows:
        row["problems"] = kinds.get(row["run_id"], "")
    runs = _runs_frame(run_rows)
    observations = _observations_frame(obs_parts)
    return ParseResult(observations, runs, problems)


def _with_run(p: Problem, rid: str) -> Problem:
    return p if p.run_id else Problem(p.source, p.line, p.kind, p.reason, p.text, rid)


def _main_file(parsed_files):
    """The run's log: node 0's non-sidecar file, else any non-sidecar, else the first."""
    def rank(item):
        path, _, fam = item
        is_log = bool(fam) and not parsers.get(fam).sidecar
        return (not is_log, node_index(path) != 0, not fam)

    return min(parsed_files, key=rank)


def _run_row(rid: str, source: str, fam: str, meta: dict, parsed: ParsedLog | None) -> dict:
    row = {k: meta.get(k) for k in META_FIELDS}
    for k in _INT_META:
        if row[k] is not None:
            row[k] = int(row[k])
    n, g, b = row["num_nodes"], row["gpus_per_node"], row["batch_size_per_device"]
    row["num_devices"] = n * g if n is not None and g is not None else None
    if row["global_batch_size"] is None and row["num_devices"] and b is not None:
        row["global_batch_size"] = row["num_devices"] * b
    if row["repeat"] is None:
        row["repeat"] = 1
    row.update(run_id=rid, source=source, family=fam, n_observations=0, problems="",
               parameters=dict(parsed.parameters) if parsed else {})
    gpt = [row[k] for k in ("data_parallel", "tensor_parallel", "pipeline_parallel",
                            "global_batch_size", "hidden_size", "num_layers")]
    if all(v is not None for v in gpt):  # from the final fields: the log may correct the path
        row["case"], row["group"] = gpt_case(*gpt), gpt_group(*gpt[:3])
    row["case"] = row["case"] or ""
    row["group"] = row["group"] or ""
    return row


def _run_level_problems(row: dict, parsed: ParsedLog | None, fam: str) -> list[Problem]:
    if parsed is None or not fam or parsers.get(fam).sidecar:
        return []
    out = []
    src, rid = row["source"], row["run_id"]
    if M.TRAIN not in parsed.obs.phases():
        out.append(Problem(src, None, "no_training_lines",
                           f"no training lines found by the {fam} parser "
                           "(a non-master node's log, or the run died before training)",
                           run_id=rid))
    missing = [k for k in ("num_nodes", "gpus_per_node", "batch_size_per_device") if row[k] is None]
    if missing:
        out.append(Problem(src, None, "missing_metadata",
                           f"unknown {', '.join(missing)}: name the file in the DLPerf layout "
                           "(<N>n<G>g/<model>_b<bsz>_<precision>_<repeat>.log)", run_id=rid))
    return out


def _runs_frame(rows: list[dict]) -> pd.DataFrame:
    if not rows:
        return schema.empty(schema.RUNS)
    df = pd.DataFrame(rows)
    for c in schema.RUNS:
        if c.dtype == "Int64":
            df[c.name] = pd.array([None if v is None or v != v else int(v) for v in df[c.name]],
                                  dtype="Int64")
    return schema.coerce(df, schema.RUNS)


def _categorical(parts: list[tuple[object, int]]) -> pd.Categorical:
    """Categorical from (scalar or object array, length) parts without per-row hashing."""
    cats: dict[str, int] = {}
    codes = []
    for v, n in parts:
        if isinstance(v, str) or v is None:
            key = "" if v is None else v
            codes.append(np.full(n, cats.setdefault(key, len(cats)), dtype=np.int32))
        else:
            uniq, inv = np.unique(np.asarray(v, dtype=str), return_inverse=True)
            mapping = np.array([cats.setdefault(u, len(cats)) for u in uniq], dtype=np.int32)
            codes.append(mapping[inv])
    code_arr = np.concatenate(codes) if codes else np.empty(0, np.int32)
    return pd.Categorical.from_codes(code_arr, categories=list(cats))


def _int_column(arrays: list[np.ndarray]) -> pd.arrays.IntegerArray:
    a = np.concatenate(arrays) if arrays else np.empty(0, np.int64)
    return pd.arrays.IntegerArray(a, a < 0)


def _observations_frame(parts: list[tuple[dict, ParsedLog, str]]) -> pd.DataFrame:
    blocks = [(row, b, src) for row, parsed, src in parts for b in parsed.obs.blocks]
    if not blocks:
        return schema.empty(schema.OBSERVATIONS)
    cols: dict[str, object] = {}
    for name in ("run_id", "family", "framework", "model", "precision"):
        cols[name] = _categorical([(row[name], b["n"]) for row, b, _ in blocks])
    cols["source"] = _categorical([(src, b["n"]) for _, b, src in blocks])  # sidecars: their own
    for name in ("num_nodes", "gpus_per_node", "batch_size_per_device", "repeat"):
        cols[name] = _int_column([np.full(b["n"], -1 if row[name] is None else row[name], np.int64)
                                  for row, b, _ in blocks])
    cols["line"] = np.concatenate([b["line"] for _, b, _ in blocks]).astype(np.int64)
    for name in ("rank", "device", "epoch", "step"):
        cols[name] = _int_column([b[name] for _, b, _ in blocks])
    for name in ("phase", "metric", "unit"):
        cols[name] = _categorical([(b[name], b["n"]) for _, b, _ in blocks])
    cols["timestamp"] = np.concatenate([b["timestamp"] for _, b, _ in blocks])
    cols["value"] = np.concatenate([b["value"] for _, b, _ in blocks])
    df = pd.DataFrame(cols)[schema.names(schema.OBSERVATIONS)]
    return schema.validate(df, schema.OBSERVATIONS)
