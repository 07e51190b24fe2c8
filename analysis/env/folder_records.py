"""What a report reads besides the logs: environment records, topology text and the
campaign's launch records, found inside LOG_DIR or given explicitly.

- environment: ``env.json`` / ``*.env.json`` (written by ``dlperf env``), JSON objects; a
  field of a wrong type (:mod:`analysis.env.record`) is left out and listed;
- topology: ``topo*.txt`` (saved ``nvidia-smi topo -m`` output), or the raw text kept in an
  environment record;
- campaign: ``campaign.yaml`` (kept verbatim) and ``<stem>.done`` JSON markers holding the
  command run on each node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from analysis import config, yamlio
from analysis.env.record import usable
from analysis.errors import UsageError
from analysis.fsutil import display_path, loads_json, printable, read_record
from analysis.layout import meta_from_path
from analysis.problems import excerpt


@dataclass
class EnvInput:
    name: str  # file name relative to LOG_DIR (or as given)
    record: dict  # without its fields of a wrong type (analysis.env.record.usable)
    #: the fields left out, 'gpu_count: "4" is a string, expected an integer; not used'
    problems: list[str] = field(default_factory=list)


@dataclass
class TopoInput:
    name: str
    text: str
    topology: object | None = None  # analysis.env.topo_matrix.Topology when it parsed
    error: str = ""


@dataclass
class Command:
    run: str  # marker stem relative to LOG_DIR
    node: str
    command: str


@dataclass
class CommandGroup:
    """Launch commands that differ only in their port (and the run's own name): one per
    case and node, with the runs it stands for."""

    case: str  # run stem without its repeat suffix
    node: str
    command: str  # with <port> / <run> placeholders
    runs: list[str] = field(default_factory=list)


#: Options whose values change from run to run without changing the run: shown as <port>.
_PORT = re.compile(r"((?:--master[_-]port|--rdzv[_-]port|--port)[= ]|\bMASTER_PORT=|"
                   r"--rdzv[_-]endpoint[= ]\S+?:|--dist[_-]url[= ]\S+?:)(\d+)")
_REPEAT = re.compile(r"_(\d+)$")  # a run stem's repeat number: without it, the case


def command_template(command: str, run: str = "") -> str:
    """`command` with port numbers replaced by ``<port>`` and the run's own name (the last
    part of `run`) by ``<run>``."""
    text = _PORT.sub(lambda m: m.group(1) + "<port>", command)
    base = run.rsplit("/", 1)[-1]
    if len(base) >= 2:
        text = re.sub(rf"(?<!\w){re.escape(base)}(?!\w)", "<run>", text)
    return text


def group_commands(commands: list[Command]) -> list[CommandGroup]:
    """Commands collapsed to one row per (case, node, command template), in run order."""
    groups: dict[tuple[str, str, str], CommandGroup] = {}
    for c in commands:
        key = (_REPEAT.sub("", c.run), c.node, command_template(c.command, c.run))
        g = groups.setdefault(key, CommandGroup(*key))
        if c.run not in g.runs:
            g.runs.append(c.run)
    return sorted(groups.values(), key=lambda g: (g.case, _node_order(g.node), g.command))


def _node_order(node: str):
    return (0, int(node), "") if str(node).isdigit() else (1, 0, str(node))


@dataclass
class CampaignInput:
    text: str = ""  # campaign.yaml verbatim
    name: str = ""
    commands: list[Command] = field(default_factory=list)
    #: commits of the suite that ran the finished runs (``suite`` of the done markers that say
    #: ``ok``), "-dirty" appended when tracked files had changed; empty for markers written
    #: before suites were recorded
    suite_commits: set[str] = field(default_factory=set)
    #: runs the campaign did not finish: (run, state, reason) of each done marker that says
    #: ``"ok": false`` (a run with no log, or a log of a failed attempt)
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    #: run -> the case fields of each failed run (framework, model, precision, batch per
    #: device, nodes, GPUs per node; None where unstated) as its done marker states them, else
    #: its ``status.json`` row, else its run id (:func:`analysis.layout.meta_from_path`): a
    #: run that failed before writing a log names its case nowhere else
    failed_case: dict[str, dict] = field(default_factory=dict)
    #: runs the spec asks for that never started (``pending`` in ``status.json``: a device
    #: budget or job time limit ended the campaign first), and how many runs it asks for
    pending: list[str] = field(default_factory=list)
    planned: int = 0
    #: records found beside the logs that could not be read, left out: (file, why)
    unreadable: list[tuple[str, str]] = field(default_factory=list)


def _suite_commit(marker: dict) -> str:
    """The suite commit a finished run's done marker records ('' when none)."""
    suite = marker.get("suite")
    if marker.get("ok") is not True or not isinstance(suite, dict) \
            or not isinstance(suite.get("commit"), str):
        return ""
    return suite["commit"] + ("-dirty" if suite.get("dirty") is True else "")


