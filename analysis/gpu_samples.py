"""Which GPU samples of a sidecar belong to its run: those of the GPUs the run used, taken
while it ran.

A sampling file beside a log (``<stem>.gpu.csv``: timestamped, nvidia-smi indices) may hold
samples of a GPU the run did not use (another job's 70 GB on a shared node) or taken long
before or after it (a file left from an earlier run, a clock a year off). They are left out
of the run's observations, so of its memory peak and energy, each cause said in one
``foreign_gpu_sample`` problem per file.

- The run's GPUs (:func:`run_gpus`): ``CUDA_VISIBLE_DEVICES`` of the node's environment
  record, else (node 0) of the done marker; UUIDs mapped to indices through the record's
  ``gpus``. Unknown when neither says, an entry cannot be placed, or the node's GPUs differ
  in model without ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (CUDA then numbers them fastest first).
  Unknown, or more GPUs named than the run used, and a file sampling more GPUs than it used:
  none of its timed samples is the run's. Samples without a time (``.mem`` files, numbered
  by the framework) are not checked.
- The run's time (:func:`run_span`): from the start its done marker implies (else
  :data:`LEAD_S` before the log's first timestamped line), or from the end of the last pause
  of more than :data:`GAP_S` in the samples before that line, to :data:`TAIL_S` after its
  last one. Both clocks are the node's wall clock, compared as printed; a log without
  dated timestamps leaves the time unchecked, said in a note unless the samples are a
  sidecar beside the run's done marker. The nvidia-smi blocks a wrapper tees into the log
  itself are held to the same time (:func:`in_run_time`).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from analysis import metrics as M
from analysis.checks import select_rows
from analysis.fsutil import read_json_object
from analysis.layout import node_index, run_stem
from analysis.parsers._shapes import dated
from analysis.parsers.base import Observations, ParsedLog
from analysis.problems import Problem

#: Seconds before a log's first timestamped line that still belong to its run, when no done
#: marker states how long the run took.
LEAD_S = 900.0
#: A pause between samples (seconds) longer than this, before the log's first line, ends
#: the run's start-up: the samples before it are another sampling (nvidia-smi samples every
#: 500 ms while the run is alive, the suite's sidecars never more than 0.6 s apart; 20
#: missed samples leave room for a query stalled by the driver, not for a retry).
GAP_S = 10.0
#: Seconds after the last timestamped line that still belong to the run (the workload's
#: shutdown; the agent stops the sampler once it has exited), and the slack before the start
#: a done marker implies.
TAIL_S = 30.0


def _marker(log_path: Path) -> dict:
    """The run's done marker ({} when there is none)."""
    return read_json_object(log_path.parent / f"{run_stem(log_path)}.done") or {}


def run_gpus(log_path: Path, node: int = 0, marker: dict | None = None
             ) -> tuple[frozenset[int] | None, str]:
    """(nvidia-smi indices of the GPUs the run used on `node`, the file that says so);
    (None, "") when nothing says. `marker`: the run's done marker, when already read."""
    folder, stem = log_path.parent, run_stem(log_path)
    record_path = folder / f"{stem}.node{node}.env.json"
    record = read_json_object(record_path) or {}
    sources = [(record_path, record)]
    if node == 0:
        sources.append((folder / f"{stem}.done", _marker(log_path) if marker is None else marker))
    for path, data in sources:
        env = (data or {}).get("env")
        visible = env.get("CUDA_VISIBLE_DEVICES") if isinstance(env, dict) else None
        if isinstance(visible, str):
            return _indices(visible, record, env.get("CUDA_DEVICE_ORDER")), path.name
    return None, ""


def _indices(visible: str, record: dict, order) -> frozenset[int] | None:
    """CUDA_VISIBLE_DEVICES as nvidia-smi indices; None when an entry cannot be placed."""
    gpus = [g for g in record.get("gpus") or [] if isinstance(g, dict)]
    if order != "PCI_BUS_ID" and len({str(g.get("name")) for g in gpus}) > 1:
        return None
    uuids = {str(g.get("uuid")): g.get("index") for g in gpus}
    out = set()
    for entry in (e.strip() for e in visible.split(",") if e.strip()):
        index = int(entry) if entry.isdigit() and len(entry) < 6 else uuids.get(entry)
        if not isinstance(index, int):
            return None
        out.add(index)
    return frozenset(out)


