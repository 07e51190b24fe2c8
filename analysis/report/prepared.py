"""The language-independent data of a report, computed once per build and handed to the
report kernels as Parquet files.

`dlperf report` parses the logs once, writes the frames with :func:`save` into a folder it
made for this build only (``mkdtemp``: mode 0700, removed afterwards), and each kernel reads
them with :func:`load`. The hand-over holds data only: nothing is unpickled, so a file
planted in an output folder cannot run code. Environment, topology and campaign records are
small; each kernel reads them again from LOG_DIR.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.collect import ParseResult
from analysis.env import folder_records
from analysis.env.folder_records import CampaignInput, EnvInput, TopoInput
from analysis.errors import DLPerfError, UsageError
from analysis.fsutil import atomic_write_text
from analysis.report.baseline import Changes, ReferenceRatios
from analysis.suite_version import suite_commit

#: Written last by :func:`save`: the frames beside it are complete.
READY = "ready.json"
#: The comparison with a baseline (``--baseline``), when there is one.
CHANGES = "changes"
#: The matches of a references file (``--references``), when there is one.
REFERENCES = "references"


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
    changes: Changes | None = None  # the comparison with --baseline
    references: ReferenceRatios | None = None  # the matches of --references
    agreement: pd.DataFrame | None = None  # stats.method_agreement: the methods per case
    #: charts built once for all the languages shown in one process (``plots.build_once``),
    #: by name and settings; None where data are not shared by languages (each built for its
    #: own)
    charts: dict | None = None

    def frames(self) -> dict[str, pd.DataFrame]:
        """The frames :func:`save` writes, by file name."""
        out = {"observations": self.result.observations, "parsed_runs": self.result.runs,
               "problems": self.result.problems, "runs": self.runs, "summary": self.summary,
               "trace": self.trace}
        if self.agreement is not None:
            out["agreement"] = self.agreement
        return out

    @property
    def disagreements(self) -> dict[tuple, float]:
        """Case key (``tables.case_key``) -> largest / smallest median − 1 over the
        throughput methods, for the cases where they differ by more than 5 %."""
        from analysis.report.tables import case_key

        a = self.agreement
        if a is None or a.empty:
            return {}
        return {case_key(r): float(r["difference"]) for _, r in a[a["disagree"]].iterrows()}


def compute(log_dir=None, env=None, topology=None, method: str = "dlperf",
            warmup: int | None = None, measure: int | None = None,
            meta: dict | None = None, baseline: str | Path | None = None,
            store: str | Path | None = None, threshold: float | None = None,
            references: str | Path | None = None) -> Prepared:
    """Parse and summarise `log_dir` (default: the bundled data/raw_logs); `meta` states run
    fields the logs and paths do not. With `baseline` (a log folder, a Parquet export or, with
    `store`, a stored campaign) the cases are also compared with it at `threshold`; with
    `references` (a references file) they are matched with its references."""
    from analysis import stats
    from analysis.collect import parse_paths
    from analysis.stats.agreement import method_agreement, runs_by_method

    root = folder_records.resolve_log_dir(log_dir)
    result = parse_paths([root], meta=meta)
    by_method = runs_by_method(result, warmup, measure)  # the report's own method among them
    runs = by_method[method]
    summary = stats.summarize(result, method=method, warmup=warmup, measure=measure, runs=runs)
    trace = stats.iteration_throughput(result)
    agreement = method_agreement(by_method)
    envs, topos, camp = folder_records.gather(root, env, topology)
    changes = None
    if baseline is not None:
        from analysis.changes.verdict import DEFAULT_THRESHOLD
        from analysis.report.baseline import compare_with

        changes = compare_with(baseline, store, root, runs, summary, envs, method,
                               DEFAULT_THRESHOLD if threshold is None else threshold)
    ratios = None
    if references is not None:
        from analysis.report.baseline import match

        ratios = match(references, summary, runs, envs)
    return Prepared(root, result, runs, summary, trace, envs, topos, camp, suite_commit(),
                    changes, ratios, agreement)


def _json_columns(frame: pd.DataFrame) -> list[str]:
    """Object columns holding mappings or lists (run parameters): Parquet would turn them
    into structs with every key of every row, so they travel as JSON text."""
    return [c for c in frame.columns if frame[c].dtype == object
            and frame[c].map(lambda v: isinstance(v, (dict, list))).any()]


def save(data: Prepared, folder: str | Path) -> None:
    """Write `data`'s frames into `folder` as Parquet, then the READY file."""
    folder = Path(folder)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    as_json: dict[str, list[str]] = {}
    as_object: dict[str, list[str]] = {}  # text columns Parquet would read back as str
    for name, frame in data.frames().items():
        cols = _json_columns(frame)
        as_object[name] = [c for c in frame.columns if frame[c].dtype == object and c not in cols]
        if cols:
            frame = frame.assign(**{c: frame[c].map(
                lambda v: None if v is None else json.dumps(v, default=str)) for c in cols})
        as_json[name] = cols
        frame.to_parquet(folder / f"{name}.parquet")
    if data.changes is not None:
        data.changes.table.to_parquet(folder / f"{CHANGES}.parquet")
    if data.references is not None:
        data.references.table.to_parquet(folder / f"{REFERENCES}.parquet")
    atomic_write_text(folder / READY, json.dumps({
        "log_dir": str(data.log_dir), "suite_commit": data.suite_commit, "json_columns": as_json,
        "object_columns": as_object,
        CHANGES: _meta(data.changes), REFERENCES: _meta(data.references)}))


