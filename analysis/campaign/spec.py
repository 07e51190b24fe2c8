"""Campaign specs: YAML → validated :class:`Spec` → cases → runs.

A spec describes a sweep once. Either a matrix (``precisions`` × ``batch_sizes`` × ``devices``)
or an explicit ``cases:`` list (where a product makes no sense, e.g. GPT parallel layouts) is
expanded into :class:`Case` objects; each case × repeat is a :class:`Run` with a stable id
``<N>n<G>g/<stem>`` and the DLPerf log path ``<out>/<N>n<G>g/<stem>.log``.

Every key, nested ones included (``ssh``, ``slurm``, ``container``, ``hosts``, ``cases``), is
declared once in a :class:`Field` table (:data:`FIELDS`, :data:`SSH_FIELDS`, …) with its meaning
and its check; unknown keys are rejected with the list of valid ones. Sizes are bounded
(:data:`LIMITS`; the YAML itself by :mod:`analysis.campaign.spec_yaml`). Every problem raises
:class:`SpecError` naming the key, the bad value (shortened, secrets hidden) and what is allowed;
passwords are refused (SSH keys or an agent only).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis import config
from analysis.campaign.spec_yaml import SpecError, key_line, parse_yaml, read_spec_text
from analysis.layout import normalize_model, normalize_precision
from analysis.redact import is_secret_name, secrets_in

__all__ = ["BACKENDS", "KEYS", "LIMITS", "PRECISIONS", "Case", "Run", "Spec", "SpecError",
           "check_hosts", "contained", "from_dict", "load", "loads", "parse_devices",
           "parse_duration", "safe_name"]

#: Bounds of what one spec may ask for (a typo such as ``repeats: 10000000`` is an error).
LIMITS = {"runs": 10_000, "repeats": 1_000, "iterations": 10_000_000, "batch_size": 1 << 20,
          "num_nodes": 4_096, "gpus_per_node": 64, "retries": 100, "timeout_s": 30 * 86400,
          "text": 4_096, "list": 1_000}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_DEVICE = re.compile(r"^(\d{1,5})n(\d{1,3})g$")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HOST_NAME = re.compile(r"^[A-Za-z0-9_.:%-]+$")
_USER = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9._-]*$")
PRECISIONS = ("fp32", "amp", "bf16", "tf32")
BACKENDS = ("local", "ssh", "slurm")
#: ssh.host_key_checking: StrictHostKeyChecking=yes, or accept-new (trust on first use)
HOST_KEY_MODES = ("strict", "accept-new")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")
_NO_PASSWORDS = "passwords are not accepted in a spec; use SSH keys or an agent"


def _show(value: Any, limit: int = 60) -> str:
    """A short repr of a user value for an error message (never a huge or multi-line one)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _fail(key: str, value: Any, allowed: str) -> SpecError:
    shown = "<value hidden>" if is_secret_name(key.rsplit(".", 1)[-1]) else _show(value)
    return SpecError(f"spec key {key!r}: invalid value {shown}; allowed: {allowed}", key)


# ---- value checks: (key, value) -> validated value -----------------------------------------
def safe_name(key: str, value: Any) -> str:
    """A name that can be a file or folder name inside the campaign folder."""
    if not isinstance(value, str) or not _SAFE_NAME.match(value) or ".." in value:
        raise _fail(key, value, "letters, digits and . _ + - (no '/', no '..', "
                    "not starting with '.' or '-', at most 128 characters)")
    return value


def parse_devices(key: str, value: Any) -> tuple[int, int]:
    m = _DEVICE.match(value.strip()) if isinstance(value, str) else None
    n, g = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if not (1 <= n <= LIMITS["num_nodes"] and 1 <= g <= LIMITS["gpus_per_node"]):
        raise _fail(key, value, f"<N>n<G>g with 1 <= N <= {LIMITS['num_nodes']} and "
                    f"1 <= G <= {LIMITS['gpus_per_node']}, e.g. 1n1g, 1n8g, 2n8g")
    return n, g


def parse_duration(key: str, value: Any) -> float:
    seconds = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * {"m": 60, "min": 60, "h": 3600}.get(m.group(2) or "s", 1)
    if seconds is None or not math.isfinite(seconds) or not 0 < seconds <= LIMITS["timeout_s"]:
        raise _fail(key, value, "a positive number of seconds or '90s', '10m', '1h' "
                    f"(at most {LIMITS['timeout_s'] // 86400} days)")
    return seconds


