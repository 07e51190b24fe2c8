"""Environment records described: hardware and software per distinct node type, host
fingerprints, framework versions (for reports and comparisons alike).

Records are JSON objects written by ``dlperf env``; every absent value is shown as "not
recorded" rather than dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.env.folder_records import EnvInput
from analysis.env_record import (  # noqa: F401  (re-exported: read here and by callers)
    HARDWARE,
    SOFTWARE,
    fingerprint,
    framework_packages,
    frameworks,
    gpu_count,
    pick,
)

if TYPE_CHECKING:  # babel (the report extra) stays out of the core install's imports
    from analysis.i18n import Translator

_NODE_SUFFIX = re.compile(r"(\.node\d+)?\.env\.json$|(^|/)env\.json$")


def _mib(value) -> str:
    try:
        mib = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{mib / 1024:.0f} GiB ({mib:.0f} MiB)"


def _ib(devices) -> str:
    """InfiniBand/RoCE devices as 'mlx5_0 100 Gb/sec (InfiniBand)' (of a record read through
    :func:`analysis.env.record.usable`: lists of mappings)."""
    out = []
    for d in devices:
        ports = [f"{p.get('rate', '')} ({p.get('link_layer', '')})".strip()
                 for p in d.get("ports", []) if p.get("rate")]
        out.append(f"{d.get('device', '')} {', '.join(ports)}".strip())
    return "; ".join(o for o in out if o)


def run_stem(rec: EnvInput) -> str:
    """The run an environment record belongs to ('1n2g/x_1.node1.env.json' -> '1n2g/x_1';
    '' for a campaign-wide env.json)."""
    return _NODE_SUFFIX.sub("", rec.name)


@dataclass
class Host:
    """One machine: every environment record with its hostname and hardware fingerprint (a
    multi-node run on one host and the repeats of a campaign all land on the same Host)."""

    name: str
    records: list[EnvInput]

    @property
    def record(self) -> dict:
        """The most recent record (by `captured_at`, else the last one read)."""
        return max(self.records, key=lambda e: str(e.record.get("captured_at") or "")).record


def _hardware_label(record: dict) -> str:
    gpu, n = str(pick(record, *HARDWARE["env.gpu"]) or ""), gpu_count(record)
    return f"{n}x {gpu}" if gpu and n else (gpu or "no GPU")


def hosts(envs: list[EnvInput]) -> list[Host]:
    """Records grouped by host (hostname + hardware fingerprint), in order of first
    appearance. Machines that share a hostname are named '<host> (<GPUs>)', and numbered
    when even that is the same."""
    groups: dict[tuple, list[EnvInput]] = {}
    for e in envs:
        name = str(pick(e.record, "hostname") or e.name)
        groups.setdefault((name, fingerprint(e.record)), []).append(e)
    per_name: dict[str, list[tuple]] = {}
    for key in groups:
        per_name.setdefault(key[0], []).append(key)
    out = []
    for key, records in groups.items():
        name, same = key[0], per_name[key[0]]
        if len(same) > 1:
            label = _hardware_label(records[0].record)
            twins = [k for k in same if _hardware_label(groups[k][0].record) == label]
            name = f"{name} ({label}" + (f" #{twins.index(key) + 1}" if len(twins) > 1
                                         else "") + ")"
        out.append(Host(name, records))
    return out


def run_hosts(envs: list[EnvInput]) -> dict[str, str]:
    """Run id -> the name :func:`hosts` gives the host its records were captured on."""
    return {run_stem(rec): host.name for host in hosts(envs) for rec in host.records
            if run_stem(rec)}


def shared_host_runs(envs: list[EnvInput]) -> list[tuple[str, str]]:
    """(run, host) of every multi-node run whose nodes all ran on one host."""
    names = {id(e): h.name for h in hosts(envs) for e in h.records}
    by_run: dict[str, list[EnvInput]] = {}
    for e in envs:
        stem = run_stem(e)
        if stem:
            by_run.setdefault(stem, []).append(e)
    return [(stem, names[id(recs[0])]) for stem, recs in sorted(by_run.items())
            if len(recs) > 1 and len({names[id(r)] for r in recs}) == 1]


def signature(record: dict) -> tuple:
    """What makes two nodes the same type: GPU model and count, CPU model, memory."""
    return (str(pick(record, *HARDWARE["env.gpu"]) or ""), gpu_count(record),
            str(pick(record, *HARDWARE["env.cpu"]) or ""),
            str(pick(record, *HARDWARE["env.memory"]) or ""))


def node_types(envs: list[EnvInput]) -> list[list[Host]]:
    """Distinct hosts grouped by signature (hardware), in order of first appearance."""
    groups: dict[tuple, list[Host]] = {}
    for h in hosts(envs):
        groups.setdefault(signature(h.record), []).append(h)
    return list(groups.values())


def framework_detail(record: dict, package: str) -> str:
    """'2.11.0 (CUDA 13.0, git 70d99e998b49)' for a recorded framework package ('' if absent)."""
    info = record.get("frameworks", {}).get(package)
    if not info:
        return ""
    ver = str(info.get("version") or "")
    extra = [f"CUDA {info['cuda']}"] if info.get("cuda") else []
    if info.get("git_version"):
        extra.append(f"git {str(info['git_version'])[:12]}")
    return f"{ver} ({', '.join(extra)})" if ver and extra else ver


def hardware_lines(record: dict, tr: Translator) -> list[tuple[str, str]]:
    lines = []
    for key, paths in HARDWARE.items():
        found = pick(record, *paths)
        val = "" if found is None else _ib(found) if key == "env.network" else str(found)
        if key in ("env.gpu_memory", "env.memory") and val:
            val = _mib(val)
        if key == "env.gpu" and val:
            n = gpu_count(record)
            val = f"{val} × {n}" if n else val  # a count, as the titles write it
        lines.append((tr(key), val or tr("env.absent")))
    return lines


def software_lines(record: dict, tr: Translator, used: list[str] | None = None
                   ) -> list[tuple[str, str]]:
    """Framework(s) the runs used first, then OS, driver, CUDA libraries and Python, then
    the other importable packages on one line. `used`: package names (framework_packages);
    None lists every recorded package as a framework."""
    recorded = frameworks(record)
    used = list(recorded) if used is None else used
    lines = [(tr("env.framework", name=p), framework_detail(record, p))
             for p in used if p in recorded]
    for key, paths in SOFTWARE.items():
        val = pick(record, *paths)
        lines.append((tr(key), str(val) if val is not None else tr("env.absent")))
    others = [f"{k} {v}" for k, v in recorded.items() if k not in used]
    if others:
        lines.append((tr("env.other_packages"), ", ".join(others)))
    return lines
