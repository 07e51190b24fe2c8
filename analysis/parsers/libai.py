"""LiBai training logs (``Oneflow-Inc/libai``: the main process's stdout or ``log.txt``),
docs/formats.md §13. Set-up lines state the world size, the command line's ``opts`` and the
config file; ``CommonMetricPrinter`` prints every ``train.log_period`` iterations::

    [11/23 10:41:02 lb.utils.events]:  eta: 0:01:07  iteration: 19/220  consumed_samples: 640  total_loss: 10.81  time: 0.3351 s/iter  data_time: 0.0016 s/iter total_throughput: 95.49 samples/s lr: 1.50e-04

The iteration is printed 0-based (stored +1). ``time`` and the throughput are running means
since the start of the run, so each interval's ``latency`` is recovered from them and the
``reported`` method measures from it (``LogParser.running_mean_throughput``). The prefix has
no year: a metric line's ``timestamp`` is its stamp in a nominal year before 1970
(:func:`analysis.parsers._shapes.dated`), so its intervals time the run and no date is
claimed.
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._gpt import GPTCases
from analysis.parsers._scan import NUM, bad_lines, column, floats, found, in_int64, ints
from analysis.parsers._shapes import year_less
from analysis.parsers.base import LogParser, ParsedLog, parse_bool
from analysis.parsers.gpu_memory import add_memory_blocks

_PREFIX = rb"^\[\d\d/\d\d \d\d:\d\d:\d\d(?: [\w.]+\]:|\] [\w.]+ [A-Z]+:)"
_METRIC = re.compile(_PREFIX + rb" +(?:eta: [^\n]*?  +)?iteration: (\d+)/(\d+)([^\n]*)$",
                     re.M)
_WORLD = re.compile(_PREFIX + rb" Rank of current process: (\d+)\. World size: (\d{1,7})\b",
                    re.M)
_ARGS = re.compile(_PREFIX + rb" Command line arguments: Namespace\(([^\n]*)\)[ \t]*$", re.M)
_CONTENTS = re.compile(_PREFIX + rb" Contents of args\.config_file=([^\n]*):[ \t]*$", re.M)
_NEXT_ENTRY = re.compile(_PREFIX, re.M)
_ASSIGN = re.compile(rb"^((?:train|model|graph)(?:\.\w+)+) = ([^\n#]*?)[ \t]*(?:#[^\n]*)?$",
                     re.M)
_OPT = re.compile(r"'((?:train|model|graph)(?:\.\w+)+)=([^']*)'")
_SPEED = re.compile(_PREFIX + rb" Overall training speed: (\d+) iterations in [^\n(]*\((" + NUM
                    + rb") s / it\)", re.M)
#: A checkpoint save (``Checkpointer.save``: ``Saving checkpoint to output/model_0000999``).
_SAVE = re.compile(_PREFIX + rb" Saving checkpoint to ", re.M)
_LOSS_NAME = re.compile(rb"(?<![\w])(\w*loss\w*): ")
#: config key -> META_FIELDS key (integers)
_INT_KEYS = {
    "train.train_micro_batch_size": "batch_size_per_device",
    "train.global_batch_size": "global_batch_size",
    "train.dist.tensor_parallel_size": "tensor_parallel",
    "train.dist.pipeline_parallel_size": "pipeline_parallel",
    "model.cfg.num_layers": "num_layers", "model.cfg.hidden_size": "hidden_size",
    "model.cfg.num_attention_heads": "num_heads", "model.cfg.max_seq_length": "seq_length",
    "model.cfg.vocab_size": "vocab_size",
}
#: printed key (regex) -> (group pattern, metric, unit)
_FIELDS = (
    (rb"consumed[_ ]samples: ", rb"(\d+)", M.SAMPLES, M.NONE),
    (rb"time: ", rb"(" + NUM + rb")", "time_avg", M.SECONDS),
    (rb"data_time: ", rb"(" + NUM + rb")", "data_time", M.SECONDS),
    (rb"lr: ", rb"(" + NUM + rb"|N/A)", M.LR, M.NONE),
    (rb"max_mem: ", rb"(" + NUM + rb")M", M.MEMORY_MAX_ALLOCATED, M.MIB),
)
_THROUGHPUT = (rb"total_throughput: (" + NUM + rb") samples/s",
               rb"time: (?:" + NUM + rb")\((" + NUM + rb")\)")
_TIMER_WARMUP = 2  # IterationTimer(warmup_iter=3) times iterations from the 3rd on


#: Days of each month, Feb 29 included (a year-less stamp may be of a leap year).
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _stamps(log: LogText, parsed: ParsedLog, matches: list[re.Match],
            lines: np.ndarray) -> np.ndarray:
    """Unix seconds of the metric lines' ``[MM/DD HH:MM:SS`` stamps in nominal years
    (:func:`analysis.parsers._shapes.year_less`); NaN, and a `bad_line` naming the line,
    where the month and day are no date (13/01, 00/10, 02/30)."""
    texts = [b"%s-%s" % (m.group(0)[1:3], m.group(0)[4:15]) for m in matches]
    dates = [(int(t[:2]), int(t[3:5])) if t[:2].isdigit() and t[3:5].isdigit() else (0, 0)
             for t in texts]
    bad = np.array([not (1 <= mo <= 12 and 1 <= dd <= _MONTH_DAYS[mo - 1])
                    for mo, dd in dates], dtype=bool)
    bad_lines(log, lines[bad], "LiBai", parsed, "its stamp's month and day are no date; "
              "its time is not read")
    return year_less([b"" if no else t for t, no in zip(texts, bad.tolist(), strict=True)])


def _interval_latency(step: np.ndarray, avg: np.ndarray) -> np.ndarray:
    """Mean seconds per iteration between consecutive prints from the printed running means
    (`step` iterations completed, ``step - 2`` of them timed). Where steps do not increase (a
    log appended twice) a new run of prints starts: its first value is the running mean."""
    timed = (step - _TIMER_WARMUP).astype(float)
    total = avg * timed
    out = avg.copy()
    if len(step) > 1:
        go_on = step[1:] > step[:-1]
        diff = (total[1:] - total[:-1]) / np.where(go_on, timed[1:] - timed[:-1], 1.0)
        out[1:] = np.where(go_on, diff, avg[1:])
    out[timed <= 0] = np.nan
    return out


def _settings(log: LogText) -> dict[str, tuple[str, int]]:
    """``key -> (value, line)`` from the printed config file, then the command line's opts
    (which override it), then the world size line."""
    data, out = log.data, {}
    head = _CONTENTS.search(data)
    if head:
        out["config_file"] = (head.group(1).decode("utf-8", "replace").strip(),
                              int(log.lines_at(np.array([head.start()]))[0]))
        stop = _NEXT_ENTRY.search(data, head.end())
        end = stop.start() if stop else len(data)
        for m in _ASSIGN.finditer(data, head.end(), end):
            out[m.group(1).decode()] = (m.group(2).decode("utf-8", "replace"),
                                        int(log.lines_at(np.array([m.start()]))[0]))
    args = _ARGS.search(data)
    if args:
        line = int(log.lines_at(np.array([args.start()]))[0])
        text = args.group(1).decode("utf-8", "replace")
        opts = re.search(r"opts=\[([^\]]*)\]", text)
        for key, value in _OPT.findall(opts.group(1) if opts else ""):
            out[key] = (value, line)
        resume = re.search(r"\bresume=(\w+)", text)
        if resume:
            out["resume"] = (resume.group(1), line)
    world = _WORLD.search(data)
    if world:
        line = int(log.lines_at(np.array([world.start()]))[0])
        out["world_size"] = (world.group(2).decode(), line)
    return out


def _read_settings(log: LogText, parsed: ParsedLog) -> dict[str, tuple[str, int]]:
    """Run fields the log states: batch sizes, parallel sizes, model shape, precision; returns
    the settings read."""
    settings = _settings(log)
    parsed.parameters.update({k: v for k, (v, _) in settings.items()})
    for key, field in _INT_KEYS.items():
        value = settings.get(key, ("", 0))[0].strip()
        if value.isdigit() and len(value) < 10:  # not an expression (`= model.cfg.num_layers`)
            parsed.state(field, int(value), settings[key][1])
    if "train.amp.enabled" in settings:
        flag = parse_bool(settings["train.amp.enabled"][0])
        if flag is not None:
            parsed.state("precision", "amp" if flag else "fp32", settings["train.amp.enabled"][1])
    if "world_size" in settings:
        _parallel_sizes(int(settings["world_size"][0]), settings["world_size"][1], parsed)
    return settings


def _parallel_sizes(world: int, line: int, parsed: ParsedLog) -> None:
    """Tensor, pipeline and data parallel sizes as ``libai/utils/distributed.py`` sets them:
    tensor = min(stated or 1, world), pipeline = min(stated or 1, world // tensor), data =
    world // (tensor × pipeline) (a stated data parallel size is overwritten)."""
    meta = parsed.meta
    tp = min(meta.get("tensor_parallel", 1), world)
    pp = min(meta.get("pipeline_parallel", 1), world // max(tp, 1))
    if tp < 1 or pp < 1 or world % (tp * pp):
        return  # LiBai would have refused to start
    for field, value in (("tensor_parallel", tp), ("pipeline_parallel", pp),
                         ("data_parallel", world // (tp * pp))):
        if meta.get(field) != value:
            parsed.state(field, value, line)


def _read_metrics(log: LogText, parsed: ParsedLog) -> None:
    matches, lines = found(log, _METRIC)
    g = np.array([m.group(1, 3) for m in matches], dtype="S").reshape(-1, 2)  # iteration, rest
    ok = column(g[:, 1], _FIELDS[3][0] + _FIELDS[3][1]) != b""  # `lr:` (N/A too) ends a line
    bad_lines(log, lines[~ok], "LiBai", parsed)
    ok[ok] = in_int64(log, lines[ok], "LiBai", parsed, g[ok, 0], offset=1)  # printed 0-based
    if not ok.any():
        return
    lines, rest, step = lines[ok], g[ok, 1], ints(g[ok, 0]) + 1
    ts = _stamps(log, parsed, [m for m, keep in zip(matches, ok) if keep], lines)
    _first_global_batch(parsed, step[0], column(rest[:1], _FIELDS[0][0] + _FIELDS[0][1]),
                        int(lines[0]))

    def add(metric, unit, raw, phase=M.TRAIN):
        has = raw != b""
        if has.any():
            parsed.obs.add(line=lines[has], metric=metric, value=floats(raw[has]), phase=phase,
                           unit=unit, step=step[has], timestamp=ts[has])

    for key, group, metric, unit in _FIELDS:
        raw = column(rest, key + group)
        if metric == M.LR:
            raw = np.where(raw == b"N/A", b"", raw)
        add(metric, unit, raw)
    tput = column(rest, _THROUGHPUT[0])
    old = tput == b""
    if old.any():  # early versions: `time: <s/iter>(<samples/s>)`
        tput = np.where(old, column(rest, _THROUGHPUT[1]), tput)
    add(M.THROUGHPUT, M.SAMPLES_PER_S, tput)
    for name in sorted(set(_LOSS_NAME.findall(b"\n".join(rest)))):
        metric = M.LOSS if name == b"total_loss" else name.decode()
        add(metric, M.NONE, column(rest, re.escape(name) + rb": (" + NUM + rb")"))
    avg = floats(column(rest, _FIELDS[1][0] + _FIELDS[1][1]))
    has = np.isfinite(avg)
    if has.any() and parsed.parameters.get("resume") != "True":
        latency = _interval_latency(step[has], avg[has])
        good = np.isfinite(latency)
        parsed.obs.add(line=lines[has][good], metric=M.LATENCY, value=latency[good],
                       phase=M.TRAIN, unit=M.SECONDS, step=step[has][good],
                       timestamp=ts[has][good])


def _eager_accumulation(parsed: ParsedLog, settings: dict[str, tuple[str, int]]) -> None:
    """In eager mode (``graph.enabled=False``) an iteration is one micro-step of the gradient
    accumulation: it holds global batch / accumulation steps samples (``DefaultTrainer``, which
    also multiplies ``train_iter`` by the steps), so that is the batch the throughput methods
    must count per iteration."""
    graph = parse_bool(settings.get("graph.enabled", ("", 0))[0])
    meta, gbs = parsed.meta, parsed.meta.get("global_batch_size")
    if graph is not False or not gbs:
        return
    try:
        acc = int(settings["train.num_accumulation_steps"][0])
    except (KeyError, ValueError):
        micro, dp = meta.get("batch_size_per_device"), meta.get("data_parallel")
        acc = gbs // (micro * dp) if micro and dp and gbs % (micro * dp) == 0 else 1
    if acc > 1 and gbs % acc == 0:
        parsed.state("global_batch_size", gbs // acc, settings["graph.enabled"][1])
        parsed.parameters["samples_per_optimizer_step"] = str(gbs)


def _first_global_batch(parsed: ParsedLog, step: int, consumed: np.ndarray, line: int) -> None:
    """The global batch from ``consumed_samples = (iteration + 1) × global batch`` of the first
    metric line, when the config does not state it."""
    if "global_batch_size" in parsed.meta or not len(consumed) or consumed[0] == b"":
        return
    samples = int(consumed[0])
    if step > 0 and samples > 0 and samples % step == 0:
        parsed.state("global_batch_size", samples // step, line)


def _read_summary(log: LogText, parsed: ParsedLog) -> None:
    """``Overall training speed: N iterations in H:MM:SS (S s / it)`` at the end of a run."""
    for m in _SPEED.finditer(log.data):
        parsed.obs.add(line=int(log.lines_at(np.array([m.start()]))[0]), metric=M.LATENCY,
                       value=float(m.group(2)), phase=M.SUMMARY, unit=M.SECONDS)


_SNIFF_METRIC = re.compile(_PREFIX + rb" +(?:eta: [^\n]*?  +)?iteration: \d+/\d+  +consumed[_ ]"
                           rb"samples: \d+", re.M)


def _read_saves(log: LogText, parsed: ParsedLog) -> None:
    """The checkpoint saves as save rows: the interval that holds one is not training alone
    (its stamps count the save)."""
    if b"Saving checkpoint to " in log.data:
        _, lines = found(log, _SAVE)
        parsed.obs.add(line=lines, metric=M.SAVE, phase=M.CHECKPOINT,
                       value=np.ones(len(lines)))


@register
class LiBaiParser(GPTCases, LogParser):
    name = "libai"
    markers = (b"utils.events", b"rank of current process: ")
    framework = "OneFlow"
    description = "LiBai (Oneflow-Inc/libai) trainer logs: stdout or log.txt"
    running_mean_throughput = True  # `time` and the throughput are global averages

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF_METRIC.search(head):
            return 95
        if _WORLD.search(head):
            return 90
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        settings = _read_settings(log, parsed)
        _read_metrics(log, parsed)
        _eager_accumulation(parsed, settings)
        _read_summary(log, parsed)
        _read_saves(log, parsed)
        add_memory_blocks(log, parsed)
        return parsed