def _meta(found: Changes | ReferenceRatios | None) -> dict | None:
    """Everything of `found` but its table, as plain data (its table is a Parquet file)."""
    if found is None:
        return None
    return {f.name: getattr(found, f.name) for f in dataclasses.fields(found) if f.name != "table"}


def _read(folder: Path, name: str, json_columns: list[str],
          object_columns: list[str] = ()) -> pd.DataFrame:
    frame = pd.read_parquet(folder / f"{name}.parquet")
    for c in object_columns:
        frame[c] = frame[c].astype(object)
    for c in json_columns:
        frame[c] = pd.Series([json.loads(v) if isinstance(v, str) else None for v in frame[c]],
                             index=frame.index, dtype=object)
    return frame


def load(folder: str | Path, env=None, topology=None) -> Prepared:
    """The data :func:`save` wrote into `folder`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"no such data folder: {folder}")
    ready = folder / READY
    if not ready.exists():
        raise DLPerfError(f"no parsed data in {folder} (no {READY})")
    meta = json.loads(ready.read_text(encoding="utf-8"))
    cols = meta["json_columns"]
    objects = meta.get("object_columns", {})
    frames = {name: _read(folder, name, cols.get(name, []), objects.get(name, []))
              for name in cols}
    root = Path(meta["log_dir"])
    envs, topos, camp = folder_records.gather(root, env, topology)
    result = ParseResult(frames["observations"], frames["parsed_runs"], frames["problems"])
    changes = None
    if meta.get(CHANGES) is not None:
        changes = Changes(pd.read_parquet(folder / f"{CHANGES}.parquet"), **meta[CHANGES])
    ratios = None
    if meta.get(REFERENCES) is not None:
        ratios = ReferenceRatios(pd.read_parquet(folder / f"{REFERENCES}.parquet"),
                                 **meta[REFERENCES])
    return Prepared(root, result, frames["runs"], frames["summary"], frames["trace"], envs,
                    topos, camp, meta["suite_commit"], changes, ratios, frames.get("agreement"),
                    charts={})


_LOADED: dict[tuple, Prepared] = {}


def load_once(folder: str | Path, env=None, topology=None) -> Prepared:
    """:func:`load`, once per folder in this process: a kernel that builds several
    languages reads the data once (the folder is private to one build)."""
    key = (str(Path(folder).resolve()), repr(env), repr(topology))
    if key not in _LOADED:
        _LOADED[key] = load(folder, env, topology)
    return _LOADED[key]

