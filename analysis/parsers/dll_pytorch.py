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

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.logtext import LogText
from analysis.parsers import _dllogger as dll
from analysis.parsers import register
from analysis.parsers._dll_lines import PARAM as _PARAM
from analysis.parsers._dll_lines import PT_STEP as _PT_STEP
from analysis.parsers._dll_lines import TF_STEP as _TF_STEP
from analysis.parsers._rules import PYTORCH_LINES, PYTORCH_SKIP, pytorch_rule
from analysis.parsers.base import LogParser, ParsedLog

# a non-master rank's log of the PyTorch ConvNets example has its text but no DLL lines
_NON_MASTER = re.compile(rb"\n(?:=> creating model '|RUNNING EPOCHS FROM )")

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
        found = dll.read_first(log, PYTORCH_LINES + 1, PYTORCH_SKIP)
        return None if found is None else dll.parse_stdout(self.name, log, found)

    def dlperf_has_read(self, parsed: ParsedLog) -> bool:
        """The rule reads the first 120 throughput lines after Iteration 5 (and the next)."""
        _, steps, _ = parsed.obs.train_lines(M.THROUGHPUT)
        return int((steps > PYTORCH_SKIP).sum()) > PYTORCH_LINES

