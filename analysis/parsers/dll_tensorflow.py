"""NVIDIA DeepLearningExamples TensorFlow DLLogger stdout (docs/formats.md §5, §7): ResNet-50
v1.5 (Horovod/MPI, rank 0's ``imgs_per_sec`` or ``total_ips``) and BERT::

    DLL 2020-09-15 14:29:13.473765 - Iteration: 20  throughput_train : 123.456 seq/s mlm_loss : 7.89

DLPerf rules (rank-0 lines only): ResNet, the mean of the first 100 printed throughputs,
rounded to 2 decimals (the "time" variant is stated in ``Estimate.method``); BERT, global
batch x 100 / (t(Iteration 120) - t(Iteration 20)), rounded to 2 decimals.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.logtext import LogText
from analysis.parsers import _dllogger as dll
from analysis.parsers import register
from analysis.parsers.base import LogParser, ParsedLog

if TYPE_CHECKING:
    import pandas as pd

_TF_NOISE = re.compile(rb"INFO:tensorflow:|img/sec per GPU|horovod", re.I)

RULE_A = ("DLPerf TensorFlow rule (a): mean of the first 100 printed rank-0 throughput values "
          "(global steps 20-119), rounded to 2 decimals")
RULE_BERT = ("DLPerf TensorFlow BERT rule: global batch x 100 / (t(Iteration 120) - "
             "t(Iteration 20)), rounded to 2 decimals")


def _rank0(df: pd.DataFrame) -> pd.DataFrame:
    if "rank" not in df.columns:
        return df
    import pandas as pd

    r = pd.to_numeric(df["rank"], errors="coerce").astype("float64")
    return df[r.isna() | (r <= 0)]


def _is_bert(run: RunData, tput: pd.DataFrame) -> bool:
    model = run.meta.get("model")  # pd.NA when no log or path states it
    if isinstance(model, str) and model.startswith("bert"):
        return True
    if "epoch" in tput.columns and len(tput):
        return bool(tput["epoch"].isna().all())
    return False


@register
class DllTensorFlow(LogParser):
    name = "dll_tensorflow"
    markers = (b'dll ',)
    framework = "TensorFlow"
    description = "NVIDIA DeepLearningExamples TensorFlow DLLogger stdout (ResNet, BERT)"

    max_score = 90
    printed_global_rate = True

    @classmethod
    def sniff(cls, head: bytes) -> int:
        head = b"\n" + head
        stated = dll.stated_framework(head)
        if stated:
            return 90 if stated == "tensorflow" else 0
        tf = len(dll.TF_STEP.findall(head))
        pt = len(dll.PT_STEP.findall(head))
        if tf and tf > pt:
            return 90
        if not pt and dll.ANY.search(head) and _TF_NOISE.search(head):
            return 70
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        return dll.traced_accumulation(dll.parse_stdout(self.name, log), log)

    def accumulation_counts(self, run: RunData) -> tuple[int, ...]:
        """BERT's `Iteration` is an optimizer step of --num_accumulation_steps micro batches
        of the printed `Batch size`: the counts its launch script's trace or command line
        states (``num_accumulation_steps_phase1=528``; the run is one of the phases, and of
        per-phase counts only its own is kept where the log names it): none where it states
        counts that disagree (another phase's, with its own unnamed; a command line's beside
        the trace's), which would let a figure stand at either."""
        params = run.meta.get("parameters")
        if not isinstance(params, dict) or not _is_bert(run, _rank0(run.series(M.THROUGHPUT))):
            return ()
        counts = {int(v) for k, v in params.items()
                  if str(k).startswith("num_accumulation_steps") and str(v).isdigit()
                  and int(v) > 0}
        return tuple(counts) if len(counts) == 1 else ()

    def dlperf(self, run: RunData) -> Estimate:
        tput = _rank0(run.series(M.THROUGHPUT)).sort_values("line").drop_duplicates("line")
        if tput.empty:
            return Estimate.fail("no rank-0 throughput lines", "no_training_lines", RULE_A)
        gb = run.global_batch_size
        if _is_bert(run, tput):
            return self._bert(run, tput, gb)
        vals = tput["value"].to_numpy(dtype=np.float64)
        if len(vals) < 100:
            return Estimate.fail(f"only {len(vals)} rank-0 throughput lines; the rule needs 100",
                                 "truncated", RULE_A)
        first = tput.iloc[:100]
        steps = first["step"].tolist()
        method = f"{RULE_A} (steps {steps[0]}-{steps[-1]})"
        a, b = (int(x) for x in first["line"].iloc[[0, 99]])
        refused = run.refuse(a, b, method, timestamps=False)
        if refused is not None:
            return refused
        t0, t99 = (float(x) for x in first["timestamp"].iloc[[0, 99]])
        if (gb is not None and np.isfinite(gb) and np.isfinite(t99 - t0) and t99 > t0
                and run.window_fault(a, b) is None):
            method += f"; rule (b), global batch x 99 / (t100 - t1): {gb * 99 / (t99 - t0):.2f}"
        return Estimate(throughput=round(float(vals[:100].mean()), 2), iterations=100,
                        method=method, printed=(a, b), of_printed="mean")

    @staticmethod
    def _bert(run: RunData, tput: pd.DataFrame, gb: float) -> Estimate:
        steps = tput["step"].astype("float64")
        at = {s: tput[steps == s] for s in (20, 120)}
        if at[120].empty or at[20].empty:
            return Estimate.fail(f"no Iteration {20 if at[20].empty else 120} line; "
                                 "the rule needs Iterations 20 and 120", "truncated", RULE_BERT)
        refused = run.refuse(at[20]["line"].iloc[0], at[120]["line"].iloc[0], RULE_BERT)
        if refused is not None:
            return refused
        t20, t120 = float(at[20]["timestamp"].iloc[0]), float(at[120]["timestamp"].iloc[0])
        if not np.isfinite(t120 - t20) or t120 <= t20:
            return Estimate.fail("Iterations 20 and 120 carry no increasing timestamps",
                                 "missing_timestamps", RULE_BERT)
        if gb is None or not np.isfinite(gb):
            return Estimate.fail("the global batch size is unknown", "missing_metadata", RULE_BERT)
        dt = t120 - t20
        return Estimate(throughput=round(gb * 100 / dt, 2), iterations=100, latency=dt / 100,
                        method=f"{RULE_BERT} ({dt:.6f} s)",
                        window=(int(at[20]["line"].iloc[0]), int(at[120]["line"].iloc[0])))
