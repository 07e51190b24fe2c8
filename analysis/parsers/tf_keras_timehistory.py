"""TensorFlow 2 Keras logs with the official models' ``TimeHistory`` callback (DLPerf's TF2
ResNet-50), docs/formats.md §14::

    I0826 15:13:29.256277 140405777909504 keras_utils.py:133] TimeHistory: 39.13 seconds, 327.08 examples/second between steps 100 and 200

``examples/second`` counts the global batch: it is the run's throughput. The absl prefix has no
year; it comes from the log's first dated line, one on at each new year the prefixes cross.
DLPerf rule: the mean of the printed examples/second of TimeHistory lines 2 to 6, rounded to
2 decimals (its ``_time`` variant is stated in ``Estimate.method``).
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData, lowest_rank
from analysis.layout import normalize_precision
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._fields import NUM
from analysis.parsers._scan import bad_lines, floats, found, ints
from analysis.parsers._shapes import year_less
from analysis.parsers.base import LogParser, ParsedLog
from analysis.problems import Problem, excerpt

#: Any line holding the anchor (the DLPerf script counts every line with "TimeHistory").
_ANY = re.compile(rb"^([^\n]*?)TimeHistory:([^\n]*)$", re.M)
_BODY = re.compile(rb" *(" + NUM + rb") seconds, (" + NUM + rb") examples/second between steps "
                   rb"(\d{1,18}) and (\d{1,18})[ \t]*$")
#: absl prefix: ``I0826 15:13:29.256277 <thread> file.py:133] ``
_ABSL = re.compile(rb"[IWEF](\d\d)(\d\d) (\d\d:\d\d:\d\d\.\d{6}) ")
_YEAR = re.compile(rb"^(\d{4})-(\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?)", re.M)
_SNIFF_TRAINER = re.compile(rb"classifier_trainer\.py:\d+\] ")

_DEVICES = re.compile(rb"\] Detected (\d+) devices\.")
#: the whole printed word: ``1e400`` is no count, and not the 1 it begins with
_GLOBAL = re.compile(rb"\] Global batch size: (\S+?)[.,;]?(?=\s|$)", re.M)
_FINAL = re.compile(rb"\] Final model parameters: ")
_GPUS = re.compile(rb"'num_gpus': (\d+)")
_HOSTS = re.compile(rb"'worker_hosts': (None|'([^'\n]*)')")
_TRAIN_SET = re.compile(rb"'train_dataset': \{")
_DTYPE = re.compile(rb"'dtype': '(\w+)'")

LINES = 6  # the rule reads the first six TimeHistory lines
RULE = ("DLPerf TensorFlow 2 Keras rule (extract_tensorflow_logs.py): mean of the printed "
        "examples/second of TimeHistory lines 2-6, rounded to 2 decimals")


def _timestamps(prefixes: list[bytes], data: bytes) -> np.ndarray:
    """Unix seconds of absl prefixes, which print no year: they follow the log's first dated
    line, in its year and on past each new year (``_shapes.year_less``); in its nominal years
    where no line is dated (TF_CPP_MIN_LOG_LEVEL hides the TF C++ lines), a clock but no
    date, as LiBai's; NaN without a prefix."""
    first = _YEAR.search(data)
    found = [_ABSL.search(p) for p in prefixes]
    stamps = [b"%s-%s %s" % m.groups() if m else b"" for m in found]
    if first is None:
        return year_less(stamps)
    return year_less([first[2]] + stamps, int(first[1]))[1:]


