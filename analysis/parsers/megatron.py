"""Megatron-LM training logs (compared against in the GPT reports), docs/formats.md §4. Only
the last rank prints the iteration lines::

     iteration       20/ 1000000 | consumed samples:           80 | elapsed time per iteration (ms): 140.6 | learning rate: 2.020E-08 | global batch size:     4 | lm loss: 1.005022E+01 | loss scale: 32768.0 | grad norm: 217.199 | number of skipped iterations:   0 | number of nan iterations:   0 |

Fields come and go between versions and intervals, so each is looked up by name. A
``[YYYY-MM-DD HH:MM:SS]`` prefix is read as UTC. ``global batch size`` is stored per line: a
ramp-up prints smaller ones first, and the rule leaves those intervals out.
"""

from __future__ import annotations

import re

import numpy as np

from analysis import metrics as M
from analysis.estimate import Estimate, RunData
from analysis.layout import normalize_model
from analysis.logtext import LogText
from analysis.parsers import register
from analysis.parsers._fields import to_int
from analysis.parsers._gpt import GPTCases
from analysis.parsers._rules import latency_rule
from analysis.parsers._scan import (
    NUM,
    bad_lines,
    field_values,
    first_line,
    floats,
    found,
    in_int64,
    ints,
)
from analysis.parsers._shapes import unix_seconds
from analysis.parsers.base import LogParser, ParsedLog
from analysis.parsers.oneflow_gpt import read_argument_dump
from analysis.problems import Problem

_ITER = re.compile(rb"iteration +(\d+)/ *(\d+) *(\|[^\n]*)")
_DATE = re.compile(rb"\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)(?:[.,](\d{1,6})\d*)?\]")
_MEMORY = re.compile(
    rb"\[Rank (\d+)\] \(after (\d+) iterations\) memory \(MB\) \| allocated: (" + NUM
    + rb") \| max allocated: (" + NUM + rb") \| reserved: (" + NUM + rb") \| max reserved: ("
    + NUM + rb")")
#: Lines only Megatron-LM prints (an iteration line, optionally dated or behind an ``srun -l``
#: rank, the memory report, model building); prose that merely names Megatron or
#: iterations (a README) does not match.
_SNIFF = re.compile(
    rb"^(?: {0,3}\d{1,5}:)? *(?:\[[^\]\n]{1,40}\] *)?iteration +\d+/ *\d+ *\| "
    rb"(?:consumed samples|elapsed time per iteration)"
    rb"|\(after \d+ iterations\) memory \(MB\) \| allocated:"
    rb"|^> building (?:GPT|BERT|T5)\w* model \.\.\."
    rb"|^> initializing tensor model parallel with size \d+", re.M)
#: The tokenizer's line: the vocabulary padded to a multiple the model runs with (its logit
#: layer's size, which Megatron's own FLOPs count uses).
_PADDED_VOCAB = re.compile(rb"> padded vocab \(size: \d+\) with \d+ dummy tokens \(new size: (\d{1,12})\)")
_DUMP_BATCH = re.compile(rb"[ \t]*global_batch_size \.+ ?(\d{1,12})[ \t]*$", re.M)
_MODEL = re.compile(rb"^> building (GPT|BERT|T5)\w* model", re.M)
#: The DeepSpeed launcher's line (Megatron-DeepSpeed runs): nodes and processes per node.
_DS_LAUNCH = re.compile(rb"\[launch\.py:\d+:main\] nnodes=(\d{1,6}), num_local_procs=(\d{1,6}), ")
#: Megatron's count of micro-batches an iteration accumulates (global batch / (micro x DP)).
_MICRO_BATCHES = re.compile(rb"[^\n]*?setting number of micro-batches to constant (\d{1,12})[ \t]*$", re.M)
#: An evaluation's line (``validation loss at iteration 100 | lm loss value: 9.08E+00 | ...``;
#: ``validation-<set> loss at ...``, ``... at the end of training for val data``): the
#: validation rows, whose lines mark the interval it ran in, as other families' evaluation
#: lines do.
_VALIDATION = re.compile(rb"validation(?:-[^ |\n]+)? loss at (?:iteration (\d{1,18})\b)?[^|\n]*"
                         rb"\|([^\n]*)")
#: A checkpoint save's first line (``saving checkpoint at iteration     500 to /ckpt``; since
#: 2024 dated, ``[2024-05-02 10:11:12.345678] saving checkpoint at ...``): the save rows, whose
#: lines mark the interval it ran in, as an evaluation's do.
_SAVE = re.compile(rb"^[ \t]*(?:\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?)\] )?"
                   rb"saving checkpoint at iteration +(\d{1,18}) to ", re.M)
#: The ``evaluate`` timer's entry, which Megatron-LM prints after each evaluation since it
#: stopped its iteration timer around evaluations and checkpoint saves (November 2023).
_EVALUATE_TIMER = re.compile(rb"^[^\n]{0,40}? {2,}evaluate \.{3,}: [(0-9]", re.M)


def _ds_config(key: bytes) -> re.Pattern:
    """DeepSpeed's configuration print (``[config.py:982:print]   train_batch_size ... 256``)."""
    return re.compile(rb"[^\n]*?\[config\.py:\d+:print\] +" + key + rb"[ .]+(\d{1,12})[ \t]*$",
                      re.M)


#: DeepSpeed's stamped line at each of its log intervals (``[2022-10-29 00:42:31,001] [INFO]
#: [logging.py:68:log_dist] [Rank 0] step=10, skipped=0, ...``): a wall clock beside
#: Megatron's own timer.
_DS_STEP = re.compile(rb"^[ \t]*\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)[.,](\d{3,6})\] \[INFO\] "
                      rb"\[logging\.py:\d+:log_dist\] \[Rank 0\] step=(\d{1,12}), ", re.M)
