"""OneFlow-Benchmark ``LanguageModeling/BERT`` pretraining logs, docs/formats.md §2.

Same header dump as the CNN logs, then a line every 20 steps with a **0-based** step::

    step: 19, total_loss: 11.078, mlm_loss: 10.407, nsp_loss: 0.671, throughput: 52.257
    step: 119, total_loss: 8.010, mlm_loss: 7.331, nsp_loss: 0.679, throughput: 139.896 1598056537.0029895

Steps are stored +1 (iterations completed), so printed step 19 is step 20. ``throughput`` is
the samples of every device since the last print over its seconds, a step counting
``num_accumulation_steps`` micro-batches: the global batch counts them too.
"""

from __future__ import annotations

import re

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.layout import meta_from_path
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._rules import window_rule
from analysis.parsers._scan import NUM, floats, ints, line_pattern, read_lines
from analysis.parsers.base import LogParser, ParsedLog
from analysis.parsers.gpu_memory import add_memory_blocks
from analysis.parsers.oneflow_cnn import read_header
from analysis.user_meta import accumulation_counts, is_count

_N = rb"(" + NUM + rb")"
_ANCHOR = b"step: "
_STEP = line_pattern(
    _ANCHOR,
    rb"(\d+), total_loss: " + _N + rb", mlm_loss: " + _N + rb", nsp_loss: " + _N
    + rb", throughput: " + _N + rb"(?:[ \t]+([0-9]+(?:\.[0-9]*)?))?[ \t]*$",
    bad=rb"\d[^\n]*",  # `step: <digits>…` that does not parse; other `step: …` text is not ours
)
_SNIFF = re.compile(rb"^step: \d+, total_loss: ", re.M)
_BANNER = re.compile(rb"^Running bert", re.M | re.I)
_ACCUMULATION_LINE = re.compile(rb"^num_accumulation_steps = ", re.M)
#: (group, metric, unit) of the values after the step group
_FIELDS = ((1, M.LOSS, M.NONE), (2, "mlm_loss", M.NONE), (3, "nsp_loss", M.NONE),
           (4, M.THROUGHPUT, M.SAMPLES_PER_S))


def _bert_model(parsed: ParsedLog) -> None:
    """The banner says only `bert`: name the size from the dump's layers/hidden, else say nothing."""
    if parsed.meta.get("model") not in ("bert", None):
        return
    shape = (parsed.parameters.get("num_hidden_layers", "").strip(),
             parsed.parameters.get("hidden_size", "").strip())
    model = {("12", "768"): "bert_base", ("24", "1024"): "bert_large"}.get(shape)
    if model:
        parsed.state("model", model, parsed.meta_lines.get("model"))
    else:
        parsed.meta.pop("model", None)
        parsed.meta_lines.pop("model", None)


def _accumulated_batch(log: LogText, parsed: ParsedLog) -> None:
    """With gradient accumulation an iteration runs nodes x GPUs x batch_size_per_device x
    num_accumulation_steps samples, the batch the writer's throughput counts: stated so where
    the dump states one count and the layout (the log's, else the path's) is known."""
    counts = accumulation_counts(parsed.parameters)
    if len(counts) != 1 or counts == {1}:
        return
    path = meta_from_path(log.source)
    layout = [parsed.meta.get(k, path.get(k))
              for k in ("num_nodes", "gpus_per_node", "batch_size_per_device")]
    if all(is_count(v) for v in layout):
        at = _ACCUMULATION_LINE.search(log.data)
        parsed.state("global_batch_size", layout[0] * layout[1] * layout[2] * counts.pop(),
                     int(log.lines_at([at.start()])[0]) if at else None)


@register
class OneFlowBERTParser(LogParser):
    name = "oneflow_bert"
    markers = (b'step: ', b'running bert')
    framework = "OneFlow"
    description = "OneFlow-Benchmark LanguageModeling/BERT pretraining stdout logs"

    max_score = 95
    # util.Metric: samples of every device since the last print / the interval's seconds
    printed_global_rate = True

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF.search(head):
            return 95
        if _BANNER.search(head):
            return 90
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        read_header(log, parsed)
        _bert_model(parsed)
        _accumulated_batch(log, parsed)
        g, lines = read_lines(log, parsed, "OneFlow BERT", _STEP, _ANCHOR, 0, offset=1)
        step, ts = ints(g[:, 0]) + 1, floats(g[:, 5])  # step printed 0-based
        for col, metric, unit in _FIELDS:
            parsed.obs.add(line=lines, metric=metric, value=floats(g[:, col]), phase=M.TRAIN,
                           unit=unit, step=step, timestamp=ts)
        add_memory_blocks(log, parsed)
        return parsed

    def dlperf(self, run: RunData) -> Estimate:
        return window_rule(run, 20, 120,
                           "DLPerf OneFlow BERT rule: global batch × 100 / "
                           "(ts(step 119) − ts(step 19)), printed 0-based steps")