def resolve_log_dir(log_dir: str | Path | None) -> Path:
    """`log_dir` (``~`` expanded, as a shell would), or the bundled ``data/raw_logs`` when
    None/empty."""
    path = Path(log_dir).expanduser() if log_dir else config.RAW_LOGS_DIR
    if not path.exists():
        where = "" if path.is_absolute() else f" (relative to {display_path(Path.cwd())})"
        raise UsageError(f"no such log folder: {display_path(path)}{where}")
    if path.suffix == ".parquet" and path.is_file():
        raise UsageError(f"{path} is a `dlperf parse` export, not logs: a report reads a log "
                         "folder (an export can be its --baseline)")
    return path


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _text(path: Path) -> str:
    """A record file's text (:func:`analysis.fsutil.read_record`), bytes that are not UTF-8
    replaced: one bad byte in a hand-edited record does not lose all of it."""
    return read_record(path).decode("utf-8", errors="replace")


def _why(exc: Exception) -> str:
    """Why a record could not be read, without the file's full path (reports are published)."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def load_env(path: str | Path, root: Path | None = None) -> EnvInput:
    """The record at `path`; named relative to `root` (the logs) in messages when given."""
    p = Path(path)
    shown = _rel(p, root) if root else p
    try:
        record = loads_json(_text(p))
    except (OSError, ValueError) as exc:
        why = _why(exc) if root else exc  # a file given on the command line: all of it
        raise UsageError(f"cannot read environment record {shown}: {why}") from exc
    if not isinstance(record, dict):
        raise UsageError(f"{shown}: an environment record must be a JSON object")
    record, problems = usable(record)
    return EnvInput(_rel(p, root) if root else p.name, record, [str(x) for x in problems])


def parse_topo(name: str, text: str) -> TopoInput:
    """Parse with analysis.env.topo_matrix; keep the text even when it does not parse."""
    try:
        from analysis.env.topo_matrix import parse_topology

        return TopoInput(name, text, parse_topology(text))
    except Exception as exc:  # a bad topology file must not stop the report
        if len(text) > UNPARSED_TOPOLOGY_CHARS:  # quoted in the report: not megabytes of it
            text = excerpt(text, UNPARSED_TOPOLOGY_CHARS)
        return TopoInput(name, text, None, f"{type(exc).__name__}: {exc}")


#: Characters of a topology file that does not parse kept to be quoted.
UNPARSED_TOPOLOGY_CHARS = 16 << 10


def env_topology_text(record: dict) -> str:
    """The raw `nvidia-smi topo -m` text kept in an environment record, if any."""
    text = record.get("topology_text")
    return text if isinstance(text, str) and text.strip() else ""


def _commands_of(marker: dict, stem: str) -> list[Command]:
    """Commands in a `.done` marker: `command`/`cmd` (one node), `commands` as a mapping
    node -> command or a list of {node|host|rank, command|cmd}, or `nodes` likewise."""
    out: list[Command] = []

    def text(cmd) -> str:
        return " ".join(map(str, cmd)) if isinstance(cmd, (list, tuple)) else str(cmd)

    def command(item: dict):
        return item.get("command") or item.get("cmd")

    for key in ("commands", "nodes"):
        val = marker.get(key)
        mapping = isinstance(val, dict)
        for k, item in val.items() if mapping else enumerate(val) if isinstance(val, list) else ():
            if isinstance(item, dict) and command(item):
                node = k if mapping else item.get("node", item.get("host", item.get("rank", k)))
                out.append(Command(stem, str(node), text(command(item))))
            elif not isinstance(item, dict) and (mapping or isinstance(item, (str, list))):
                out.append(Command(stem, str(k), text(item)))
    if not out and command(marker):
        out.append(Command(stem, str(marker.get("node", marker.get("host", 0))),
                           text(command(marker))))
    return out


def load_campaign(root: Path) -> CampaignInput:
    camp = CampaignInput()
    spec = root / "campaign.yaml"
    if spec.is_file():
        camp.text, camp.name = spec.read_text(encoding="utf-8", errors="replace"), spec.name
    marked = set()
    for marker in sorted(root.rglob("*.done")):
        try:
            data = loads_json(_text(marker))
        except (OSError, ValueError) as exc:
            camp.unreadable.append((_rel(marker, root), f"not a done marker: {_why(exc)}"))
            continue
        if isinstance(data, dict):
            stem = _rel(marker, root)[: -len(".done")]
            marked |= {stem, str(data.get("run_id") or stem)}
            camp.commands += _commands_of(data, stem)
            camp.suite_commits |= {_suite_commit(data)} - {""}
            if data.get("ok") is False:
                run = str(data.get("run_id") or stem)
                camp.failed.append((run, str(data.get("state", "")), str(data.get("reason", ""))))
                camp.failed_case[run] = _marker_case(data)
    rows = _read_status(root / "status.json", root, camp)
    # a run's done marker outranks the status.json a killed runner left behind
    camp.pending = [run for run in camp.pending if run not in marked]
    for run, fields in camp.failed_case.items():
        _fill_case(fields, _status_case(rows.get(run, {})), meta_from_path(run))
    return camp


def _fill_case(fields: dict, *fallbacks: dict) -> None:
    """`fields`' unstated (None) values taken from the first of `fallbacks` that states them."""
    for k, v in fields.items():
        fields[k] = next((f[k] for f in fallbacks if f.get(k) is not None), v) if v is None else v


