"""GPU memory sidecars of a run (docs/formats.md §8), joined to ``<run stem>.log``: ``.mem``
(``max device0 memory usage is: 12958302208``, bytes) and ``.gpu.csv``, nvidia-smi's or NVML's
samples with the header ``timestamp, index, memory.used [MiB], memory.total [MiB],
utilization.gpu [%], power.draw [W]`` (columns found by name; ``power.draw.average`` read as
``power.draw``; ``[N/A]`` cells give no observation). Also the inline nvidia-smi blocks that
OneFlow's scripts print into their logs, or a wrapper tees into a DLLogger log
(:func:`add_memory_blocks`)::

    utilization.gpu [%], memory.used [MiB]
    100 %, 11838 MiB
"""

from __future__ import annotations

import math
import re

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._fields import to_int
from analysis.parsers._scan import found
from analysis.parsers.base import LogParser, ParsedLog, iso_seconds
from analysis.problems import Problem

_MEM = re.compile(rb"^\s*max device\s*(\d+) memory usage is:\s*(\S*)\s*$", re.M | re.I)
_MEM_HINT = re.compile(rb"^\s*max device\s*\d+ memory usage is:", re.M | re.I)
_HEADER = re.compile(rb"^\s*timestamp\s*,\s*index\s*,[^\n]*memory\.used", re.M)
_COLUMNS = {"memory.used": (M.MEMORY_USED, M.MIB), "memory.total": (M.MEMORY_TOTAL, M.MIB),
            "utilization.gpu": (M.UTILIZATION, M.PERCENT), "power.draw": (M.POWER_DRAW, M.WATT)}
_CELL = re.compile(
    r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:MiB|MB|%|W|MHz)?\s*$")
#: The inline blocks' header (OneFlow logs), and the order their metrics are added in.
_HEADER_KEY = b"memory.used ["
_BLOCK_ORDER = ("utilization.gpu", "memory.used", "memory.total", "power.draw")
#: No GPU holds a petabyte: a sample above this (MiB) is a garbled cell, not a measurement.
MAX_MIB = float(1 << 30)
#: GPU indices are small; a longer number is a garbled cell (and overflows int64).
_MAX_INDEX = 1 << 20
#: No GPU board draws 10 kW (an H200 is capped at 700 W): a larger reading is a garbled cell.
MAX_WATTS = 10_000.0
_NA = re.compile(r"^\s*\[?(N/A|Not Supported|Unknown Error|GPU is lost)\]?\s*$", re.I)


def _impossible(values: dict[str, float]) -> str:
    """Why one sample row cannot be a measurement ('' when it can): memory above what any
    GPU holds or above the row's own total, utilisation above 100 %, power below zero or
    above what any board draws."""
    finite = {k: v for k, v in values.items() if math.isfinite(v)}  # inf: non_finite_value
    used, total = finite.get("memory.used"), finite.get("memory.total")
    for key in ("memory.used", "memory.total"):
        if finite.get(key, 0.0) > MAX_MIB:
            return f"{key} {values[key]:g} MiB is more than any GPU holds"
    if used is not None and total is not None and used > total:
        return f"memory.used {used:g} MiB is more than memory.total {total:g} MiB"
    if finite.get("utilization.gpu", 0.0) > 100:
        return f"utilization.gpu {values['utilization.gpu']:g} % is above 100 %"
    watts = finite.get("power.draw", 0.0)
    if not 0.0 <= watts <= MAX_WATTS:
        return f"power.draw {watts:g} W is not a power a GPU board draws"
    return ""


