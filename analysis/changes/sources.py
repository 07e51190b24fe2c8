"""One side of a comparison, read from a log folder, a Parquet export of ``dlperf parse`` or a
results store: per-run throughput, the per-case summary and per-run environment facts.

A campaign's key is a digest of its observations, its environment facts and its runs frame
(argument dumps included), all without file paths, so the same logs and records give the same
key wherever they lie, and a log stating other settings gives another.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from analysis import schema
from analysis.changes import environment
from analysis.collect import ParseResult, parse_paths
from analysis.discover import NoLogsError
from analysis.env import folder_records
from analysis.errors import UsageError
from analysis.fsutil import display_path, printable
from analysis.parsers._shapes import dated
from analysis.redact import redact_env
from analysis.schema import case_key
from analysis.stats import RUN_COLUMNS, SUMMARY_COLUMNS, run_throughput, summarize
from analysis.strays import enclosing_campaign


@dataclass
class Campaign:
    """What the comparison, the check and the store use of one campaign."""

    label: str  # as the user named it (a path or a stored campaign)
    name: str
    started: str  # ISO 8601 UTC time of its first timestamped line ('' when none)
    key: str  # digest of its observations
    runs: pd.DataFrame  # analysis.stats.RUN_COLUMNS
    summary: pd.DataFrame  # analysis.stats.SUMMARY_COLUMNS
    env: pd.DataFrame  # environment.RUN_ENV_COLUMNS
    suite_commit: str = ""
    #: case key -> the runs its campaign records (done markers) say failed and left no log
    #: counted (folder_records.failed_by_case): a case absent from `summary` but here failed
    #: in every run, not "absent"
    failed_cases: dict = field(default_factory=dict)
    #: (run row, ParsedLog, source) of each file its runs' figures come from (none stored):
    #: what `compare` tells a run copied from the other side's by
    logs: list | None = None
    #: the parse its runs and summary come from (none stored): what the store summarises
    #: again when it leaves some runs out
    result: ParseResult | None = None


def content_key(observations: pd.DataFrame, env: pd.DataFrame, runs: pd.DataFrame) -> str:
    """A digest of the observations, the runs' environment facts and every column of the
    runs frame (run fields, argument dumps as `stated_dump` writes them), all but the file
    paths and the problems: the same lines under another stated global batch, or with another
    argument dump, are another campaign; the same files anywhere, or their export, one. The
    problems are what this suite's checks say of the logs, not what they state: a later
    suite that checks more keeps the campaign's key."""
    frame = observations.drop(columns=[c for c in ("source",) if c in observations.columns])
    digest = hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    digest.update(pd.util.hash_pandas_object(env, index=False).to_numpy().tobytes())
    fields = sorted(c for c in runs.columns if c not in ("source", "problems"))
    stated = runs[fields].sort_values("run_id").astype(object)
    stated = stated.where(stated.notna(), None)
    if "parameters" in stated.columns:
        stated["parameters"] = [stated_dump(p) for p in stated["parameters"]]
    digest.update(",".join(fields).encode())
    digest.update(pd.util.hash_pandas_object(stated.astype(str), index=False).to_numpy().tobytes())
    return digest.hexdigest()[:16]


def stated_dump(parameters) -> str:
    """A run's argument dump as a Parquet export keeps it: JSON text of its keys in order,
    secret-named values hidden (:func:`analysis.redact.redact_env`)."""
    return json.dumps(redact_env(parameters if isinstance(parameters, dict) else {}),
                      sort_keys=True)


def started_at(observations: pd.DataFrame) -> str:
    ts = observations["timestamp"].to_numpy(dtype=float)
    ts = ts[dated(ts)]
    if not ts.size:
        return ""
    return datetime.fromtimestamp(float(ts.min()), tz=timezone.utc).isoformat(timespec="seconds")


def from_result(result: ParseResult, label: str, name: str, envs, method: str = "dlperf",
                env: pd.DataFrame | None = None) -> Campaign:
    """A Campaign from a parse (`envs`: analysis.env.folder_records.EnvInput records; or
    `env`, the runs' facts an export kept)."""
    runs = run_throughput(result, method)
    summary = summarize(result, method, runs=runs)
    if env is None:
        env = environment.run_env(runs, envs)
    return Campaign(label, name, started_at(result.observations),
                    content_key(result.observations, env, result.runs), runs, summary, env,
                    logs=result.parsed_parts(), result=result)


