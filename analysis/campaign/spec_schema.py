"""The campaign spec's schema: every key, nested ones included, as pydantic models.

Each key is declared once, with its meaning (``description``) and its bounds; unknown keys are
refused (``extra="forbid"``) and so are passwords (SSH keys or an agent only). A failure
becomes one :class:`SpecError` naming the key's path (``cases[0].batch_size``), the value
(shortened; hidden under a secret-named key) and what is allowed.
``python -m analysis.campaign.spec_schema`` prints the JSON Schema that editors complete
and check specs with (``docs/campaign.schema.json``, ``make schema``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from analysis.errors import UsageError, shown_value
from analysis.layout import normalize_model, normalize_precision
from analysis.redact import is_secret_name

#: Bounds of what one spec may ask for (a typo such as ``repeats: 10000000`` is an error).
LIMITS = {"runs": 10_000, "repeats": 1_000, "iterations": 10_000_000, "batch_size": 1 << 20,
          "num_nodes": 4_096, "gpus_per_node": 64, "retries": 100, "timeout_s": 30 * 86400,
          "text": 4_096, "list": 1_000}
PRECISIONS = ("fp32", "amp", "bf16", "tf32")
BACKENDS = ("local", "ssh", "slurm")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_DEVICE = re.compile(r"^(\d{1,5})n(\d{1,3})g$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$")
_NO_PASSWORDS = "passwords are not accepted in a spec; use SSH keys or an agent"


class SpecError(UsageError):
    """A campaign spec is invalid; the message names the key and the allowed values.
    ``key`` is the key's path (``slurm.partition``, ``cases[0].batch_size``) when known."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


def _bad(allowed: str) -> PydanticCustomError:
    return PydanticCustomError("spec_value", "allowed: {allowed}", {"allowed": allowed})


# ---- value types ------------------------------------------------------------------------
def _safe_name(v: Any) -> str:
    if not isinstance(v, str) or not _SAFE_NAME.match(v) or ".." in v:
        raise _bad("letters, digits and . _ + - (no '/', no '..', not starting with '.' or "
                   "'-', at most 128 characters)")
    return v


def parse_devices(v: Any) -> tuple[int, int]:
    """``'2n8g'`` -> (2, 8)."""
    m = _DEVICE.match(v.strip()) if isinstance(v, str) else None
    n, g = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if not (1 <= n <= LIMITS["num_nodes"] and 1 <= g <= LIMITS["gpus_per_node"]):
        raise _bad(f"<N>n<G>g with 1 <= N <= {LIMITS['num_nodes']} and 1 <= G <= "
                   f"{LIMITS['gpus_per_node']}, e.g. 1n1g, 1n8g, 2n8g")
    return n, g


def parse_duration(v: Any) -> float:
    """Seconds of ``90``, ``'90s'``, ``'10m'``, ``'1h'``."""
    seconds = None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        seconds = float(v)
    elif isinstance(v, str) and (m := _DURATION.match(v)):
        seconds = float(m.group(1)) * {"m": 60, "min": 60, "h": 3600}.get(m.group(2) or "s", 1)
    if seconds is None or not math.isfinite(seconds) or not 0 < seconds <= LIMITS["timeout_s"]:
        raise _bad("a positive number of seconds or '90s', '10m', '1h' (at most "
                   f"{LIMITS['timeout_s'] // 86400} days)")
    return seconds


