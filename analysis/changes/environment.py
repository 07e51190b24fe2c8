"""What a comparison needs from environment records: per-run facts (hardware type and the
software that may change between campaigns) and the differences between two sides.

The hardware type is the report's host fingerprint (:func:`analysis.report.envinfo.fingerprint`)
without the GPU serial numbers: two machines of the same type compare, a different GPU model,
GPU count, CPU, memory size or architecture does not.
"""

from __future__ import annotations

import hashlib
import json

import pandas as pd

from analysis.report import envinfo
from analysis.report.inputs import EnvInput, env_topology_text

#: Facts recorded per run, in the order differences are shown.
SOFTWARE_FACTS = ("driver", "cuda", "cudnn", "nccl", "frameworks", "topology")
FACTS = ("hardware", *SOFTWARE_FACTS, "host")
RUN_ENV_COLUMNS = ["run_id", *FACTS]
_SOFTWARE_LABELS = {"driver": "env.driver", "cuda": "env.cuda", "cudnn": "env.cudnn",
                    "nccl": "env.nccl"}


def hardware_type(record: dict) -> str:
    """'4x NVIDIA H200, Intel(R) Xeon(R) Processor (64 CPUs), 504 GiB, x86_64' ('' unknown)."""
    gpu, count, _uuids, cpu, cpus, gib, machine = envinfo.fingerprint(record)
    if not (gpu or cpu):
        return ""
    parts = [f"{count}x {gpu}" if gpu else "no GPU", f"{cpu} ({cpus} CPUs)" if cpus else cpu,
             f"{gib} GiB" if gib != "" else "", machine]
    return ", ".join(p for p in parts if p)


def _topology(record: dict) -> str:
    parsed = record.get("topology")
    if isinstance(parsed, dict) and parsed.get("matrix"):
        text = json.dumps(parsed["matrix"], sort_keys=True)
    else:
        text = env_topology_text(record)
    return hashlib.sha256(text.encode()).hexdigest()[:8] if text else ""


def facts(record: dict, framework: str) -> dict[str, str]:
    """The FACTS of one record for runs of `framework` (its packages' versions only)."""
    out = {"hardware": hardware_type(record)}
    for key, label in _SOFTWARE_LABELS.items():
        value = envinfo.pick(record, *envinfo.SOFTWARE[label])
        out[key] = "" if value is None else str(value)
    versions = envinfo.frameworks(record)
    out["frameworks"] = ", ".join(f"{p} {versions[p]}" for p in envinfo.framework_packages(
        [framework]) if p in versions)
    out["topology"] = _topology(record)
    out["host"] = str(envinfo.pick(record, "hostname", "host", "node") or "")
    return out


def run_env(runs: pd.DataFrame, envs: list[EnvInput]) -> pd.DataFrame:
    """One row per run with a record (RUN_ENV_COLUMNS); a run's own records
    (``<run>.node<N>.env.json``) first, else the campaign's ``env.json``; several nodes'
    values are joined with '; '."""
    by_run: dict[str, list[dict]] = {}
    for e in envs:
        by_run.setdefault(envinfo.run_stem(e), []).append(e.record)
    rows = []
    for run_id, framework in zip(runs["run_id"], runs["framework"]):
        records = by_run.get(str(run_id)) or by_run.get("") or []
        if not records:
            continue
        per_node = [facts(r, "" if pd.isna(framework) else str(framework)) for r in records]
        rows.append({"run_id": str(run_id), **{
            k: "; ".join(dict.fromkeys(f[k] for f in per_node if f[k])) for k in FACTS}})
    return pd.DataFrame(rows, columns=RUN_ENV_COLUMNS).astype(str)


def values(env: pd.DataFrame, run_ids, fact: str) -> str:
    """The distinct values of `fact` over the runs `run_ids`, joined ('' when unrecorded)."""
    rows = env[env["run_id"].isin([str(r) for r in run_ids])]
    return ", ".join(sorted({v for v in rows[fact] if v}))


def differences(base: pd.DataFrame, base_runs, new: pd.DataFrame, new_runs,
                facts_shown=FACTS) -> list[str]:
    """'driver 570.86 -> 580.95' for every fact whose values differ between two sets of runs;
    a fact recorded on one side only is not a difference (it is unknown)."""
    out = []
    for fact in facts_shown:
        a, b = values(base, base_runs, fact), values(new, new_runs, fact)
        if a and b and a != b:
            out.append(f"{fact} {a} -> {b}")
    return out
