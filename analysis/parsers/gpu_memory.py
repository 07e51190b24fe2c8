"""GPU memory sidecars of a run (docs/formats.md §8), joined to ``<run stem>.log``: ``.mem``
(``max device0 memory usage is: 12958302208``, bytes) and ``.gpu.csv``, nvidia-smi's or NVML's
samples with the header ``timestamp, index, memory.used [MiB], memory.total [MiB],
utilization.gpu [%], power.draw [W]`` (columns found by name; ``power.draw.average`` read as
``power.draw``; ``[N/A]`` cells give no observation).
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
_CELL = re.compile(r"^\s*([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*(MiB|%|W|MHz)?\s*$")
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
        return 95 if (_MEM_HINT.search(head) or _HEADER.search(head)) else 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        if _HEADER.search(log.data):
            self._csv(log, parsed)
        else:
            self._mem(log, parsed)
        return parsed

    def _mem(self, log: LogText, parsed: ParsedLog) -> None:
        matches, lines = found(log, _MEM)
        good_l, dev, val = [], [], []
        for m, line in zip(matches, lines.tolist(), strict=True):
            try:
                v = float(m.group(2))
            except ValueError:
                parsed.problems.append(self._bad(log, line, "the byte count is not a number"))
                continue
            if math.isfinite(v) and v / 2**20 > MAX_MIB or len(m.group(1)) > 7:
                parsed.problems.append(self._bad(log, line, "a device or byte count no GPU has"))
                continue
            good_l.append(line)
            dev.append(int(m.group(1)))
            val.append(v / 2**20)
        if val:
            parsed.obs.add(line=np.array(good_l), metric=M.MEMORY_USED, value=np.array(val),
                           phase=M.MEMORY, unit=M.MIB, device=np.array(dev))
        seen = set(good_l) | {p.line for p in parsed.problems}
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
        acc = {k: ([], [], [], []) for k in cols}  # line, device, timestamp, value
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
                for lst, x in zip(acc[key], (line, device, ts, v), strict=True):
                    lst.append(x)
        for key, (ln, dev, ts, val) in acc.items():
            metric, unit = _COLUMNS[key]
            if val:
                parsed.obs.add(line=np.array(ln), metric=metric, value=np.array(val), phase=M.MEMORY,
                               unit=unit, device=np.array(dev), timestamp=np.array(ts))

    @staticmethod
    def _bad(log: LogText, line: int, reason: str) -> Problem:
        return Problem(log.source, line, "bad_line", f"unreadable memory sample: {reason}",
                       log.line_text(line)[:300])