#: How far the printed elapsed time may stray from the stamps' spacing (the figure checks'
#: bound: a timer and a wall clock over the same iterations agree far closer).
_ELAPSED_OFF = 0.05
#: How far the printed elapsed time may fall below its timed parts. Real logs print it 0.00 %
#: (v1 and DeepSpeed-engine runs, whose timers cover the whole iteration) to 12 % above them,
#: never below; so this is rounding only: 0.1 ms, the elapsed time's print, of a 5 ms iteration.
_PARTS_OFF = 0.01
#: Megatron's timers after an iteration line, per iteration of the interval, in its two shapes:
#: one line (``time (ms) | forward-compute: 309.31 | backward-compute: 243.47 | ...``; v1,
#: Megatron-DeepSpeed), or core's block, ``(min, max) time across ranks (ms):`` (or ``max time
#: across ranks (ms):``) and a line a timer (``    forward-backward ....: (550.36, 550.91)``).
_MS = rb"[0-9]+(?:\.[0-9]+)?"
_TIMERS = re.compile(rb"^[^\n|]{0,60}?time \(ms\) \|([^\n]*)$", re.M)
_TIMER_BLOCK = re.compile(rb"(?:\(min, max\) |max )time across ranks \(ms\):[ \t]*$", re.M)
_BLOCK_ENTRY = re.compile(rb"[^\n]{0,40}? {2,}([\w/-]+) \.*: (?:\((" + _MS + rb"), " + _MS
                          + rb"\)|(" + _MS + rb"))[ \t]*(?:\n|$)")
#: An iteration's forward and backward passes as each version times them (core's
#: ``forward-backward`` holds the ``forward-compute`` and ``backward-compute`` that
#: Megatron-DeepSpeed and Megatron-LM of 2021 print alone; v1 prints ``forward`` and
#: ``backward``); the ``optimizer`` step follows them, inside no other.
_PASSES = ((b"forward-backward",), (b"forward-compute", b"backward-compute"),
           (b"forward", b"backward"))
_DS_TRAIN_BATCH = _ds_config(b"train_batch_size")
_DS_MICRO = _ds_config(b"train_micro_batch_size_per_gpu")
_DS_ACCUMULATION = _ds_config(b"gradient_accumulation_steps")


def _ds_json(key: bytes) -> re.Pattern:
    """A key of DeepSpeed's JSON configuration echo (``    "train_batch_size": 256,``)."""
    return re.compile(rb'[ \t]*"' + key + rb'": *(\d{1,12}),?[ \t]*$', re.M)


def _cmd_option(option: bytes) -> re.Pattern:
    """An option of the launcher's command line (``[runner.py:504:main] cmd = ... pretrain_gpt.py
    ... --global-batch-size 256``)."""
    return re.compile(rb"[^\n]*?\] cmd = [^\n]*? " + option + rb"[ =](\d{1,12})(?![\d.])")


#: Statements of the global batch beside the dump's and the lines': (what, literal, pattern).
_GLOBAL_SAID = (
    ("DeepSpeed's train_batch_size", b"train_batch_size", _DS_TRAIN_BATCH),
    ("DeepSpeed's JSON train_batch_size", b'"train_batch_size"', _ds_json(b"train_batch_size")),
    ("the launcher's --global-batch-size", b"--global-batch-size",
     _cmd_option(b"--global-batch-size")),
)
#: Statements of the micro batch beside the dump's.
_MICRO_SAID = (
    ("DeepSpeed's train_micro_batch_size_per_gpu", b"train_micro_batch_size_per_gpu", _DS_MICRO),
    ("DeepSpeed's JSON train_micro_batch_size_per_gpu", b'"train_micro_batch_size_per_gpu"',
     _ds_json(b"train_micro_batch_size_per_gpu")),
    ("the launcher's --micro-batch-size", b"--micro-batch-size",
     _cmd_option(b"--micro-batch-size")),
)
#: printed field -> (metric, unit, scale)
_FIELDS = {
    "consumed samples": (M.SAMPLES, M.NONE, 1.0),
    "elapsed time per iteration (ms)": (M.LATENCY, M.SECONDS, 1e-3),
    "throughput per GPU (TFLOP/s/GPU)": ("tflops_per_gpu", "TFLOP/s", 1.0),
    "learning rate": (M.LR, M.NONE, 1.0),
    "global batch size": (M.GLOBAL_BATCH, M.NONE, 1.0),
    "lm loss": (M.LOSS, M.NONE, 1.0),
    "loss scale": ("loss_scale", M.NONE, 1.0),
    "grad norm": ("grad_norm", M.NONE, 1.0),
    "num zeros": ("num_zeros", M.NONE, 1.0),
    "params norm": ("params_norm", M.NONE, 1.0),
    "number of skipped iterations": ("skipped_iterations", M.NONE, 1.0),
    "number of nan iterations": ("nan_iterations", M.NONE, 1.0),
}
_MEMORY_METRICS = ("memory_allocated", M.MEMORY_MAX_ALLOCATED, "memory_reserved",
                   "memory_max_reserved")


#: A line holding one of Megatron's and DeepSpeed's own markers (an iteration line, a stamped
#: step= line, the argument dump's header), found by its literal: group 1 is whatever a
#: launcher put before it, less core's date and spaces.
_MARKED = re.compile(rb"([^\n]*?) *(?:\[\d{4}-\d\d-\d\d[ T][^\]\n]*\] *)?(?:iteration +\d+/ *\d+ *\|"
                     rb"|\[INFO\] \[logging\.py:\d+:log_dist\] \[Rank 0\] step=|-{3,} arguments -{3,})")
_MARKER_LITERALS = (b"iteration ", b"log_dist] [Rank 0] step=", b" arguments -")
#: Distinct tags read at most (a real log has one a host or rank; more are no launcher's).
_MOST_TAGS = 16


