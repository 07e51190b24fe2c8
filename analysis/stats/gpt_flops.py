"""GPT model FLOPs per iteration by a named convention (docs/formats.md §3: seed 002's
96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), counting the forward pass recomputed under activation
checkpointing; ``workloads.gpt``'s 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)), without), and which
one a run's figures follow: the formula its log states, else seed 002's."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from analysis.collect import ParseResult

#: Vocabulary size OneFlow GPT uses when the log does not state one (docs/formats.md §3).
GPT_DEFAULT_VOCAB = 51200


@dataclass(frozen=True)
class FlopsFormula:
    """`factor`·B·s·l·h²·(1 + s/(6h) + V/(`vocab_divisor`·l·h)), written as logs state it."""

    label: str  # short name used in column headers: "72" or "96"
    text: str
    factor: float
    vocab_divisor: float
    #: layers whose forward pass is recomputed on top of the formula (Megatron's
    #: ``recompute_method block``: the first N of each pipeline stage), each 24·B·s·h²·(1 + s/(6h))
    recomputed: int = 0

    def flops(self, batch: float, seq: float, layers: float, hidden: float,
              vocab: float) -> float:
        """Model FLOPs of one iteration of `batch` sequences."""
        return self.factor * batch * seq * layers * hidden**2 * (
            1.0 + seq / (6.0 * hidden) + vocab / (self.vocab_divisor * layers * hidden)) \
            + 24.0 * batch * seq * self.recomputed * hidden**2 * (1.0 + seq / (6.0 * hidden))

    def tflops_per_gpu(self, batch: float, seq: float, layers: float, hidden: float,
                       vocab: float, latency_s: float, gpus: float) -> float:
        """TFLOP/s per GPU of an iteration of `latency_s` seconds over `gpus` GPUs."""
        return self.flops(batch, seq, layers, hidden, vocab) / (latency_s * gpus) / 1e12


SEED002 = FlopsFormula("96", "96*B*s*l*h^2*(1+s/(6h)+V/(16*l*h))", 96.0, 16.0)
NO_RECOMPUTATION = FlopsFormula("72", "72*B*s*l*h^2*(1+s/(6h)+V/(12*l*h))", 72.0, 12.0)
FORMULAS = (SEED002, NO_RECOMPUTATION)


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("·", "*").replace("²", "^2").replace("**", "^")


def known_formula(stated: str) -> FlopsFormula | None:
    """The convention a log's ``flops_formula`` text names (spacing, ``·``, ``²`` and ``**``
    aside); None for a formula we do not know."""
    return next((f for f in FORMULAS if _normal(f.text) == _normal(stated)), None)


#: Argument-dump keys by which Megatron (-LM, -DeepSpeed) states activation recomputation.
RECOMPUTE_KEYS = ("checkpoint_activations", "recompute_activations", "recompute_granularity",
                  "activations_checkpoint_method", "recompute_method")
#: Values that state no recomputation of a whole forward pass. ``selective`` (Megatron-LM's
#: ``recompute_granularity``, and what its ``--recompute-activations`` flag sets) re-runs
#: only the attention core, a few % of the FLOPs, not what the 96 convention counts.
_NOT_FULL = ("false", "none", "0", "", "selective")


def stated_recomputation(params: dict) -> bool | None:
    """Whether the argument dump says whole forward passes are recomputed (a flag true, a
    method named, granularity ``full``); False when it states the keys and none does
    (selective recomputation is not a whole pass); None when it states none. The 96
    convention counts a recomputed forward pass: a run without one is 72's."""
    found = {k: str(params[k]).strip().lower() for k in RECOMPUTE_KEYS if k in params}
    if not found:
        return None
    if found.get("recompute_granularity") == "selective":
        return False  # the method keys then only say how selective layers are chosen
    # --recompute-activations is Megatron-LM's switch for selective recomputation
    found.pop("recompute_activations", None)
    return any(v not in _NOT_FULL for v in found.values())


