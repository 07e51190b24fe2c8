"""The tidy frames of the suite, declared once: columns, dtypes, units and meaning.

Every parser output is assembled into these frames by :mod:`analysis.collect` and
validated here; statistics, plots and reports only ever see validated frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.errors import SchemaError

if TYPE_CHECKING:  # the declarations are read without pandas (`dlperf --help`)
    import pandas as pd


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # pandas dtype name
    unit: str
    meaning: str


def _cols(*specs: tuple[str, str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*s) for s in specs)


#: One row per observation (a number printed by the benchmarked program).
OBSERVATIONS = _cols(
    ("run_id", "category", "", "run identifier: log path relative to the scanned root, without suffix"),
    ("source", "category", "", "file the observation was read from"),
    ("line", "int64", "", "1-based line number in `source`"),
    ("family", "category", "", "log family (parser) that read the line"),
    ("framework", "category", "", "training framework, e.g. OneFlow, PyTorch, TensorFlow"),
    ("model", "category", "", "model name, e.g. resnet50, bert_base, gpt"),
    ("precision", "category", "", "fp32, amp (= fp16 mixed), tf32 or bf16"),
    ("num_nodes", "Int64", "", "number of nodes"),
    ("gpus_per_node", "Int64", "", "GPUs (devices) per node"),
    ("batch_size_per_device", "Int64", "samples", "batch size per device (micro batch for GPT)"),
    ("repeat", "Int64", "", "repeat number of the case, from 1"),
    ("rank", "Int64", "", "global rank that printed the line, when known"),
    ("device", "Int64", "", "GPU index of a memory sample"),
    ("phase", "category", "", "train, val, epoch, summary, memory or checkpoint (analysis.metrics)"),
    ("epoch", "Int64", "", "epoch as printed"),
    ("step", "Int64", "", "training iterations completed (1-based) when the line was printed"),
    ("timestamp", "float64", "s", "unix time of the line, NaN when the log has none"),
    ("metric", "category", "", "canonical metric name (analysis.metrics)"),
    ("value", "float64", "", "value of the metric, in `unit`"),
    ("unit", "category", "", "unit of `value`"),
)


def _run_identity(text: str) -> tuple[tuple[str, str, str, str], ...]:
    """The columns that name a run and its case, shared by RUNS, PER_RUN and (the case's)
    SUMMARY; `text` is the dtype their strings have in that frame."""
    return (
        ("run_id", text, "", "run identifier (see OBSERVATIONS)"),
        ("source", text, "", "main log file of the run"),
        ("family", text, "", "log family"),
        ("framework", text, "", "training framework"),
        ("model", text, "", "model name"),
        ("precision", text, "", "precision"),
        ("num_nodes", "Int64", "", "number of nodes"),
        ("gpus_per_node", "Int64", "", "GPUs per node"),
        ("num_devices", "Int64", "", "nodes x GPUs per node"),
        ("batch_size_per_device", "Int64", "samples", "batch size per device (micro batch for GPT)"),
        ("global_batch_size", "Int64", "samples", "samples per iteration over all devices"),
        ("repeat", "Int64", "", "repeat number"),
    )


#: One row per run (one log file plus its sidecars).
RUNS = _cols(
    *_run_identity("string"),
    ("case", "string", "", "case label (GPT: <group>_<dp>x<tp>x<pp>_<global>_<hidden>x<layers>)"),
    ("group", "string", "", "GPT parallelism group (DP, MP, 2D, PP, DP_PP, MP_PP, 2D_PP)"),
    ("data_parallel", "Int64", "", "GPT data-parallel size"),
    ("tensor_parallel", "Int64", "", "GPT tensor-model-parallel size"),
    ("pipeline_parallel", "Int64", "", "GPT pipeline-model-parallel size"),
    ("seq_length", "Int64", "tokens", "GPT sequence length"),
    ("num_layers", "Int64", "", "GPT layers"),
    ("hidden_size", "Int64", "", "GPT hidden size"),
    ("num_heads", "Int64", "", "GPT attention heads"),
    ("vocab_size", "Int64", "", "GPT vocabulary size (51200 when the log does not say)"),
    ("train_start", "float64", "s", "unix seconds of the log's last stamped statement before its "
     "first training line (a DLLogger PARAMETER line), NaN where it stamps none"),
    ("n_observations", "int64", "", "rows of the run in the observations frame"),
    ("problems", "string", "", "problem kinds met in this run, ';'-separated ('' when clean)"),
    ("parameters", "object", "", "dict of the run's parameter dump as printed (strings)"),
)

#: One row per problem met while reading logs or computing statistics.
PROBLEMS = _cols(
    ("run_id", "string", "", "run the problem belongs to"),
    ("source", "string", "", "file the problem was found in"),
    ("line", "Int64", "", "1-based line number, NA for whole-file problems"),
    ("kind", "string", "", "short code, see analysis.problems.KINDS"),
    ("reason", "string", "", "human-readable explanation"),
    ("text", "string", "", "the offending line (or an excerpt), as read"),
)

#: One row per run for one throughput method: analysis.stats.run_throughput.
PER_RUN = _cols(
    *_run_identity("text"),
    ("case", "text", "", "case label ('' outside GPT)"),
    ("group", "text", "", "GPT parallelism group"),
    ("throughput", "float64", "samples/s", "the run's figure by the method, NaN when none"),
    ("latency_ms", "float64", "ms", "seconds per iteration x 1000, where the method measures it"),
    ("iterations", "int64", "", "iterations inside the measured window"),
    ("method", "text", "", "what was computed, in words"),
    ("problem_kind", "text", "", "why the figure is absent or degraded (analysis.problems.KINDS)"),
    ("problem", "text", "", "the same, in words"),
    ("memory_framework_mib", "float64", "MiB", "the framework's own allocator peak, max over devices"),
    ("memory_sampled_mib", "float64", "MiB", "the peak of the nvidia-smi samples, max over devices"),
    ("energy_j", "float64", "J", "energy of the run's GPUs over its training lines "
     "(analysis.stats.energy), NaN when not measured"),
    ("power_w", "float64", "W", "the mean power of all its GPUs over the same window"),
    ("energy_window_s", "float64", "s", "that window: first to last timestamped training line"),
    ("energy_note", "text", "", "why there is no energy ('' when there is)"),
    ("outlier", "bool", "", "more than 3 scaled MADs from its case's median"),
)

#: One row per case: analysis.stats.summarize.
SUMMARY = _cols(
    *(c for c in _run_identity("object")
      if c[0] not in ("run_id", "source", "family", "global_batch_size", "repeat")),
    ("case", "object", "", "case label ('' outside GPT)"),
    ("group", "object", "", "GPT parallelism group"),
    ("repeats", "int64", "", "n: runs of the case with a throughput"),
    ("throughput_median", "float64", "samples/s", "median over repeats"),
    ("throughput_mean", "float64", "samples/s", "mean over repeats"),
    ("throughput_std", "float64", "samples/s", "sample standard deviation (NaN for n < 2)"),
    ("throughput_min", "float64", "samples/s", "smallest repeat"),
    ("throughput_max", "float64", "samples/s", "largest repeat"),
    ("interval_low", "float64", "samples/s", "low end of the interval beside the median"),
    ("interval_high", "float64", "samples/s", "high end of the interval beside the median"),
    ("interval_kind", "object", "", "'n = 0' / 'n = 1' (none), 'min–max' (n < 7), 'order-statistic 95 %'"),
    ("interval_coverage", "float64", "", "coverage the order-statistic interval achieves"),
    ("spread_pct", "float64", "%", "(max - min) / median x 100 (NaN for n < 2)"),
    ("speedup", "float64", "", "median / median of the 1n1g case of the same settings"),
    ("scaling_efficiency", "float64", "", "speedup / devices"),
    ("memory_framework_mib", "float64", "MiB", "median of the runs' framework-reported peaks"),
    ("memory_framework_max_mib", "float64", "MiB", "largest run's framework-reported peak"),
    ("memory_sampled_mib", "float64", "MiB", "median of the runs' nvidia-smi sampled peaks"),
    ("memory_sampled_max_mib", "float64", "MiB", "largest run's nvidia-smi sampled peak"),
    ("memory_flag", "bool", "", "a max peak stands out (> 10 % above the median of peaks)"),
    ("latency_ms", "float64", "ms", "median over runs of the per-iteration latency"),
    ("power_w", "float64", "W", "median over runs of the mean power of all the run's GPUs "
     "over its training lines (analysis.stats.energy)"),
    ("energy_per_sample_j", "float64", "J/sample", "median over runs of power / throughput"),
    ("samples_per_s_per_w", "float64", "samples/s/W", "median over runs of throughput / power"),
    ("energy_window_s", "float64", "s", "median over runs of the window power is integrated "
     "over: first to last timestamped training line"),
    ("tflops_per_gpu", "float64", "TFLOP/s", "GPT: by tflops_formula"),
    ("tflops_formula", "object", "", "GPT: the FLOPs formula the logs state, else seed 002's"),
    ("tflops_per_gpu_seed002", "float64", "TFLOP/s", "GPT: by seed 002's 96 convention"),
    ("time_to_train_min", "float64", "min", "MLPerf: the round's score of the runs' times to "
     "train (lower is better; analysis.stats.time_to_train)"),
    ("time_to_train_rule", "object", "", "MLPerf: how time_to_train_min was computed, or why "
     "there is none ('' outside MLPerf)"),
    ("outliers", "int64", "", "repeats flagged as outliers (kept, never dropped)"),
    ("problems", "int64", "", "runs of the case with any problem (every run of a flagged case)"),
    ("flags", "object", "", "why the repeats are not one comparable set: the configuration "
                            "keys that differ, a spread above the threshold ('' when none)"),
)

#: Columns that identify a benchmark case (runs of a case differ only in `repeat`).
CASE_COLUMNS = (
    "framework",
    "model",
    "precision",
    "num_nodes",
    "gpus_per_node",
    "batch_size_per_device",
    "case",
)


def names(schema: tuple[Column, ...]) -> list[str]:
    return [c.name for c in schema]


def dtype_name(column: Column) -> str:
    """The pandas dtype of `column`: "text" is the dtype pandas gives Python strings
    (``str`` from pandas 3, ``object`` before)."""
    if column.dtype != "text":
        return column.dtype
    import pandas as pd

    return str(pd.Series(["a"]).dtype)


def empty(schema: tuple[Column, ...]) -> pd.DataFrame:
    """An empty frame with the schema's columns and dtypes."""
    import pandas as pd

    return pd.DataFrame({c.name: pd.Series(dtype=dtype_name(c)) for c in schema})


def coerce(df: pd.DataFrame, schema: tuple[Column, ...]) -> pd.DataFrame:
    """Order columns as declared and cast them to the declared dtypes."""

    missing = [c.name for c in schema if c.name not in df.columns]
    if missing:
        raise SchemaError(f"missing columns {missing}; have {list(df.columns)}")
    out = df[names(schema)].copy()
    for c in schema:
        if str(out[c.name].dtype) != dtype_name(c):
            out[c.name] = out[c.name].astype(dtype_name(c))
    return out


def validate(df: pd.DataFrame, schema: tuple[Column, ...]) -> pd.DataFrame:
    """Raise SchemaError unless `df` has exactly the schema's columns, order and dtypes."""

    got = list(df.columns)
    if got != names(schema):
        raise SchemaError(f"columns {got} do not match schema {names(schema)}")
    for c in schema:
        dt = str(df[c.name].dtype)
        if dt != dtype_name(c):
            raise SchemaError(f"column {c.name!r} has dtype {dt}, schema says {dtype_name(c)}")
    return df


def is_missing(v) -> bool:
    """A missing value of any kind: None, NaN, pandas' NA or NaT (told apart without
    importing pandas, which the summarize path does not load)."""
    return v is None or type(v).__name__ in ("NAType", "NaTType") or v != v


def case_key(row) -> str:
    """A case as one string: 'PyTorch/resnet50/amp/b256/1n4g' (+ '/<case>' for GPT case
    labels); what comparisons, the store and case flags name cases by."""
    def text(v):
        return "?" if is_missing(v) else str(v)

    key = (f"{text(row['framework'])}/{text(row['model'])}/{text(row['precision'])}/"
           f"b{text(row['batch_size_per_device'])}/{text(row['num_nodes'])}n"
           f"{text(row['gpus_per_node'])}g")
    case = row["case"]
    return key + (f"/{case}" if isinstance(case, str) and case else "")