def _untagged(log: LogText) -> LogText:
    """`log` without the launcher tags (torchrun's ``[rank0]: ``, pdsh's ``worker-0: ``,
    ``srun -l``'s ``3: ``, a host or pod name; cleaning strips Open MPI's and
    ``[default0]:``) that lead the lines of Megatron's and DeepSpeed's own markers, from
    every line any of them leads, any number in one read as any (nodes and ranks differ):
    ranks and hosts may tag each kind of line differently, or only some lines, and every
    pattern reads them as untagged. A tag of a number, or of ``rank`` and one, states the
    line's rank."""
    data, tags = log.data, {}
    for literal in _MARKER_LITERALS:
        at = data.find(literal)
        while at >= 0 and len(tags) < _MOST_TAGS:
            begin = data.rfind(b"\n", 0, at) + 1
            m = _MARKED.match(data, begin) if at - begin > 1 else None
            if m and (text := m.group(1).strip()):
                tags.setdefault(re.sub(rb"\d+", b"0", text), text)
            end = data.find(b"\n", at)
            at = -1 if end < 0 else data.find(literal, end)
    if not tags:
        return log
    alternatives = []
    for text in sorted(tags.values(), key=len, reverse=True):
        words = re.split(rb"\d+", text)
        ranked = len(words) == 2 and re.sub(rb"[\[\]:]", b"", b"".join(words)) in (b"", b"rank")
        number = rb"(\d{1,6})" if ranked else rb"\d+"
        alternatives.append(number.join(map(re.escape, words)))
    return log.without_tag(re.compile(rb"^ *(?:" + b"|".join(alternatives) + rb") ?", re.M))


def _line_prefixes(log: LogText, starts: np.ndarray, lines: np.ndarray) -> list[bytes]:
    """Text between each line's start and its match; only read where longer than the usual
    single space (date or launcher prefixes), else b''."""
    nl = log.newlines
    begin = np.zeros_like(starts)
    later = lines > 1
    begin[later] = nl[lines[later] - 2] + 1
    out = [b""] * len(starts)
    data = log.data
    for i in np.flatnonzero(starts - begin > 1).tolist():
        out[i] = data[int(begin[i]):int(starts[i])]
    return out


def _timestamps(prefixes: list[bytes]) -> np.ndarray:
    """Unix seconds of the ``[YYYY-MM-DD HH:MM:SS[.ffffff]]`` prefixes (naive -> UTC; a
    decimal comma read as a point, digits past microseconds dropped); NaN without."""
    return unix_seconds([_stamp(m) if p and (m := _DATE.search(p)) else b"" for p in prefixes])


def _stamp(m: re.Match) -> bytes:
    """The prefix's date and time with its fraction, if it prints one."""
    return m.group(1) + b"." + m.group(2) if m.group(2) else m.group(1)


def _read_iterations(log: LogText, parsed: ParsedLog) -> None:
    matches, lines = found(log, _ITER)
    if not matches:
        return
    starts = np.fromiter((m.start() for m in matches), dtype=np.int64, count=len(matches))
    groups = np.array([m.groups() for m in matches], dtype="S")
    # a complete line ends with `|`; a cut one (killed run, truncated file) does not
    ok = np.char.endswith(np.char.rstrip(groups[:, 2]), b"|")
    bad_lines(log, lines[~ok], "Megatron-LM iteration", parsed)
    for i in np.flatnonzero(ok & (np.char.find(groups[:, 2], b",") >= 0)).tolist():
        if (said := _comma_number(groups[i, 2])) is not None:
            ok[i] = False
            bad_lines(log, lines[i:i + 1], "Megatron-LM iteration", parsed, (
                f"prints {said}: a number going on past a comma, which Megatron's prints never "
                "hold (read as a decimal comma or as a thousands separator, it would be a "
                "guess); the line is not read"))
    ok[ok] = in_int64(log, lines[ok], "Megatron-LM iteration", parsed, groups[ok, 0])
    if not ok.any():
        return
    groups, lines = groups[ok], lines[ok]
    prefixes = _line_prefixes(log, starts[ok], lines)
    step, rest = ints(groups[:, 0]), groups[:, 2]
    ts = _timestamps(prefixes)
    ranks = log.ranks_at(lines) if log.line_ranks else None
    for field, (metric, unit, scale) in _FIELDS.items():
        raw = field_values(rest, field.encode())
        keep = raw != b""
        if keep.any():
            parsed.obs.add(line=lines[keep], metric=metric, value=floats(raw[keep]) * scale,
                           phase=M.TRAIN, unit=unit, step=step[keep], timestamp=ts[keep],
                           rank=None if ranks is None else ranks[keep])
    gbs = field_values(rest, b"global batch size")
    known = np.flatnonzero(gbs != b"")
    if len(known):
        last = known[-1]  # the steady-state value (batch-size ramp-up grows it)
        parsed.state("global_batch_size", int(gbs[last]), int(lines[last]))
        _batch_changes(log, parsed, floats(gbs[known]), lines[known])
    _printed_sequence(log, parsed, rest, lines)
    elapsed = field_values(rest, b"elapsed time per iteration (ms)")
    has = elapsed != b""
    elapsed_ms = floats(elapsed[has])
    clock = _elapsed_against_printed_tflops(log, parsed, rest, lines)
    clock.update(_elapsed_against_stamps(log, parsed, step[has], elapsed_ms, lines[has]))
    parts = _elapsed_against_parts(log, parsed, elapsed_ms, lines[has])
    # what a window's sum of elapsed times is held to (analysis.stats.figure_checks)
    for metric, seconds in ((M.CLOCK_LATENCY, clock), (M.PARTS_LATENCY, parts)):
        if seconds:
            at = np.array(sorted(seconds))
            of = np.searchsorted(lines, at)
            parsed.obs.add(line=at, metric=metric, value=np.array([seconds[k] for k in at]),
                           phase=M.TRAIN, unit=M.SECONDS, step=step[of], timestamp=ts[of],
                           rank=None if ranks is None else ranks[of])


