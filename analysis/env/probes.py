"""Small probes of one host, each returning what it found and what it could not find.

Every probe is ``probe(timeout) -> Found`` and never raises for a missing tool, file or
device: it fills ``Found.absent`` with a reason instead. External commands go through
:func:`analysis.shell.run_command`.
"""

from __future__ import annotations

import csv
import io
import os
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.shell import CommandError, CommandNotFoundError, run_command


@dataclass
class Found:
    """What a probe learnt (``values``, keyed like EnvRecord fields), where from, and gaps."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)

    def merge(self, other: Found) -> None:
        self.values.update(other.values)
        self.sources.update(other.sources)
        self.absent.update(other.absent)


def why_absent(exc: CommandError) -> str:
    if isinstance(exc, CommandNotFoundError):
        return "not found on PATH"
    detail = (exc.stderr.strip() or exc.stdout.strip()).splitlines()
    return exc.reason + (f": {detail[-1][:200]}" if detail else "")


def read_text_or_none(path: str | Path) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# ---- GPUs (nvidia-smi) ------------------------------------------------------------------
GPU_QUERY = ("index", "name", "uuid", "pci.bus_id", "memory.total", "driver_version",
             "power.limit", "clocks.max.sm", "compute_cap")
#: The keys of each GPU of a record (``EnvRecord.gpus``), one per GPU_QUERY field.
GPU_KEYS = ("index", "name", "uuid", "pci_bus_id", "memory_total_mib", "driver_version",
            "power_limit_w", "max_sm_clock_mhz", "compute_cap")
_NUMERIC = {"index": int, "memory_total_mib": int, "power_limit_w": float, "max_sm_clock_mhz": int}


def _cell(key: str, text: str):
    text = text.strip()
    if not text or text.strip("[]") in ("N/A", "Not Supported", "Unknown Error"):
        return None
    conv = _NUMERIC.get(key)
    if conv is None:
        return text
    try:
        return conv(float(text)) if conv is int else conv(text)
    except ValueError:
        return None


def parse_gpu_csv(text: str, query: tuple[str, ...] = GPU_QUERY) -> list[dict]:
    """Rows of ``nvidia-smi --query-gpu=<query> --format=csv,noheader,nounits`` as GPU dicts."""
    keys = [GPU_KEYS[GPU_QUERY.index(q)] for q in query]
    gpus = []
    for row in csv.reader(io.StringIO(text)):
        if not row or not "".join(row).strip():
            continue
        if len(row) != len(keys):
            raise ValueError(f"nvidia-smi CSV row has {len(row)} fields, expected {len(keys)}: {row!r}")
        gpu = dict.fromkeys(GPU_KEYS)
        gpu.update({k: _cell(k, v) for k, v in zip(keys, row, strict=True)})
        gpus.append(gpu)
    return gpus


def _nvidia_smi_gpus(timeout: float) -> list[dict]:
    for query in (GPU_QUERY, GPU_QUERY[:-1]):  # drivers before R510 have no compute_cap
        try:
            res = run_command(["nvidia-smi", f"--query-gpu={','.join(query)}",
                               "--format=csv,noheader,nounits"], timeout)
            return parse_gpu_csv(res.stdout, query)
        except CommandError as exc:
            if query != GPU_QUERY or "not a valid field" not in exc.stdout + exc.stderr:
                raise


def probe_gpus(timeout: float) -> Found:
    """GPU list from nvidia-smi."""
    found = Found()
    gpus: list[dict] = []
    try:
        gpus = _nvidia_smi_gpus(timeout)
        found.sources["gpus"] = "nvidia-smi"
    except CommandError as exc:
        found.absent["nvidia-smi"] = why_absent(exc)
    except ValueError as exc:
        found.absent["gpus"] = f"unreadable nvidia-smi output: {exc}"
    if not gpus and "gpus" not in found.absent:
        found.absent["gpus"] = "no GPU found"
    models = sorted({g["name"] for g in gpus if g["name"]})
    mems = [g["memory_total_mib"] for g in gpus if g["memory_total_mib"]]
    drivers = [g["driver_version"] for g in gpus if g["driver_version"]]
    found.values.update(
        gpus=gpus, gpu_count=len(gpus),
        gpu_model=" + ".join(models) if models else None,
        gpu_memory_mib=min(mems) if mems else None,
        driver_version=drivers[0] if drivers else None)
    return found


def probe_cuda_driver(timeout: float) -> Found:
    """The CUDA version the driver supports (the `nvidia-smi` banner)."""
    found = Found()
    try:
        res = run_command(["nvidia-smi"], timeout)
    except CommandError as exc:
        found.absent["cuda_version"] = f"nvidia-smi {why_absent(exc)}"
        return found
    m = re.search(r"CUDA Version:\s*([\d.]+)", res.stdout)
    if m:
        found.values["cuda_version"] = m.group(1)
        found.sources["cuda_version"] = "nvidia-smi"
    else:
        found.absent["cuda_version"] = "nvidia-smi banner states no CUDA Version"
    return found


def probe_topology(timeout: float) -> Found:
    """Raw `nvidia-smi topo -m` text and its parsed record."""
    from analysis.env.topo_matrix import TopologyError, parse_topology  # pandas: only here

    found = Found()
    try:
        res = run_command(["nvidia-smi", "topo", "-m"], timeout)
    except CommandError as exc:
        found.absent["topology"] = f"nvidia-smi topo -m {why_absent(exc)}"
        return found
    found.values["topology_text"] = res.stdout
    found.sources["topology"] = "nvidia-smi topo -m"
    try:
        topo = parse_topology(res.stdout).to_dict()
        del topo["text"]
        found.values["topology"] = topo
    except TopologyError as exc:
        found.absent["topology"] = f"unparseable nvidia-smi topo -m output: {exc}"
    return found


# ---- CPU, memory, OS ---------------------------------------------------------------------
def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def parse_lscpu(text: str) -> dict[str, Any]:
    """`LC_ALL=C lscpu` output -> model, sockets, cores_per_socket, threads_per_core,
    logical_cpus, numa_nodes, numa_cpus (node -> CPU list)."""
    kv = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            kv[key.strip()] = value.strip()
    numa_cpus = {m.group(1): v for k, v in kv.items() if (m := re.fullmatch(r"NUMA node(\d+) CPU\(s\)", k))}
    return {
        "model": kv.get("Model name"),
        "sockets": _int(kv.get("Socket(s)")),
        "cores_per_socket": _int(kv.get("Core(s) per socket")),
        "threads_per_core": _int(kv.get("Thread(s) per core")),
        "logical_cpus": _int(kv.get("CPU(s)")),
        "numa_nodes": _int(kv.get("NUMA node(s)")),
        "numa_cpus": numa_cpus,
    }


def probe_cpu(timeout: float) -> Found:
    found = Found()
    try:
        env = {**os.environ, "LC_ALL": "C"}
        found.values["cpu"] = parse_lscpu(run_command(["lscpu"], timeout, env=env).stdout)
        found.sources["cpu"] = "lscpu"
    except CommandError as exc:
        found.absent["lscpu"] = why_absent(exc)
    return found


def probe_memory_os(timeout: float) -> Found:
    """Memory (/proc/meminfo), OS (/etc/os-release), kernel, architecture, Python."""
    import platform

    found = Found()
    m = re.search(r"^MemTotal:\s*(\d+)\s*kB", read_text_or_none("/proc/meminfo") or "", re.M)
    if m:
        found.values["memory"] = {"total_mib": int(m.group(1)) // 1024}
    else:
        found.absent["memory"] = "/proc/meminfo has no MemTotal"
    rel = read_text_or_none("/etc/os-release")
    if rel is None:
        found.absent["os"] = "/etc/os-release not readable"
    else:
        kv = dict(re.findall(r'^([A-Z_]+)="?(.*?)"?$', rel, re.M))
        found.values["os"] = {"pretty_name": kv.get("PRETTY_NAME"), "id": kv.get("ID"),
                              "name": kv.get("NAME"), "version_id": kv.get("VERSION_ID")}
    u = platform.uname()
    found.values.update(kernel=u.release or None, machine=u.machine or None)
    found.values["python"] = {"version": platform.python_version(),
                              "implementation": platform.python_implementation(),
                              "executable": sys.executable}
    return found


# ---- InfiniBand / RoCE -------------------------------------------------------------------
def _sysfs(folder: Path, name: str) -> str | None:
    """A sysfs attribute's text, stripped; None when absent or empty."""
    return (read_text_or_none(folder / name) or "").strip() or None


