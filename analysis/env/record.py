"""The environment record (``env.json``, one beside each run's logs, joined to the tidy
frames by run id): its declared layout, every JSON path a reader uses with the types it may
hold (:data:`WRITTEN`), and :class:`EnvRecord`, what ``dlperf env`` writes.

One declaration, read two ways: :class:`EnvRecord` checks what ``dlperf env`` writes against
it; a report or a comparison reading records found beside logs (written by the campaign
runner, or by hand) leaves out, through :func:`usable`, each field of a wrong type with a
:class:`FieldProblem` naming its JSON path, so the rest of the record is used.

Paths: ``a.b`` is key ``b`` of mapping ``a``, ``a.*`` any key of it, ``a[]`` any item of
list ``a``. A path not declared here is not checked (a hand-written note is kept).
Everything in a record is plain JSON. Environment variables pass through
:func:`analysis.redact.redact_env` whenever a record is built, so a secret (by its name or
its value) never reaches the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.env.probes import GPU_KEYS
from analysis.errors import SchemaError
from analysis.fsutil import atomic_write_text
from analysis.redact import redact_env, redact_value

_STR, _OPT_STR, _INT, _OPT_INT = ("str",), ("str", "null"), ("int",), ("int", "null")
_OPT_NUM, _DICT, _LIST = ("number", "null"), ("dict",), ("list",)

#: What ``dlperf env`` writes (schema_version 1); the top-level keys in the order of the file.
WRITTEN: dict[str, tuple[str, ...]] = {
    "schema_version": _INT,
    "captured_at": _STR,
    "capture_seconds": ("number",),
    "hostname": _STR,
    "gpu_model": _OPT_STR,
    "gpu_count": _INT,
    "gpu_memory_mib": _OPT_INT,
    "gpus": _LIST,
    "driver_version": _OPT_STR,
    "cuda_version": _OPT_STR,
    "cuda_toolkit": _OPT_STR,
    "cudnn_version": _OPT_STR,
    "nccl_version": _OPT_STR,
    "frameworks": _DICT,
    "python": _DICT,
    "cpu": _DICT,
    "memory": _DICT,
    "os": _DICT,
    "kernel": _OPT_STR,
    "machine": _OPT_STR,
    "infiniband": _LIST,
    "topology_text": _OPT_STR,
    "topology": ("dict", "null"),
    "matmul": ("dict", "null"),
    "env": _DICT,
    "sources": _DICT,
    "absent": _DICT,
    # inside them
    "gpus[]": _DICT,
    "gpus[].index": _INT,
    "gpus[].name": _OPT_STR,
    "gpus[].uuid": _OPT_STR,
    "gpus[].pci_bus_id": _OPT_STR,
    "gpus[].memory_total_mib": _OPT_INT,
    "gpus[].driver_version": _OPT_STR,
    "gpus[].power_limit_w": _OPT_NUM,
    "gpus[].max_sm_clock_mhz": _OPT_INT,
    "gpus[].compute_cap": _OPT_STR,
    "frameworks.*": _DICT,
    "frameworks.*.version": _STR,
    "frameworks.*.cuda": _OPT_STR,
    "frameworks.*.cudnn": _OPT_STR,
    "frameworks.*.nccl": _OPT_STR,
    "frameworks.*.git_version": _OPT_STR,
    "python.version": _STR,
    "cpu.model": _OPT_STR,
    "cpu.logical_cpus": _OPT_INT,
    "cpu.numa_nodes": _OPT_INT,
    "cpu.sockets": _OPT_INT,
    "cpu.cores_per_socket": _OPT_INT,
    "cpu.threads_per_core": _OPT_INT,
    "cpu.numa_cpus": _DICT,
    "cpu.numa_cpus.*": _STR,
    "memory.total_mib": _INT,
    "os.pretty_name": _OPT_STR,
    "os.name": _OPT_STR,
    "os.id": _OPT_STR,
    "os.version_id": _OPT_STR,
    "infiniband[]": _DICT,
    "infiniband[].device": _STR,
    "infiniband[].ports": _LIST,
    "infiniband[].ports[]": _DICT,
    "infiniband[].ports[].port": _OPT_INT,
    "infiniband[].ports[].rate": _OPT_STR,
    "infiniband[].ports[].link_layer": _OPT_STR,
    "infiniband[].ports[].state": _OPT_STR,
    "matmul.size": _INT,
    "matmul.measured_at": _STR,
    "matmul.tflops_median": ("number",),
    "matmul.gpus": _LIST,
    "matmul.gpus[]": _DICT,
    "matmul.gpus[].index": _INT,
    "matmul.gpus[].name": _OPT_STR,
    "matmul.gpus[].uuid": _OPT_STR,
    "matmul.gpus[].tflops_median": ("number",),
    "matmul.gpus[].tflops_first": ("number",),
    "env.*": _STR,
    "sources.*": _STR,
    "absent.*": _STR,
}
#: The top-level keys ``dlperf env`` writes, in the order of the file.
RECORD_KEYS = tuple(k for k in WRITTEN if "." not in k and "[" not in k)

_NAMES = {"str": "a string", "int": "an integer", "number": "a number", "bool": "true/false",
          "dict": "a mapping", "list": "a list", "null": "null"}


def json_type(value: Any) -> str:
    """The JSON type of `value`: str, int, number (a float), bool, dict, list or null."""
    for kind, name in ((type(None), "null"), (bool, "bool"), (int, "int"), (float, "number"),
                       (str, "str"), (Mapping, "dict"), (list, "list")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def accepts(types: tuple[str, ...], value: Any) -> bool:
    """True when `value` is of one of `types` (an integer is a number too)."""
    t = json_type(value)
    return t in types or (t == "int" and "number" in types)


def expected(types: tuple[str, ...]) -> str:
    """'a string or null'."""
    return " or ".join(_NAMES.get(t, t) for t in types)


@dataclass(frozen=True)
class FieldProblem:
    """A field of a record that is not of its declared type (left out by :func:`usable`)."""

    path: str  # as in the file: gpus[1].memory_total_mib, frameworks.torch.version
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def _shown(key: str, value: Any) -> str:
    """The value for a message: JSON, short, hidden when its name says it is a secret."""
    text = redact_value(key, json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= 40 else text[:40] + "…"


def usable(record: Mapping[str, Any]) -> tuple[dict, list[FieldProblem]]:
    """A copy of `record` without its fields of a wrong type, and a problem for each field
    left out."""
    problems: list[FieldProblem] = []

    def check(value: Any, pattern: str, path: str, key: str) -> bool:
        allowed = WRITTEN.get(pattern)
        if allowed is None or accepts(allowed, value):
            return True
        problems.append(FieldProblem(path, f"{_shown(key, value)} is {_NAMES.get(json_type(value), json_type(value))}, "
                                           f"expected {expected(allowed)}; not used"))
        return False

    def walk(value: Any, pattern: str, path: str) -> Any:
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                sub = next((p for p in (f"{pattern}.{k}" if pattern else str(k), f"{pattern}.*")
                            if p in WRITTEN), f"{pattern}.{k}")
                sub_path = f"{path}.{k}" if path else str(k)
                if check(v, sub, sub_path, str(k)):
                    out[k] = walk(v, sub, sub_path)
            return out
        if isinstance(value, list):
            out_list = []
            for i, v in enumerate(value):
                if check(v, f"{pattern}[]", f"{path}[{i}]", path.rsplit(".", 1)[-1]):
                    out_list.append(walk(v, f"{pattern}[]", f"{path}[{i}]"))
            return out_list
        return value

    return walk(record, "", ""), problems


SCHEMA_VERSION = 1


class EnvRecordError(SchemaError):
    """An environment record (or its JSON file) does not match the EnvRecord schema."""


@dataclass
class EnvRecord:
    """Hardware and software of one host (:data:`WRITTEN` declares the
    JSON keys and types).

    ``gpus`` holds one dict per GPU with keys ``index, name, uuid, pci_bus_id,
    memory_total_mib, driver_version, power_limit_w, max_sm_clock_mhz, compute_cap``.
    ``frameworks`` maps a package name to ``{"version": …}`` plus, when the framework was
    imported, ``cuda``, ``cudnn``, ``nccl``. ``topology`` is the parsed ``topology_text``
    (:meth:`Topology.to_dict` without the text). ``sources`` says where a value came from
    (``{"gpus": "nvidia-smi", "cudnn_version": "torch"}``) and ``absent`` what could not be
    recorded and why (``{"nvidia-smi": "not found on PATH"}``). ``matmul`` is the measured
    bf16 matmul rate (:func:`analysis.env.probes.probe_matmul`), when it was asked for.
    """

    captured_at: str
    hostname: str
    capture_seconds: float = 0.0
    gpu_model: str | None = None
    gpu_count: int = 0
    gpu_memory_mib: int | None = None
    gpus: list[dict] = field(default_factory=list)
    driver_version: str | None = None
    cuda_version: str | None = None
    cuda_toolkit: str | None = None
    cudnn_version: str | None = None
    nccl_version: str | None = None
    frameworks: dict[str, dict] = field(default_factory=dict)
    python: dict[str, Any] = field(default_factory=dict)
    cpu: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    os: dict[str, Any] = field(default_factory=dict)
    kernel: str | None = None
    machine: str | None = None
    infiniband: list[dict] = field(default_factory=list)
    topology_text: str | None = None
    topology: dict | None = None
    matmul: dict | None = None
    env: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        self.env = redact_env(self.env) if isinstance(self.env, Mapping) else self.env
        self.validate()

    def validate(self) -> None:
        """Raise :class:`EnvRecordError` naming the first field that breaks the schema."""
        for key in RECORD_KEYS:  # the types written now, no legacy
            value, types = getattr(self, key), WRITTEN[key]
            if not accepts(types, value):
                raise EnvRecordError(f"env record field {key!r} is {value!r}; "
                                     f"expected {' or '.join(types)}")
        if self.schema_version != SCHEMA_VERSION:
            raise EnvRecordError(f"env record schema_version {self.schema_version}; "
                                 f"this version reads {SCHEMA_VERSION}")
        if self.gpu_count != len(self.gpus):
            raise EnvRecordError(f"gpu_count is {self.gpu_count} but {len(self.gpus)} GPU "
                                 "entries are listed")
        for i, gpu in enumerate(self.gpus):
            if not isinstance(gpu, dict) or set(gpu) != set(GPU_KEYS):
                raise EnvRecordError(f"gpus[{i}] must be a dict with keys {', '.join(GPU_KEYS)}; "
                                     f"got {gpu!r}")
        for name in ("env", "sources", "absent"):
            bad = {k: v for k, v in getattr(self, name).items() if not isinstance(v, str)}
            if bad:
                raise EnvRecordError(f"env record {name!r} values must be strings; got {bad!r}")
        if self.topology is not None and self.topology_text is None:
            raise EnvRecordError("env record has a parsed topology but no topology_text")

    # ---- (de)serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the keys of :data:`RECORD_KEYS`, in that
        order."""
        return {k: getattr(self, k) for k in RECORD_KEYS}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def save(self, path: str | Path) -> Path:
        """Write the record as JSON (UTF-8, atomically) and return the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, self.to_json() + "\n")
        return path