#: A number going on past a comma (``578,5``, ``2,560``): no print of Megatron's.
_COMMA_NUMBER = re.compile(rb"[-+]?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?,[0-9][^ ]*")


def _comma_number(rest: bytes) -> str | None:
    """``field: value`` of the first field read (_FIELDS) of an iteration line whose value
    is a number going on past a comma, else None."""
    for part in rest.split(b"|"):
        name, _, value = part.partition(b": ")
        if name.strip().decode("latin-1") in _FIELDS and _COMMA_NUMBER.fullmatch(value.strip()):
            return f"{name.strip().decode('latin-1')}: {value.strip().decode('latin-1')}"
    return None


def _timer_fields(log: LogText) -> dict[int, dict[bytes, float]]:
    """Line -> {timer: milliseconds an iteration} of each timers line or block (a block's
    least time across ranks: no rank's iteration holds less)."""
    data, found = log.data, []
    if b"time (ms) |" in data:
        found = [(m.start(), {k: float(v) for k, v in re.findall(rb"([\w-]+): (" + _MS + rb")",
                                                                 m.group(1))})
                 for m in _TIMERS.finditer(data)]
    if b"time across ranks (ms):" in data:
        for m in _TIMER_BLOCK.finditer(data):
            fields, pos = {}, m.end() + 1
            while (entry := _BLOCK_ENTRY.match(data, pos)) is not None:
                fields[entry.group(1)] = float(entry.group(2) or entry.group(3))
                pos = entry.end()
            found.append((m.start(), fields))
    if not found:
        return {}
    lines = log.lines_at(np.array([at for at, _ in found]))
    return {int(line): fields for line, (_, fields) in zip(lines, found)}


def _parts_ms(fields: dict[bytes, float]) -> float | None:
    """The forward and backward passes' time plus the optimizer's, in the first of the
    versions' names the timers print; None without them (DeepSpeed's own engine timers,
    ``forward``, ``backward`` and ``step``, are not Megatron's)."""
    if b"optimizer" not in fields:
        return None
    for names in _PASSES:
        if all(n in fields for n in names):
            return sum(fields[n] for n in names) + fields[b"optimizer"]
    return None


def _elapsed_against_parts(log: LogText, parsed: ParsedLog, elapsed: np.ndarray,
                           lines: np.ndarray) -> dict[int, float]:
    """A ``figure_mismatch`` where the printed elapsed time per iteration is below the
    forward and backward passes and the optimizer step the timers after it print for the
    same interval (an iteration holds all three, one after another) by more than
    `_PARTS_OFF`, by the median over the intervals after the first (whose timers count
    start-up the elapsed time does not). Returns line -> those parts' seconds."""
    if len(lines) < 4:
        return {}
    at = {line: ms for line, fields in _timer_fields(log).items()
          if (ms := _parts_ms(fields)) is not None and ms > 0}
    if not at:
        return {}
    timer_lines = np.array(sorted(at))
    nxt = np.searchsorted(timer_lines, lines, side="right")  # the timers after each
    ratios, used = [], []
    for i in range(1, len(lines)):
        if nxt[i] < len(timer_lines):
            t_line = int(timer_lines[nxt[i]])
            if i + 1 == len(lines) or t_line < lines[i + 1]:
                ratios.append(elapsed[i] / at[t_line])
                used.append(i)
    _elapsed_off(log, parsed, ratios, lines[used], lambda r: r < 1 - _PARTS_OFF,
                 "the forward, backward and optimizer times their timers print",
                 "; an iteration cannot take less than its parts")
    return {int(lines[i]): elapsed[i] * 1e-3 / r for i, r in zip(used, ratios)}


def _megatron_flops(parsed: ParsedLog) -> tuple[float, float, float] | None:
    """FLOPs of one sequence by Megatron-LM's three counts of the model the dump states."""
    from analysis.stats.gpt_flops import megatron_counts

    return megatron_counts(parsed.parameters, parsed.meta.get("vocab_size"))


#: Half the last printed digit of the elapsed time (ms) and the TFLOP/s (both ``{:.1f}``).
_PRINTED = 0.05
#: Beside the prints' rounding: float noise of the count and the median.
_FLOAT_OFF = 0.002


