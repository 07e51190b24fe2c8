"""OneFlow-Benchmark ``Classification/cnns`` logs (ResNet50 and other CNNs), FORMATS.md §1.

A log starts with a banner (``Running resnet50: num_gpu_per_node = 8, num_nodes = 1.``),
one ``name = value`` line per argument, a dashed line and ``Time stamp: …``. Then::

    train: epoch 0, iter 20, loss: 6.505637, top_1: 0.000000, top_k: 0.000000, samples/s: 288.088
    train: epoch 0, iter 120, loss: 1.050499, …, samples/s: 5917.583 1597933977.6064055
    validation: epoch 0, iter 100, top_1: 0.074620, top_k: 0.194120, samples/s: 2014.683

The header helpers here are shared with :mod:`analysis.parsers.oneflow_bert` (same dump).
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.layout import normalize_model, normalize_precision
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._nvsmi import NUM, add_memory_blocks, floats, ints, line_pattern, scan
from analysis.parsers.base import LogParser, ParsedLog, parse_bool
from analysis.problems import Problem

# --- the OneFlow header (banner + `name = value` dump), shared with oneflow_bert ------------

_BANNER = re.compile(rb"^Running ([^\s:]+): num_gpu_per_node = (\d+), num_nodes = (\d+)\.?[ \t]*$",
                     re.M)
_DUMP_LINE = re.compile(rb"^([A-Za-z_][A-Za-z0-9_]*) = ([^\n]*?)[ \t]*$", re.M)
_DUMP_END = re.compile(rb"^(?:-{10,}|Time stamp: )", re.M)
_HEADER_SPAN = 1 << 16
_GPUS_KEYS = ("gpu_num_per_node", "num_gpu_per_node", "device_num_per_node", "num_gpus_per_node")
_FP16_KEYS = ("use_fp16", "fp16", "use_amp", "amp")


def _int(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def read_header(log: LogText, parsed: ParsedLog) -> None:
    """Fill `parsed.parameters`, `meta` and `meta_lines` from the OneFlow argument dump.

    The dump runs from the banner (or the file start when there is none) to the dashed line
    that precedes ``Time stamp:``; only the first 64 KiB are searched, it is small.
    """
    data = log.data
    banner = _BANNER.search(data, 0, _HEADER_SPAN)
    begin = banner.end() if banner else 0
    stop = _DUMP_END.search(data, begin, begin + _HEADER_SPAN)
    end = stop.start() if stop else min(len(data), begin + _HEADER_SPAN)
    meta, where = parsed.meta, parsed.meta_lines

    def put(key, value, offset):
        if value is not None:
            meta[key] = value
            where[key] = int(log.lines_at(np.array([offset]))[0])

    if banner:
        put("model", normalize_model(banner.group(1).decode("utf-8", "replace")), banner.start())
        put("gpus_per_node", int(banner.group(2)), banner.start())
        put("num_nodes", int(banner.group(3)), banner.start())
    for m in _DUMP_LINE.finditer(data, begin, end):
        name = m.group(1).decode()
        value = m.group(2).decode("utf-8", "replace")
        parsed.parameters[name] = value
        if name == "model":
            put("model", normalize_model(value), m.start())
        elif name == "batch_size_per_device":
            put("batch_size_per_device", _int(value), m.start())
        elif name == "num_nodes":
            put("num_nodes", _int(value), m.start())
        elif name in _GPUS_KEYS:
            put("gpus_per_node", _int(value), m.start())
        elif name in _FP16_KEYS:
            flag = parse_bool(value)
            put("precision", None if flag is None else ("amp" if flag else "fp32"), m.start())
        elif name in ("precision", "dtype"):
            put("precision", normalize_precision(value), m.start())


def bad_lines(log: LogText, lines: np.ndarray, family: str, parsed: ParsedLog) -> None:
    """One `bad_line` problem per line number in `lines`."""
    for ln in lines.tolist():
        parsed.problems.append(Problem(
            log.source, int(ln), "bad_line",
            f"looks like a {family} metric line but does not have the documented fields "
            "(truncated or garbled)", log.line_text(int(ln))))


# --- the DLPerf timestamp-window rule, shared with oneflow_bert ---------------------------

def window_rule(run: RunData, first: int, last: int, rule: str) -> Estimate:
    """global batch × (last − first) / (ts(last) − ts(first)), steps as stored (1-based).

    Without timestamps at those steps, falls back to the older rule of seed 001 (mean of
    the printed throughputs after the first) and says so with `missing_timestamps`.
    """
    steps, ts = run.clock_arrays()
    if steps.size == 0:
        return Estimate.fail("the log has no training lines, so there is no window to measure",
                             kind="no_training_lines", method=rule)
    gbs = float(run.global_batch_size)
    if not np.isfinite(gbs):
        return Estimate.fail("the global batch size is unknown (nodes, GPUs or batch size "
                             "missing)", kind="missing_metadata", method=rule)
    uniq, first_at = np.unique(steps, return_index=True)  # first line of each step
    at = dict(zip(uniq.tolist(), first_at.tolist()))
    if first not in at or last not in at:
        return Estimate.fail(
            f"the rule needs training lines at iterations {first} and {last}; the log has "
            f"{len(uniq)} printed iterations, the last at iteration {int(uniq.max())}",
            kind="truncated", method=rule)
    t0, t1 = float(ts[at[first]]), float(ts[at[last]])
    if np.isfinite(t0) and np.isfinite(t1) and t1 > t0:
        return Estimate(throughput=gbs * (last - first) / (t1 - t0), method=rule,
                        iterations=last - first, latency=(t1 - t0) / (last - first))
    if np.isfinite(t0) and np.isfinite(t1):
        why = f"the timestamps at iterations {first} and {last} do not increase ({t0} → {t1})"
    elif np.isfinite(ts).any():
        why = f"the lines of iterations {first} and {last} do not both carry a timestamp"
    else:
        why = "the log prints no timestamps (a version before 2020-08-21)"
    return _older_rule(run, f"{why}, so the DLPerf rule ({rule}) is undefined")


def _older_rule(run: RunData, why: str) -> Estimate:
    method = ("older DLPerf rule (seed 001): mean of the printed throughputs, the first "
              "(start-up) one discarded")
    values = run.series(M.THROUGHPUT).drop_duplicates("line")["value"].to_numpy(dtype=float)
    if len(values) < 2:
        return Estimate.fail(f"{why}; the older rule needs at least two printed throughputs, "
                             f"the log has {len(values)}", kind="truncated", method=method)
    kept = values[1:]
    return Estimate(throughput=float(np.nanmean(kept)), method=method, iterations=len(kept),
                    problem_kind="missing_timestamps",
                    problem=f"{why}; used the older rule on {len(kept)} printed values")


# --- the family ---------------------------------------------------------------------------

_TS = rb"(?:[ \t]+([0-9]+(?:\.[0-9]*)?))?[ \t]*$"
_N = rb"(" + NUM + rb")"
_TRAIN_ANCHOR = b"train: epoch "
_TRAIN = line_pattern(
    _TRAIN_ANCHOR,
    rb"(\d+), iter (\d+), loss: " + _N + rb", top_1: " + _N + rb", top_[k5]: " + _N
    + rb", samples/s: " + _N + _TS)
_VAL_ANCHOR = b"validation: epoch "
_VAL = line_pattern(
    _VAL_ANCHOR,
    rb"(\d+), iter (\d+), (?:loss: " + _N + rb", )?top_1: " + _N + rb", top_[k5]: " + _N
    + rb", samples/s: " + _N + _TS)
_SNIFF_TRAIN = re.compile(rb"^(?:train|validation): epoch \d+, iter \d+, ", re.M)


def _add_lines(log, parsed, pattern, anchor, phase, fields):
    """Scan one line kind; `fields` = (group index, metric, unit) after epoch/iter groups."""
    groups, lines = scan(log, pattern, anchor)
    if not len(groups):
        return
    ok = groups[:, 0] != b""
    bad_lines(log, lines[~ok], "OneFlow CNN", parsed)
    g, lines = groups[ok], lines[ok]
    if not len(g):
        return
    epoch, step = ints(g[:, 0]), ints(g[:, 1])
    ts = floats(g[:, -2])
    for col, metric, unit in fields:
        values = floats(g[:, col])
        keep = g[:, col] != b""  # optional fields (validation loss) only where printed
        if not keep.any():
            continue
        parsed.obs.add(line=lines[keep], metric=metric, value=values[keep], phase=phase,
                       unit=unit, step=step[keep], epoch=epoch[keep], timestamp=ts[keep])


@register
class OneFlowCNNParser(LogParser):
    name = "oneflow_cnn"
    markers = (b'train: epoch', b'validation: epoch', b'running ', b'loss_print_every_n_iter')
    framework = "OneFlow"
    description = "OneFlow-Benchmark Classification/cnns (ResNet50) stdout logs"

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF_TRAIN.search(head):
            return 95
        banner = _BANNER.search(head)
        if banner and not banner.group(1).lower().startswith(b"bert"):
            return 90
        if b"\nloss_print_every_n_iter = " in head and b"\nmodel = " in head:
            return 60
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        read_header(log, parsed)
        top1, topk = M.canonical("top_1"), M.canonical("top_k")
        loss = (M.LOSS, M.NONE)
        tput = (M.THROUGHPUT, M.SAMPLES_PER_S)
        # groups: 0 epoch, 1 iter, 2.. values, -2 timestamp, -1 bad line
        _add_lines(log, parsed, _TRAIN, _TRAIN_ANCHOR, M.TRAIN,
                   [(2, *loss), (3, *top1), (4, *topk), (5, *tput)])
        _add_lines(log, parsed, _VAL, _VAL_ANCHOR, M.VAL,
                   [(2, *loss), (3, *top1), (4, *topk), (5, *tput)])
        add_memory_blocks(log, parsed.obs)
        return parsed

    def dlperf(self, run: RunData) -> Estimate:
        return window_rule(run, 20, 120,
                           "DLPerf OneFlow CNN rule: global batch × (120 − 20) / "
                           "(ts(iter 120) − ts(iter 20)); printed samples/s ignored")
