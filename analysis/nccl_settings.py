"""The NCCL settings of a run: the ``NCCL_*`` variables of its environment records (recorded
by ``dlperf env``'s allow-list, redacted) that change how NCCL communicates; logging and
per-job identifiers (:data:`NCCL_NOT_COMPARED`) are left out. `compare` holds two campaigns
to them, `summarize` the repeats of a case. A variable set in one record and unset in
another is a difference: unset means NCCL's default.
"""

from __future__ import annotations

import fnmatch
import glob
from pathlib import Path

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
UNSET = "unset"


def _compared(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in NCCL_COMPARED) and \
        not any(fnmatch.fnmatchcase(name, p) for p in NCCL_NOT_COMPARED)


def nccl_settings(record: dict) -> dict[str, str] | None:
    """The compared NCCL variables of a record ({} when it records variables but none of
    them; None when it records no variables at all)."""
    env = record.get("env")
    if not isinstance(env, dict):
        return None
    # a hand-written record may hold a secret in clear: hidden (then not compared) here too
    return {k: v for k, v in sorted(redact_env(env).items()) if _compared(k)}


def run_nccl_settings(log: Path) -> dict[str, str] | None:
    """The compared NCCL variables a run's own records beside its log state (its nodes'
    ``<stem>.node<N>.env.json``, else its done marker's ``env``), each node's value joined
    with ' / ' where they differ; None when no record lists its variables."""
    stem = run_stem(log)
    records = [read_json_object(p)
               for p in sorted(log.parent.glob(f"{glob.escape(stem)}.node*.env.json"))]
    records = [r for r in records if r] or [read_json_object(log.parent / f"{stem}.done") or {}]
    per_node = [s for s in map(nccl_settings, records) if s is not None]
    if not per_node:
        return None
    names = sorted({k for s in per_node for k in s})
    return {k: " / ".join(sorted({s.get(k, UNSET) for s in per_node})) for k in names}