def _elapsed_against_printed_tflops(log: LogText, parsed: ParsedLog, rest: np.ndarray,
                                    lines: np.ndarray) -> dict[int, float]:
    """A ``figure_mismatch`` where the iteration lines' printed ``throughput per GPU
    (TFLOP/s/GPU)`` (Megatron-LM's FLOPs count over its elapsed time) is more than 5 % off
    what the same lines' elapsed time and global batch give by that count, by the median
    over the lines: both come from one timer, so they disagree only where one was altered.
    Which of Megatron-LM's counts ran (:func:`_megatron_flops`) the lines do not say, and
    two counts of one model differ by a fixed ratio (the 2025 one halves the attention
    scores), so a cut by about that ratio reads as the other count: a count is credited only
    where the lines match it within the two prints' rounding (0.05 of each figure), as a
    print by it does; else the lines are held to the first count. A dump without
    ``group_query_attention`` is older than every version that counts FLOPs (each states it;
    the first count reads it) and is held to the first. Lines printing under 5 TFLOP/s
    (rounding over 1 %) are left out. Returns line -> the seconds an iteration that line's
    TFLOP/s imply by the count held."""
    printed = field_values(rest, b"throughput per GPU (TFLOP/s/GPU)")
    elapsed = field_values(rest, b"elapsed time per iteration (ms)")
    batch = field_values(rest, b"global batch size")
    at = np.flatnonzero((printed != b"") & (elapsed != b"") & (batch != b""))
    world = to_int(parsed.parameters.get("world_size"))
    if len(at) < 3 or not world or world < 1 or (counts := _megatron_flops(parsed)) is None:
        return {}
    tflops, ms, b = floats(printed[at]), floats(elapsed[at]), floats(batch[at])
    keep = (tflops >= 5) & (ms > 0) & (b > 0)
    tflops, ms, b, used = tflops[keep], ms[keep], b[keep], lines[at[keep]]
    if len(used) < 3:
        return {}
    # the elapsed time over the one the printed TFLOP/s implies, by each count
    ratios = [ms * 1e9 * tflops * world / (b * f) for f in counts]
    old = "group_query_attention" not in parsed.parameters
    rounding = float(np.median(_PRINTED / tflops + _PRINTED / ms)) + _FLOAT_OFF
    near = 0 if old else next((k for k in (0, 1, 2)
                               if abs(float(np.median(ratios[k])) - 1) <= rounding), 0)
    derived = [float(np.median(b * f / (ms * 1e9 * world))) for f in counts]
    _elapsed_off(log, parsed, list(ratios[near]), used, lambda r: abs(r - 1) > _ELAPSED_OFF,
                 "the iteration time their own printed throughput per GPU (TFLOP/s/GPU) implies "
                 + ("by Megatron-LM's first FLOPs count (the argument dump states no "
                    "group_query_attention, which every version that counts FLOPs states: it is "
                    "older than all of them)" if old else "by Megatron-LM's first FLOPs count "
                    "(no other matches them within the prints' rounding)"),
                 ": their elapsed times give {:.1f}, {:.1f} or {:.1f} TFLOP/s per GPU by its "
                 "counts of late 2023, 2024 and 2025 on where the lines print {:.1f}, two "
                 "figures of one timer".format(*derived, float(np.median(tflops))))
    return dict(zip(used.tolist(), (ms * 1e-3 / ratios[near]).tolist()))


def _elapsed_off(log: LogText, parsed: ParsedLog, ratios: list[float], used: np.ndarray,
                 off, against: str, why: str) -> None:
    """A ``figure_mismatch`` where the median of the printed elapsed time's `ratios` to
    another clock of the same intervals (lines `used`; at least 3) is `off`."""
    if len(ratios) < 3:
        return
    ratio = float(np.median(ratios))
    if not off(ratio):
        return
    first = int(used[0])
    parsed.problems.append(Problem(
        log.source, first, "figure_mismatch",
        f"the iteration lines' elapsed time per iteration is {ratio:.3f} times {against} "
        f"(the median of {len(ratios)} intervals, lines {first} to {int(used[-1])}){why}, so "
        "the latency, samples/s and TFLOP/s (timed by the printed elapsed time) are in doubt",
        log.line_text(first)[:300]))


def _elapsed_against_stamps(log: LogText, parsed: ParsedLog, step: np.ndarray,
                            elapsed: np.ndarray, lines: np.ndarray) -> dict[int, float]:
    """A ``figure_mismatch`` where the printed elapsed time per iteration (the only clock the
    figures use) is more than 5 % off the spacing of DeepSpeed's stamped ``step=N`` lines
    over the same iterations: the median, per interval both clock alike, of elapsed / stamps'
    milliseconds per iteration (the median leaves out the intervals holding an evaluation or
    a checkpoint, which only the stamps count). Returns line -> the stamps' seconds an
    iteration of the interval it ends, where no evaluation or checkpoint line is in it."""
    if len(step) < 2 or b"log_dist] [Rank 0] step=" not in log.data:
        return {}
    matches = list(_DS_STEP.finditer(log.data))
    if len(matches) < 3:
        return {}
    when = unix_seconds([m.group(1) + b"." + m.group(2) for m in matches])
    at = {int(m.group(3)): t for m, t in zip(matches, when.tolist())}
    ratios, used = [], []
    for i in range(1, len(step)):
        a, b = int(step[i - 1]), int(step[i])
        if b > a and a in at and b in at and at[b] > at[a]:
            ratios.append(elapsed[i] / ((at[b] - at[a]) * 1e3 / (b - a)))
            used.append(i)
    _elapsed_off(log, parsed, ratios, lines[used], lambda r: abs(r - 1) > _ELAPSED_OFF,
                 "the spacing of DeepSpeed's stamped step= lines over the same iterations",
                 ": the two clocks of one run disagree")
    held = _not_training(log)
    return {int(lines[i]): elapsed[i] * 1e-3 / r for i, r in zip(used, ratios)
            if np.searchsorted(held, lines[i - 1]) == np.searchsorted(held, lines[i])}


#: Lines Megatron prints for work between two iteration lines that is not training.
_NOT_TRAINING = (b"validation loss at ", b"saving checkpoint at ")


def _not_training(log: LogText) -> np.ndarray:
    """The sorted lines of an evaluation's or a checkpoint save's print (_NOT_TRAINING)."""
    data, at = log.data, []
    for literal in _NOT_TRAINING:
        pos = data.find(literal)
        while pos >= 0:
            at.append(pos)
            pos = data.find(literal, pos + 1)
    return np.sort(log.lines_at(np.array(at, dtype=np.int64))) if at else np.empty(0, np.int64)


def _ramp_up_stated(parsed: ParsedLog) -> bool:
    """Whether the argument dump states a batch-size ramp-up (``rampup_batch_size``); a log
    without the key (no dump read) may hold one."""
    value = parsed.parameters.get("rampup_batch_size")
    return value is None or value.strip().lower() not in ("", "none", "[]", "false")