def _campaign_name(folder: Path) -> str:
    """The name its campaign.yaml gives the campaign of `folder`, else the folder's; a folder
    inside another campaign's (its status.json above) is that one's part, named so:
    ``rn50_4gpu/1n1g``, not ``1n1g``."""
    name = _spec_name(folder)
    if name is None and (outer := enclosing_campaign(folder)) is not None:
        part = folder.resolve().relative_to(outer.resolve()) \
            if outer.resolve() in folder.resolve().parents else folder.resolve().name
        name = f"{_spec_name(outer) or outer.resolve().name}/{part}"
    return printable(name or folder.resolve().name)  # no escape sequence reaches a terminal


def _spec_name(folder: Path) -> str | None:
    """The name `folder`'s campaign.yaml states, None where it states none."""
    name = folder_records.campaign_yaml(folder_records.load_campaign(folder)).get("name")
    return str(name) if isinstance(name, (str, int)) and str(name) else None


def from_folder(folder: Path, method: str = "dlperf") -> Campaign:
    """A log folder as a campaign; records beside its logs that cannot be read, and fields of
    a wrong type in them, are left out, each said on stderr."""
    envs, _topologies, camp = folder_records.gather(folder)
    for name, why in camp.unreadable:
        print(f"dlperf: warning: {display_path(folder / name)}: {why}; left out", file=sys.stderr)
    for e in envs:
        for why in e.problems:
            print(f"dlperf: warning: {display_path(folder / e.name)}: {why}", file=sys.stderr)
    try:
        result = parse_paths([folder])
    except NoLogsError:
        if not camp.failed:
            raise
        return _all_failed(folder, camp)
    campaign = from_result(result, str(folder), _campaign_name(folder), envs, method)
    campaign.failed_cases = folder_records.failed_by_case(camp, campaign.runs["run_id"])
    if note := folder_records.failed_cases_text(
            campaign.failed_cases, {case_key(r) for r in campaign.summary.to_dict("records")}):
        print(f"dlperf: {display_path(folder)}: {note}", file=sys.stderr)
    _say_strays(folder, result)
    return campaign


def _say_strays(folder: Path, result: ParseResult) -> None:
    """Name on stderr the logs of `folder` its campaign's records do not count (``stray_log``,
    a done marker naming another run or edited): left out of what is compared or stored, so
    a log that finished is never dropped without a word."""
    problems = result.problems
    strays = problems[problems["kind"] == "stray_log"] if len(problems) else problems
    if len(strays):
        names = [display_path(str(s)) for s in strays["source"]]
        print(f"dlperf: {display_path(folder)}: {len(names)} log(s) its campaign records do not "
              f"count, left out (stray_log): {', '.join(names[:5])}"
              + (f", and {len(names) - 5} more" if len(names) > 5 else ""), file=sys.stderr)


def _all_failed(folder: Path, camp: folder_records.CampaignInput) -> Campaign:
    """A campaign whose every run failed before writing a log (``dlperf run`` moves a failed
    attempt's files aside): no runs, its failed runs by case, named on stderr."""
    run, _state, reason = camp.failed[0]
    print(f"dlperf: {display_path(folder)}: no logs, every run failed ({len(camp.failed)} "
          f"failed run(s) in its campaign records, e.g. {run}: {printable(reason)})",
          file=sys.stderr)
    return Campaign(str(folder), _campaign_name(folder), "", "",
                    pd.DataFrame(columns=RUN_COLUMNS), pd.DataFrame(columns=SUMMARY_COLUMNS),
                    pd.DataFrame(columns=environment.RUN_ENV_COLUMNS),
                    failed_cases=folder_records.failed_by_case(camp))


def export_paths(path: Path) -> tuple[Path, Path, Path, Path]:
    """The observations, runs, problems and environment-facts files ``dlperf parse -o
    OUT.parquet`` (or ``OUT.csv``) writes."""
    return (path, path.with_name(f"{path.stem}.runs{path.suffix}"),
            path.with_name(f"{path.stem}.problems{path.suffix}"),
            path.with_name(f"{path.stem}.env{path.suffix}"))


def export_env(paths, runs: pd.DataFrame) -> pd.DataFrame:
    """The environment facts (environment.RUN_ENV_COLUMNS) of the runs parsed from `paths`,
    from the records in the folders among them (as :func:`from_folder` reads them): an
    export keeps them, so `compare` holds it to the hardware check as it would its folder."""
    envs = [e for p in paths if Path(p).is_dir() for e in folder_records.gather(Path(p))[0]]
    return environment.run_env(runs, envs)