def _int(key: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or \
            (maximum is not None and value > maximum):
        upto = f" and <= {maximum}" if maximum is not None else ""
        raise _fail(key, value, f"an integer >= {minimum}{upto}")
    return value


def _ints(minimum: int, maximum: int) -> Callable[[str, Any], int]:
    return lambda key, value: _int(key, value, minimum, maximum)


def _text(key: str, value: Any) -> str:
    """A plain string (numbers are accepted and converted), without NUL, not huge."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or \
            "\0" in str(value) or len(str(value)) > LIMITS["text"]:
        raise _fail(key, value, f"a string without NUL characters, at most {LIMITS['text']} "
                    "characters")
    return str(value)


def _pattern(rx: re.Pattern, what: str) -> Callable[[str, Any], str]:
    def check(key: str, value: Any) -> str:
        if not isinstance(value, (str, int)) or isinstance(value, bool) or \
                not rx.match(str(value)) or str(value).startswith("-"):
            raise _fail(key, value, what)
        return str(value)
    return check


def _choice(*allowed: str) -> Callable[[str, Any], str]:
    def check(key: str, value: Any) -> str:
        if value not in allowed:
            raise _fail(key, value, ", ".join(allowed))
        return value
    return check


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(key, value, "true or false")
    return value


def _list(key: str, value: Any) -> list:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return [value]
    if not isinstance(value, list) or not value or len(value) > LIMITS["list"]:
        raise _fail(key, value, f"a non-empty list of at most {LIMITS['list']} items")
    return value


def _texts(key: str, value: Any) -> list[str]:
    if value is None:
        return []
    return [_text(f"{key}[{i}]", v) for i, v in enumerate(_list(key, value))]


def _precision(key: str, value: Any) -> str:
    p = normalize_precision(str(value))
    if p not in PRECISIONS:
        raise _fail(key, value, ", ".join(PRECISIONS) + " (aliases fp16, float16, mixed → amp)")
    return p


def _port(key: str, value: Any) -> int:
    return _int(key, value, 1, 65535)


def _master_port(key: str, value: Any) -> int | str:
    return "auto" if value == "auto" else _port(key, value)


def _env(key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > LIMITS["list"]:
        raise _fail(key, value, f"a mapping NAME: value (at most {LIMITS['list']} names)")
    out = {}
    for k, v in value.items():
        if not isinstance(k, str) or not _VAR_NAME.match(k):
            raise _fail(f"{key}.{k}", k, "a variable name [A-Za-z_][A-Za-z0-9_]*")
        if isinstance(v, (dict, list)) or v is None or "\n" in str(v) or "\0" in str(v) \
                or len(str(v)) > LIMITS["text"]:
            raise _fail(f"{key}.{k}", v, "a string or number without newlines")
        out[k] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def _options(key: str, value: Any) -> dict:
    """Workload template options: names of the workload's choosing, plain values."""
    opts = _mapping(key, value)
    for k, v in opts.items():
        if not isinstance(k, str) or not _VAR_NAME.match(k):
            raise _fail(f"{key}.{k}", k, "an option name [A-Za-z_][A-Za-z0-9_]*")
        if v is not None and not isinstance(v, (str, int, float, bool)):
            raise _fail(f"{key}.{k}", v, "a string, number or boolean")
        if isinstance(v, str):
            _text(f"{key}.{k}", v)
    return opts


# ---- nested mappings, each declared once ----------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One key of a spec mapping: what it means and how its value is checked."""

    doc: str
    check: Callable[[str, Any], Any]


def _mapping(key: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise _fail(key, value, "a mapping")
    return value


def section(key: str, value: Any, fields: dict[str, Field], required: tuple[str, ...] = ()
            ) -> dict[str, Any]:
    """Check the mapping `value` against `fields`: unknown keys are rejected with the list
    of valid ones, each given value is checked; returns the checked values."""
    raw = _mapping(key or "spec", value)

    def path(k: Any) -> str:
        return f"{key}.{k}" if key else str(k)

    secrets = sorted(str(k) for k in raw if str(k).lower() in ("password", "passwd",
                                                                "passphrase"))
    if secrets:
        raise SpecError(f"spec key {path(secrets[0])!r}: {_NO_PASSWORDS}", path(secrets[0]))
    unknown = sorted(str(k) for k in raw if k not in fields)
    if unknown:
        where = f" of {key!r}" if key else ""
        raise SpecError(f"unknown spec key {path(unknown[0])!r}; valid keys{where}: "
                        f"{', '.join(sorted(fields))}", path(unknown[0]))
    for k in required:
        if raw.get(k) is None:
            raise SpecError(f"spec key {path(k)!r} is required")
    return {k: fields[k].check(path(k), v) for k, v in raw.items() if v is not None}


SSH_FIELDS = {
    "user": Field("login name on every host (default: ~/.ssh/config, then yours)",
                  _pattern(_USER, "a login name (letters, digits, . _ -)")),
    "port": Field("ssh port on every host (default 22)", _port),
    "key_file": Field("private key file (default: ssh agent and ~/.ssh keys)", _text),
    "config_file": Field("ssh config file, given to ssh as -F (default ~/.ssh/config then "
                          "/etc/ssh/ssh_config)", _text),
    "connect_timeout": Field("seconds to wait for a connection (default 10)",
                             lambda k, v: min(parse_duration(k, v), 600.0)),
    "known_hosts": Field("known_hosts file of the hosts' keys, given to ssh as "
                         "-o UserKnownHostsFile (default: the ssh config's, else "
                         "~/.ssh/known_hosts; its GlobalKnownHostsFile is read too)", _text),
    "host_key_checking": Field("strict (default: an unknown host key is refused) | accept-new "
                               "(trust on first use: an unknown key is added to known_hosts "
                               "and recorded); a changed key is always refused",
                               _choice(*HOST_KEY_MODES)),
    "remote_tmp": Field("folder on the hosts for the node agent (default "
                        "/tmp/dlperf-campaign-<name>)",
                        _pattern(re.compile(r"^/[A-Za-z0-9._/+-]*$"), "an absolute path")),
}
SLURM_FIELDS = {
    # sbatch gets each option as one argument (never through a shell): any text is safe
    "partition": Field("partition (sbatch --partition)", _text),
    "account": Field("account (sbatch --account)", _text),
    "time_limit": Field("job time limit: seconds or '90s', '10m', '1h' (default: timeout + "
                        "2 min)", parse_duration),
    "start_timeout": Field("how long a job may wait in the queue before it starts, then it "
                           "is cancelled and the run fails: seconds or '30m', '12h' (default "
                           "1h)", parse_duration),
    "cpus_per_task": Field("CPUs per node task (sbatch --cpus-per-task)", _ints(1, 4096)),
    "gpus_per_node": Field("GPUs per node (default: from sinfo)", _ints(0, 64)),
    "extra_args": Field("more sbatch arguments, e.g. ['--exclusive']", _texts),
}
CONTAINER_FIELDS = {
    "image": Field("container image", _text),
    "runtime": Field("docker | apptainer | singularity (default docker)",
                     _choice("docker", "apptainer", "singularity")),
    "mounts": Field("extra mounts (docker -v / apptainer -B syntax)", _texts),
    "args": Field("extra arguments of docker run / apptainer exec", _texts),
}
HOST_FIELDS = {
    "host": Field("host name or address", _pattern(_HOST_NAME, "a host name or address "
                                                              "(letters, digits, . - _ :)")),
    "port": Field("ssh port", _port),
    "user": Field("login name", _pattern(_USER, "a login name (letters, digits, . _ -)")),
}
CASE_FIELDS = {
    "devices": Field("<N>n<G>g", parse_devices),
    "device": Field("same as devices", parse_devices),
    "precision": Field("fp32 | amp | bf16 | tf32", _precision),
    "batch_size": Field("batch size per device", _ints(1, LIMITS["batch_size"])),
    "name": Field("log file stem prefix", safe_name),
    "args": Field("extra workload arguments of this case", _texts),
    "params": Field("workload-specific parameters", _options),
    "model": Field("model name of this case", lambda k, v: safe_name(k, normalize_model(str(v)))),
}


def _container(key: str, value: Any) -> dict:
    if isinstance(value, str):
        value = {"image": value}
    return section(key, value, CONTAINER_FIELDS, required=("image",))


def _host(key: str, value: Any) -> dict:
    if isinstance(value, str):
        m = re.match(r"^(?:([^@\s]+)@)?([^@\s]+?)(?::(\d+))?$", value)
        if m and m.group(1) and ":" in m.group(1):
            raise SpecError(f"spec key {key!r}: {_NO_PASSWORDS}", key)
        if not m:
            raise _fail(key, value, "'host', 'user@host' or 'user@host:port'")
        value = {"host": m.group(2), **({"user": m.group(1)} if m.group(1) else {}),
                 **({"port": int(m.group(3))} if m.group(3) else {})}
    elif not isinstance(value, dict):
        raise _fail(key, value, "a host string or {host, port, user}")
    return section(key, value, HOST_FIELDS, required=("host",))


def _hosts(key: str, value: Any) -> list[dict]:
    return [] if not value else [_host(f"{key}[{i}]", h) for i, h in enumerate(_list(key, value))]


def _cases(key: str, value: Any) -> list[dict]:
    out = []
    for i, item in enumerate(_list(key, value)):
        k = f"{key}[{i}]"
        if not isinstance(item, dict):
            raise _fail(k, item, "a mapping with devices, precision, batch_size")
        case = section(k, item, CASE_FIELDS)
        if "device" in case:
            case.setdefault("devices", case.pop("device"))
        for need in ("devices", "batch_size"):
            if need not in case:
                raise SpecError(f"spec key '{k}.{need}' is required (e.g. devices: 1n8g, "
                                "batch_size: 64)")
        out.append(case)
    return out


FIELDS = {
    "name": Field("campaign name; also the default output folder data/raw_logs/<name>/",
                  safe_name),
    "workload": Field("workload template (see analysis.campaign.workloads.names())", _text),
    "framework": Field("informational; checked against the workload's framework", _text),
    "model": Field("model name used in log file names (default: the workload's model)",
                   lambda k, v: safe_name(k, normalize_model(str(v)))),
    "precisions": Field("list of fp32 | amp | bf16 | tf32 (aliases: fp16, float16, mixed)",
                        lambda k, v: [_precision(k, p) for p in _list(k, v)]),
    "batch_sizes": Field("list of batch sizes per device", lambda k, v: [
        _int(k, b, 1, LIMITS["batch_size"]) for b in _list(k, v)]),
    "devices": Field("list of device configs <N>n<G>g, e.g. 1n1g, 1n8g, 2n8g",
                     lambda k, v: [parse_devices(k, d) for d in _list(k, v)]),
    "cases": Field("explicit list of cases instead of the matrix (keys: "
                   + ", ".join(CASE_FIELDS) + ")", _cases),
    "repeats": Field(f"repeats per case (default 5, at most {LIMITS['repeats']})",
                     _ints(1, LIMITS["repeats"])),
    "iterations": Field("training iterations per run", _ints(1, LIMITS["iterations"])),
    "warmup": Field("warm-up iterations (passed to workloads that take it; default 0)",
                    _ints(0, LIMITS["iterations"])),
    "backend": Field("local | ssh | slurm", _choice(*BACKENDS)),
    "hosts": Field("ssh: node hosts, in node-rank order ('host', 'user@host:port' or "
                   "{host, port, user}); no passwords: use SSH keys or an agent", _hosts),
    "ssh": Field("ssh options: " + ", ".join(SSH_FIELDS),
                 lambda k, v: section(k, v, SSH_FIELDS)),
    "slurm": Field("slurm options: " + ", ".join(SLURM_FIELDS),
                   lambda k, v: section(k, v, SLURM_FIELDS)),
    "env": Field("environment variables for every node (secrets are never written)", _env),
    "container": Field("optional container: an image or {" + ", ".join(CONTAINER_FIELDS)
                       + "}", _container),
    "timeout": Field("per-run timeout: seconds or '90s', '10m', '1h' (default 3600)",
                     parse_duration),
    "retries": Field("extra attempts of a failed run within one invocation (default 1)",
                     _ints(0, LIMITS["retries"])),
    "retry_failed": Field("re-run runs that failed in an earlier invocation (default true)",
                          _bool),
    "device": Field("auto | cuda | cpu (auto: cpu when no CUDA GPU is found)",
                    _choice("auto", "cuda", "cpu")),
    "scale": Field("auto | full | cpu (cpu: reduced model size; auto: cpu when device is cpu)",
                   _choice("auto", "full", "cpu")),
    "workload_args": Field("extra arguments appended to every workload command", _texts),
    "options": Field("workload template options (code_dir, data_dir, script, ...)", _options),
    "python": Field("Python interpreter on the nodes (default: the one running the campaign)",
                    _text),
    "workdir": Field("working directory on the nodes (default: the project folder)", _text),
    "master_port": Field("rendezvous port, or 'auto' (a free port per run; default auto)",
                         _master_port),
    "gpus_per_host": Field("local multi-node: GPUs of this host split among its 'nodes' "
                           "(default: all)", _ints(1, 4096)),
    "out_dir": Field("output folder (default data/raw_logs/<name>/)", _text),
}
#: Every top-level key and what it means (generated from :data:`FIELDS`).
KEYS = {k: f.doc for k, f in FIELDS.items()}


@dataclass(frozen=True)
class Case:
    """One benchmark configuration (everything but the repeat)."""

    num_nodes: int
    gpus_per_node: int
    precision: str
    batch_size: int
    model: str
    name: str = ""  # stem prefix; default <model>_b<bsz>_<precision>
    args: tuple[str, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()  # workload-specific (GPT dp/mp/pp, ...)

    @property
    def config(self) -> str:
        return f"{self.num_nodes}n{self.gpus_per_node}g"

    @property
    def param(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass(frozen=True)
class Run:
    """A case × repeat: what the runner launches once."""

    case: Case
    repeat: int
    stem: str

    @property
    def run_id(self) -> str:
        return f"{self.case.config}/{self.stem}"

    def path(self, out_dir: Path, suffix: str = ".log", node: int | None = None) -> Path:
        """``<out>/<N>n<G>g/<stem>[.node<k>]<suffix>``."""
        node_part = "" if node is None else f".node{node}"
        return Path(out_dir) / self.case.config / f"{self.stem}{node_part}{suffix}"

    def log_path(self, out_dir: Path, node: int = 0) -> Path:
        return self.path(out_dir, ".log", None if node == 0 else node)


@dataclass
class Spec:
    """A validated campaign spec (see :data:`KEYS` for every key)."""

    name: str
    workload: str
    model: str
    cases: list[Case]
    repeats: int = 5
    iterations: int = 100
    warmup: int = 0
    backend: str = "local"
    hosts: list[dict] = field(default_factory=list)
    ssh: dict = field(default_factory=dict)
    slurm: dict = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    container: dict | None = None
    timeout: float = 3600.0
    retries: int = 1
    retry_failed: bool = True
    device: str = "auto"
    scale: str = "auto"
    workload_args: list[str] = field(default_factory=list)
    options: dict = field(default_factory=dict)
    python: str | None = None
    workdir: str | None = None
    master_port: int | str = "auto"
    gpus_per_host: int | None = None
    out_dir: str | None = None
    framework: str = ""
    raw: dict = field(default_factory=dict)

    def runs(self) -> list[Run]:
        """Every case × repeat, in a stable order (cases in spec order, repeats 1..R)."""
        from analysis.campaign import workloads

        wl = workloads.get(self.workload)
        runs = [Run(c, r, wl.stem(c, r)) for c in self.cases for r in range(1, self.repeats + 1)]
        seen: dict[str, Run] = {}
        for run in runs:
            if run.run_id in seen:
                raise SpecError(f"two runs share the id {run.run_id!r}; give the cases "
                                "distinct 'name' values")
            seen[run.run_id] = run
        return runs

    def resolve_out_dir(self, out_dir: str | Path | None = None) -> Path:
        return Path(out_dir or self.out_dir or config.RAW_LOGS_DIR / self.name).resolve()

    def max_nodes(self) -> int:
        return max(c.num_nodes for c in self.cases)

    def secrets(self) -> list[str]:
        """Secret strings of the spec (values of secret-named keys, URL passwords) that no
        written file may contain."""
        return secrets_in(self.raw)


def _case_list(v: dict, model: str) -> list[Case]:
    """The cases of a checked spec: its explicit ``cases`` or the matrix product."""
    if "cases" in v:
        return [Case(*c["devices"], c.get("precision", "fp32"), c["batch_size"],
                     c.get("model", model), c.get("name", ""), tuple(c.get("args", ())),
                     tuple(sorted(c.get("params", {}).items()))) for c in v["cases"]]
    for k in ("precisions", "batch_sizes", "devices"):
        if k not in v:
            raise SpecError(f"spec key {k!r} is required (or give an explicit 'cases:' list)")
    # aliases (fp16 = amp) and repeated entries name the same case once
    precs, bszs, devs = (list(dict.fromkeys(v[k])) for k in ("precisions", "batch_sizes",
                                                             "devices"))
    _check_run_count(len(precs) * len(bszs) * len(devs), v.get("repeats", 5))
    return [Case(n, g, p, b, model) for n, g in devs for p in precs for b in bszs]


def _check_run_count(cases: int, repeats: int) -> None:
    if cases * repeats > LIMITS["runs"]:
        raise SpecError(f"spec: {cases} cases x {repeats} repeats = {cases * repeats} runs; "
                        f"a campaign has at most {LIMITS['runs']} runs (split it)")


def from_dict(raw: dict) -> Spec:
    """Validate a spec mapping (as loaded from YAML) into a :class:`Spec`."""
    from analysis.campaign import workloads

    if raw is None:
        raise SpecError("the spec is empty; a campaign spec is a mapping of keys (name, "
                        "workload, ...)")
    if not isinstance(raw, dict):
        raise SpecError(f"a campaign spec is a mapping of keys; got {type(raw).__name__}")
    for k in ("name", "workload"):
        if raw.get(k) is None and k not in raw:
            raise SpecError(f"spec key {k!r} is required")
    v = section("", raw, FIELDS, required=("name", "workload"))
    if v["workload"] not in workloads.names():
        raise _fail("workload", raw["workload"], ", ".join(workloads.names()))
    wl = workloads.get(v["workload"])
    if v.get("framework") and v["framework"].lower() != wl.framework:
        raise _fail("framework", raw["framework"], f"{wl.framework} (workload {wl.name})")
    model = v.get("model") or safe_name("model", normalize_model(wl.default_model))
    cases = _case_list(v, model)
    _check_run_count(len(cases), v.get("repeats", 5))
    for c in cases:
        wl.check_case(c)
    spec = Spec(
        name=v["name"], workload=wl.name, model=model, cases=cases,
        repeats=v.get("repeats", 5), iterations=v.get("iterations", wl.default_iterations),
        warmup=v.get("warmup", 0), backend=v.get("backend", "local"), hosts=v.get("hosts", []),
        ssh=v.get("ssh", {}), slurm=v.get("slurm", {}), env=v.get("env", {}),
        container=v.get("container"), timeout=v.get("timeout", 3600.0),
        retries=v.get("retries", 1), retry_failed=v.get("retry_failed", True),
        device=v.get("device", "auto"), scale=v.get("scale", "auto"),
        workload_args=v.get("workload_args", []), options=dict(v.get("options", {})),
        python=v.get("python"), workdir=v.get("workdir"),
        master_port=v.get("master_port", "auto"), gpus_per_host=v.get("gpus_per_host"),
        out_dir=v.get("out_dir"), framework=wl.framework, raw=dict(raw),
    )
    if spec.warmup >= spec.iterations:
        raise _fail("warmup", spec.warmup, f"fewer than iterations ({spec.iterations})")
    check_hosts(spec)
    spec.runs()  # stable ids, no duplicates
    return spec


def check_hosts(spec: Spec) -> None:
    """SpecError when backend ssh has fewer hosts than the largest case has nodes."""
    if spec.backend == "ssh" and len(spec.hosts) < spec.max_nodes():
        raise SpecError(f"spec key 'hosts': backend ssh needs at least {spec.max_nodes()} "
                        f"hosts for {spec.max_nodes()}-node cases; got {len(spec.hosts)}")


def _with_overrides(raw: Any, overrides: dict | None) -> Any:
    if isinstance(raw, dict):
        raw.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return raw


def load(path: str | Path, overrides: dict | None = None) -> Spec:
    """Read a YAML spec file; `overrides` (e.g. from the CLI) replace top-level keys.
    Every error names the file, and the line when it is about one key."""
    text = read_spec_text(path)
    raw = parse_yaml(text, str(path))  # its errors name the file and line already
    try:
        return from_dict(_with_overrides(raw, overrides))
    except SpecError as exc:
        line = key_line(text, exc.key)
        where = f" line {line}" if line else ""
        what = str(exc).removeprefix("spec: ").removeprefix("spec ")
        raise SpecError(f"spec {path}{where}: {what}", exc.key) from None


def loads(text: str, overrides: dict | None = None) -> Spec:
    """Like :func:`load`, from YAML text."""
    return from_dict(_with_overrides(parse_yaml(text), overrides))


def contained(out_dir: Path, path: Path) -> Path:
    """`path` resolved; SpecError if it lies outside `out_dir` (a case escaping its folder)."""
    out, p = Path(out_dir).resolve(), Path(path).resolve()
    if p != out and out not in p.parents:
        raise SpecError(f"path {path} would escape the campaign folder {out}")
    return p
