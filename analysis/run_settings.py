"""What a run's records state that repeats of one case share and campaigns are compared on:
the hardware type, the software versions (the facts `compare` names,
:mod:`analysis.changes.environment`), the NCCL settings, the GPUs' power limit, and from its
done marker the launch command (ports and hosts masked: they are picked per run) and the
launch variables. The records beside a run are read once for all of them.

The variables compared are those the records list (``dlperf env``'s allow-list: what can
change performance, redacted), less what differs per run without changing how it runs
(:func:`compared_variables`: NCCL's logging and per-job identifiers, :data:`NCCL_NOT_COMPARED`;
Slurm's job variables; devices, hosts, ports, ranks and job ids). A variable set in one
record and unset in another is a difference: unset means the default. ``compare`` names the
``NCCL_*`` ones (:func:`nccl_settings`).

The hardware type is the report's host fingerprint (:func:`analysis.env_record.fingerprint`)
without the GPU serial numbers: two machines of the same type compare, a different GPU model,
GPU count, CPU, memory size or architecture does not.
"""

from __future__ import annotations

import fnmatch
import os
import re
from bisect import bisect_left
from pathlib import Path

from analysis import env_record as describe
from analysis.fsutil import read_json_object
from analysis.layout import run_stem
from analysis.redact import redact_env

#: Variables compared as the NCCL settings (shell patterns on recorded variable names)...
NCCL_COMPARED = ("NCCL_*",)
#: ...but these: logging, per-job identifiers and the container's label of the NCCL version
#: (the library's version is the fact ``nccl``).
NCCL_NOT_COMPARED = ("NCCL_DEBUG", "NCCL_DEBUG_*", "NCCL_WARN_ENABLE_DEBUG_INFO",
                     "NCCL_COMM_ID", "NCCL_HOSTID", "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE",
                     "NCCL_SET_THREAD_NAME", "NCCL_VERSION")
#: Slurm sets these per job from the case and the spec (ids, node lists, step geometry); a
#: shell inside an allocation holds its own: not compared (the case's geometry is).
SLURM_JOB_VARIABLES = ("SLURM_*", "SLURMD_*")
UNSET = "unset"
#: The key :func:`run_settings` gives (empty) where a run's records (or, without any, its
#: done marker) list their variables: the NCCL settings are then stated, each unset one unset.
NCCL_RECORDED = "nccl"
#: The same where its records list them: every other variable is then stated too (a run
#: without records states only the NCCL ones, from its marker).
RECORDED_VARIABLES = "variables"


def nccl_settings(record: dict) -> dict[str, str] | None:
    """The compared NCCL variables of a record ({} when it records variables but none of
    them; None when it records no variables at all)."""
    env = record.get("env")
    if not isinstance(env, dict):
        return None
    # a hand-written record may hold a secret in clear: hidden (then not compared) here too
    return {k: v for k, v in sorted(redact_env(env).items())
            if any(fnmatch.fnmatchcase(k, p) for p in NCCL_COMPARED)
            and not any(fnmatch.fnmatchcase(k, p) for p in NCCL_NOT_COMPARED)}


def is_compared(name: str) -> bool:
    """Whether a variable named `name` says how a run ran: all but
    :data:`NCCL_NOT_COMPARED`, :data:`SLURM_JOB_VARIABLES` and those naming where it ran
    (devices, hosts, ports, ranks, job ids)."""
    noise = NCCL_NOT_COMPARED + SLURM_JOB_VARIABLES
    return not any(fnmatch.fnmatchcase(name, p) for p in noise) \
        and not _WHERE_VARIABLES.search(name)


def compared_variables(env: dict) -> dict[str, str]:
    """The variables of a recorded environment that say how a run ran (:func:`is_compared`),
    redacted."""
    return {k: v for k, v in sorted(redact_env(env).items()) if is_compared(k)}


def _recorded_variables(record: dict) -> dict[str, str] | None:
    env = record.get("env")
    return compared_variables(env) if isinstance(env, dict) else None


def nccl_by_variable(records: list[dict], pick=nccl_settings) -> dict[str, list[str]] | None:
    """The variables `pick` takes (the compared NCCL ones) of one run's records, each with its
    values on the nodes (UNSET where a node does not set it); None when no record lists its
    variables."""
    per_node = [s for s in map(pick, records) if s is not None]
    if not per_node:
        return None
    names = sorted({k for s in per_node for k in s})
    return {k: sorted({s.get(k, UNSET) for s in per_node}) for k in names}


def setting_family(key: str) -> str:
    """The record a key of :func:`run_settings` comes from: a run that records none of a
    family's keys does not state it (unknown, not different); one that records the family
    but not the key leaves it unset."""
    return NCCL_RECORDED if key.startswith("NCCL_") else \
        RECORDED_VARIABLES if _VARIABLE.match(key) else \
        "launch env" if key.startswith(LAUNCH_ENV) else key


#: A recorded variable's key (``CUDA_LAUNCH_BLOCKING``), not a fact's label (``CUDA``).
_VARIABLE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Za-z0-9]+)+$")



_SOFTWARE_LABELS = {"driver": "env.driver", "cuda": "env.cuda", "cudnn": "env.cudnn",
                    "nccl": "env.nccl"}


def hardware_type(record: dict) -> str:
    """'4x NVIDIA H200, Intel(R) Xeon(R) Processor (64 CPUs), 504 GiB, x86_64' ('' unknown)."""
    gpu, count, _uuids, cpu, cpus, gib, machine = describe.fingerprint(record)
    if not (gpu or cpu):
        return ""
    parts = [f"{count}x {gpu}" if gpu else "no GPU", f"{cpu} ({cpus} CPUs)" if cpus else cpu,
             f"{gib} GiB" if gib != "" else "", machine]
    return ", ".join(p for p in parts if p)


