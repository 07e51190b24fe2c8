"""What each GPT case ran, read from its runs' argument dumps and environment records: the
data-parallel implementation (a DP size of 1 has none), the parameter count, the sequence
length, whether activations were recomputed, and the host(s) its runs ran on (hostname and
GPU UUIDs: ``analysis.env.describe.hosts``). A fact no run states stays unknown (None or
''), never guessed."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.env import describe

#: `data_parallel_impl` values of the built-in GPT workload and what they run: FSDP2 is
#: ``torch.distributed.fsdp.fully_shard`` (workloads/gpt/parallel.py).
DP_IMPL_NAMES = {"ddp": "DDP", "fsdp": "FSDP2", "fsdp2": "FSDP2"}
_TRUE = ("true", "1", "yes", "on")


@dataclass(frozen=True)
class CaseRuns:
    """One GPT case's facts, each '' / None where its runs do not state it (or disagree)."""

    dp_impl: str
    parameters: int | None
    seq_length: int | None
    recompute: bool | None
    hosts: tuple[str, ...]


def _one(values) -> str | None:
    """The value every run states alike, else None."""
    found = {str(v) for v in values if v is not None and str(v) not in ("", "None", "nan")}
    return found.pop() if len(found) == 1 else None


def case_runs(parsed_runs: pd.DataFrame, envs) -> dict[str, CaseRuns]:
    """Case -> its :class:`CaseRuns`, for the GPT cases of the parsed runs
    (``ParseResult.runs``) and their environment records (`envs`)."""
    host_of: dict[str, str] = {}
    for host in describe.hosts(envs):
        for rec in host.records:
            host_of[describe.run_stem(rec)] = host.name
    runs = parsed_runs[parsed_runs["case"].fillna("") != ""]
    out = {}
    for case, g in runs.groupby("case", sort=False):
        params = [p if isinstance(p, dict) else {} for p in g.get("parameters", [])]
        dp = _one(g.get("data_parallel", []))
        impl = _one(p.get("data_parallel_impl") for p in params)
        impl = "" if dp in (None, "1") or impl is None else DP_IMPL_NAMES.get(impl, impl)
        count, seq = _one(p.get("parameters") for p in params), _one(g.get("seq_length", []))
        recompute = _one(p.get("checkpoint_activations") for p in params)
        ids = g["run_id"].astype(str) if "run_id" in g else []
        hosts = tuple(sorted({host_of[r] for r in ids if r in host_of}))
        out[str(case)] = CaseRuns(
            impl, int(float(count)) if count else None, int(float(seq)) if seq else None,
            None if recompute is None else recompute.lower() in _TRUE, hosts)
    return out


def model_size(parameters: int | None) -> str:
    """'0.61B', '1.77B' ('' when unknown): the parameter count as LLM tables write it."""
    return "" if not parameters else f"{parameters / 1e9:.2f}B"