def _ib_from_sysfs(root: Path) -> list[dict]:
    devices = []
    for dev in sorted(root.iterdir()):
        ports = []
        for port in sorted((dev / "ports").glob("*"), key=lambda p: _int(p.name) or 0):
            state = _sysfs(port, "state")  # '4: ACTIVE'
            ports.append({"port": _int(port.name),
                          "state": state and (state.split(":")[-1].strip() or None),
                          **{k: _sysfs(port, k) for k in ("rate", "link_layer")}})
        devices.append({"device": dev.name,
                        **{k: _sysfs(dev, k) for k in ("hca_type", "board_id", "fw_ver")},
                        "ports": ports})
    return devices


def probe_infiniband(timeout: float, sysfs: str | Path = "/sys/class/infiniband") -> Found:
    """RDMA devices (InfiniBand, or RoCE when ``link_layer`` is Ethernet)."""
    found = Found()
    root = Path(sysfs)
    if root.is_dir() and any(root.iterdir()):
        found.values["infiniband"] = _ib_from_sysfs(root)
        found.sources["infiniband"] = str(root)
    else:
        found.absent["infiniband"] = f"no RDMA device in {root}"
    return found


# ---- bf16 matmul rate (torch on the GPUs) ------------------------------------------------
#: Square size, warm-up products and products per timed block of the probe, and how long each
#: GPU is timed: long enough for its clocks to settle under load (the first tenth of a second
#: runs ~15 % above what the GPU sustains), as a training run keeps them.
MATMUL_SIZE, MATMUL_WARMUP, MATMUL_ITERS, MATMUL_SECONDS = 8192, 10, 20, 30.0


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def measure_matmul(torch, index: int, size: int = MATMUL_SIZE, warmup: int = MATMUL_WARMUP,
                   iters: int = MATMUL_ITERS, seconds: float = MATMUL_SECONDS) -> dict:
    """Dense bf16 ``size``³ products on GPU ``index`` for ``seconds``: TFLOP/s of each timed
    block of ``iters`` products (CUDA events, after ``warmup`` products), summarised as the
    first block, the median and the spread of all of them."""
    dev = torch.device("cuda", index)
    with torch.cuda.device(dev):
        a = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
        b = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
        out = torch.empty(size, size, device=dev, dtype=torch.bfloat16)
        for _ in range(warmup):
            torch.matmul(a, b, out=out)
        rates, timed = [], 0.0
        while timed < seconds:
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            start.record()
            for _ in range(iters):
                torch.matmul(a, b, out=out)
            end.record()
            end.synchronize()
            block = start.elapsed_time(end) / 1e3
            timed += block
            rates.append(2 * size**3 * iters / block / 1e12)
        props = torch.cuda.get_device_properties(dev)
        uuid = getattr(props, "uuid", None)
        del a, b, out
        torch.cuda.empty_cache()
    return {"index": index, "name": props.name,
            "uuid": f"GPU-{uuid}" if uuid is not None else None,
            "seconds": round(timed, 1), "blocks": len(rates), "tflops_first": round(rates[0], 1),
            "tflops_p5": round(_quantile(rates, 0.05), 1),
            "tflops_median": round(statistics.median(rates), 1),
            "tflops_p95": round(_quantile(rates, 0.95), 1)}


def probe_matmul(timeout: float) -> Found:
    """The dense bf16 matmul rate each visible GPU reaches (torch; none without torch or a
    GPU): the ceiling that MFU against the measured rate divides by. It loads each GPU for
    MATMUL_SECONDS in turn, so it runs only when asked for (``dlperf env --matmul``), never
    beside a benchmark."""
    from datetime import datetime, timezone

    found = Found()
    try:
        import torch
    except ImportError:
        found.absent["matmul"] = "torch is not installed"
        return found
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        found.absent["matmul"] = "torch sees no CUDA GPU"
        return found
    gpus = [measure_matmul(torch, i) for i in range(torch.cuda.device_count())]
    found.values["matmul"] = {
        "dtype": "bf16", "size": MATMUL_SIZE, "warmup": MATMUL_WARMUP, "iters": MATMUL_ITERS,
        "seconds": MATMUL_SECONDS,
        "statistic": f"median TFLOP/s of the blocks of {MATMUL_ITERS} products over "
                     f"{MATMUL_SECONDS:g} s per GPU (sustained)",
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__, "gpus": gpus,
        "tflops_median": round(statistics.median(g["tflops_median"] for g in gpus), 1)}
    found.sources["matmul"] = "torch (CUDA events)"
    return found
