"""`EnvRecord`: the validated description of the machine a benchmark ran on.

One record is stored next to each run's logs (``env.json``) and joined to the tidy frames by
run id. Everything in it is plain JSON. Environment variables pass through
:func:`analysis.redact.redact_env` whenever a record is built, so a secret (by its
name or its value) never reaches the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.env.fields import RECORD_KEYS, WRITTEN, accepts
from analysis.env.probes import GPU_KEYS
from analysis.errors import SchemaError
from analysis.fsutil import atomic_write_text
from analysis.redact import redact_env

SCHEMA_VERSION = 1


class EnvRecordError(SchemaError):
    """An environment record (or its JSON file) does not match the EnvRecord schema."""


@dataclass
class EnvRecord:
    """Hardware and software of one host (:data:`analysis.env.fields.WRITTEN` declares the
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
        for key in RECORD_KEYS:  # the types written now (analysis.env.fields), no legacy
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
        """JSON-ready dict with the keys of :data:`analysis.env.fields.RECORD_KEYS`, in that
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