def _status_case(row: dict) -> dict:
    """The case fields a ``status.json`` row states (its ``config`` is ``<N>n<G>g``)."""
    meta = meta_from_path(f"{row.get('config')}/-")
    fields = {**{k: meta[k] for k in ("num_nodes", "gpus_per_node") if k in meta},
              "batch_size_per_device": row.get("batch_size"),
              **{k: row.get(k) for k in ("model", "precision")}}
    return {k: v for k, v in fields.items() if isinstance(v, (str, int))}


def _marker_case(marker: dict) -> dict:
    """The case fields a done marker states, the framework spelled as the log families
    spell it (the runner writes the workload's lower-case name); None where it states none."""
    from analysis import parsers

    case = marker.get("case") if isinstance(marker.get("case"), dict) else {}
    spelling = {parsers.get(n).framework.lower(): parsers.get(n).framework
                for n in parsers.names()}
    framework = marker.get("framework")
    fields = {"framework": spelling.get(str(framework).lower(), framework) if framework else None,
              **{k: case.get(k) for k in ("model", "precision", "batch_size_per_device",
                                          "num_nodes", "gpus_per_node")}, "case": ""}
    return {k: v if isinstance(v, (str, int)) else None for k, v in fields.items()}


#: The key of the failed runs whose records do not state their whole case.
UNKNOWN_CASE = "case unknown"


def failed_by_case(camp: CampaignInput, counted=()) -> dict[str, dict]:
    """Case key -> its case fields and ``runs``, the (run, reason) of each of its runs the
    done markers say failed, but for the runs in `counted` (a log of theirs is counted).
    Runs whose case is not wholly stated are under UNKNOWN_CASE, with the fields they all
    state alike (None for the others: they may be any)."""
    from analysis.schema import case_key

    out: dict[str, dict] = {}
    counted = set(counted)
    for run, _state, reason in camp.failed:
        if run in counted:
            continue
        fields = camp.failed_case.get(run) or _marker_case({})
        known = all(v is not None for k, v in fields.items() if k != "case")
        key = case_key(fields) if known else UNKNOWN_CASE
        entry = out.setdefault(key, {**fields, "runs": []})
        if key == UNKNOWN_CASE:
            entry.update({k: None for k, v in fields.items() if entry[k] != v})
        entry["runs"].append((run, reason))
    return out


