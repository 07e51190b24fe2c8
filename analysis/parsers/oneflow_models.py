"""OneFlow >= 0.5 ResNet-50 training logs (``Oneflow-Inc/models``), docs/formats.md §12: a
Megatron-style argument dump on rank 0, then every rank (``--metric-local``) prints::

    [rank:0] [train], epoch: 0/50, iter: 100/834, loss: 6.89712, top1: 0.00130, throughput: 1183.31 | 2021-11-23 10:41:02.123

``throughput`` is the printing rank's own samples/s, stored as ``throughput_per_device``. The
run's ``throughput`` (one a print, on the lowest rank's row) is the sum over the ranks where
every rank of the world printed (the world from the dump, else from a ``<N>n<G>g/`` path,
else the ranks 0..k-1, k >= 2, the file prints), or rank 0's value x that world size where
only rank 0 prints; none when the world size is unknown. ``step`` = epoch x iterations an
epoch + iter; ``timestamp`` the date suffix (UTC), else the ``timestamp:`` field.
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.layout import meta_from_path
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._scan import NUM, floats, ints, line_pattern, read_lines
from analysis.parsers._shapes import unix_seconds
from analysis.parsers.base import LogParser, ParsedLog
from analysis.parsers.gpu_memory import add_memory_blocks
from analysis.parsers.oneflow_gpt import read_argument_dump

_N = rb"(" + NUM + rb")"
_ANCHOR = b"["
_LINE = line_pattern(
    _ANCHOR,
    rb"(?:rank:)?(\d{1,9})\] \[(train|eval)\], epoch: (\d{1,9})/\d+, iter: (\d{1,9})/(\d{1,9}), "
    rb"loss: " + _N
    + rb", (?:lr: " + _N + rb", )?top1: " + _N + rb", throughput: " + _N
    + rb"(?:, timestamp: ([0-9]+(?:\.[0-9]*)?))?"
    + rb"(?: \| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?))?[ \t]*$",
    bad=rb"(?:rank:)?\d+\] \[(?:train|eval)\][^\n]*")
# groups: 0 rank, 1 job, 2 epoch, 3 iter, 4 iters per epoch, 5 loss, 6 lr, 7 top1,
# 8 throughput, 9 perf_counter, 10 date, 11 bad line
_SNIFF = re.compile(rb"^\[(?:rank:)?\d+\] \[(?:train|eval)\], epoch: \d+/\d+, iter: \d+/\d+, ",
                    re.M)
_DUMP_KEYS = (b"num_devices_per_node .", b"ofrecord_path .")
PER_DEVICE = "throughput_per_device"
_RULE = ("the printed throughput is each rank's own samples/s and the run's is their sum over "
         "all ranks")


def _world_size(parsed: ParsedLog, source: str) -> int | None:
    """Devices of the run: the argument dump's, else the DLPerf path's (``1n8g/``)."""
    stated = parsed.meta if parsed.meta.get("gpus_per_node") else meta_from_path(source)
    g, n = stated.get("gpus_per_node"), stated.get("num_nodes")
    return g * n if g and n else None


def _add(parsed: ParsedLog, g: np.ndarray, lines: np.ndarray, phase: str,
         world: int | None) -> None:
    rank, epoch, it, per_epoch = (ints(g[:, k]) for k in (0, 2, 3, 4))
    date = unix_seconds(g[:, 10].tolist())
    ts = np.where(np.isnan(date), floats(g[:, 9]), date)
    step = epoch * per_epoch + it if phase == M.TRAIN else it
    common = dict(line=lines, phase=phase, step=step, epoch=epoch, rank=rank, timestamp=ts)
    if phase == M.TRAIN:  # the eval line's loss is a placeholder 0
        parsed.obs.add(metric=M.LOSS, value=floats(g[:, 5]), unit=M.NONE, **common)
    has_lr = g[:, 6] != b""
    if has_lr.any():
        parsed.obs.add(line=lines[has_lr], metric=M.LR, value=floats(g[has_lr, 6]),
                       phase=phase, unit=M.NONE, step=step[has_lr], epoch=epoch[has_lr],
                       rank=rank[has_lr], timestamp=ts[has_lr])
    parsed.obs.add(metric=M.TOP1, value=floats(g[:, 7]), unit=M.NONE, **common)
    printed = floats(g[:, 8])
    parsed.obs.add(metric=PER_DEVICE, value=printed, unit=M.SAMPLES_PER_S, **common)
    at, value = _run_figures(rank, epoch, step, printed, world)
    if len(at):
        parsed.obs.add(line=lines[at], metric=M.THROUGHPUT, value=value, phase=phase,
                       unit=M.SAMPLES_PER_S, step=step[at], epoch=epoch[at], rank=rank[at],
                       timestamp=ts[at])


def _run_figures(rank: np.ndarray, epoch: np.ndarray, step: np.ndarray, printed: np.ndarray,
                 world: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The run's throughput of each print (module docstring): row positions (the lowest
    rank's row of the print) and values. Empty when the world size is not known."""
    seen = np.unique(rank)
    if world is None and len(seen) >= 2 and (seen == np.arange(len(seen))).all():
        world = len(seen)  # no dump: every rank 0..k-1 printed its own line
    if world is None or seen.min() != 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if len(seen) == 1:  # only rank 0 printed (--metric-local False)
        rows = np.arange(len(rank))
        return rows, printed * world
    # a print = one (epoch, step) and its n-th occurrence per rank (a log appended twice
    # holds two prints of each step, each a whole one)
    order = np.lexsort((step, epoch, rank))
    key = np.stack([rank, epoch, step], axis=1)[order]
    new = np.concatenate([[True], (key[1:] != key[:-1]).any(axis=1)])
    start = np.maximum.accumulate(np.where(new, np.arange(len(new)), 0))
    nth = np.empty(len(rank), dtype=np.int64)
    nth[order] = np.arange(len(new)) - start
    _, group = np.unique(np.stack([epoch, step, nth], axis=1), axis=0, return_inverse=True)
    group = group.ravel()
    pairs = np.unique(np.stack([group, rank], axis=1), axis=0)  # distinct ranks per print
    in_world = pairs[pairs[:, 1] < world]
    full = (np.bincount(group) == world) & (
        np.bincount(in_world[:, 0], minlength=group.max() + 1) == world)
    first = np.full(len(full), len(rank))  # the row of rank 0 (in the world, so present)
    np.minimum.at(first, group, np.where(rank == 0, np.arange(len(rank)), len(rank)))
    total = np.bincount(group, weights=printed)
    return first[full], total[full]