def recomputed_layers(params: dict, layers: float) -> int | None:
    """The layers whose forward pass is recomputed when the dump states full recomputation
    by ``recompute_method block`` of ``recompute_num_layers`` N, fewer than all `layers`;
    None otherwise (``uniform`` recomputes every layer, in chunks of N). Megatron-LM's
    ``block`` recomputes the first N layers of each model chunk (its ParallelTransformer's
    own layers): a pipeline stage is one chunk, or, with an interleaved schedule
    (``virtual_pipeline_model_parallel_size`` V, or ``num_layers_per_virtual_pipeline_stage``
    L: V = layers a stage / L), V chunks; so min(N, layers a chunk) x stages x chunks."""
    if str(params.get("recompute_method", "")).strip().lower() != "block" \
            or not stated_recomputation(params):
        return None
    try:
        n = int(str(params.get("recompute_num_layers", "")).strip())
        stages = int(str(params.get("pipeline_model_parallel_size", "1")).strip() or 1)
        chunks = _stated_int(params, "virtual_pipeline_model_parallel_size")
        per_chunk = _stated_int(params, "num_layers_per_virtual_pipeline_stage")
    except ValueError:
        return None
    if n < 0 or stages < 1 or not np.isfinite(layers) or layers <= 0:
        return None
    if chunks is None and per_chunk:
        chunks = int(layers) // stages // per_chunk
    chunks = chunks if chunks and chunks > 0 else 1
    recomputed = min(n, int(layers) // (stages * chunks)) * stages * chunks
    return recomputed if recomputed < layers else None


def _stated_int(params: dict, key: str) -> int | None:
    """A dump's integer `key`, None where it is absent or says None (ValueError otherwise)."""
    value = str(params.get(key, "")).strip()
    return None if value in ("", "None", "none") else int(value)


def case_tflops(result: ParseResult, runs_by_id: pd.DataFrame, run_ids: pd.Series,
                latency_ms: float) -> tuple[float, str, float]:
    """(TFLOP/s per GPU by the formula the case's log states, else seed 002's; that formula's
    text; TFLOP/s per GPU by seed 002's) for a case of runs `run_ids` whose median latency is
    `latency_ms`; `runs_by_id` is ``result.runs`` indexed by run_id. (NaN, '', NaN) for a
    case that is not GPT or has no latency; a formula we do not know gives the logs' printed
    figures (and no seed figure)."""
    nan = float("nan")
    run = runs_by_id.loc[run_ids.iloc[0]]
    model = run["model"]
    if not np.isfinite(latency_ms) or (pd.notna(model) and model != "gpt"):
        return nan, "", nan  # a model we do not know: the GPT fields below decide
    params = run["parameters"] if isinstance(run["parameters"], dict) else {}
    stated = str(params.get("flops_formula", "")).strip()
    formula = known_formula(stated) if stated else (
        NO_RECOMPUTATION if stated_recomputation(params) is False else SEED002)
    need = (run["global_batch_size"], run["seq_length"], run["num_layers"], run["hidden_size"],
            run["num_devices"])
    part = None if stated or pd.isna(need[2]) else recomputed_layers(params, float(need[2]))
    if part is not None:  # the 72 convention plus the forward pass of `part` layers
        formula = replace(NO_RECOMPUTATION, label="72+r", recomputed=part, text=(
            f"{NO_RECOMPUTATION.text}+24*B*s*r*h^2*(1+s/(6h)), r={part}"))
    if formula is None:
        return _printed_tflops(result, run_ids), stated, nan
    if any(pd.isna(x) for x in need):
        return nan, formula.text, nan
    vocab = run["vocab_size"] if pd.notna(run["vocab_size"]) else GPT_DEFAULT_VOCAB
    args = [float(x) for x in need[:4]] + [float(vocab), latency_ms / 1000.0, float(need[4])]
    return formula.tflops_per_gpu(*args), formula.text, SEED002.tflops_per_gpu(*args)


def _printed_tflops(result: ParseResult, run_ids: pd.Series) -> float:
    """Median over runs of each run's median printed `model_tflops_per_gpu` after its first
    (start-up) line, as the latency rule treats latencies; NaN when none is printed."""
    obs = result.observations
    rows = obs[(obs["metric"] == "model_tflops_per_gpu") & obs["run_id"].isin(run_ids)]
    per_run = [float(np.median(r.sort_values("line")["value"].to_numpy()[1:]))
               for _, r in rows.groupby("run_id", observed=True) if len(r) > 1]
    return float(np.median(per_run)) if per_run else float("nan")


#: What each convention counts, in the CLI table's notes.
_COUNTS = {"72": "no recomputation", "96": "seed 002's, counting recomputation"}


def label(stated: str) -> str:
    """Short name of a formula in a column header: '72', '96', or the text as stated."""
    found = known_formula(stated)
    return found.label if found else stated


def header(base: str, formulas: list[str]) -> str:
    """`base` with the formula(s) of its figures: 'TFLOP/s/gpu (72)'; `base` when none."""
    labels = list(dict.fromkeys(label(f) for f in formulas if f))
    return f"{base} ({'/'.join(labels)})" if labels else base


def notes(base: str, formulas: list[str]) -> list[str]:
    """Caption lines of a text table whose `base` column holds figures by `formulas`: what
    each label stands for and, beside figures of another formula, where seed 002's are."""
    texts = list(dict.fromkeys(f for f in formulas if f))
    out = []
    for text in texts:
        counts = _COUNTS.get(label(text), "as the logs state")
        out.append(f"{base} ({label(text)}): model FLOPs per iteration {text}, {counts}")
    if any(label(t) != SEED002.label for t in texts):
        out.append(f"seed 002's {SEED002.label} convention: tflops_per_gpu_seed002 "
                   "(--all-columns)")
    return out