def _text(v: Any) -> str:
    """A plain string (numbers are accepted and converted), without NUL, not huge."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)) or "\0" in str(v) or \
            len(str(v)) > LIMITS["text"]:
        raise _bad(f"a string without NUL characters, at most {LIMITS['text']} characters")
    return str(v)


def _matching(rx: str, what: str):
    def check(v: Any) -> str:
        if isinstance(v, bool) or not isinstance(v, (str, int)) or \
                not re.match(rx, str(v)) or str(v).startswith("-"):
            raise _bad(what)
        return str(v)
    return Annotated[str, BeforeValidator(check), Field(pattern=rx)]


def _precision(v: Any) -> str:
    if normalize_precision(str(v)) not in PRECISIONS:
        raise _bad(", ".join(PRECISIONS) + " (aliases fp16, float16, mixed → amp)")
    return normalize_precision(str(v))


def _env_value(v: Any) -> str:
    if isinstance(v, (dict, list)) or v is None or "\n" in str(v) or "\0" in str(v) or \
            len(str(v)) > LIMITS["text"]:
        raise _bad("a string or number without newlines")
    return str(v).lower() if isinstance(v, bool) else str(v)


def _option(v: Any) -> Any:
    if v is not None and not isinstance(v, (str, int, float, bool)):
        raise _bad("a string, number or boolean")
    return _text(v) if isinstance(v, str) else v


def _master_port(v: Any) -> int | str:
    if v != "auto" and (isinstance(v, bool) or not isinstance(v, int) or not 0 < v < 65536):
        raise _bad("'auto' or a port number 1-65535")
    return v


def _one_or_list(v: Any) -> Any:
    return [v] if isinstance(v, (str, int)) and not isinstance(v, bool) else v


def _count(lo: int, hi: int):
    return Annotated[int, Field(strict=True, ge=lo, le=hi)]


def _listed(item):
    return Annotated[list[item], BeforeValidator(_one_or_list),
                     Field(min_length=1, max_length=LIMITS["list"])]


Text = Annotated[str, BeforeValidator(_text), Field(max_length=LIMITS["text"])]
Texts = _listed(Text)
SafeName = Annotated[str, BeforeValidator(_safe_name), Field(pattern=_SAFE_NAME.pattern)]
ModelName = Annotated[str, BeforeValidator(lambda v: _safe_name(normalize_model(str(v)))),
                      WithJsonSchema({"type": "string"})]
Devices = Annotated[tuple[int, int], BeforeValidator(parse_devices),
                    WithJsonSchema({"type": "string", "pattern": _DEVICE.pattern})]
Duration = Annotated[float, BeforeValidator(parse_duration), WithJsonSchema(
    {"anyOf": [{"type": "number", "exclusiveMinimum": 0},
               {"type": "string", "pattern": _DURATION.pattern}]})]
Precision = Annotated[str, BeforeValidator(_precision), WithJsonSchema({"type": "string"})]
Port = _count(1, 65535)
MasterPort = Annotated[Any, BeforeValidator(_master_port), WithJsonSchema(
    {"anyOf": [{"const": "auto"}, {"type": "integer", "minimum": 1, "maximum": 65535}]})]
VarName = _matching(r"^[A-Za-z_][A-Za-z0-9_]*$", "a variable name [A-Za-z_][A-Za-z0-9_]*")
User = _matching(r"^[A-Za-z0-9._][A-Za-z0-9._-]*$", "a login name (letters, digits, . _ -)")
Options = Annotated[dict[VarName, Annotated[Any, BeforeValidator(_option)]],
                    Field(max_length=LIMITS["list"])]


class _Section(BaseModel):
    """A mapping of the spec: unknown keys refused, empty values are the defaults."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_passwords(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for k in data:
            if str(k).lower() in ("password", "passwd", "passphrase"):
                raise PydanticCustomError("no_password", _NO_PASSWORDS, {"key": str(k)})
        return {k: v for k, v in data.items() if v is not None}


class SshOptions(_Section):
    user: User | None = Field(None, description="login name on every host (default: "
                              "~/.ssh/config, then yours)")
    port: Port | None = Field(None, description="ssh port on every host (default 22)")
    key_file: Text | None = Field(None, description="private key file (default: ssh agent and "
                                  "~/.ssh keys)")
    config_file: Text | None = Field(None, description="ssh config file, given to ssh as -F "
                                     "(default ~/.ssh/config then /etc/ssh/ssh_config)")
    connect_timeout: Annotated[Duration, AfterValidator(lambda s: min(s, 600.0))] | None = \
        Field(None, description="seconds to wait for a connection (default 10, at most 600)")
    known_hosts: Text | None = Field(None, description="known_hosts file of the hosts' keys, "
                                     "given to ssh as -o UserKnownHostsFile (default: the ssh "
                                     "config's, else ~/.ssh/known_hosts)")
    host_key_checking: Literal["strict", "accept-new"] | None = Field(
        None, description="strict (default: an unknown host key is refused) | accept-new "
        "(trust on first use: an unknown key is added to known_hosts and recorded); a changed "
        "key is always refused")
    remote_tmp: _matching(r"^/[A-Za-z0-9._/+-]*$", "an absolute path") | None = Field(
        None, description="folder on the hosts for the node agent (default "
        "/tmp/dlperf-campaign-<name>)")


class SlurmOptions(_Section):
    # sbatch gets each option as one argument (never through a shell): any text is safe
    partition: Text | None = Field(None, description="partition (sbatch --partition)")
    account: Text | None = Field(None, description="account (sbatch --account)")
    time_limit: Duration | None = Field(None, description="job time limit: seconds or '90s', "
                                        "'10m', '1h' (default: timeout + 2 min)")
    start_timeout: Duration | None = Field(None, description="how long a job may wait in the "
                                           "queue before it is cancelled and the run fails "
                                           "(default 1h)")
    cpus_per_task: _count(1, 4096) | None = Field(None, description="CPUs per node task "
                                                  "(sbatch --cpus-per-task)")
    gpus_per_node: _count(0, 64) | None = Field(None, description="GPUs per node (default: "
                                                "from sinfo)")
    extra_args: Texts | None = Field(None, description="more sbatch arguments, e.g. "
                                     "['--exclusive']")


