"""What a comparison needs from environment records: per-run facts (hardware type and the
software that may change between campaigns) and the differences between two sides.

The facts of one record (hardware type, software versions) are
:func:`analysis.run_settings.facts`, which `summarize` also holds a case's repeats to.

The NCCL settings of a run are those :func:`analysis.run_settings.nccl_by_variable` reads
from its records. A variable set on one side and unset on the other is a difference: unset
means NCCL's default.
"""

from __future__ import annotations

import hashlib
import json

import pandas as pd

from analysis.env import describe
from analysis.env.folder_records import EnvInput, env_topology_text
from analysis.redact import REDACTED
from analysis.run_settings import UNSET, nccl_by_variable
from analysis.run_settings import facts as record_facts

#: Facts recorded per run, in the order differences are shown.
SOFTWARE_FACTS = ("driver", "cuda", "cudnn", "nccl", "nccl_env", "frameworks", "topology")
FACTS = ("hardware", *SOFTWARE_FACTS, "host")
RUN_ENV_COLUMNS = ["run_id", *FACTS]


def _topology(record: dict) -> str:
    parsed = record.get("topology")
    if isinstance(parsed, dict) and parsed.get("matrix"):
        text = json.dumps(parsed["matrix"], sort_keys=True)
    else:
        text = env_topology_text(record)
    return hashlib.sha256(text.encode()).hexdigest()[:8] if text else ""


def facts(record: dict, framework: str) -> dict[str, str]:
    """The FACTS of one record for runs of `framework`: the hardware type and software
    versions :func:`analysis.run_settings.facts` reads, the topology's digest and the
    host; but ``nccl_env``: a run's NCCL settings are read from all its records at once
    (:func:`run_env`), not joined per node."""
    return {**record_facts(record, framework), "topology": _topology(record),
            "host": str(describe.pick(record, "hostname") or "")}


def run_env(runs: pd.DataFrame, envs: list[EnvInput]) -> pd.DataFrame:
    """One row per run with a record (RUN_ENV_COLUMNS); a run's own records
    (``<run>.node<N>.env.json``) first, else the campaign's ``env.json``; several nodes'
    values are joined with '; '; its NCCL settings as JSON (variable -> its values on the
    nodes, 'unset' where a node does not set it), '' when no record lists them."""
    by_run: dict[str, list[dict]] = {}
    for e in envs:
        by_run.setdefault(describe.run_stem(e), []).append(e.record)
    rows = []
    for run_id, framework in zip(runs["run_id"], runs["framework"]):
        records = by_run.get(str(run_id)) or by_run.get("") or []
        if not records:
            continue
        per_node = [facts(r, "" if pd.isna(framework) else str(framework)) for r in records]
        nccl = nccl_by_variable(records)
        rows.append({"run_id": str(run_id), **{
            k: "; ".join(dict.fromkeys(f[k] for f in per_node if f[k]))
            for k in FACTS if k != "nccl_env"},
            "nccl_env": "" if nccl is None else json.dumps(nccl)})
    return pd.DataFrame(rows, columns=RUN_ENV_COLUMNS).astype(str)


def values(env: pd.DataFrame, run_ids, fact: str) -> str:
    """The distinct values of `fact` over the runs `run_ids`, joined ('' when unrecorded)."""
    rows = env[env["run_id"].isin([str(r) for r in run_ids])]
    return ", ".join(sorted({v for v in rows[fact] if v}))


def _nccl_values(env: pd.DataFrame, run_ids) -> dict[str, set[str]] | None:
    """Variable -> its values over the runs `run_ids` ('unset' where a run does not set it);
    None when no run records its variables."""
    if "nccl_env" not in env.columns:  # a store written before NCCL settings were kept
        return None
    rows = env.loc[env["run_id"].isin([str(r) for r in run_ids]), "nccl_env"]
    runs = [json.loads(v) for v in rows if isinstance(v, str) and v]
    if not runs:
        return None
    names = {k for r in runs for k in r}
    return {k: {v for r in runs for v in r.get(k, [UNSET])} for k in names}


def differences(base: pd.DataFrame, base_runs, new: pd.DataFrame, new_runs) -> list[str]:
    """'driver 570.86 -> 580.95' for every fact but the host whose values differ between two
    sets of runs; a fact recorded on one side only is not a difference (it is unknown). NCCL
    settings: 'NCCL_ALGO Ring -> Tree' for each variable whose values differ (unset on one
    side included); none when a side records no variables, or where a value is redacted (it
    cannot be compared)."""
    out = []
    for fact in ("hardware", *SOFTWARE_FACTS):
        if fact != "nccl_env":
            a, b = values(base, base_runs, fact), values(new, new_runs, fact)
            if a and b and a != b:
                out.append(f"{fact} {a} -> {b}")
            continue
        va, vb = _nccl_values(base, base_runs), _nccl_values(new, new_runs)
        for name in sorted(set(va) | set(vb)) if va is not None and vb is not None else ():
            a, b = va.get(name, {UNSET}), vb.get(name, {UNSET})
            if a != b and REDACTED not in a | b:
                out.append(f"{name} {', '.join(sorted(a))} -> {', '.join(sorted(b))}")
    return out