def run_span(main: ParsedLog | None, log_path: Path, marker: dict | None = None
             ) -> tuple[float, float] | None:
    """(earliest, latest) time a sample of the run may carry; None when the log has no
    timestamps. `marker`: the run's done marker, when already read."""
    stamps = _log_stamps(main)
    if stamps is None:
        return None
    took = (_marker(log_path) if marker is None else marker).get("duration_s")
    lead = float(took) + TAIL_S if isinstance(took, (int, float)) and math.isfinite(took) \
        and 0 <= took < 1e7 else LEAD_S
    return stamps[0] - lead, stamps[1] + TAIL_S


def _log_stamps(main: ParsedLog | None) -> tuple[float, float] | None:
    """(first, last) timestamp of the log's lines; None when it has none."""
    stamps = [b["timestamp"] for b in (main.obs.blocks if main else ())
              if not (isinstance(b["phase"], str) and b["phase"] == M.MEMORY)]
    stamps = np.concatenate(stamps) if stamps else np.empty(0)
    stamps = stamps[dated(stamps)]
    return (float(stamps.min()), float(stamps.max())) if stamps.size else None


def _unbroken_start(parsed: ParsedLog, first: float, lower: float) -> tuple[float, float]:
    """The earliest time from `lower` on that the sidecar's samples reach back to from the
    log's `first` line without a pause longer than GAP_S: samples before such a pause are
    another sampling (an earlier attempt appended to the file), not this run's start-up.
    Returns (that time, the pause's seconds; 0 where there is none)."""
    ts = [b["timestamp"][_memory(b)] for b in parsed.obs.blocks]
    ts = np.unique(np.concatenate(ts)) if ts else np.empty(0)
    ts = ts[np.isfinite(ts) & (ts >= lower)]
    at = int(np.searchsorted(ts, first))
    if at == 0:
        return lower, 0.0
    gaps = np.flatnonzero(np.diff(ts[:at + 1]) > GAP_S)
    if not len(gaps):
        return lower, 0.0
    return float(ts[gaps[-1] + 1]), float(ts[gaps[-1] + 1] - ts[gaps[-1]])


def own_samples(sidecar: Path, parsed: ParsedLog, main: ParsedLog | None, log_path: Path,
                run_id: str, problems: list[Problem], used: int | None = None) -> ParsedLog:
    """`parsed` (a sidecar's read) less the samples that are not its run's (see the module);
    a `foreign_gpu_sample` problem appended to `problems` for each cause that left any out.
    `used`: how many GPUs the run used on the node (None: unknown)."""
    marker = _marker(log_path)
    gpus, said_by = run_gpus(log_path, node_index(sidecar), marker)
    if isinstance(used, int) and (gpus is None or len(gpus) > used):
        # nothing names the run's GPUs, or CUDA_VISIBLE_DEVICES names more than it used (a
        # launcher exporting the whole node): which of them were its is not stated
        why = ("no CUDA_VISIBLE_DEVICES in an environment record or done marker" if gpus is None
               else f"{said_by} gives CUDA_VISIBLE_DEVICES={','.join(map(str, sorted(gpus)))}, "
                    f"{len(gpus)} GPUs, not which {used} were its")
        unsure = _unsure(sidecar, parsed, used, run_id, problems, why)
        if unsure is not None:
            return unsure
    kept, other_gpu = Observations(), {}
    for block in parsed.obs.blocks if gpus is not None else ():
        mine = np.isin(block["device"], list(gpus)) | (block["device"] < 0) \
            | ~np.isfinite(block["timestamp"])
        _note(other_gpu, block, ~mine)
        _keep(kept, block, mine)
    if other_gpu:
        problems.append(_problem(sidecar, run_id, other_gpu,
                                 f"of GPU {_list(other_gpu['devices'])}, which the run did not "
                                 f"use ({said_by} gives CUDA_VISIBLE_DEVICES="
                                 f"{','.join(map(str, sorted(gpus)))})"))
        parsed = dataclasses.replace(parsed, obs=kept)
    return in_run_time(sidecar, parsed, main, log_path, run_id, problems, marker)


