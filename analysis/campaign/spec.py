"""Campaign specs: YAML → validated :class:`Spec` → cases → runs.

A spec describes a sweep once. Either a matrix (``precisions`` × ``batch_sizes`` × ``devices``)
or an explicit ``cases:`` list (where a product makes no sense, e.g. GPT parallel layouts) is
expanded into :class:`Case` objects; each case × repeat is a :class:`Run` with a stable id
``<N>n<G>g/<stem>`` and the DLPerf log path ``<out>/<N>n<G>g/<stem>.log``.

Every problem raises :class:`SpecError` naming the key, the bad value and what is allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analysis import config
from analysis.campaign.commands import is_secret
from analysis.errors import UsageError
from analysis.layout import normalize_model, normalize_precision


class SpecError(UsageError):
    """A campaign spec is invalid; the message names the key and the allowed values."""


KEYS = {
    "name": "campaign name; also the default output folder data/raw_logs/<name>/",
    "workload": "workload template (see analysis.campaign.workloads.names())",
    "framework": "informational; checked against the workload's framework",
    "model": "model name used in log file names (default: the workload's model)",
    "precisions": "list of fp32 | amp | bf16 | tf32 (aliases: fp16, float16, mixed)",
    "batch_sizes": "list of batch sizes per device",
    "devices": "list of device configs <N>n<G>g, e.g. 1n1g, 1n8g, 2n8g",
    "cases": "explicit list of cases instead of the matrix (keys: devices, precision, "
             "batch_size, name, args, params)",
    "repeats": "repeats per case (default 5)",
    "iterations": "training iterations per run",
    "warmup": "warm-up iterations (passed to workloads that take it; default 0)",
    "backend": "local | ssh | slurm",
    "hosts": "ssh: node hosts, in node-rank order ('host', 'user@host:port' or {host, port, user})",
    "ssh": "ssh options: user, port, key_file, config_file, connect_timeout, remote_tmp",
    "slurm": "slurm options: partition, account, time_limit, extra_args, gpus_per_node",
    "env": "environment variables for every node (secret-looking names are never written)",
    "container": "optional container: {image, runtime: docker|apptainer, mounts, args}",
    "timeout": "per-run timeout: seconds or '90s', '10m', '1h' (default 3600)",
    "retries": "extra attempts of a failed run within one invocation (default 1)",
    "retry_failed": "re-run runs that failed in an earlier invocation (default true)",
    "device": "auto | cuda | cpu (auto: cpu when no CUDA GPU is found)",
    "scale": "auto | full | cpu (cpu: reduced model size; auto: cpu when device is cpu)",
    "workload_args": "extra arguments appended to every workload command",
    "options": "workload template options (code_dir, data_dir, script, ...)",
    "python": "Python interpreter on the nodes (default: the one running the campaign)",
    "workdir": "working directory on the nodes (default: the project folder)",
    "master_port": "rendezvous port, or 'auto' (a free port per run; default auto)",
    "gpus_per_host": "local multi-node: GPUs of this host split among its 'nodes' (default: all)",
    "out_dir": "output folder (default data/raw_logs/<name>/)",
}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_DEVICE = re.compile(r"^(\d+)n(\d{1,2})g$")
PRECISIONS = ("fp32", "amp", "bf16", "tf32")
BACKENDS = ("local", "ssh", "slurm")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")


def _fail(key: str, value: Any, allowed: str) -> SpecError:
    return SpecError(f"spec key {key!r}: invalid value {value!r}; allowed: {allowed}")


def safe_name(key: str, value: Any) -> str:
    """A name that can be a file or folder name inside the campaign folder."""
    if not isinstance(value, str) or not _SAFE_NAME.match(value) or ".." in value:
        raise _fail(key, value, "letters, digits and . _ + - (no '/', no '..', "
                    "not starting with '.' or '-', at most 128 characters)")
    return value


def parse_devices(key: str, value: Any) -> tuple[int, int]:
    m = _DEVICE.match(str(value).strip()) if isinstance(value, str) else None
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise _fail(key, value, "<N>n<G>g with N, G >= 1, e.g. 1n1g, 1n8g, 2n8g")
    return int(m.group(1)), int(m.group(2))


def parse_duration(key: str, value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    m = _DURATION.match(str(value)) if isinstance(value, str) else None
    if not m or float(m.group(1)) <= 0:
        raise _fail(key, value, "a positive number of seconds or '90s', '10m', '1h'")
    unit = {"m": 60, "min": 60, "h": 3600}.get(m.group(2) or "s", 1)
    return float(m.group(1)) * unit


def _int(key: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _fail(key, value, f"an integer >= {minimum}")
    return value


def _list(key: str, value: Any) -> list:
    if isinstance(value, (str, int)):
        return [value]
    if not isinstance(value, list) or not value:
        raise _fail(key, value, "a non-empty list")
    return value


def _precision(key: str, value: Any) -> str:
    p = normalize_precision(str(value))
    if p not in PRECISIONS:
        raise _fail(key, value, ", ".join(PRECISIONS) + " (aliases fp16, float16, mixed → amp)")
    return p


def _env(key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(key, value, "a mapping NAME: value")
    out = {}
    for k, v in value.items():
        if not isinstance(k, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k):
            raise _fail(f"{key}.{k}", k, "a variable name [A-Za-z_][A-Za-z0-9_]*")
        if isinstance(v, (dict, list)) or v is None or "\n" in str(v) or "\0" in str(v):
            raise _fail(f"{key}.{k}", "<value hidden>" if is_secret(k) else v,
                        "a string or number without newlines")
        out[k] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


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


def _host(key: str, value: Any) -> dict:
    if isinstance(value, dict):
        unknown = set(value) - {"host", "port", "user"}
        if unknown or "host" not in value:
            raise _fail(key, value, "{host, port, user} (host required)")
        h = dict(value)
    elif isinstance(value, str):
        m = re.match(r"^(?:([^@\s]+)@)?([^@:\s]+)(?::(\d+))?$", value)
        if not m:
            raise _fail(key, value, "'host', 'user@host' or 'user@host:port'")
        h = {"host": m.group(2)}
        if m.group(1):
            h["user"] = m.group(1)
        if m.group(3):
            h["port"] = int(m.group(3))
    else:
        raise _fail(key, value, "a host string or {host, port, user}")
    if not re.match(r"^[A-Za-z0-9_.:%-]+$", str(h["host"])) or str(h["host"]).startswith("-"):
        raise _fail(key, h["host"], "a host name or address (letters, digits, . - _ :)")
    if "port" in h:
        h["port"] = _int(f"{key}.port", h["port"])
    return h


def _case_list(raw: dict, model: str) -> list[Case]:
    cases = []
    if "cases" in raw:
        for i, item in enumerate(_list("cases", raw["cases"])):
            key = f"cases[{i}]"
            if not isinstance(item, dict):
                raise _fail(key, item, "a mapping with devices, precision, batch_size")
            allowed = {"devices", "device", "precision", "batch_size", "name", "args", "params",
                       "model"}
            bad = set(item) - allowed
            if bad:
                raise _fail(f"{key}.{sorted(bad)[0]}", item[sorted(bad)[0]],
                            "keys " + ", ".join(sorted(allowed)))
            dev = item.get("devices", item.get("device"))
            if dev is None:
                raise SpecError(f"spec key {key!r}: 'devices' is required (e.g. 1n8g)")
            n, g = parse_devices(f"{key}.devices", dev)
            prec = _precision(f"{key}.precision", item.get("precision", "fp32"))
            bsz = _int(f"{key}.batch_size", item.get("batch_size"))
            name = safe_name(f"{key}.name", item["name"]) if "name" in item else ""
            args = tuple(str(a) for a in _list(f"{key}.args", item["args"])) if item.get("args") \
                else ()
            params = item.get("params") or {}
            if not isinstance(params, dict):
                raise _fail(f"{key}.params", params, "a mapping")
            cmodel = safe_name(f"{key}.model", normalize_model(str(item.get("model", model))))
            cases.append(Case(n, g, prec, bsz, cmodel, name, args, tuple(sorted(params.items()))))
        return cases
    for k in ("precisions", "batch_sizes", "devices"):
        if k not in raw:
            raise SpecError(f"spec key {k!r} is required (or give an explicit 'cases:' list)")
    precs = [_precision("precisions", p) for p in _list("precisions", raw["precisions"])]
    bszs = [_int("batch_sizes", b) for b in _list("batch_sizes", raw["batch_sizes"])]
    devs = [parse_devices("devices", d) for d in _list("devices", raw["devices"])]
    # aliases (fp16 = amp) and repeated entries name the same case once
    precs, bszs, devs = (list(dict.fromkeys(x)) for x in (precs, bszs, devs))
    for n, g in devs:
        for p in precs:
            for b in bszs:
                cases.append(Case(n, g, p, b, model))
    return cases


def from_dict(raw: dict) -> Spec:
    """Validate a spec mapping (as loaded from YAML) into a :class:`Spec`."""
    from analysis.campaign import workloads

    if not isinstance(raw, dict):
        raise SpecError(f"a campaign spec is a mapping of keys; got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise SpecError(f"unknown spec key {unknown[0]!r}; valid keys: {', '.join(sorted(KEYS))}")
    for k in ("name", "workload"):
        if k not in raw:
            raise SpecError(f"spec key {k!r} is required")
    name = safe_name("name", raw["name"])
    if raw["workload"] not in workloads.names():
        raise _fail("workload", raw["workload"], ", ".join(workloads.names()))
    wl = workloads.get(raw["workload"])
    if raw.get("framework") and str(raw["framework"]).lower() != wl.framework:
        raise _fail("framework", raw["framework"], f"{wl.framework} (workload {wl.name})")
    model = safe_name("model", normalize_model(str(raw.get("model", wl.default_model))))
    backend = raw.get("backend", "local")
    if backend not in BACKENDS:
        raise _fail("backend", backend, ", ".join(BACKENDS))
    for k in ("ssh", "slurm", "options"):
        if k in raw and not isinstance(raw[k], dict):
            raise _fail(k, raw[k], "a mapping")
    container = raw.get("container")
    if container is not None:
        if isinstance(container, str):
            container = {"image": container}
        if not isinstance(container, dict) or "image" not in container:
            raise _fail("container", container, "an image name or {image, runtime, mounts, args}")
        if container.get("runtime", "docker") not in ("docker", "apptainer", "singularity"):
            raise _fail("container.runtime", container.get("runtime"),
                        "docker, apptainer, singularity")
    device = raw.get("device", "auto")
    if device not in ("auto", "cuda", "cpu"):
        raise _fail("device", device, "auto, cuda, cpu")
    scale = raw.get("scale", "auto")
    if scale not in ("auto", "full", "cpu"):
        raise _fail("scale", scale, "auto, full, cpu")
    port = raw.get("master_port", "auto")
    if port != "auto":
        port = _int("master_port", port)
        if port > 65535:
            raise _fail("master_port", port, "1..65535 or 'auto'")
    hosts = [_host(f"hosts[{i}]", h) for i, h in enumerate(raw.get("hosts") or [])]
    retry_failed = raw.get("retry_failed", True)
    if not isinstance(retry_failed, bool):
        raise _fail("retry_failed", retry_failed, "true or false")
    cases = _case_list(raw, model)
    for c in cases:
        wl.check_case(c)
    spec = Spec(
        name=name, workload=wl.name, model=model, cases=cases,
        repeats=_int("repeats", raw.get("repeats", 5)),
        iterations=_int("iterations", raw.get("iterations", wl.default_iterations)),
        warmup=_int("warmup", raw.get("warmup", 0), minimum=0),
        backend=backend, hosts=hosts, ssh=dict(raw.get("ssh") or {}),
        slurm=dict(raw.get("slurm") or {}), env=_env("env", raw.get("env")),
        container=container, timeout=parse_duration("timeout", raw.get("timeout", 3600)),
        retries=_int("retries", raw.get("retries", 1), minimum=0), retry_failed=retry_failed,
        device=device, scale=scale,
        workload_args=[str(a) for a in (raw.get("workload_args") or [])],
        options=dict(raw.get("options") or {}), python=raw.get("python"),
        workdir=raw.get("workdir"), master_port=port,
        gpus_per_host=_int("gpus_per_host", raw["gpus_per_host"]) if raw.get("gpus_per_host")
        else None,
        out_dir=raw.get("out_dir"), framework=wl.framework, raw=dict(raw),
    )
    if spec.warmup >= spec.iterations:
        raise _fail("warmup", spec.warmup, f"fewer than iterations ({spec.iterations})")
    if backend == "ssh" and len(hosts) < spec.max_nodes():
        raise SpecError(f"spec key 'hosts': backend ssh needs at least {spec.max_nodes()} "
                        f"hosts for {spec.max_nodes()}-node cases; got {len(hosts)}")
    spec.runs()  # stable ids, no duplicates
    return spec


def load(path: str | Path, overrides: dict | None = None) -> Spec:
    """Read a YAML spec file; `overrides` (e.g. from the CLI) replace top-level keys."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"cannot read spec {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"spec {path} is not valid YAML: {exc}") from None
    if isinstance(raw, dict):
        raw.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return from_dict(raw)


def loads(text: str, overrides: dict | None = None) -> Spec:
    raw = yaml.safe_load(text)
    if isinstance(raw, dict):
        raw.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return from_dict(raw)


def contained(out_dir: Path, path: Path) -> Path:
    """`path` resolved; SpecError if it lies outside `out_dir` (a case escaping its folder)."""
    out, p = Path(out_dir).resolve(), Path(path).resolve()
    if p != out and out not in p.parents:
        raise SpecError(f"path {path} would escape the campaign folder {out}")
    return p
