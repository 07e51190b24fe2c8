"""OneFlow-Benchmark ``Classification/cnns`` logs (ResNet50 and other CNNs), docs/formats.md §1.

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
from analysis.layout import normalize_model
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._fields import NUM, oneflow_dump_field
from analysis.parsers._rules import window_rule
from analysis.parsers._scan import floats, ints, line_pattern, read_lines
from analysis.parsers.base import LogParser, ParsedLog
from analysis.parsers.gpu_memory import add_memory_blocks

# --- the OneFlow header (banner + `name = value` dump), shared with oneflow_bert ------------

_BANNER = re.compile(rb"^Running ([^\s:]+): num_gpu_per_node = (\d+), num_nodes = (\d+)\.?[ \t]*$",
                     re.M)
_DUMP_LINE = re.compile(rb"^([A-Za-z_][A-Za-z0-9_]*) = ([^\n]*?)[ \t]*$", re.M)
_DUMP_END = re.compile(rb"^(?:-{10,}|Time stamp: )", re.M)
#: Bytes from the banner (or the file start) within which the dump is searched.
_HEADER_SPAN = 1 << 16

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

    def put(key, value, offset):
        if value is not None:
            parsed.state(key, value, int(log.lines_at([offset])[0]))

    if banner:
        put("model", normalize_model(banner.group(1).decode("utf-8", "replace")), banner.start())
        put("gpus_per_node", int(banner.group(2)), banner.start())
        put("num_nodes", int(banner.group(3)), banner.start())
    for m in _DUMP_LINE.finditer(data, begin, end):
        name = m.group(1).decode()
        value = m.group(2).decode("utf-8", "replace")
        parsed.parameters[name] = value
        field = oneflow_dump_field(name, value)
        if field is not None:
            put(*field, m.start())


# --- the family ---------------------------------------------------------------------------

_N = rb"(" + NUM + rb")"
_TS = rb"(?:[ \t]+([0-9]+(?:\.[0-9]*)?))?[ \t]*$"
_TRAIN_ANCHOR = b"train: epoch "
_VAL_ANCHOR = b"validation: epoch "
_SNIFF_TRAIN = re.compile(rb"\n(?:train|validation): epoch \d+, iter \d+, ")  # in "\n" + head
_TRAIN = line_pattern(
    _TRAIN_ANCHOR,
    rb"(\d+), iter (\d+), loss: " + _N + rb", top_1: " + _N + rb", top_[k5]: " + _N
    + rb", samples/s: " + _N + _TS)
_VAL = line_pattern(
    _VAL_ANCHOR,
    rb"(\d+), iter (\d+), (?:loss: " + _N + rb", )?top_1: " + _N + rb", top_[k5]: " + _N
    + rb", samples/s: " + _N + _TS)
#: (metric, unit) of the value groups 2.. of `_TRAIN` and `_VAL`.
_TRAIN_FIELDS = ((M.LOSS, M.NONE), M.canonical("top_1"), M.canonical("top_k"),
                 (M.THROUGHPUT, M.SAMPLES_PER_S))


def _add_lines(log, parsed, pattern, anchor, phase, fields):
    """Scan one line kind; `fields` = (group index, metric, unit) after epoch/iter groups."""
    if anchor not in log.data:  # no line can start with it: nothing to scan
        return
    g, lines = read_lines(log, parsed, "OneFlow CNN", pattern, anchor, 0, 1, every=True)
    shared = (lines, ints(g[:, 1]), ints(g[:, 0]), floats(g[:, -2]))  # one copy per block
    for col, metric, unit in fields:
        keep = g[:, col] != b""  # optional fields (validation loss) only where printed
        line, step, epoch, ts = shared if keep.all() else (c[keep] for c in shared)
        parsed.obs.add(line=line, metric=metric, value=floats(g[keep, col]), phase=phase,
                       unit=unit, step=step, epoch=epoch, timestamp=ts)


@register
class OneFlowCNNParser(LogParser):
    name = "oneflow_cnn"
    markers = (b'train: epoch', b'validation: epoch', b'running ', b'loss_print_every_n_iter')
    framework = "OneFlow"
    description = "OneFlow-Benchmark Classification/cnns (ResNet50) stdout logs"

    max_score = 95
    printed_global_rate = True

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF_TRAIN.search(b"\n" + head):
            return 95
        # its literal first: ``^`` under re.M is tried at every byte of the head
        banner = _BANNER.search(head) if b"Running " in head else None
        if banner and not banner.group(1).lower().startswith(b"bert"):
            return 90
        if b"\nloss_print_every_n_iter = " in head and b"\nmodel = " in head:
            return 60
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        read_header(log, parsed)
        # groups: 0 epoch, 1 iter, 2.. values, -2 timestamp, -1 bad line
        fields = [(col, *field) for col, field in enumerate(_TRAIN_FIELDS, start=2)]
        _add_lines(log, parsed, _TRAIN, _TRAIN_ANCHOR, M.TRAIN, fields)
        _add_lines(log, parsed, _VAL, _VAL_ANCHOR, M.VAL, fields)
        add_memory_blocks(log, parsed)
        return parsed

    late_markers = (b"memory.used [",)
    #: iterations 1 to 120 and the one after, printed one a line (and three spare)
    rule_lines = (_TRAIN_ANCHOR, 124)

    def dlperf(self, run: RunData) -> Estimate:
        return window_rule(run, 20, 120,
                           "DLPerf OneFlow CNN rule: global batch × (120 − 20) / "
                           "(ts(iter 120) − ts(iter 20)); printed samples/s ignored")

    def dlperf_has_read(self, parsed: ParsedLog) -> bool:
        """The rule reads the first lines of iterations 20 and 120, timestamped (else the
        older rule reads every line), and the training line after them."""
        lines, steps, ts = parsed.obs.train_lines(M.THROUGHPUT)
        at20, at120 = np.flatnonzero(steps == 20), np.flatnonzero(steps == 120)
        if not (len(at20) and len(at120) and np.isfinite(ts[[at20[0], at120[0]]]).all()):
            return False
        return bool((parsed.obs.train_lines()[0] > lines[at120[0]]).any())
