"""Inline ``nvidia-smi`` CSV blocks (OneFlow logs) as phase ``memory`` rows.

OneFlow's benchmark scripts run ``nvidia-smi --query-gpu=utilization.gpu,memory.used
--format=csv`` at step 10 and print its output into the log (docs/formats.md §8)::

    utilization.gpu [%], memory.used [MiB]
    100 %, 11838 MiB
    98 %, 11790 MiB

:func:`add_memory_blocks` turns every such block into phase ``memory`` rows.
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText
from analysis.parsers.base import ParsedLog
from analysis.problems import Problem

# --- inline nvidia-smi blocks ---------------------------------------------------------

_HEADER_KEY = b"memory.used ["
_CELL_NUM = re.compile(rb"^\s*([-+]?[0-9]+(?:\.[0-9]*)?)\s*(?:%|MiB|MB|W)?\s*$")
_COLUMNS = {
    b"utilization.gpu": (M.UTILIZATION, M.PERCENT),
    b"memory.used": (M.MEMORY_USED, M.MIB),
    b"memory.total": (M.MEMORY_TOTAL, M.MIB),
    b"power.draw": (M.POWER_DRAW, M.WATT),
}


def _cell(text: bytes) -> float:
    m = _CELL_NUM.match(text)
    return float(m.group(1)) if m else float("nan")


def add_memory_blocks(log: LogText, parsed: ParsedLog) -> None:
    """Add phase ``memory`` rows for every inline nvidia-smi CSV block of `log` to `parsed`
    (docs/formats.md §8): ``utilization``, ``memory_used``, ``memory_total``, ``power_draw``, one
    row per GPU, ``device`` its ``index`` column, else its position in the block. Where the log
    states its GPUs per node n, rows of GPUs from n on, and blocks with no index column and more
    than n rows, are not the run's: left out, said in ``foreign_gpu_sample`` problems."""
    devices = parsed.meta.get("gpus_per_node")
    other, unsaid = (set(), set()), (set(), set())
    for (metric, unit), cells in _read_blocks(log).items():
        lines, devs, vals, unindexed = np.array(cells, dtype=np.float64).T
        if isinstance(devices, int) and devices > 0:
            untold = unindexed > devices
            beyond = ~untold & (devs >= devices)
            other[0].update(lines[beyond].astype(int).tolist())
            other[1].update(devs[beyond].astype(int).tolist())
            unsaid[0].update(lines[untold].astype(int).tolist())
            unsaid[1].update(unindexed[untold].astype(int).tolist())
            mine = ~(untold | beyond)
            lines, devs, vals = lines[mine], devs[mine], vals[mine]
            if not len(vals):
                continue
        parsed.obs.add(line=lines.astype(np.int64), metric=metric, value=vals,
                       phase=M.MEMORY, unit=unit, device=devs.astype(np.int64))
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
    else 0) of every cell of the log's blocks: a plain loop, a log holds one block or a few."""
    data, found = log.data, {}
    pos = data.find(_HEADER_KEY)
    while pos >= 0:
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        names = [c.strip().split(b" [")[0] for c in data[start:end].split(b",")]
        header_line = int(log.lines_at(np.array([start]))[0])
        pos, rows = end + 1, []
        while pos < len(data):
            nxt = data.find(b"\n", pos)
            nxt = len(data) if nxt < 0 else nxt
            cells = data[pos:nxt].split(b",")
            if len(cells) != len(names) or _HEADER_KEY in data[pos:nxt]:
                break
            values = {n: _cell(c) for n, c in zip(names, cells, strict=True)}
            if all(np.isnan(v) for n, v in values.items() if n in _COLUMNS):
                break
            idx = values.get(b"index", float("nan"))
            rows.append((int(idx) if np.isfinite(idx) else len(rows), values))
            pos = nxt + 1
        size = 0 if b"index" in names else len(rows)
        for row, (device, values) in enumerate(rows):
            for name, key in _COLUMNS.items():
                v = values.get(name)
                if v is not None and np.isfinite(v):
                    found.setdefault(key, []).append((header_line + 1 + row, device, v, size))
        pos = data.find(_HEADER_KEY, pos)
    return found