def _read_fields(log: LogText, parsed: ParsedLog) -> None:
    """Run fields the trainer prints (see the module docstring), with their lines."""
    data = log.data

    def put(key, value, offset):
        parsed.state(key, value, int(log.lines_at([offset])[0]))

    devices = _DEVICES.search(data)
    glob = _GLOBAL.search(data)
    if glob and not glob.group(1).isdigit():
        line = int(log.lines_at(np.array([glob.start()]))[0])
        parsed.problems.append(Problem(
            log.source, line, "impossible_value",
            f"the log says Global batch size: {excerpt(glob.group(1).decode('utf-8', 'replace'), 40)}"
            ", not a count of samples; not used", log.line_text(line)))
        glob = None
    if glob:
        put("global_batch_size", int(glob.group(1)), glob.start())
    if devices and glob and int(devices.group(1)) and \
            int(glob.group(1)) % int(devices.group(1)) == 0:
        put("batch_size_per_device", int(glob.group(1)) // int(devices.group(1)), glob.start())
    final = _FINAL.search(data)
    start = final.end() if final else len(data)
    gpus, hosts = _GPUS.search(data, start), _HOSTS.search(data, start)
    if gpus:
        parsed.parameters["gpus_per_node"] = gpus.group(1).decode()
        put("gpus_per_node", int(gpus.group(1)), gpus.start())
    if hosts:
        parsed.parameters["worker_hosts"] = hosts.group(1).decode("utf-8", "replace")
    _nodes(devices, gpus, hosts, parsed, put)
    train = _TRAIN_SET.search(data, start)
    dtype = _DTYPE.search(data, train.end()) if train else None
    if dtype:
        parsed.parameters["train_dataset.dtype"] = dtype.group(1).decode()
        put("precision", normalize_precision(dtype.group(1).decode()), dtype.start())


def _nodes(devices, gpus, hosts, parsed: ParsedLog, put) -> None:
    """Nodes from the devices the run detected (all workers': its ``world_size``) over the
    dump's GPUs per worker, else from the ``worker_hosts`` it lists. ``worker_hosts: None``
    states nothing: TF_CONFIG (a launcher's) may set the workers without it."""
    world = int(devices.group(1)) if devices else 0
    if world:
        parsed.parameters["world_size"] = str(world)
    per = int(gpus.group(1)) if gpus else 0
    listed = [h for h in (hosts.group(2) or b"").split(b",") if h.strip()] if hosts else []
    if world and per and world % per == 0:
        put("num_nodes", world // per, devices.start())
    elif listed:
        put("num_nodes", len(listed), hosts.start())


@register
class TfKerasTimeHistory(LogParser):
    name = "tf_keras_timehistory"
    markers = (b"timehistory: ", b"classifier_trainer.py:")
    framework = "TensorFlow"
    description = ("TensorFlow 2 Keras (tensorflow/models official) TimeHistory callback lines "
                   "of DLPerf's TF2 ResNet-50 runs")

    max_score = 95
    printed_global_rate = True  # examples/second: steps x the global batch / seconds

    @classmethod
    def sniff(cls, head: bytes) -> int:
        for m in _ANY.finditer(head):
            if _BODY.match(m.group(2)):
                return 95
        return 80 if _SNIFF_TRAINER.search(head) else 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        _read_fields(log, parsed)
        matches, lines = found(log, _ANY)
        bodies = [_BODY.match(m.group(2)) for m in matches]
        ok = np.array([b is not None for b in bodies], dtype=bool)
        bad_lines(log, lines[~ok], "TensorFlow Keras TimeHistory", parsed)
        if not ok.any():
            return parsed
        good = np.array([b.groups() for b in bodies if b is not None], dtype="S")
        seconds, tput = floats(good[:, 0]), floats(good[:, 1])
        first, last, lines = ints(good[:, 2]), ints(good[:, 3]), lines[ok]
        ts = _timestamps([m.group(1) for m, b in zip(matches, bodies) if b is not None], log.data)
        with np.errstate(divide="ignore", invalid="ignore"):
            latency = np.where(last > first, seconds / (last - first), np.nan)
        parsed.obs.add(line=lines, metric=M.THROUGHPUT, value=tput, phase=M.TRAIN,
                       unit=M.SAMPLES_PER_S, step=last, timestamp=ts)
        parsed.obs.add(line=lines, metric=M.LATENCY, value=latency, phase=M.TRAIN,
                       unit=M.SECONDS, step=last, timestamp=ts)
        return parsed

    def dlperf(self, run: RunData) -> Estimate:
        rows = run.series(M.THROUGHPUT).drop_duplicates("line")
        rows = rows[lowest_rank(rows["rank"].to_numpy(dtype=float, na_value=np.nan))]
        if rows.empty:
            return Estimate.fail("no TimeHistory lines", "no_training_lines", RULE)
        window = rows.iloc[:LINES]
        steps = window["step"].to_numpy(dtype=np.int64)
        lines = window["line"].to_numpy(dtype=np.int64)
        if steps[0] <= 0 or not (steps == steps[0] * np.arange(1, len(steps) + 1)).all():
            return Estimate.fail(
                f"the first TimeHistory lines read end at steps {steps.tolist()}, not one "
                "interval after another from step 0 (a line garbled or missing?); the rule "
                "counts lines, so no throughput from them", "window_gap", RULE)
        if len(rows) < LINES:
            return Estimate.fail(f"only {len(rows)} TimeHistory lines; the rule needs {LINES}",
                                 "truncated", RULE)
        method = f"{RULE} (steps {steps[0]}-{steps[-1]})"
        refused = run.refuse(lines[0], lines[-1], method, timestamps=False)
        if refused is not None:
            return refused
        values = window["value"].to_numpy(dtype=np.float64)[1:]
        if not np.isfinite(values).all():
            return Estimate.fail("a printed examples/second in the window is not finite",
                                 "window_gap", method)
        method += self._time_variant(run, window, steps)
        return Estimate(throughput=round(float(values.mean()), 2),
                        iterations=int(steps[-1] - steps[0]), method=method,
                        printed=(int(lines[1]), int(lines[-1])), of_printed="mean")

    @staticmethod
    def _time_variant(run: RunData, window, steps: np.ndarray) -> str:
        """The `_time` script's figure, in words, where the clock times allow it."""
        ts = window["timestamp"].to_numpy(dtype=np.float64)
        gb = run.global_batch_size
        dt = ts[-1] - ts[0]
        if gb is None or not np.isfinite(gb) or not np.isfinite(dt) or dt <= 0:
            return ""
        n = int(steps[-1] - steps[0])
        return (f"; extract_tensorflow_logs_time.py, global batch x {n} / (t(line 6) - "
                f"t(line 1)): {gb * n / dt:.2f}")