@register
class OneFlowModelsParser(LogParser):
    name = "oneflow_models"
    markers = (b"[train], epoch: ", b"[eval], epoch: ", b"num_devices_per_node .")
    framework = "OneFlow"
    description = "OneFlow >= 0.5 ResNet-50 logs (Oneflow-Inc/models): [rank:N] [train] lines"
    no_throughput = (f"{_RULE}, but the world size is unknown", "missing_metadata")
    #: the run's throughput rows are the ranks' own rates summed (or one rank's x the world
    #: size): samples/s of all devices over the interval
    printed_global_rate = True

    def why_no_throughput(self, run) -> tuple[str, str]:
        """What the run's lines miss of the module docstring's rule: rank 0's lines, the
        world size, or a print of every rank of the world."""
        rank = run.columns()["rank"]
        seen = np.unique(rank[np.isfinite(rank)]).astype(np.int64).tolist()
        printed = f"rank{'s' * (len(seen) != 1)} {', '.join(map(str, seen[:8]))}" + (
            ", …" if len(seen) > 8 else "")
        world = run.meta.get("num_devices")
        world = None if world is None or world != world else int(world)  # NaN/NA: unknown
        if seen[:1] == [0] and world is None:
            return (f"{self.no_throughput[0]}: no argument dump or <N>n<G>g path states it, "
                    f"and the log prints {printed}, not every rank 0..k-1 (k >= 2)",
                    self.no_throughput[1])
        if world and set(range(world)) <= set(seen):
            why = f"no print of the log carries the lines of all {world} ranks"
        else:
            why = (f"the log prints the lines of {printed} only"
                   + (f" of the {world} of the world" if world else "")
                   + (", not rank 0's" if seen[:1] != [0] else ""))
        return f"{_RULE}: {why}", "method_fallback"

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF.search(head):
            return 95
        if b"-- arguments --" in head and all(k in head for k in _DUMP_KEYS):
            return 80  # the dump alone (a log that died before training)
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        read_argument_dump(log, parsed)
        g, lines = read_lines(log, parsed, "OneFlow models", _LINE, _ANCHOR)
        for job, phase in ((b"train", M.TRAIN), (b"eval", M.VAL)):
            sel = g[:, 1] == job
            if sel.any():
                _add(parsed, g[sel], lines[sel], phase, _world_size(parsed, log.source))
        add_memory_blocks(log, parsed)
        return parsed