def _read_part(path: Path, columns: list[str], what: str) -> pd.DataFrame:
    """One Parquet file of an export, with `columns`; a UsageError naming it otherwise."""
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{display_path(path)}: not a readable Parquet file ({exc})") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise UsageError(f"{display_path(path)}: not {what} (no {', '.join(missing)} "
                         f"column{'s' if len(missing) > 1 else ''})")
    return frame


def from_export(path: Path, method: str = "dlperf") -> Campaign:
    """A Parquet export: its runs and problems files must lie beside it; its environment
    facts file too, but for an export written before it kept them (compared without the
    hardware check, as said)."""
    *paths, env_path = export_paths(path)
    for p in paths:
        if not p.is_file():
            raise UsageError(f"{display_path(path)}: a Parquet export needs "
                             f"{display_path(p.name)} beside it (written by dlperf parse -o)")
    frames = []
    for p, columns in zip(paths, (schema.OBSERVATIONS, schema.RUNS, schema.PROBLEMS)):
        # parameters: optional, exports before they kept the dumps lack it
        names = [c for c in schema.names(columns) if c != "parameters"]
        frames.append(_read_part(p, names, "a file of a dlperf parse export"))
        _check_export_numbers(p, frames[-1], columns)
    obs, runs, problems = frames
    if "parameters" not in runs.columns:
        runs = runs.assign(parameters=[{} for _ in range(len(runs))])
    else:
        runs = runs.assign(parameters=[_dump_of(paths[1], i, text)
                                       for i, text in enumerate(runs["parameters"])])
    for c in ("run_id", "metric", "source", "family", "framework", "model", "precision",
              "phase", "unit"):
        if c in obs.columns:
            obs[c] = obs[c].astype("category")
    env = None
    if env_path.is_file():
        env = _read_part(env_path, environment.RUN_ENV_COLUMNS,
                         "the environment facts of a dlperf parse export")
        env = env[environment.RUN_ENV_COLUMNS].fillna("").astype(str)
    return from_result(ParseResult(obs, runs, problems), str(path), path.stem, [], method,
                       env=env)


def _dump_of(path: Path, row: int, text) -> dict:
    """The argument dump an export's runs file keeps for one run (`stated_dump`'s JSON)."""
    try:
        dump = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        dump = None
    if not isinstance(dump, dict):
        raise UsageError(f"{display_path(path)}: row {row + 1}: column parameters holds "
                         f"{printable(str(text))[:80]!r}, not a JSON object of the run's "
                         "argument dump: not a dlperf parse export as written")
    return {str(k): str(v) for k, v in dump.items()}


#: Run fields of an export that are counts: at least 1 where stated.
_COUNTS = ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device",
           "global_batch_size")


def _check_export_numbers(path: Path, frame: pd.DataFrame, columns) -> None:
    """A UsageError naming `path` when a numeric column of the schema holds something else
    (text compares as text: a memory change of -27 % from strings) or a run count is below 1
    (an export edited by hand or written by another tool: its figures would be wrong)."""
    for c in columns:
        if c.name not in frame.columns or c.dtype in ("category", "object", "string", "text"):
            continue
        col = frame[c.name]
        if (not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)) \
                and not col.isna().all():
            raise UsageError(f"{display_path(path)}: column {c.name} holds "
                             f"{frame[c.name].dtype} values, not numbers: not a dlperf parse "
                             "export as written")
        if c.name in _COUNTS and (frame[c.name] < 1).any():
            raise UsageError(f"{display_path(path)}: column {c.name} holds a count below 1 "
                             f"({frame[c.name].min()}): not a dlperf parse export as written")


def load(label: str, store: str | Path | None = None, method: str = "dlperf") -> Campaign:
    """A log folder, a ``.parquet`` export, or (with `store`) a stored campaign's key or name."""
    path = Path(label)
    if path.is_dir():
        return from_folder(path, method)
    if path.is_file() and path.suffix == ".parquet":
        return from_export(path, method)
    if path.exists():
        raise UsageError(f"{display_path(path)}: expected a log folder or a .parquet export "
                         "of dlperf parse")
    if store is not None:
        from analysis.changes import store as results_store

        return results_store.load(store, label, method)
    raise UsageError(f"no such log folder or export: {display_path(path)} "
                     "(a stored campaign needs --store DIR)")