def _batch_changes(log: LogText, parsed: ParsedLog, batch: np.ndarray,
                   lines: np.ndarray) -> None:
    """A ``batch_changed`` problem where the printed global batch size changes other than by
    a ramp-up the dump states (growing only; where no dump says, any growth may be one): a job resumed in the same log with another
    batch, whose parts are two runs. A stated ramp-up is left to the rule, which leaves its
    smaller batches' intervals out."""
    change = np.flatnonzero(batch[1:] != batch[:-1])
    if not len(change):
        return
    if _ramp_up_stated(parsed) and bool(np.all(np.diff(batch) >= 0)):
        return
    at = int(change[0]) + 1
    old, new, line = batch[at - 1], batch[at], int(lines[at])
    parsed.problems.append(Problem(
        log.source, line, "batch_changed",
        f"the iteration lines print global batch size {old:g} (lines {int(lines[0])} to "
        f"{int(lines[at - 1])}) and {new:g} from line {line}"
        + ("" if _ramp_up_stated(parsed) else ", and the argument dump states no ramp-up "
           f"(rampup_batch_size {parsed.parameters['rampup_batch_size'].strip()})")
        + ": a job resumed in the same log with another batch, whose parts are two runs",
        log.line_text(line)[:300]))


def _restated_batch(log: LogText, parsed: ParsedLog) -> None:
    """A ``batch_changed`` problem where a later argument dump (a job resumed in the same log)
    states another ``global_batch_size`` than the first, for logs whose iteration lines do
    not print it."""
    first = parsed.parameters.get("global_batch_size", "").strip()
    data, at = log.data, log.data.find(b"global_batch_size .")
    while first and at >= 0:
        m = _DUMP_BATCH.match(data, data.rfind(b"\n", 0, at) + 1)
        if m and m.group(1).decode() != first:
            line = int(log.lines_at(np.array([m.start()]))[0])
            parsed.problems.append(Problem(
                log.source, line, "batch_changed",
                f"the argument dump on line {parsed.meta_lines.get('global_batch_size', '?')} "
                f"states global_batch_size {first} and a later one on line {line} states "
                f"{m.group(1).decode()}: a job resumed in the same log with another batch, "
                "whose parts are two runs", log.line_text(line)[:300]))
            return
        at = data.find(b"global_batch_size .", at + 1)


def _first_number(log: LogText, literal: bytes, pattern: re.Pattern) -> tuple[int, int] | None:
    """(value, line) of the first line `pattern` matches (found by `literal`), or None."""
    m = first_line(log.data, literal, pattern)
    if m is None:
        return None
    return int(m.group(1)), int(log.lines_at(np.array([m.start()]))[0])


def _batch_statements(log: LogText, parsed: ParsedLog, dump_lines: dict[str, int]) -> None:
    """A ``metadata_conflict`` where the log states its global batch in ways that disagree:
    the argument dump's ``global_batch_size``, the iteration lines' ``global batch size``,
    DeepSpeed's ``train_batch_size`` (its print and its JSON echo), the launcher's
    ``--global-batch-size``, and micro_batch_size x data-parallel size x the micro-batches
    an iteration accumulates (Megatron's ``setting number of micro-batches`` line,
    DeepSpeed's ``gradient_accumulation_steps``), the micro batch as the dump states it and,
    where it differs, as DeepSpeed (print, JSON echo) and the launcher's
    ``--micro-batch-size`` do. Megatron and DeepSpeed both derive
    these from one setting, so any disagreement means one was altered or misread, and the
    samples/s and TFLOP/s (which count the global batch the lines print) are in doubt; the
    figures keep that batch. Without an accumulation count, a global batch that is no whole
    multiple of micro x DP (Megatron refuses to run one) is the conflict. A log that ends
    inside a ramp-up its dump states prints smaller batches than the rest state: its lines
    are left out."""
    counted = parsed.meta.get("global_batch_size")
    if not isinstance(counted, int):
        return
    params = parsed.parameters
    said: list[tuple[str, int, int | None]] = []  # (the statement, its value, its line)
    dump = to_int(params.get("global_batch_size"))
    if dump is not None:
        line = dump_lines.get("global_batch_size")
        said.append((f"the argument dump's global_batch_size {dump:,} (line {line})", dump, line))
    line = parsed.meta_lines.get("global_batch_size")
    ref = counted
    if line != dump_lines.get("global_batch_size"):
        if dump is not None and counted < dump and _ramp_up_stated(parsed):
            ref = dump  # a stated ramp-up the log ends inside: the rest state the batch it grows to
        else:
            said.append((f"the iteration lines' global batch size {counted:,} (line {line})",
                          counted, line))
    for what, literal, pattern in _GLOBAL_SAID:
        if (n := _first_number(log, literal, pattern)) is not None:
            said.append((f"{what} {n[0]:,} (line {n[1]})", *n))
    micro = to_int(params.get("micro_batch_size"))
    dp, dp_key = to_int(params.get("data_parallel_size")), "data_parallel_size"
    if dp is None:
        world, tp, pp = (to_int(params.get(k)) for k in (
            "world_size", "tensor_model_parallel_size", "pipeline_model_parallel_size"))
        if world and tp and pp and world % (tp * pp) == 0:
            dp, dp_key = world // (tp * pp), "world_size"
    counts = [(what, *n) for what, literal, pattern in (
        ("Megatron's micro-batches an iteration", b"micro-batches to constant", _MICRO_BATCHES),
        ("DeepSpeed's gradient_accumulation_steps", b"gradient_accumulation_steps",
         _DS_ACCUMULATION)) if (n := _first_number(log, literal, pattern)) is not None]
    if micro and dp and micro > 0 and dp > 0:
        parts = (f"micro_batch_size {micro} (line {dump_lines.get('micro_batch_size', '?')}) x "
                 f"data-parallel size {dp} ({dp_key}, line {dump_lines.get(dp_key, '?')})")
        for what, k, line in counts:
            said.append((f"{parts} x {what} {k} (line {line}) = {micro * dp * k:,}",
                         micro * dp * k, line))
        if not counts and ref % (micro * dp):
            # Megatron refuses a global batch that is no whole multiple of micro x DP
            said.append((f"{parts} = {micro * dp:,}, of which {ref:,} is no whole multiple",
                         micro * dp, dump_lines.get("micro_batch_size")))
    if dp and dp > 0 and counts:
        # the micro batch as DeepSpeed and the launcher state it, with the first count
        what_k, k, k_line = counts[0]
        for what, literal, pattern in _MICRO_SAID:
            if (n := _first_number(log, literal, pattern)) is not None and n[0] != micro:
                said.append((f"{what} {n[0]} (line {n[1]}) x data-parallel size {dp} x "
                             f"{what_k} {k} (line {k_line}) = {n[0] * dp * k:,}",
                             n[0] * dp * k, n[1]))
    odd = [s for s in said if s[1] != ref]
    if not odd:
        return
    agree = [text for text, value, _ in said if value == ref]
    first = odd[0][2]
    lead = (f"the figures count a global batch of {ref:,} samples an iteration" if ref == counted
            else f"the log ramps its global batch up to {ref:,} samples an iteration")
    parsed.problems.append(Problem(
        log.source, first, "metadata_conflict",
        lead
        + (f" ({'; '.join(agree)})" if agree else "")
        + f", but {'; '.join(text for text, _, _ in odd)}: they cannot all be what ran, so "
        "its samples/s and TFLOP/s are in doubt", log.line_text(first)[:300] if first else ""))