@register
class GpuMemory(LogParser):
    name = "gpu_memory"
    markers = (b'memory usage is', b'memory.used')
    framework = ""
    description = "GPU memory sidecars: .mem (max bytes) and nvidia-smi/NVML sampling CSV (power too)"
    sidecar = True

    max_score = 95

    @classmethod
    def sniff(cls, head: bytes) -> int:
        """95 for a head of samples; a head whose other lines outnumber its sample lines
        (``.mem`` lines, or lines of as many cells as the CSV header) is a log with an
        nvidia-smi block printed into it: 50, so that the family of its other lines wins,
        and this one only where none does."""
        header = _HEADER.search(head)
        if not (header or _MEM_HINT.search(head)):
            return 0
        cells = head.count(b",", header.start(), head.find(b"\n", header.start())) if header else -1
        lines = [ln for ln in head.split(b"\n") if ln.strip()]
        samples = sum(ln.count(b",") == cells or _MEM_HINT.match(ln) is not None for ln in lines)
        return 95 if 2 * samples >= len(lines) else 50

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        if _HEADER.search(log.data):
            self._csv(log, parsed)
        else:
            self._mem(log, parsed)
        return parsed

    def _mem(self, log: LogText, parsed: ParsedLog) -> None:
        matches, lines = found(log, _MEM)
        rows = []  # line, device, MiB
        for m, line in zip(matches, lines.tolist(), strict=True):
            try:
                v = float(m.group(2))
            except ValueError:
                parsed.problems.append(self._bad(log, line, "the byte count is not a number"))
                continue
            if math.isfinite(v) and v / 2**20 > MAX_MIB or len(m.group(1)) > 7:
                parsed.problems.append(self._bad(log, line, "a device or byte count no GPU has"))
                continue
            rows.append((line, int(m.group(1)), v / 2**20))
        if rows:
            good, dev, val = map(np.array, zip(*rows, strict=True))
            parsed.obs.add(line=good, metric=M.MEMORY_USED, value=val, phase=M.MEMORY,
                           unit=M.MIB, device=dev)
        seen = {r[0] for r in rows} | {p.line for p in parsed.problems}
        for ln in found(log, _MEM_HINT)[1].tolist():
            if ln not in seen:
                parsed.problems.append(self._bad(
                    log, ln, "expected 'max deviceN memory usage is: <bytes>'"))

    def _csv(self, log: LogText, parsed: ParsedLog) -> None:
        text = log.decode().split("\n")
        header_at = next(i for i, ln in enumerate(text) if _HEADER.match(ln.encode()))
        names = [c.strip().split(" [")[0].strip() for c in text[header_at].split(",")]
        col = {n: i for i, n in enumerate(names)}
        if "power.draw" not in col and "power.draw.average" in col:
            # nvidia-smi 535 on: power.draw.average is what power.draw gave (the board's
            # 1 s average on Ampere and newer); power.draw.instant is one reading, not used
            col["power.draw"] = col["power.draw.average"]
        cols = {k: col[k] for k in _COLUMNS if k in col}
        acc = {k: [] for k in cols}  # (line, device, timestamp, value)
        for i in range(header_at + 1, len(text)):
            raw = text[i]
            if not raw.strip() or _HEADER.match(raw.encode()):
                continue
            cells = raw.split(",")
            line = i + 1
            if len(cells) != len(names):
                parsed.problems.append(self._bad(log, line, f"{len(cells)} cells, header has {len(names)}"))
                continue
            ts = iso_seconds(cells[col["timestamp"]].strip().replace("/", "-"))
            device = to_int(cells[col["index"]])
            if device is not None and not 0 <= device < _MAX_INDEX:
                device = None
            if ts is None or device is None:
                parsed.problems.append(self._bad(log, line, "bad timestamp or GPU index"))
                continue
            values = {}
            for key, j in cols.items():
                m = _CELL.match(cells[j])
                if m:
                    values[key] = float(m.group(1))
                elif not _NA.match(cells[j]):  # N/A: the tool says there is no value
                    parsed.problems.append(self._bad(log, line, f"{key} {cells[j].strip()!r} is not a number"))
            why = _impossible(values)
            if why:
                parsed.problems.append(self._bad(log, line, why))
                continue
            for key, v in values.items():
                acc[key].append((line, device, ts, v))
        for key, rows in acc.items():
            if rows:
                ln, dev, ts, val = map(np.array, zip(*rows, strict=True))
                parsed.obs.add(line=ln, metric=_COLUMNS[key][0], value=val, phase=M.MEMORY,
                               unit=_COLUMNS[key][1], device=dev, timestamp=ts)

    @staticmethod
    def _bad(log: LogText, line: int, reason: str) -> Problem:
        return Problem(log.source, line, "bad_line", f"unreadable memory sample: {reason}",
                       log.line_text(line)[:300])