class Container(_Section):
    image: Text = Field(description="container image")
    runtime: Literal["docker", "apptainer", "singularity"] | None = Field(
        None, description="docker | apptainer | singularity (default docker)")
    mounts: Texts | None = Field(None, description="extra mounts (docker -v / apptainer -B "
                                 "syntax)")
    args: Texts | None = Field(None, description="extra arguments of docker run / apptainer "
                               "exec")


class Host(_Section):
    host: _matching(r"^[A-Za-z0-9_.:%-]+$", "a host name or address (letters, digits, . - _ :)"
                    ) = Field(description="host name or address")
    port: Port | None = Field(None, description="ssh port")
    user: User | None = Field(None, description="login name")


def _host(v: Any) -> Any:
    """``'host'``, ``'user@host'`` or ``'user@host:port'`` as a Host mapping."""
    if isinstance(v, str):
        m = re.match(r"^(?:([^@\s]+)@)?([^@\s]+?)(?::(\d+))?$", v)
        if m and m.group(1) and ":" in m.group(1):
            raise PydanticCustomError("no_password", _NO_PASSWORDS, {"key": ""})
        if not m:
            raise _bad("'host', 'user@host' or 'user@host:port'")
        return {"host": m.group(2), **({"user": m.group(1)} if m.group(1) else {}),
                **({"port": int(m.group(3))} if m.group(3) else {})}
    if not isinstance(v, dict):
        raise _bad("a host string or {host, port, user}")
    return v


class CaseSpec(_Section):
    devices: Devices = Field(validation_alias=AliasChoices("devices", "device"),
                             description="<N>n<G>g (or 'device')")
    precision: Precision = Field("fp32", description="fp32 | amp | bf16 | tf32")
    batch_size: _count(1, LIMITS["batch_size"]) = Field(description="batch size per device")
    name: SafeName = Field("", description="log file stem prefix")
    args: Texts = Field([], description="extra workload arguments of this case")
    params: Options = Field({}, description="workload-specific parameters")
    model: ModelName | None = Field(None, description="model name of this case")


def _keys(model: type[BaseModel]) -> str:
    return ", ".join(model.model_fields)


class SpecFile(_Section):
    """A campaign spec as written (docs: the README's campaign section)."""

    model_config = ConfigDict(extra="forbid", title="DLPerf campaign spec")

    name: SafeName = Field(description="campaign name; also the default output folder "
                           "data/raw_logs/<name>/")
    workload: Text = Field(description="workload template (see `dlperf run --help`)")
    framework: Text | None = Field(None, description="informational; checked against the "
                                   "workload's framework")
    model: ModelName | None = Field(None, description="model name used in log file names "
                                    "(default: the workload's model)")
    precisions: _listed(Precision) | None = Field(None, description="list of fp32 | amp | bf16 "
                                                  "| tf32 (aliases: fp16, float16, mixed)")
    batch_sizes: _listed(_count(1, LIMITS["batch_size"])) | None = Field(
        None, description="list of batch sizes per device")
    devices: _listed(Devices) | None = Field(None, description="list of device configs "
                                             "<N>n<G>g, e.g. 1n1g, 1n8g, 2n8g")
    cases: _listed(CaseSpec) | None = Field(None, description="explicit list of cases instead of "
                                        f"the matrix (keys: {_keys(CaseSpec)})")
    repeats: _count(1, LIMITS["repeats"]) = Field(5, description="repeats per case (default 5)")
    iterations: _count(1, LIMITS["iterations"]) | None = Field(
        None, description="training iterations per run (default: the workload's)")
    warmup: _count(0, LIMITS["iterations"]) | None = Field(
        None, description="warm-up iterations given to the workload's program (builtin: "
        "--warmup-iterations, default 20; dle_tf_rn50: --warmup_steps, default 0; refused by "
        "workloads whose program takes none)")
    backend: Literal[BACKENDS] = Field("local", description=" | ".join(BACKENDS))
    hosts: Annotated[list[Annotated[Host, BeforeValidator(_host), WithJsonSchema(
        {"anyOf": [{"type": "string"}, Host.model_json_schema()]})]],
        BeforeValidator(_one_or_list), Field(max_length=LIMITS["list"])] = Field(
        [], description="ssh: node hosts, in node-rank order ('host', 'user@host:port' or "
        "{host, port, user}); no passwords: use SSH keys or an agent")
    ssh: SshOptions | None = Field(None, description=f"ssh options: {_keys(SshOptions)}")
    slurm: SlurmOptions | None = Field(None, description=f"slurm options: {_keys(SlurmOptions)}")
    env: Annotated[dict[VarName, Annotated[str, BeforeValidator(_env_value)]],
                   Field(max_length=LIMITS["list"])] = Field(
        {}, description="environment variables for every node (secrets are never written)")
    container: Annotated[Container, BeforeValidator(
        lambda v: {"image": v} if isinstance(v, str) else v), WithJsonSchema(
        {"anyOf": [{"type": "string"}, Container.model_json_schema()]})] | None = Field(
        None, description=f"optional container: an image or {{{_keys(Container)}}}")
    timeout: Duration = Field(3600.0, description="per-run timeout: seconds or '90s', '10m', "
                              "'1h' (default 3600)")
    retries: _count(0, LIMITS["retries"]) = Field(1, description="extra attempts of a failed "
                                                  "run within one invocation (default 1)")
    retry_failed: Annotated[bool, Field(strict=True)] = Field(
        True, description="re-run runs that failed in an earlier invocation (default true)")
    device: Literal["auto", "cuda", "cpu"] = Field("auto", description="auto | cuda | cpu "
                                                   "(auto: cpu when no CUDA GPU is found)")
    scale: Literal["auto", "full", "cpu"] = Field("auto", description="auto | full | cpu (cpu: "
                                                  "reduced model size; auto: cpu when device "
                                                  "is cpu)")
    workload_args: Texts = Field([], description="extra arguments appended to every workload "
                                 "command")
    options: Options = Field({}, description="workload template options (code_dir, data_dir, "
                             "script, ...)")
    python: Text | None = Field(None, description="Python interpreter on the nodes (default: "
                                "the one running the campaign)")
    workdir: Text | None = Field(None, description="working directory on the nodes (default: "
                                 "the project folder)")
    master_port: MasterPort = Field("auto", description="rendezvous port, or 'auto' (a free "
                                    "port per run; default auto)")
    gpus_per_host: _count(1, 4096) | None = Field(None, description="local multi-node: GPUs "
                                                  "of this host split among its 'nodes' "
                                                  "(default: all)")
    out_dir: Text | None = Field(None, description="output folder (default "
                                 "data/raw_logs/<name>/)")


