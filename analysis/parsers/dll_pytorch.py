"""NVIDIA DeepLearningExamples PyTorch DLLogger stdout (docs/formats.md §5, §6).

Lines ``DLL <datetime> - <step> <metric> : <value> <unit> …`` with steps
``Epoch: E Iteration: I`` (training), ``Epoch: E Iteration: I Validation Iteration: V``
(validation, stored with step I), ``Epoch: E`` (epoch summary), ``Summary:`` / ``()``
(end of run) and ``PARAMETER`` (argument dump → parameters and run fields). Both the 2020
shape (``train.total_ips : 267.44 img/s``) and the current one (``train.compute_ips``,
``images/s``, literal ``None`` units) are read; ``*_ips`` are global samples/s.
Line reading is shared with the TensorFlow family (:mod:`analysis.parsers._dllogger`).

DLPerf rule (``extract_pytorch_logs_time.py``): skip training lines with Iteration ≤ 5;
counting the remaining training lines from 1, throughput = global batch × 100 /
(t(line 120) − t(line 20)), rounded to 2 decimals, the difference taken in exact
microseconds like the script's ``datetime`` subtraction (``exact_elapsed_seconds``).
Lines 20 to 120 (and one line on either side) must not go back in time or in steps, else
there is no figure (``RunData.window_fault``).
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData, exact_elapsed_seconds
from analysis.logtext import LogText
from analysis.parsers import _dllogger as dll
from analysis.parsers import register
from analysis.parsers.base import LogParser, ParsedLog

_DT = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? - "
# line-start patterns begin with a newline (searched in "\n" + head): a literal prefix is
# searched for fast, where ``^`` with re.M is tried at every byte
_PT_STEP = re.compile(rb"\nDLL " + _DT + rb"(?:Epoch: \d+ |Summary:)")
_PARAM = re.compile(rb"\nDLL " + _DT + rb"PARAMETER ")
_TF_STEP = re.compile(rb"\nDLL " + _DT + rb"(?:\(|Iteration: )")
# a non-master rank's log of the PyTorch ConvNets example has its text but no DLL lines
_NON_MASTER = re.compile(rb"\n(?:=> creating model '|RUNNING EPOCHS FROM )")

_RULE_SKIP = 5  # iterations up to this one are not counted
_RULE_LINES = 120  # the counted line the window ends on
RULE = ("DLPerf PyTorch rule: training lines with Iteration > 5, lines 20 and 120 of them; "
        "global batch x 100 / (t120 - t20), rounded to 2 decimals")


def pytorch_rule(run: RunData) -> Estimate:
    """The DLPerf PyTorch DLL rule on a run's training lines (shared with the JSON backend)."""
    steps, ts, lines = run.clock_arrays()
    n_all = len(steps)
    after = steps > 5
    steps, ts, lines = steps[after], ts[after], lines[after]
    if n_all == 0:
        return Estimate.fail("no training lines (a non-master log?)", "no_training_lines", RULE)
    if len(steps) < 120:
        return Estimate.fail(
            f"only {len(steps)} training lines after Iteration 5 (of {n_all}); the rule needs 120",
            "truncated", RULE)
    t20, t120 = float(ts[19]), float(ts[119])
    if not (np.isfinite(t20) and np.isfinite(t120)):
        return Estimate.fail("training lines 20 and 120 carry no timestamps",
                             "missing_timestamps", RULE)
    gb = run.global_batch_size
    if gb is None or not np.isfinite(gb):
        return Estimate.fail("the global batch size is unknown", "missing_metadata", RULE)
    refused = run.refuse(lines[19], lines[119], RULE)
    if refused is not None:
        return refused
    dt = exact_elapsed_seconds(t20, t120) if run.family == "dll_pytorch" else t120 - t20
    if dt <= 0:
        return Estimate.fail(f"timestamps do not increase (t120 - t20 = {dt:g} s)",
                             "missing_timestamps", RULE)
    return Estimate(throughput=round(gb * 100 / dt, 2), iterations=100, latency=dt / 100,
                    method=f"{RULE} (Iterations {int(steps[19])} and {int(steps[119])}, "
                           f"{dt:.6f} s)")


@register
class DllPyTorch(LogParser):
    name = "dll_pytorch"
    markers = (b'dll ', b'=> creating model', b'running epochs from')
    framework = "PyTorch"
    description = "NVIDIA DeepLearningExamples PyTorch DLLogger stdout (DLL lines)"

    max_score = 90

    @classmethod
    def sniff(cls, head: bytes) -> int:
        head = b"\n" + head
        pt = len(_PT_STEP.findall(head))
        tf = len(_TF_STEP.findall(head))
        if pt and pt >= tf:
            return 90
        if not tf and _PARAM.search(head):
            return 60
        if not tf and _NON_MASTER.search(head):
            return 20
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        return dll.parse_stdout(self.name, log)

    late_markers = (M.MEMORY_MAX_ALLOCATED.encode(),)

    def dlperf(self, run: RunData) -> Estimate:
        return pytorch_rule(run)

    def parse_for_rule(self, log: LogText) -> ParsedLog | None:
        found = dll.read_first(log, _RULE_LINES + 1, _RULE_SKIP)
        return None if found is None else dll.parse_stdout(self.name, log, found)

    def dlperf_has_read(self, parsed: ParsedLog) -> bool:
        """The rule reads the first 120 throughput lines after Iteration 5 (and the next)."""
        _, steps, _ = parsed.obs.train_lines(M.THROUGHPUT)
        return int((steps > _RULE_SKIP).sum()) > _RULE_LINES

