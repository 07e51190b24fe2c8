"""Environment records as report lines: hardware and software per distinct node type.

Records are JSON objects written by ``dlperf env``; values are looked up under several
spellings so older or hand-written records still render, and every absent value is shown
as "not recorded" rather than dropped.
"""

from __future__ import annotations

from analysis.i18n import Translator
from analysis.report.inputs import EnvInput

# label id -> candidate paths ("a.b" = nested key, "a.0.b" = first list item)
HARDWARE = {
    "env.gpu": ("gpu_model", "gpus.0.name", "gpu.name"),
    "env.gpu_memory": ("gpu_memory_mib", "gpus.0.memory_total_mib", "gpu.memory_mib"),
    "env.cpu": ("cpu.model", "cpu_model"),
    "env.cpu_cores": ("cpu.logical_cpus", "cpu.cores", "cpu_cores"),
    "env.numa": ("cpu.numa_nodes", "numa_nodes"),
    "env.memory": ("memory.total_mib", "memory_mib"),
    "env.network": ("infiniband", "ib_devices"),
}
SOFTWARE = {
    "env.os": ("os.pretty_name", "os.name", "os"),
    "env.kernel": ("kernel", "os.kernel"),
    "env.driver": ("driver_version", "gpu.driver", "driver"),
    "env.cuda": ("cuda_version", "cuda_toolkit", "cuda"),
    "env.cudnn": ("cudnn_version", "cudnn"),
    "env.nccl": ("nccl_version", "nccl"),
    "env.python": ("python.version", "python_version", "python"),
}
_GPU_COUNT = ("gpu_count", "gpu.count")
_HOST = ("hostname", "host", "node")
_FRAMEWORKS = ("frameworks", "framework_versions", "packages")


def pick(record: dict, *paths: str):
    """The first value found at one of `paths` in a nested dict/list record."""
    for path in paths:
        cur = record
        for part in path.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
                cur = cur[int(part)]
            else:
                cur = None
                break
        if cur not in (None, "", [], {}):
            return cur
    return None


def _text(value) -> str:
    if isinstance(value, dict):
        if "absent" in value or "error" in value:
            return ""
        return ", ".join(f"{k} {v}" for k, v in value.items() if v not in (None, ""))
    if isinstance(value, (list, tuple)):
        parts = []
        for v in value:
            if isinstance(v, dict):
                parts.append(" ".join(str(x) for x in v.values() if x not in (None, "")))
            else:
                parts.append(str(v))
        return "; ".join(p for p in parts if p)
    return str(value)


def _mib(value) -> str:
    try:
        mib = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{mib / 1024:.0f} GiB ({mib:.0f} MiB)"


def _ib(devices) -> str:
    """InfiniBand/RoCE devices as 'mlx5_0 100 Gb/sec (InfiniBand)'."""
    if not isinstance(devices, list):
        return ""
    out = []
    for d in devices:
        if not isinstance(d, dict):
            continue
        ports = [f"{p.get('rate', '')} ({p.get('link_layer', '')})".strip()
                 for p in d.get("ports", []) if isinstance(p, dict) and p.get("rate")]
        out.append(f"{d.get('device', '')} {', '.join(ports)}".strip())
    return "; ".join(o for o in out if o)


def gpu_count(record: dict) -> int | None:
    n = pick(record, *_GPU_COUNT)
    if n is None and isinstance(record.get("gpus"), list):
        n = len(record["gpus"])
    try:
        return int(n) if n is not None else None
    except (TypeError, ValueError):
        return None


def hostname(rec: EnvInput) -> str:
    return str(pick(rec.record, *_HOST) or rec.name)


def signature(record: dict) -> tuple:
    """What makes two nodes the same type: GPU model and count, CPU model, memory."""
    return (_text(pick(record, *HARDWARE["env.gpu"]) or ""), gpu_count(record),
            _text(pick(record, *HARDWARE["env.cpu"]) or ""),
            _text(pick(record, *HARDWARE["env.memory"]) or ""))


def node_types(envs: list[EnvInput]) -> list[list[EnvInput]]:
    """Records grouped by signature, in order of first appearance."""
    groups: dict[tuple, list[EnvInput]] = {}
    for e in envs:
        groups.setdefault(signature(e.record), []).append(e)
    return list(groups.values())


def frameworks(record: dict) -> dict[str, str]:
    """Framework/package name -> version as recorded (importable ones only)."""
    val = pick(record, *_FRAMEWORKS)
    out: dict[str, str] = {}
    if isinstance(val, dict):
        for k, v in val.items():
            if isinstance(v, dict):
                v = v.get("version") or ""
                if not v:
                    continue
            if v not in (None, "", False):
                out[str(k)] = str(v)
    return out


def hardware_lines(record: dict, tr: Translator) -> list[tuple[str, str]]:
    lines = []
    for key, paths in HARDWARE.items():
        val = _text(pick(record, *paths)) if pick(record, *paths) is not None else ""
        if key in ("env.gpu_memory", "env.memory") and val:
            val = _mib(val)
        if key == "env.network" and val:
            val = _ib(pick(record, *paths)) or val
        if key == "env.gpu" and val:
            n = gpu_count(record)
            val = f"{val} x {n}" if n else val
        lines.append((tr(key), val or tr("env.absent")))
    return lines


def software_lines(record: dict, tr: Translator) -> list[tuple[str, str]]:
    lines = []
    for key, paths in SOFTWARE.items():
        val = pick(record, *paths)
        lines.append((tr(key), _text(val) if val is not None else tr("env.absent")))
    for name, ver in frameworks(record).items():
        lines.append((name, ver))
    return lines