def _printed_sequence(log: LogText, parsed: ParsedLog, rest: np.ndarray,
                      lines: np.ndarray) -> None:
    """The sequence length the iterations ran, where their lines print it (``curriculum
    seqlen``, or Megatron-DeepSpeed's ``consumed tokens`` per ``consumed samples`` of each
    interval) and it is not the dump's ``seq_length``: one printed length replaces it, lengths
    that change (curriculum learning) leave it unknown, either said as a problem."""
    curriculum = field_values(rest, b"curriculum seqlen")
    tokens, samples = field_values(rest, b"consumed tokens"), field_values(rest, b"consumed samples")
    if (curriculum != b"").any():
        at = np.flatnonzero(curriculum != b"")
        seqs = floats(curriculum[at])
    else:
        at = np.flatnonzero((tokens != b"") & (samples != b""))
        tok, smp = floats(tokens[at]), floats(samples[at])
        d_tok, d_smp = np.diff(tok, prepend=0.0), np.diff(smp, prepend=0.0)
        ok = d_smp > 0
        at, seqs = at[ok], d_tok[ok] / d_smp[ok]
    stated = parsed.meta.get("seq_length")
    if not len(at) or (stated is not None and np.all(seqs == stated)):
        return
    low, high = float(seqs.min()), float(seqs.max())
    one = low == high and low.is_integer()
    if one:
        parsed.state("seq_length", int(low), int(lines[at[0]]))
    if stated is None:
        return  # nothing contradicted: the lines state it, or nothing does
    where = f"line {int(lines[at[0]])}" + (f" to {int(lines[at[-1]])}" if len(at) > 1 else "")
    if one:
        reason = (f"the argument dump says seq_length {stated}; the iteration lines ({where}) "
                  f"run sequences of {low:g} tokens: using the lines' length")
    else:
        parsed.meta.pop("seq_length", None)
        parsed.meta_lines.pop("seq_length", None)
        reason = (f"the argument dump says seq_length {stated}; the iteration lines ({where}) "
                  f"run sequences of {low:g} to {high:g} tokens (curriculum learning): no one "
                  "sequence length, so no TFLOP/s")
    first = int(lines[at[0]])
    parsed.problems.append(Problem(log.source, first, "meta_contradicted", reason,
                                   log.line_text(first)[:300]))


def _read_launcher(log: LogText, parsed: ParsedLog) -> None:
    """Nodes and GPUs per node from the DeepSpeed launcher's ``nnodes=1, num_local_procs=8``
    line (one process per GPU), which Megatron-DeepSpeed logs print before the dump."""
    m = _DS_LAUNCH.search(log.data)  # a literal prefix: a fast search of the whole log
    if m is None or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        return
    line = int(log.lines_at(np.array([m.start()]))[0])
    for key, value in (("num_nodes", m.group(1)), ("gpus_per_node", m.group(2))):
        parsed.state(key, int(value), line)


def _timer_stopped_for_pauses(log: LogText) -> bool:
    """Whether the log prints the ``evaluate`` timer: Megatron-LM stops its iteration timer
    around evaluations and checkpoint saves since it prints it (one change of November 2023),
    so their time is in no printed elapsed time per iteration, only in the line dates."""
    return b"evaluate ..." in log.data and _EVALUATE_TIMER.search(log.data) is not None


def _mark_timed_apart(log: LogText, parsed: ParsedLog, lines: np.ndarray, phase: str) -> None:
    """``timed_apart`` rows on the pauses' `lines` where the iteration timer stopped around
    them: the latencies leave them out, the dates count them."""
    if len(lines) and _timer_stopped_for_pauses(log):
        parsed.obs.add(line=lines, metric=M.TIMED_APART, phase=phase, value=np.ones(len(lines)))