def add_memory_blocks(log: LogText, parsed: ParsedLog) -> None:
    """Add phase ``memory`` rows for every inline nvidia-smi CSV block of `log` to `parsed`
    (docs/formats.md §8): ``utilization``, ``memory_used``, ``memory_total``, ``power_draw``, one
    row per GPU, ``device`` its ``index`` column, else its position in the block. Where the log
    states its GPUs per node n, rows of GPUs from n on, and blocks with no index column and more
    than n rows, are not the run's: left out, said in ``foreign_gpu_sample`` problems. Rows
    keep their block's timestamp column, held against the run's time as a sidecar's samples
    are (:func:`analysis.gpu_samples.in_run_time`)."""
    devices = parsed.meta.get("gpus_per_node")
    other, unsaid = (set(), set()), (set(), set())
    for (metric, unit), cells in _read_blocks(log).items():
        lines, devs, vals, unindexed, stamps = np.array(cells, dtype=np.float64).T
        if isinstance(devices, int) and devices > 0:
            untold = unindexed > devices
            beyond = ~untold & (devs >= devices)
            other[0].update(lines[beyond].astype(int).tolist())
            other[1].update(devs[beyond].astype(int).tolist())
            unsaid[0].update(lines[untold].astype(int).tolist())
            unsaid[1].update(unindexed[untold].astype(int).tolist())
            mine = ~(untold | beyond)
            lines, devs, vals, stamps = lines[mine], devs[mine], vals[mine], stamps[mine]
            if not len(vals):
                continue
        parsed.obs.add(line=lines.astype(np.int64), metric=metric, value=vals,
                       phase=M.MEMORY, unit=unit, device=devs.astype(np.int64),
                       timestamp=stamps)
    if other[0]:
        lines = sorted(other[0])
        parsed.problems.append(Problem(
            log.source, lines[0], "foreign_gpu_sample",
            f"{len(lines):,} inline nvidia-smi row(s) of GPU {', '.join(map(str, sorted(other[1])))} "
            f"by their index column, beyond the {devices} GPU(s) a node the log states the run "
            f"used (GPUs 0 to {devices - 1}): left out of the run's memory peak (first on line "
            f"{lines[0]}, last on line {lines[-1]})"))
    if unsaid[0]:
        lines = sorted(unsaid[0])
        parsed.problems.append(Problem(
            log.source, lines[0], "foreign_gpu_sample",
            f"{len(lines):,} inline nvidia-smi row(s) in block(s) of "
            f"{', '.join(map(str, sorted(unsaid[1])))} GPUs with no index column, where the log "
            f"states the run used {devices} GPU(s) a node: nothing states which rows were its, "
            f"so none is counted in its memory peak (first on line {lines[0]}, last on line "
            f"{lines[-1]})"))


def _read_blocks(log: LogText) -> dict[tuple[str, str], list[tuple]]:
    """(metric, unit) -> (line, device, value, rows of its block when it has no index column,
    else 0, the row's timestamp column in unix seconds or NaN) of every cell of the log's
    blocks: a plain loop, a log holds one block or a few."""
    data, found = log.data, {}
    pos = data.find(_HEADER_KEY)
    while pos >= 0:
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        header = data[start:end].decode("utf-8", "replace")
        names = [c.strip().split(" [")[0] for c in header.split(",")]
        header_line = int(log.lines_at(np.array([start]))[0])
        pos, rows = end + 1, []
        while pos < len(data):
            nxt = data.find(b"\n", pos)
            nxt = len(data) if nxt < 0 else nxt
            cells = data[pos:nxt].decode("utf-8", "replace").split(",")
            if len(cells) != len(names) or _HEADER_KEY in data[pos:nxt]:
                break
            values = {n: float(m.group(1)) if (m := _CELL.match(c)) else np.nan
                      for n, c in zip(names, cells, strict=True)}
            if all(np.isnan(v) for n, v in values.items() if n in _COLUMNS):
                break
            idx = values.get("index", np.nan)
            when = iso_seconds(cells[names.index("timestamp")].strip().replace("/", "-")) \
                if "timestamp" in names else None
            rows.append((int(idx) if np.isfinite(idx) else len(rows), values,
                         np.nan if when is None else when))
            pos = nxt + 1
        size = 0 if "index" in names else len(rows)
        for row, (device, values, when) in enumerate(rows):
            for name in _BLOCK_ORDER:
                v, key = values.get(name), _COLUMNS[name]
                if v is not None and np.isfinite(v):
                    found.setdefault(key, []).append((header_line + 1 + row, device, v, size,
                                                      when))
        pos = data.find(_HEADER_KEY, pos)
    return found
