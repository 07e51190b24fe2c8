"""The facts an environment record (``dlperf env``'s JSON) states, read the one way every
reader uses: where each value is kept, the machine's hardware fingerprint, the framework
versions. Pure functions of the record, so that parsing and statistics use them too
(:mod:`analysis.run_settings`) without the rest of :mod:`analysis.env`.
"""

from __future__ import annotations

#: label id -> candidate paths ("a.b" = key b of mapping a)
HARDWARE = {
    "env.gpu": ("gpu_model",),
    "env.gpu_memory": ("gpu_memory_mib",),
    "env.cpu": ("cpu.model",),
    "env.cpu_cores": ("cpu.logical_cpus",),
    "env.numa": ("cpu.numa_nodes",),
    "env.memory": ("memory.total_mib",),
    "env.network": ("infiniband",),
}
SOFTWARE = {
    "env.os": ("os.pretty_name", "os.name"),
    "env.kernel": ("kernel",),
    "env.driver": ("driver_version",),
    "env.cuda": ("cuda_version", "cuda_toolkit"),
    "env.cudnn": ("cudnn_version",),
    "env.nccl": ("nccl_version",),
    "env.python": ("python.version",),
}
#: Package name(s) of each framework as the runs' `framework` column spells it.
FRAMEWORK_PACKAGES = {
    "pytorch": ("torch",), "torch": ("torch",), "tensorflow": ("tensorflow", "tensorflow-gpu"),
    "oneflow": ("oneflow",), "mxnet": ("mxnet",), "paddle": ("paddle", "paddlepaddle"),
    "paddlepaddle": ("paddle", "paddlepaddle"), "jax": ("jax", "jaxlib"),
    "mindspore": ("mindspore",), "megatron": ("torch", "megatron"),
    "megatron-lm": ("torch", "megatron"), "deepspeed": ("torch", "deepspeed"),
}


def pick(record: dict, *paths: str):
    """The first value found at one of `paths` (``a.b``: key ``b`` of mapping ``a``)."""
    for path in paths:
        cur = record
        for part in path.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            else:
                cur = None
                break
        if cur not in (None, "", [], {}):
            return cur
    return None


def gpu_count(record: dict) -> int | None:
    n = record.get("gpu_count")
    if n is None and isinstance(record.get("gpus"), list):
        return len(record["gpus"])  # a gpu_count of a wrong type was left out
    return n if isinstance(n, int) else None


def _gib(value) -> int | str:
    try:
        return round(float(value) / 1024)
    except (TypeError, ValueError):
        return str(value or "")


def fingerprint(record: dict) -> tuple:
    """The stable hardware of the machine a record describes: GPU model, count and UUIDs,
    CPU model and logical CPUs, memory (GiB), architecture. Two records with the same
    hostname but different fingerprints are different machines (a CPU box and a GPU box
    both called ``vm``)."""
    gpus = record.get("gpus") if isinstance(record.get("gpus"), list) else []
    uuids = sorted(str(g["uuid"]) for g in gpus if isinstance(g, dict) and g.get("uuid"))
    return (str(pick(record, *HARDWARE["env.gpu"]) or ""), gpu_count(record) or 0,
            tuple(uuids), str(pick(record, *HARDWARE["env.cpu"]) or ""),
            str(pick(record, *HARDWARE["env.cpu_cores"]) or ""),
            _gib(pick(record, *HARDWARE["env.memory"])), str(pick(record, "machine") or ""))


def framework_packages(names) -> list[str]:
    """Package names of the frameworks the runs used ('PyTorch' -> 'torch'), in order."""
    out: list[str] = []
    for n in names:
        key = str(n).strip().lower()
        for pkg in FRAMEWORK_PACKAGES.get(key, (key,)):
            if pkg and pkg not in out:
                out.append(pkg)
    return out


def frameworks(record: dict) -> dict[str, str]:
    """Framework/package name -> version as recorded (importable ones only)."""
    val = record.get("frameworks")
    return {str(k): str(v["version"]) for k, v in val.items()
            if isinstance(v, dict) and v.get("version")} if isinstance(val, dict) else {}