def in_run_time(source: Path, parsed: ParsedLog, main: ParsedLog | None, log_path: Path,
                run_id: str, problems: list[Problem], marker: dict | None = None) -> ParsedLog:
    """`parsed` less its timed GPU samples (phase memory: a sidecar's, or the nvidia-smi
    blocks of the log itself, `parsed` then being `main`) taken outside :func:`run_span`, said
    in a `foreign_gpu_sample` problem on `source`. Where the log has no dated timestamps
    (none, or LiBai's year-less ones), the samples are kept and a note says their time was
    not checked, unless they are a sidecar beside the run's done marker (the suite's agent
    samples while the run runs)."""
    if M.MEMORY not in parsed.obs.phases():  # no GPU samples (most logs): nothing to hold
        return parsed
    timed = [np.isfinite(b["timestamp"]) & _memory(b) for b in parsed.obs.blocks]
    if not any(t.any() for t in timed):
        return parsed
    marker = _marker(log_path) if marker is None else marker
    span = run_span(main, log_path, marker)
    if span is None and source != log_path and marker:
        return parsed  # the suite's own sampling: its agent ran the sampler with the run
    if span is None:
        found = {}
        for block, rows in zip(parsed.obs.blocks, timed, strict=True):
            _note(found, block, rows)
        problems.append(Problem(
            str(source), min(found["lines"]), "foreign_gpu_sample",
            f"{len(found['lines']):,} timed GPU sample line(s), where the log has no dated "
            "timestamps (none, or no year) to hold their time against: whether they were "
            "taken while the run ran is not checked; kept", run_id=run_id))
        return parsed
    start, pause = _unbroken_start(parsed, _log_stamps(main)[0], span[0])
    span = (start, span[1])
    kept, out_of_time = Observations(), {}
    for block, rows in zip(parsed.obs.blocks, timed, strict=True):
        ts = block["timestamp"]
        outside = rows & ~((ts >= span[0]) & (ts <= span[1]))
        _note(out_of_time, block, outside)
        _keep(kept, block, ~outside)
    if not out_of_time:
        return parsed
    start, end = (np.datetime64(int(round(t)), "s").astype(str).replace("T", " ") for t in span)
    after = (f"; it begins where the samples resume after a pause of {pause:,.0f} s, the "
             "samples before it another sampling") if pause else ""
    problems.append(_problem(source, run_id, out_of_time,
                             f"taken outside the run's time ({start} to {end}, from its "
                             f"log's timestamps{after})"))
    return dataclasses.replace(parsed, obs=kept)


#: What a GPU sampler measures (nvidia-smi, NVML), not a framework's own allocator peak.
_SAMPLED = (M.MEMORY_USED, M.MEMORY_TOTAL, M.UTILIZATION, M.POWER_DRAW)


def _memory(block: dict) -> np.ndarray:
    """Where `block`'s rows are GPU samples (phase memory, of a sampler's metric)."""
    phase, metric = block["phase"], block["metric"]
    rows = np.full(block["n"], phase == M.MEMORY) if isinstance(phase, str) \
        else np.asarray(phase == M.MEMORY, dtype=bool)
    return rows & (np.full(block["n"], metric in _SAMPLED) if isinstance(metric, str)
                   else np.isin(metric, _SAMPLED))


def _keep(kept: Observations, block: dict, rows: np.ndarray) -> None:
    """Append `block`'s rows that `rows` selects to `kept`."""
    if rows.all():
        kept.blocks.append(block)
    elif rows.any():
        kept.blocks.append(select_rows(block, rows))


def _unsure(sidecar: Path, parsed: ParsedLog, used: int, run_id: str,
            problems: list[Problem], why: str) -> ParsedLog | None:
    """`parsed` less its timestamped samples when they are of more GPUs than the run used
    (`used`) and nothing says which were its (`why`; another job's 70 GB would be its
    peak); None when they are not."""
    devices = {d for b in parsed.obs.blocks
               for d in b["device"][np.isfinite(b["timestamp"]) & (b["device"] >= 0)].tolist()}
    if len(devices) <= used:
        return None
    kept, found = Observations(), {}
    for block in parsed.obs.blocks:
        sampled = np.isfinite(block["timestamp"]) & (block["device"] >= 0)
        _note(found, block, sampled)
        if not sampled.any():
            kept.blocks.append(block)
        elif not sampled.all():
            kept.blocks.append(select_rows(block, ~sampled))
    problems.append(_problem(sidecar, run_id, found,
                             f"of {len(devices)} GPUs ({_list(devices)}) where the run used "
                             f"{used} on the node, and nothing states which were its "
                             f"({why})"))
    return dataclasses.replace(parsed, obs=kept)


def _note(found: dict, block: dict, rows: np.ndarray) -> None:
    """Count the sample lines (and GPUs) of `block` that `rows` selects into `found`."""
    if rows.any():
        found.setdefault("lines", set()).update(block["line"][rows].tolist())
        found.setdefault("devices", set()).update(block["device"][rows].tolist())


def _problem(sidecar: Path, run_id: str, found: dict, what: str) -> Problem:
    lines = sorted(found["lines"])
    return Problem(str(sidecar), lines[0], "foreign_gpu_sample",
                   f"{len(lines):,} sample line(s) {what}: left out of the run's memory peak "
                   f"and energy (first on line {lines[0]}, last on line {lines[-1]})",
                   run_id=run_id)


def _list(devices: set[int]) -> str:
    return ", ".join(map(str, sorted(devices)))