def _read_validation(log: LogText, parsed: ParsedLog) -> None:
    """The evaluations' lines as validation rows (their ``lm loss value``, NaN where another
    loss is printed), which the methods read to leave the interval holding one out or say
    it is counted: the line dates count an evaluation, and so does the elapsed time per
    iteration, unless the timer stopped around it (``timed_apart`` rows)."""
    if b" loss at " not in log.data:
        return
    matches, lines = found(log, _VALIDATION)
    if not matches:
        return
    groups = np.array([m.groups(b"") for m in matches], dtype="S")
    fit = in_int64(log, lines, "Megatron-LM validation", parsed, groups[:, 0])
    groups, lines = groups[fit], lines[fit]
    parsed.obs.add(line=lines, metric=M.LOSS, phase=M.VAL, step=ints(groups[:, 0]),
                   value=floats(field_values(groups[:, 1], b"lm loss value")))
    _mark_timed_apart(log, parsed, lines, M.VAL)


def _read_saves(log: LogText, parsed: ParsedLog) -> None:
    """The checkpoint saves' first lines as save rows (stamped where dated): the interval
    that holds one is not training alone (Megatron-DeepSpeed's timer runs across a save;
    Megatron-LM since November 2023 stops it, ``timed_apart`` rows, but the dates count it)."""
    if b"saving checkpoint at iteration" not in log.data:
        return
    matches, lines = found(log, _SAVE)
    if not matches:
        return
    groups = np.array([m.groups(b"") for m in matches], dtype="S")
    fit = in_int64(log, lines, "Megatron-LM checkpoint save", parsed, groups[:, 1])
    groups, lines = groups[fit], lines[fit]
    parsed.obs.add(line=lines, metric=M.SAVE, phase=M.CHECKPOINT, value=np.ones(len(lines)),
                   step=ints(groups[:, 1]), timestamp=unix_seconds(list(groups[:, 0])))
    _mark_timed_apart(log, parsed, lines, M.CHECKPOINT)


def _read_memory(log: LogText, parsed: ParsedLog) -> None:
    matches, lines = found(log, _MEMORY)
    if not matches:
        return
    groups = np.array([m.groups() for m in matches], dtype="S")
    fit = in_int64(log, lines, "Megatron-LM memory", parsed, groups[:, 0], groups[:, 1])
    groups, lines = groups[fit], lines[fit]
    rank, step = ints(groups[:, 0]), ints(groups[:, 1])
    for i, metric in enumerate(_MEMORY_METRICS):
        parsed.obs.add(line=lines, metric=metric, value=floats(groups[:, 2 + i]),
                       phase=M.MEMORY, unit=M.MIB, step=step, rank=rank)


#: Tokens of the GPT-2 BPE vocabulary (Megatron's ``GPT2BPETokenizer``).
GPT2_VOCAB = 50257


def _padded_gpt2_vocab(parsed: ParsedLog) -> None:
    """The vocabulary the model runs with where the log lacks the tokenizer's ``padded
    vocab`` line: the GPT-2 BPE's tokens padded, as Megatron pads them, to a multiple of
    ``make_vocab_size_divisible_by`` x the tensor-parallel size the dump states."""
    params = parsed.parameters
    if str(params.get("tokenizer_type", "")).strip() != "GPT2BPETokenizer":
        return
    try:
        step = int(str(params.get("make_vocab_size_divisible_by", "")).strip()) * int(
            str(params.get("tensor_model_parallel_size", "1")).strip() or 1)
    except ValueError:
        return
    if step < 1:
        return
    parsed.meta["vocab_size"] = -(-GPT2_VOCAB // step) * step


@register
class MegatronParser(GPTCases, LogParser):
    no_throughput = ("Megatron's iteration lines print no throughput in samples/s (they give "
                     "the elapsed time per iteration, and newer versions TFLOP/s per GPU; "
                     "DeepSpeed's SamplesPerSec timer lines, where a log has them, are not "
                     "read)", "method_fallback")
    name = "megatron"
    markers = (b"iteration", b"memory (mb)", b"> building ", b"tensor model parallel")
    framework = "Megatron-LM"
    description = "Megatron-LM pretrain_gpt/bert stdout logs (iteration and memory lines)"

    max_score = 90

    @classmethod
    def sniff(cls, head: bytes) -> int:
        if _SNIFF.search(head):
            return 90
        if b" arguments " in head and b"  tensor_model_parallel_size ." in head:
            return 40
        return 0

    def parse(self, log: LogText) -> ParsedLog:
        parsed = ParsedLog(self.name)
        log = _untagged(log)
        dump_lines = read_argument_dump(log, parsed)
        model = first_line(log.data, b"> building ", _MODEL)
        if model:
            parsed.state("model", normalize_model(model.group(1).decode()),
                         int(log.lines_at([model.start()])[0]))
        _read_launcher(log, parsed)
        padded = _PADDED_VOCAB.search(log.data)
        if padded and "padded_vocab_size" not in parsed.parameters:
            parsed.state("vocab_size", int(padded.group(1)), int(log.lines_at([padded.start()])[0]))
        elif "vocab_size" not in parsed.meta:
            _padded_gpt2_vocab(parsed)
        _read_iterations(log, parsed)
        if not any(p.kind == "batch_changed" for p in parsed.problems):
            _restated_batch(log, parsed)
        _batch_statements(log, parsed, dump_lines)
        _read_memory(log, parsed)
        _read_validation(log, parsed)
        _read_saves(log, parsed)
        return parsed

    def dlperf(self, run: RunData) -> Estimate:
        return latency_rule(run, "elapsed time per iteration", _ramp_up_lines(run))


def _ramp_up_lines(run: RunData) -> np.ndarray:
    """Lines whose printed global batch size is not the last one printed
    (``--rampup-batch-size`` grows the batch to it): their latency is a smaller batch's."""
    batch = run.series(M.GLOBAL_BATCH)
    value, lines = batch["value"].to_numpy(), batch["line"].to_numpy()
    return lines[value != value[-1]] if len(value) else lines
