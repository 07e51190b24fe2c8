"""OneFlow GPT pretraining logs (``LanguageModeling/GPT``), docs/formats.md §3: a Megatron-style
argument dump (shared here with megatron and oneflow_models), then metrics as a table or as
records::

    | 10       | 320             | 5120            | 35.88042   | 14.26962   | 11.23708   |
    step=10,micro_batches=320,samples=5120,throughput=35.88042,latency=14.26962,loss=11.23708,

The framework is OneFlow unless the dump names another (the suite's own PyTorch GPT writes
this format with ``framework ... pytorch``).
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.layout import meta_from_path
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._fields import to_int
from analysis.parsers._gpt import GPTCases
from analysis.parsers._rules import latency_rule
from analysis.parsers._scan import field_values, first_line, floats, ints, line_pattern, read_lines
from analysis.parsers.base import LogParser, ParsedLog, parse_bool
from analysis.parsers.gpu_memory import add_memory_blocks
from analysis.problems import Problem

# --- the Megatron-style argument dump, shared with megatron ---------------------------------

_ARGS_BEGIN = re.compile(rb"^-+ arguments -+[ \t]*$", re.M)
_ARGS_END = re.compile(rb"^-+ end of arguments -+[ \t]*$", re.M)
_ARG_LINE = re.compile(rb"^(?: {0,3}\d{1,5}: )?[ \t]*([A-Za-z_][A-Za-z0-9_\-]*) \.+ ?([^\n]*?)[ \t]*$", re.M)
_DUMP_SPAN = 1 << 20
#: argument name -> META_FIELDS key (integers)
ARG_META = {
    "num_layers": "num_layers", "hidden_size": "hidden_size",
    "num_attention_heads": "num_heads", "seq_length": "seq_length",
    "micro_batch_size": "batch_size_per_device", "global_batch_size": "global_batch_size",
    "tensor_model_parallel_size": "tensor_parallel",
    "pipeline_model_parallel_size": "pipeline_parallel",
    "data_parallel_size": "data_parallel", "num_nodes": "num_nodes",
    "num_gpus_per_node": "gpus_per_node", "vocab_size": "vocab_size",
    "padded_vocab_size": "vocab_size",
    # OneFlow >= 0.5 ResNet-50 (oneflow_models): devices per node, batch per device
    "num_devices_per_node": "gpus_per_node", "train_batch_size": "batch_size_per_device",
    "train_global_batch_size": "global_batch_size",
}
#: a dump's ``framework`` value (lower case) -> the framework name runs carry
FRAMEWORK_NAMES = {"pytorch": "PyTorch", "torch": "PyTorch", "oneflow": "OneFlow",
                   "megatron": "Megatron-LM", "megatron-lm": "Megatron-LM"}


def read_argument_dump(log: LogText, parsed: ParsedLog) -> dict[str, int]:
    """Fill `parsed.parameters`, `meta` and `meta_lines` from the ``---- arguments ----`` dump;
    returns the line of each argument it states.

    Integers of :data:`ARG_META` go to `meta` (``padded_vocab_size`` wins over
    ``vocab_size``); ``fp16``/``bf16`` flags give ``precision`` (amp, bf16 or fp32); a
    ``framework`` entry (the suite's ``workloads.gpt`` states ``pytorch``) names the framework.
    """
    data = log.data
    begin = first_line(data, b" arguments ", _ARGS_BEGIN)  # start-up output may be megabytes
    if not begin:
        return {}
    stop = first_line(data, b" end of arguments ", _ARGS_END, begin.end())
    end = stop.start() if stop else min(len(data), begin.end() + _DUMP_SPAN)
    if stop is None:
        line = int(log.lines_at(np.array([begin.start()]))[0])
        parsed.problems.append(Problem(
            log.source, line, "bad_line",
            f"the argument dump starting on line {line} has no '---- end of arguments ----' "
            f"line: read its first {_DUMP_SPAN:,} bytes only", log.line_text(line)[:300]))
    flags: dict[str, tuple[bool, int]] = {}
    lines: dict[str, int] = {}
    for m in _ARG_LINE.finditer(data, begin.end(), end):
        name = m.group(1).decode().replace("-", "_")
        value = m.group(2).decode("utf-8", "replace")
        parsed.parameters[name] = value
        line = lines[name] = int(log.lines_at(np.array([m.start()]))[0])
        key = ARG_META.get(name)
        if key:
            try:
                number = int(value)
            except ValueError:
                continue  # e.g. global_batch_size None
            if name == "vocab_size" and "vocab_size" in parsed.meta and \
                    parsed.parameters.get("padded_vocab_size"):
                continue
            parsed.state(key, number, line)
        elif name == "framework" and value.strip():
            framework = FRAMEWORK_NAMES.get(value.strip().lower(), value.strip())
            parsed.state("framework", framework, line)
        elif name in ("fp16", "bf16", "use_fp16"):  # use_fp16: oneflow_models
            flag = parse_bool(value)
            if flag is not None:
                flags[name.removeprefix("use_")] = (flag, line)
    if flags:
        if flags.get("bf16", (False, 0))[0]:
            parsed.state("precision", "bf16", flags["bf16"][1])
        elif flags.get("fp16", (False, 0))[0]:
            parsed.state("precision", "amp", flags["fp16"][1])
        else:
            parsed.state("precision", "fp32", min(ln for _, ln in flags.values()))
    _global_batch_from_parts(parsed, lines)
    _devices_from_world_size(log, parsed, lines)
    return lines


def _global_batch_from_parts(parsed: ParsedLog, lines: dict[str, int]) -> None:
    """A global batch the dump does not state (``None`` or absent): micro batch × DP ×
    accumulation steps (docs/formats.md §3), DP stated or nodes × GPUs / (TP × PP). Left
    unset when a part is missing."""
    if "global_batch_size" in parsed.meta:
        return
    get = {name: to_int(parsed.parameters.get(name)) for name in (
        "micro_batch_size", "num_accumulation_steps", "data_parallel_size", "num_nodes",
        "num_gpus_per_node", "tensor_model_parallel_size", "pipeline_model_parallel_size")}
    dp = get["data_parallel_size"]
    sizes = [get[k] for k in ("num_nodes", "num_gpus_per_node", "tensor_model_parallel_size",
                              "pipeline_model_parallel_size")]
    if dp is None and all(sizes):
        nodes, gpus, tp, pp = sizes
        dp = nodes * gpus // (tp * pp) if nodes * gpus % (tp * pp) == 0 else None
    micro, steps = get["micro_batch_size"], get["num_accumulation_steps"]
    if dp and micro and steps and "micro_batch_size" in lines:
        parsed.state("global_batch_size", micro * dp * steps, lines["micro_batch_size"])


def _devices_from_world_size(log: LogText, parsed: ParsedLog, lines: dict[str, int]) -> None:
    """GPUs per node from a stated ``world_size`` that the path's nodes × GPUs contradict
    (Megatron's dump): the log wins, so the run's devices are the log's (per-GPU figures
    divide by them) and the merge of run fields reports the conflict on that line."""
    try:
        world = int(parsed.parameters.get("world_size", ""))
    except ValueError:
        return
    path = meta_from_path(log.source)
    n, g = path.get("num_nodes"), path.get("gpus_per_node")
    if world < 1 or n is None or g is None or n * g == world \
            or "gpus_per_node" in parsed.meta or "num_nodes" in parsed.meta:
        return
    if world % n:  # no split over the path's nodes: keep the path's, say so
        parsed.problems.append(Problem(
            log.source, lines["world_size"], "metadata_conflict",
            f"the path says {n}n{g}g ({n * g} devices), the log says world_size={world}, "
            f"which {n} nodes do not divide; using the path's"))
        return
    parsed.state("gpus_per_node", world // n, lines["world_size"])


# --- the family -------------------------------------------------------------------------------

#: printed column / key -> (metric, unit); `step`/`batches` is the step itself
_COLUMNS = {
    "micro_batches": ("micro_batches", M.NONE),
    "samples": (M.SAMPLES, M.NONE),
    "throughput": (M.THROUGHPUT, M.SAMPLES_PER_S),
    "latency": (M.LATENCY, M.SECONDS),
    "loss": (M.LOSS, M.NONE),
}
_DEFAULT_COLUMNS = ("micro_batches", "samples", "throughput", "latency", "loss")
_TABLE_ANCHOR = b"|"
_TABLE_ROW = line_pattern(_TABLE_ANCHOR, rb"[ \t]*(\d+)[ \t]*\|((?:[^|\n]*\|)+)[ \t]*$",
                          bad=rb"[ \t]*\d[^\n]*")
_TABLE_HEADER = re.compile(rb"\n\|[ \t]*(?:step|batches)[ \t]*\|([^\n]*)")
_KV_ANCHORS = (b"step=", b"batches=")
_KV = {a: line_pattern(a, rb"(\d+)((?:,[A-Za-z_][A-Za-z0-9_]*=[^,=\n]*)+),[ \t]*$",
                       bad=rb"\d[^\n]*") for a in _KV_ANCHORS}
_SNIFF = re.compile(rb"^(?:\|[ \t]*(?:step|batches)[ \t]*\|[ \t]*micro_batches"
                    rb"|(?:step|batches)=\d+,(?:micro_batches=\d+,)?samples=)", re.M)


def _header_columns(log: LogText) -> tuple[str, ...]:
    m = _TABLE_HEADER.search(b"\n" + log.data)
    if not m:
        return _DEFAULT_COLUMNS
    return tuple(c.strip().decode("utf-8", "replace") for c in m.group(1).split(b"|")[:-1])


#: printed column -> the framework's own allocator peak (MiB), a memory observation
#: (`workloads.gpt` prints the printing rank's `torch.cuda.max_memory_allocated`)
_MEMORY_COLUMNS = {"max_allocated_mib"}


def _add_columns(parsed: ParsedLog, lines, step, names, values_of) -> None:
    for i, name in enumerate(names):
        metric, unit = _COLUMNS.get(name, (name, M.NONE))
        phase = M.TRAIN
        if name in _MEMORY_COLUMNS:
            metric, unit, phase = M.MEMORY_MAX_ALLOCATED, M.MIB, M.MEMORY
        raw = values_of(i, name)
        keep = raw != b""
        if keep.any():
            parsed.obs.add(line=lines[keep], metric=metric, value=floats(raw[keep]),
                           phase=phase, unit=unit, step=step[keep])


def _read_table(log: LogText, parsed: ParsedLog) -> None:
    names = _header_columns(log)
    g, lines = read_lines(log, parsed, "OneFlow GPT table", _TABLE_ROW, _TABLE_ANCHOR, 0,
                          fits=lambda g: np.char.count(g[:, 1], b"|") == len(names))
    if not len(g):
        return
    blob = b"\n".join(g[:, 1].tolist())
    pat = re.compile(rb"^" + rb"[ \t]*([^|\n]*?)[ \t]*\|" * len(names) + rb"[ \t]*$", re.M)
    table = np.array(pat.findall(blob), dtype="S").reshape(len(g), len(names))
    _add_columns(parsed, lines, ints(g[:, 0]), names, lambda i, _: table[:, i])


def _read_records(log: LogText, parsed: ParsedLog) -> None:
    for anchor, pattern in _KV.items():
        g, lines = read_lines(log, parsed, "OneFlow GPT record", pattern, anchor, 0)
        if not len(g):
            continue
        rest = g[:, 1]
        names = [kv.split(b"=")[0].decode() for kv in rest[0].split(b",")[1:]]
        _add_columns(parsed, lines, ints(g[:, 0]), names,
                     lambda _, name, rest=rest: field_values(rest, name.encode(), sep=b"=", delim=b",",
                                                  value=rb"[^,\n]*"))


def _batch_from_samples(log: LogText, parsed: ParsedLog) -> None:
    """The global batch the lines ran, where their cumulative ``samples`` grow by one amount
    per iteration that is not the dump's ``global_batch_size``: the lines' amount is used,
    said as ``meta_contradicted`` naming both (a stated batch is otherwise believed, and
    samples/s and TFLOP/s scale with it)."""
    stated = parsed.meta.get("global_batch_size")
    parts = [(b["line"], b["step"], b["value"]) for b in parsed.obs.blocks
             if isinstance(b["metric"], str) and b["metric"] == M.SAMPLES]
    if stated is None or not parts:
        return
    lines, steps, samples = (np.concatenate(c) for c in zip(*parts, strict=True))
    order = np.argsort(lines, kind="stable")
    lines, steps, samples = lines[order], steps[order], samples[order]
    d_step, d_samples = np.diff(steps), np.diff(samples)
    ok = (d_step > 0) & np.isfinite(d_samples)
    if not ok.any():
        return
    per = d_samples[ok] / d_step[ok]
    if per.min() != per.max() or not float(per[0]).is_integer() or per[0] < 1 \
            or per[0] == stated:
        return
    ran, first = int(per[0]), int(lines[1:][ok][0])
    parsed.problems.append(Problem(
        log.source, first, "meta_contradicted",
        f"the argument dump says global_batch_size {stated} (line "
        f"{parsed.meta_lines.get('global_batch_size', '?')}); the samples column grows "
        f"{ran} per iteration (lines {int(lines[0])} to {int(lines[-1])}): using the lines' "
        f"{ran}", log.line_text(first)[:300]))
    parsed.state("global_batch_size", ran, first)


def _batch_against_parts(log: LogText, parsed: ParsedLog) -> None:
    """A ``metadata_conflict`` when the dump's global_batch_size is not its micro_batch_size
    x num_accumulation_steps x data_parallel_size (what an iteration of this GPT runs): the
    dump contradicts itself, so the samples/s and TFLOP/s that count the global batch are in
    doubt. The global batch stays the one the figures count (the lines' where they say)."""
    stated = parsed.meta.get("global_batch_size")
    parts = [to_int(parsed.parameters.get(k)) for k in
             ("micro_batch_size", "num_accumulation_steps", "data_parallel_size")]
    if stated is None or None in parts or min(parts) < 1 or int(np.prod(parts)) == stated:
        return
    line = parsed.meta_lines.get("global_batch_size")
    parsed.problems.append(Problem(
        log.source, line, "metadata_conflict",
        f"the argument dump's micro_batch_size {parts[0]} x num_accumulation_steps {parts[1]} "
        f"x data_parallel_size {parts[2]} = {int(np.prod(parts))} samples an iteration, but "
        f"the run counts a global batch of {stated}: they cannot both be what ran, so its "
        "samples/s and TFLOP/s (which count the global batch) are in doubt",
        log.line_text(line)[:300] if line else ""))


def _column(parsed: ParsedLog, metric: str) -> dict[int, float]:
    """Line -> the value of `metric` the training lines print."""
    out = {}
    for b in parsed.obs.blocks:
        if isinstance(b["metric"], str) and b["metric"] == metric:
            out.update(zip(b["line"].tolist(), b["value"].tolist()))
    return out


def _latency_against_printed_tflops(log: LogText, parsed: ParsedLog) -> None:
    """A ``figure_mismatch`` where the lines' latency is more than 5 % off the one their own
    ``model_tflops_per_gpu`` implies by the ``flops_formula`` the dump states (``workloads.gpt``
    prints both from one timer: FLOPs / latency / GPUs), by the median over the lines: one
    of them was altered, and the throughput, made from the same latency, with it. Lines
    under 5 TFLOP/s or 1 ms are left out (two and five decimals: rounding over 0.5 %)."""
    from analysis.stats.gpt_flops import known_formula  # pandas: not for every parse

    formula = known_formula(str(parsed.parameters.get("flops_formula", "")))
    meta = parsed.meta
    sizes = [meta.get(k) for k in ("global_batch_size", "seq_length", "num_layers",
                                   "hidden_size", "vocab_size", "num_nodes", "gpus_per_node")]
    if formula is None or None in sizes:
        return
    latency, tflops = _column(parsed, M.LATENCY), _column(parsed, "model_tflops_per_gpu")
    used = np.array(sorted(ln for ln in latency.keys() & tflops.keys()
                           if latency[ln] >= 1e-3 and tflops[ln] >= 5), dtype=np.int64)
    if len(used) < 3:
        return
    lat = np.array([latency[ln] for ln in used])
    printed = np.array([tflops[ln] for ln in used])
    flops = formula.flops(*sizes[:5]) / (sizes[5] * sizes[6])  # a GPU's share of an iteration
    ratio = float(np.median(lat * printed * 1e12 / flops))
    if abs(ratio - 1) <= 0.05:
        return
    first = int(used[0])
    parsed.problems.append(Problem(
        log.source, first, "figure_mismatch",
        f"the table's latency, median {np.median(lat) * 1e3:,.2f} ms, is {ratio:.3f} times the "
        f"{np.median(flops / (printed * 1e12)) * 1e3:,.2f} ms its own model_tflops_per_gpu "
        f"(median {np.median(printed):,.2f}) implies by the stated flops_formula "
        f"{formula.text} (lines {first} to {int(used[-1])}, {len(used)} lines): its latency "
        f"gives {np.median(flops / lat) / 1e12:,.2f} TFLOP/s per GPU, two figures of one timer, "
        "so the latency, samples/s and TFLOP/s are in doubt", log.line_text(first)[:300]))


@register
class OneFlowGPTParser(GPTCases, LogParser):
    name = "oneflow_gpt"
    markers = (b'micro_batches', b'samples=', b'arguments')
    framework = "OneFlow"
    description = "OneFlow GPT (LanguageModeling/GPT) pretraining logs: table or key=value"

    max_score = 95
    printed_global_rate = True  # throughput: samples/s of all devices, the interval's

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF.search(head):
            return 95
        if _ARGS_BEGIN.search(head) and (b"num_gpus_per_node ." in head or b"oneflow" in head):
            return 70
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        read_argument_dump(log, parsed)
        _read_table(log, parsed)
        _read_records(log, parsed)
        _batch_from_samples(log, parsed)
        _batch_against_parts(log, parsed)
        _latency_against_printed_tflops(log, parsed)
        add_memory_blocks(log, parsed)
        return parsed

    def dlperf(self, run: RunData) -> Estimate:
        return latency_rule(run, "latency (s/iteration)")
