"""Run fields stated in a log's argument dump, read without numpy or pandas: shared by the
DLLogger and OneFlow families, so that each reads a dump the same way."""

from __future__ import annotations

import re

from analysis.layout import normalize_model, normalize_precision

#: Run fields a parser may report in ParsedLog.meta (all optional).
#: The range of steps and counts, kept as int64: a larger number is a garbled line.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
META_FIELDS = (
    "framework", "model", "precision", "num_nodes", "gpus_per_node", "batch_size_per_device",
    "global_batch_size", "repeat", "case", "group", "data_parallel", "tensor_parallel",
    "pipeline_parallel", "seq_length", "num_layers", "hidden_size", "num_heads", "vocab_size",
    "train_start",
)
#: META_FIELDS that are a stamp of the run, not a setting: each run (a copy re-stamped too)
#: states its own, and no user states one.
STAMPED_FIELDS = ("train_start",)

#: A number as the families print it (also nan/inf spellings and None).
NUM = rb"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?(?:nan|NaN|inf|Inf|Infinity)|None"
_PARAM_KV = re.compile(rb"(?:^ ?|  )([^\s:][^\s]*) : (.*?) ?(?=  [^\s:][^\s]* : | *$)", re.S)
#: OneFlow dump keys that state the GPUs per node, and those that switch FP16 on or off.
ONEFLOW_GPUS_KEYS = ("gpu_num_per_node", "num_gpu_per_node", "device_num_per_node",
                     "num_gpus_per_node")
ONEFLOW_FP16_KEYS = ("use_fp16", "fp16", "use_amp", "amp")


def parse_bool(text: str) -> bool | None:
    t = text.strip().lower()
    if t in ("true", "1", "yes", "on"):
        return True
    if t in ("false", "0", "no", "off", "none"):
        return False
    return None


def to_int(text) -> int | None:
    """`text` as an int (surrounding spaces allowed), or None."""
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def parse_parameters(rest: bytes) -> dict[str, str]:
    """``name : value  name : value …`` of a DLLogger PARAMETER line (values may be empty)."""
    return {k.decode("utf-8", "replace"): v.decode("utf-8", "replace").strip()
            for k, v in _PARAM_KV.findall(rest)}


#: The PyTorch launchers' command line, its arguments in group 1 (DLE PyTorch logs that hold
#: the launch command: analysis.parsers.dll_pytorch).
LAUNCH = re.compile(rb"(?:-m torch\.distributed\.(?:launch|run)|\btorchrun)\b([^\n]*)")
#: ``key=value`` of an ``argparse.Namespace(…)`` repr: a quoted string, or text up to the next
#: comma or bracket.
_NS_ITEM = re.compile(r"""(\w+)=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^,()\[\]]*)""")
#: Namespace keys that state run fields (the other keys are kept only in the printed value).
NAMESPACE_KEYS = ("amp", "fp16", "gradient_accumulation_steps")


def namespace_items(text: str) -> dict[str, str]:
    """The ``key=value`` items of an ``argparse.Namespace(…)`` repr printed as a parameter
    value (DLE PyTorch BERT: ``PARAMETER Config : ["Namespace(fp16=True, …)"]``), quotes
    removed; {} when `text` holds none."""
    start = text.find("Namespace(")
    if start < 0:
        return {}
    out = {}
    for key, value in _NS_ITEM.findall(text, start + len("Namespace(")):
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.setdefault(key, value)
    return out


def dll_parameter_fields(params: dict) -> list[tuple[str, object, str]]:
    """(run field, value, parameter it comes from) that a DLLogger PARAMETER dump states, in
    the order they apply (docs/formats.md §6): ``arch`` → model; ``batch_size_per_gpu``
    (DLE PyTorch BERT) or ``batch_size`` → batch size per device; ``precision`` when
    stated, else ``amp``/``fp16`` True → amp, both False → fp32 (also from a printed
    ``Namespace(…)``, BERT's ``Config``, where no PARAMETER line states them);
    ``num_nodes``/``gpus_per_node`` when stated. ``world_size`` is left to the caller (it
    needs the path)."""
    stated, holder = {}, {}  # holder: the parameter whose Namespace states a key
    for name, value in params.items():
        if "Namespace(" in value:
            items = namespace_items(value)
            for k in NAMESPACE_KEYS:
                if k in items and k not in stated:
                    stated[k], holder[k] = items[k], name
    holder = {k: v for k, v in holder.items() if k not in params}  # a PARAMETER line wins
    params = {**stated, **params}
    out = []
    for k in ("arch", "model", "model_name"):
        if params.get(k):
            out.append(("model", normalize_model(params[k]), k))
            break
    for k in ("batch_size_per_gpu", "batch_size", "train_batch_size"):
        if to_int(params.get(k)) is not None:
            out.append(("batch_size_per_device", to_int(params[k]), k))
            break
    flags = {k: parse_bool(params[k]) for k in ("amp", "fp16") if k in params}
    if params.get("precision"):  # the built-in workload states it (fp32, tf32, amp, bf16)
        out.append(("precision", normalize_precision(params["precision"]), "precision"))
    elif any(flags.values()):
        k = next(k for k, v in flags.items() if v)
        out.append(("precision", "amp", holder.get(k, k)))
    elif flags and all(v is False for v in flags.values()):
        k = next(iter(flags))
        out.append(("precision", "fp32", holder.get(k, k)))
    for k in ("num_nodes", "gpus_per_node"):  # stated by the built-in workload
        if to_int(params.get(k)) is not None:
            out.append((k, to_int(params[k]), k))
    return out


def oneflow_dump_field(name: str, value: str) -> tuple[str, object] | None:
    """(run field, value or None) that one ``name = value`` line of a OneFlow dump states;
    None when the line states no run field."""
    if name == "model":
        return "model", normalize_model(value)
    if name == "batch_size_per_device":
        return "batch_size_per_device", to_int(value)
    if name == "num_nodes":
        return "num_nodes", to_int(value)
    if name in ONEFLOW_GPUS_KEYS:
        return "gpus_per_node", to_int(value)
    if name in ONEFLOW_FP16_KEYS:
        flag = parse_bool(value)
        return "precision", None if flag is None else ("amp" if flag else "fp32")
    if name in ("precision", "dtype"):
        return "precision", normalize_precision(value)
    return None