def failed_cases_text(failed_cases: dict, measured) -> str:
    """One line naming the runs of `failed_cases` (:func:`failed_by_case`) by case, those of
    cases that ran no other run (not in `measured`) marked as such; '' when none."""
    if not failed_cases:
        return ""
    n = sum(len(c["runs"]) for c in failed_cases.values())
    run, reason = next(iter(failed_cases.values()))["runs"][0]
    def said(key: str) -> str:
        return (", their records do not state their case" if key == UNKNOWN_CASE
                else "" if key in measured else ", every run")

    cases = ", ".join(f"{key} ({len(c['runs'])}{said(key)})" for key, c in failed_cases.items())
    return (f"{n} run(s) failed in the campaign records, not counted as repeats: "
            f"{cases}; e.g. {run}: {printable(reason)}")


def _read_status(path: Path, root: Path, camp: CampaignInput) -> dict[str, dict]:
    """The runs ``status.json`` lists as pending, and how many it lists; its rows by run
    ({} without one; an unreadable one is named and left out)."""
    if not path.is_file():
        return {}
    try:
        data = loads_json(_text(path))
        rows = data["runs"] if isinstance(data, dict) else data
        states = [(str(r["run_id"]), str(r["state"])) for r in rows]
    except KeyError as exc:
        camp.unreadable.append((_rel(path, root), f"not a campaign status: a run without "
                                                  f"{exc.args[0]!r}"))
        return {}
    except (OSError, ValueError, TypeError) as exc:
        camp.unreadable.append((_rel(path, root), f"not a campaign status: {_why(exc)}"))
        return {}
    camp.planned = len(states)
    camp.pending = [run for run, state in states if state == "pending"]
    return {run: r for (run, _), r in zip(states, rows)}


def gather(log_dir: Path, env: str | Path | list | None = None,
           topology: str | Path | list | None = None) -> tuple[list[EnvInput], list[TopoInput], CampaignInput]:
    """Environment records, topologies and campaign records for a report of `log_dir`.

    Explicit `env` / `topology` files come first; files found inside `log_dir`
    (``env.json``, ``*.env.json``, ``topo*.txt``) are added after them.
    """
    def listify(x):
        return [] if not x else ([x] if isinstance(x, (str, Path)) else list(x))

    envs = [load_env(p) for p in listify(env)]
    topos = []
    for p in listify(topology):
        try:
            topos.append(parse_topo(Path(p).name, Path(p).read_text(encoding="utf-8", errors="replace")))
        except OSError as exc:
            raise UsageError(f"cannot read topology file {p}: {exc}") from exc
    given = {Path(p).resolve() for p in listify(env) + listify(topology)}
    camp = load_campaign(log_dir)
    found_env = sorted(p for p in log_dir.rglob("*.json")
                       if p.name == "env.json" or p.name.endswith(".env.json"))
    for p in found_env:  # one bad record found beside the logs is left out, and said so
        if p.resolve() not in given:
            try:
                envs.append(load_env(p, log_dir))
            except UsageError as exc:
                camp.unreadable.append((_rel(p, log_dir), str(exc)))
    for p in sorted(p for p in log_dir.rglob("topo*.txt") if p.resolve() not in given):
        try:
            topos.append(parse_topo(_rel(p, log_dir), _text(p)))
        except OSError as exc:
            camp.unreadable.append((_rel(p, log_dir), f"cannot read topology file: {_why(exc)}"))
    return envs, topos, camp


def campaign_yaml(camp: CampaignInput) -> dict:
    """campaign.yaml as data ({} when absent or unreadable)."""
    try:
        data = yamlio.parse(camp.text, camp.name) if camp.text else {}
    except yamlio.YamlError:
        return {}
    return data if isinstance(data, dict) else {}
