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

Run fields the log states besides its PARAMETER lines (docs/formats.md §6):

* the launch command, where the log holds it before its first DLL line (a shell trace,
  ``python3 -m torch.distributed.launch --nproc_per_node=8 run_pretraining.py …``, or
  ``torchrun``): ``--nproc_per_node`` → GPUs per node, ``--nnodes`` → nodes (1, the
  launchers' default, where the command does not name it; unknown where either is not a
  number, or where they disagree with a printed ``world_size``). A PARAMETER line stating
  them wins.
* gradient accumulation (``gradient_accumulation_steps`` or another ACCUMULATION_KEYS
  spelling, in BERT's ``Config`` Namespace, a PARAMETER key, or the launch script's trace
  ``+ gradient_accumulation_steps=66`` or command line): an iteration is an optimizer
  step of batch × accumulation steps × devices samples, the run's global batch when
  nodes, GPUs and batch are all stated in the log.
"""

from __future__ import annotations

import re

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.logtext import LogText
from analysis.parsers import _dllogger as dll
from analysis.parsers import register
from analysis.parsers._fields import LAUNCH, namespace_items, to_int
from analysis.parsers._rules import PYTORCH_READS, pytorch_has_read, pytorch_rule
from analysis.parsers.base import LogParser, ParsedLog

# a non-master rank's log of the PyTorch ConvNets example has its text but no DLL lines
_NON_MASTER = re.compile(rb"\n(?:=> creating model '|RUNNING EPOCHS FROM )")
_NPROC = re.compile(rb"--nproc[_-]per[_-]node[= ](\S+)")
_NNODES = re.compile(rb"--nnodes[= ](\S+)")


def _launch_fields(parsed: ParsedLog, log: LogText) -> ParsedLog:
    """`parsed` with the nodes and GPUs of the launch command before the log's first DLL
    line, and BERT's global batch under gradient accumulation (module docstring)."""
    data = log.data
    end = data.find(b"\nDLL ")
    m = LAUNCH.search(data, 0, len(data) if end < 0 else end)
    if m is not None:
        line = data.count(b"\n", 0, m.start()) + 1
        nproc = _NPROC.search(m.group(1))
        nnodes = _NNODES.search(m.group(1))
        gpus = to_int(nproc.group(1).decode("ascii", "replace")) if nproc else None
        nodes = to_int(nnodes.group(1).decode("ascii", "replace")) if nnodes else 1
        world = to_int(parsed.parameters.get("world_size"))
        if gpus is not None and gpus > 0 and nodes is not None and nodes > 0 \
                and world in (None, nodes * gpus):  # a stated world size must agree
            for key, value in (("num_nodes", nodes), ("gpus_per_node", gpus)):
                if key not in parsed.meta:
                    parsed.meta[key] = value
                    parsed.meta_lines[key] = line
    _accumulation(dll.traced_accumulation(parsed, log))
    return parsed


#: The spellings of the gradient accumulation steps (DLE PyTorch's, DLE TensorFlow BERT's
#: and the suite's GPT's, others'): the first stated is used.
ACCUMULATION_KEYS = ("gradient_accumulation_steps", "num_accumulation_steps",
                     "accumulation_steps", "grad_accum_steps")


def _accumulation(parsed: ParsedLog) -> None:
    """Global batch = batch × gradient accumulation steps × devices, all stated in the log
    (the steps as a PARAMETER key of their own, or in BERT's ``Config`` Namespace)."""
    config = namespace_items(parsed.parameters.get("Config", ""))
    # the program's Namespace first: the launch script's trace (in `parameters`) set it
    stated = next((found.get(k) for found in (config, parsed.parameters)
                   for k in ACCUMULATION_KEYS if found.get(k) is not None), None)
    steps = to_int(stated)
    meta = parsed.meta
    need = ("num_nodes", "gpus_per_node", "batch_size_per_device")
    if steps is None or steps < 2 or "global_batch_size" in meta or any(k not in meta for k in need):
        return
    meta["global_batch_size"] = (meta["batch_size_per_device"] * steps * meta["num_nodes"]
                                 * meta["gpus_per_node"])
    parsed.meta_lines["global_batch_size"] = parsed.meta_lines.get("batch_size_per_device")

@register
class DllPyTorch(LogParser):
    name = "dll_pytorch"
    markers = (b'dll ', b'=> creating model', b'running epochs from')
    framework = "PyTorch"
    description = "NVIDIA DeepLearningExamples PyTorch DLLogger stdout (DLL lines)"

    max_score = 90
    printed_global_rate = True

    @classmethod
    def sniff(cls, head: bytes) -> int:
        head = b"\n" + head
        stated = dll.stated_framework(head)
        if stated:
            return 90 if stated == "pytorch" else 0
        pt = len(dll.PT_STEP.findall(head))
        tf = len(dll.TF_STEP.findall(head))
        if pt and pt >= tf:
            return 90
        if not tf and dll.PARAM.search(head):
            return 60
        if not tf and _NON_MASTER.search(head):
            return 20
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        return _launch_fields(dll.parse_stdout(self.name, log), log)

    # a PARAMETER line later on may restate the batch (a job restarted in the same log:
    # batch_changed, no figure), which a prefix would not see
    late_markers = (M.MEMORY_MAX_ALLOCATED.encode(), b" - PARAMETER ")
    rule_lines = (b" Iteration: ", PYTORCH_READS)

    def dlperf(self, run: RunData) -> Estimate:
        return pytorch_rule(run)

    def dlperf_has_read(self, parsed: ParsedLog) -> bool:
        """The rule reads the first 120 throughput lines after Iteration 5 (and the next)."""
        return pytorch_has_read(parsed.obs.train_lines(M.THROUGHPUT)[1])