def facts(record: dict, framework: str) -> dict[str, str]:
    """The hardware type and software versions of one record for runs of `framework` (its
    packages' versions only): ``hardware``, ``driver``, ``cuda``, ``cudnn``, ``nccl``,
    ``frameworks`` ('' where not recorded)."""
    out = {"hardware": hardware_type(record)}
    for key, label in _SOFTWARE_LABELS.items():
        value = describe.pick(record, *describe.SOFTWARE[label])
        out[key] = "" if value is None else str(value)
    versions = describe.frameworks(record)
    out["frameworks"] = ", ".join(f"{p} {versions[p]}" for p in describe.framework_packages(
        [framework]) if p in versions)
    return out


#: The facts that repeats of one case share (a run's :func:`facts`, but its host and its
#: topology's digest, which differ between machines of one type), shown under these names.
REPEAT_FACTS = {"hardware": "hardware", "driver": "driver", "cuda": "CUDA", "cudnn": "cuDNN",
                "nccl": "NCCL", "frameworks": "frameworks"}
#: Prefix of the launch variables' keys in :func:`run_settings`.
LAUNCH_ENV = "env "
#: Option names (lower case, dashes as underscores) whose values say where or as which job a
#: run was launched (a rendezvous port picked per run, a host): not compared between repeats.
_WHERE_OPTIONS = re.compile(r"port|addr|host|rdzv|endpoint|rank|job_?id|run_?id")
#: Launch variables that say where a run went, not how it ran.
_WHERE_VARIABLES = re.compile(r"(^|_)(VISIBLE_DEVICES|PORT|ADDR|HOST|JOB_?ID|RANK)$")


def _launch_words(command) -> str:
    """A recorded launch command with the values of `_WHERE_OPTIONS` masked as ``*``."""
    words = [str(w) for w in command] if isinstance(command, list) else str(command).split()
    out, mask_next = [], False
    for word in words:
        name, eq, _ = word.partition("=")
        where = word.startswith("-") and _WHERE_OPTIONS.search(name.lstrip("-").lower()
                                                              .replace("-", "_"))
        if mask_next and not word.startswith("-"):
            word = "*"
        elif where and eq:
            word = f"{name}=*"
        mask_next = bool(where) and not eq
        out.append(word)
    return " ".join(out)


def folder_names(folder: Path) -> list[str]:
    """The names in `folder`, sorted (none when it cannot be listed): what
    :func:`run_settings` looks up a run's records in."""
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _named(names: list[str], prefix: str, suffix: str = "") -> list[str]:
    """The names of sorted `names` that start with `prefix` and end with `suffix` (after
    it), in order: a lookup, not a scan of the folder."""
    out = []
    for name in names[bisect_left(names, prefix):]:
        if not name.startswith(prefix):
            break
        if name.endswith(suffix) and len(name) >= len(prefix) + len(suffix):
            out.append(name)
    return out


def run_settings(log: Path, framework: str, names: list[str] | None = None,
                 unreadable: list[Path] | None = None) -> dict[str, str]:
    """What the records beside run `log` state that repeats of one case share: the facts
    `compare` holds campaigns to (:data:`REPEAT_FACTS`, from its nodes'
    ``<stem>.node<N>.env.json``), its NCCL settings (from those records, else its done
    marker's ``env``; each node's value joined with ' / ' where they differ, and
    NCCL_RECORDED), the GPUs' power limit, and from its done marker each node's launch
    command (ports and hosts masked) and the other launch variables; a key not recorded is
    left out. `names`: the log's folder's :func:`folder_names`, when the caller looks up
    many runs of one folder (listed once, not once a run). A record listed but not read
    (not a JSON object, too large or deep) is added to `unreadable`, when given."""
    stem = run_stem(log)
    names = folder_names(log.parent) if names is None else names
    records = []
    for n in _named(names, f"{stem}.node", ".env.json"):
        record = read_json_object(log.parent / n)
        if record:
            records.append(record)
        elif record is None and unreadable is not None:
            unreadable.append(log.parent / n)
    done = f"{stem}.done"
    marker = (read_json_object(log.parent / done) if _named(names, done)[:1] == [done]
              else None) or {}
    if not records and not marker:  # most runs record nothing beside their log
        return {}
    out: dict[str, str] = {}
    # the records' variables; without a record, the NCCL ones of the marker's (the rest below)
    nccl = nccl_by_variable(records, _recorded_variables) if records else \
        nccl_by_variable([marker])
    if nccl is not None:
        out.update({k: " / ".join(v) for k, v in nccl.items()})
        out.update({NCCL_RECORDED: "", **({RECORDED_VARIABLES: ""} if records else {})})
    per_node = [facts(r, framework) for r in records]
    for key, label in REPEAT_FACTS.items():
        value = "; ".join(dict.fromkeys(f[key] for f in per_node if f[key]))
        if value:
            out[label] = value
    limits = sorted({f"{g['power_limit_w']:g} W" for r in records
                     for g in (r.get("gpus") if isinstance(r.get("gpus"), list) else [])
                     if isinstance(g, dict) and isinstance(g.get("power_limit_w"), int | float)})
    if limits:
        out["GPU power limit"] = ", ".join(limits)
    nodes = marker.get("nodes") if isinstance(marker.get("nodes"), list) else []
    for n in nodes:
        if isinstance(n, dict) and n.get("command"):
            out[f"node {n.get('node', 0)} command"] = _launch_words(n["command"])
    env = marker.get("env")
    if isinstance(env, dict):
        for k, v in sorted(redact_env(env).items()):
            if not k.startswith("NCCL_") and not _WHERE_VARIABLES.search(k):
                out[f"{LAUNCH_ENV}{k}"] = str(v)
    return out