#: Every top-level key and what it means.
KEYS = {k: f.description for k, f in SpecFile.model_fields.items()}


# ---- errors -----------------------------------------------------------------------------
def key_path(loc: tuple) -> str:
    """``('cases', 0, 'name')`` -> ``'cases[0].name'``."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


#: The nested mappings (one level below the top), whose valid keys an error lists.
SECTIONS = {"ssh": SshOptions, "slurm": SlurmOptions, "container": Container,
            "cases": CaseSpec, "hosts": Host}


def invalid(key: str, value: Any, allowed: str) -> SpecError:
    """The error of a value the schema passed and a later check refused."""
    shown = "<value hidden>" if is_secret_name(key.rsplit(".", 1)[-1]) else shown_value(value)
    return SpecError(f"spec key {key!r}: invalid value {shown}; allowed: {allowed}", key)


def validate(raw: dict) -> SpecFile:
    """`raw` checked against the schema; SpecError for its first problem."""
    try:
        return SpecFile.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    # a misspelt key is reported as such, not as the required key it was meant to be
    first = {"no_password": 0, "extra_forbidden": 1}
    raise _error(min(errors, key=lambda e: first.get(e["type"], 2))) from None


def _error(err: dict) -> SpecError:
    loc = tuple(p for p in err["loc"] if p != "[key]")
    path, kind = key_path(loc), err["type"]
    if kind == "no_password":
        path = ".".join(p for p in (path, err["ctx"]["key"]) if p)
        return SpecError(f"spec key {path!r}: {_NO_PASSWORDS}", path)
    if kind == "missing":
        return SpecError(f"spec key {path!r} is required", path)
    if kind == "extra_forbidden":
        model = SECTIONS[loc[0]] if len(loc) > 1 else SpecFile
        where = f" of {key_path(loc[:-1])!r}" if len(loc) > 1 else ""
        return SpecError(f"unknown spec key {path!r}; valid keys{where}: "
                         f"{', '.join(sorted(model.model_fields))}", path)
    msg = "allowed: a mapping" if kind in ("model_type", "dict_type") else \
        re.sub(r"^Input should be ", "allowed: ", err["msg"])
    msg = msg[:1].lower() + msg[1:]
    secret = bool(loc) and is_secret_name(str(loc[-1]))
    shown = "<value hidden>" if secret else shown_value(err["input"])
    return SpecError(f"spec key {path!r}: invalid value {shown}; {msg}", path)


if __name__ == "__main__":
    print(json.dumps(SpecFile.model_json_schema(), indent=2, ensure_ascii=False))
