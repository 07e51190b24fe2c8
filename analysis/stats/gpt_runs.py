"""What each GPT case ran, read from its runs' argument dumps: the data-parallel
implementation (a DP size of 1 has none), the parameter count, the sequence length, whether
activations were recomputed, and the host(s) its runs ran on (given as run -> host name, as
``analysis.env.describe.run_hosts`` names them from the environment records). A fact no run
states stays unknown (None or ''), never guessed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from analysis.parsers._fields import parse_bool

#: `data_parallel_impl` values of the built-in GPT workload and what they run: FSDP2 is
#: ``torch.distributed.fsdp.fully_shard`` (workloads/gpt/parallel.py).
DP_IMPL_NAMES = {"ddp": "DDP", "fsdp": "FSDP2", "fsdp2": "FSDP2"}


@dataclass(frozen=True)
class CaseRuns:
    """One GPT case's facts, each '' / None where its runs do not state it (or disagree)."""

    dp_impl: str
    parameters: int | None
    seq_length: int | None
    recompute: bool | None
    hosts: tuple[str, ...]


#: A case whose runs state nothing.
UNKNOWN = CaseRuns("", None, None, None, ())


def _one(values) -> str | None:
    """The value every run states alike, else None."""
    found = {str(v) for v in values if v is not None and str(v) not in ("", "None", "nan")}
    return found.pop() if len(found) == 1 else None


def case_runs(parsed_runs: pd.DataFrame,
              run_hosts: Mapping[str, str] | None = None) -> dict[str, CaseRuns]:
    """Case -> its :class:`CaseRuns`, for the GPT cases of the parsed runs
    (``ParseResult.runs``); `run_hosts` maps a run id to the host it ran on (runs not in it
    add no host)."""
    run_hosts = run_hosts or {}
    runs = parsed_runs[parsed_runs["case"].fillna("") != ""] if "case" in parsed_runs else \
        parsed_runs.iloc[:0]
    out = {}
    for case, g in runs.groupby("case", sort=False):
        params = [p if isinstance(p, dict) else {} for p in g.get("parameters", [])]
        dp = _one(g.get("data_parallel", []))
        impl = _one(p.get("data_parallel_impl") for p in params)
        impl = "" if dp in (None, "1") or impl is None else DP_IMPL_NAMES.get(impl, impl)
        count, seq = _one(p.get("parameters") for p in params), _one(g.get("seq_length", []))
        recompute = _one(p.get("checkpoint_activations") for p in params)
        ids = g["run_id"].astype(str) if "run_id" in g else []
        hosts = tuple(sorted({run_hosts[r] for r in ids if r in run_hosts}))
        out[str(case)] = CaseRuns(
            impl, int(float(count)) if count else None, int(float(seq)) if seq else None,
            None if recompute is None else parse_bool(recompute) is True, hosts)
    return out


def model_size(parameters: int | None) -> str:
    """'0.61B', '1.77B' ('' when unknown): the parameter count as LLM tables write it."""
    return "" if not parameters else f"{parameters / 1e9:.2f}B"
