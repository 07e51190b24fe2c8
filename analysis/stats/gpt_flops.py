"""GPT model FLOPs per iteration by a named convention (docs/formats.md §3: seed 002's
96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), counting the forward pass recomputed under activation
checkpointing; ``workloads.gpt``'s 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)), without), and which
one a run's figures follow: the formula its log states, else seed 002's; and Megatron-LM's
counts of the model a dump states (grouped-query attention, gated MLP)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis.parsers._fields import to_int

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


#: Dump keys with which Megatron-LM's count is not a dense transformer's, and the values
#: that leave it one (no experts, latent attention, extra prediction or hybrid layers).
_DENSE = {"num_experts": ("None", "1", "[1]"), "multi_latent_attention": ("False",),
          "mtp_num_layers": ("None", "0"), "hybrid_override_pattern": ("None",),
          "experimental_attention_variant": ("None",), "attention_output_gate": ("False",)}


def megatron_counts(params: dict, vocab, seq: int | None = None
                    ) -> tuple[float, float, float] | None:
    """FLOPs of one sequence by Megatron-LM's three counts of a dense GPT the dump `params`
    state (h hidden, l layers, s sequence (`seq`, else the dump's), V padded vocabulary
    `vocab`; q = kv_channels x heads, k = kv_channels x key/value groups): 6·V·h +
    l·(12·h·(q + k) + 6·h·ffn·(3 with swiglu, else 2) + 12·s·q) per token (2024 on), the
    same with q = h and a 4h MLP (its first count, late 2023), and with the attention
    scores halved for the causal mask (6·s·q, 2025 on). For a plain GPT the first two are
    the 72 convention. None for another model or a missing size."""
    s, layers, h, heads = (to_int(params.get(k)) for k in (
        "seq_length", "num_layers", "hidden_size", "num_attention_heads"))
    s = seq or s
    if not (s and layers and h and heads and isinstance(vocab, int)) \
            or min(s, layers, h, heads) < 1 \
            or any(str(params.get(k, v[0])).strip() not in v for k, v in _DENSE.items()):
        return None
    groups = to_int(params.get("num_query_groups")) \
        if str(params.get("group_query_attention")).strip() == "True" else heads
    kv, ffn = to_int(params.get("kv_channels")) or h / heads, to_int(params.get("ffn_hidden_size"))
    if not groups or groups < 1:
        return None
    gated = 3 if str(params.get("swiglu")).strip() == "True" else 2

    def per_sequence(q: float, mlp: float, scores: float) -> float:
        k = q * groups / heads
        return s * (6 * vocab * h + layers * (12 * h * (q + k) + 6 * h * mlp + scores * s * q))
    q, mlp = kv * heads, (ffn or 4 * h) * gated
    return per_sequence(h, 8 * h, 12), per_sequence(q, mlp, 12), per_sequence(q, mlp, 6)


#: The label and text of Megatron-LM's 2024 count, for a model the 72 convention does not fit.
MEGATRON_2024 = "Megatron-LM 2024"
MEGATRON_2024_TEXT = (f"{MEGATRON_2024}: B*s*(6*V*h+l*(12*h*(q+k)+6*h*f+12*s*q)), q = "
                      "kv_channels x heads, k = kv_channels x num_query_groups, f = "
                      "ffn_hidden_size x (3 with swiglu, else 2)")


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
    figures (and no seed figure). Where the 72 convention is chosen but the dump states a
    model it does not fit, Megatron-LM's 2024 count of that model (:func:`megatron_counts`)."""
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
    seed = SEED002.tflops_per_gpu(*args)
    if not stated and formula is NO_RECOMPUTATION and (counts := megatron_counts(
            params, int(vocab), int(need[1]))) is not None and not np.isclose(
            counts[1], NO_RECOMPUTATION.flops(1.0, *args[1:5])):
        # the dump states a model the 72 convention does not fit (grouped-query attention,
        # a gated MLP, another FFN or head size): Megatron-LM's count of it, which is the
        # 72 convention for a plain GPT
        return counts[1] * args[0] / (args[5] * args[6]) / 1e12, MEGATRON_2024_TEXT, seed
    return formula.tflops_per_gpu(*args), formula.text, seed


def _printed_tflops(result: ParseResult, run_ids: pd.Series) -> float:
    """Median over runs of each run's median printed `model_tflops_per_gpu` after its first
    (start-up) line, as the latency rule treats latencies; NaN when none is printed."""
    obs = result.observations
    rows = obs[(obs["metric"] == "model_tflops_per_gpu") & obs["run_id"].isin(run_ids)]
    per_run = [float(np.median(r.sort_values("line")["value"].to_numpy()[1:]))
               for _, r in rows.groupby("run_id", observed=True) if len(r) > 1]
    return float(np.median(per_run)) if per_run else float("nan")


#: What each convention counts, in the CLI table's notes.
_COUNTS = {"72": "no recomputation", "96": "seed 002's, counting recomputation",
           MEGATRON_2024: "the model the argument dump states, no recomputation"}


def label(stated: str) -> str:
    """Short name of a formula in a column header: '72', '96', or the text as stated."""
    found = known_formula(stated)
    return found.label if found else MEGATRON_2024 if stated == MEGATRON_2024_TEXT \
        else stated


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
