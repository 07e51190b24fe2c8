"""Lean reader of NVIDIA DLE PyTorch DLLogger stdout logs for the DLPerf rule (the full
reader: :mod:`analysis.parsers.dll_pytorch`).

It reads the usual log only: training lines of the 2020 shape (``DLL <datetime> - Epoch: E
Iteration: I  train.loss : L  train.total_ips : T img/s``, the throughput a plain decimal,
datetimes with 6-digit fractions of a second), one epoch, iterations one by one, at most one
PARAMETER line and any non-DLL lines, up to the line after the window (Iteration 126). Lines
are handled a list at a time (one shape check per distinct line shape, ``map`` and
``itemgetter``): per-line Python would cost more than the extract script's whole read.
Anything else, and it gives up (the full path reads the log).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from itertools import repeat
from operator import itemgetter

from analysis.lean.clock import microseconds
from analysis.lean.read import ZERO_DIGITS, LeanRead
from analysis.lean.sniff import HEAD, head_is
from analysis.logtext import contains
from analysis.parsers._fields import LAUNCH, dll_parameter_fields, parse_parameters, to_int
from analysis.stats.case_stats import configuration_digest

FAMILY, FRAMEWORK = "dll_pytorch", "PyTorch"
#: Bytes a log of this family has in its first 4 KiB (which reader to ask).
MARKER = b"DLL "
#: The rule: training lines after Iteration SKIP, the LAST-th minus the FIRST-th.
SKIP, FIRST, LAST = 5, 20, 120
#: A memory line anywhere: the full path reads the whole log for its peak.
LATE_MARKER = b"memory_max_allocated"
#: The shape of a usual training line (a subset of what the full reader takes), and of the
#: PARAMETER line.
_TRAIN_SHAPE = re.compile(rb"DLL 0000-00-00 00:00:00\.000000 - Epoch: 0 Iteration: 0+  "
                          rb"train\.loss : [^ ]+  train\.total_ips : 0{1,30}(?:\.0*)? img/s")
_PARAMETER_SHAPE = re.compile(rb"DLL 0000-00-00 00:00:00(?:\.0{1,6})? - PARAMETER[^\n]*")
#: The line after the window (iterations printed one by one from 1): Iteration 126.
_AFTER = b" Iteration: %d  " % (SKIP + LAST + 1)
_DATETIME = 26  # bytes of "YYYY-MM-DD HH:MM:SS.ffffff"
_EPOCH = b" - Epoch: "
_AT_EPOCH = len(MARKER) + _DATETIME  # where a usual training line says " - Epoch: "
_HEAD_END = _DATETIME + len(b" - Epoch: 0 Iteration: ")
#: Offset in a usual training line of the space after its epoch (where sniff's match ends).
_EPOCH_SPACE = len(MARKER) + _DATETIME + len(b" - Epoch: 0")


def read(data: bytes) -> LeanRead | None:
    """The rule's window of `data` (a clean log), or None to give up: not this family, as
    :func:`analysis.parsers.detect` decides, or not the usual log.

    Detect's sniff sees only usual lines in the first 4 KiB (PyTorch steps, no TensorFlow
    ones) and scores 90 when a training line starts there; no rival may score more (only
    the other lines of the head can hold a rival's marker or a rank prefix)."""
    if contains(data, LATE_MARKER):
        return None
    first_dll = data.find(b"\nDLL ")
    if LAUNCH.search(data, 0, len(data) if first_dll < 0 else first_dll):
        return None  # the full path reads nodes and GPUs from the launch command
    end = data.find(_AFTER)
    if end < HEAD:
        return None  # fewer lines, or not printed one by one: the full path reads it
    cut = data.find(b"\n", end)
    region = data[:len(data) if cut < 0 else cut]
    if not region[region.rfind(b"\n") + 1:].startswith(MARKER):
        return None  # the line after the window is no DLL line
    shapes = region.translate(ZERO_DIGITS).split(b"\n")
    param = None
    for shape in set(shapes):
        if shape[:4] != MARKER or _TRAIN_SHAPE.fullmatch(shape):
            continue
        if param is not None or not _PARAMETER_SHAPE.fullmatch(shape) \
                or shapes.count(shape) != 1:
            return None  # a DLL line of another shape (or a second PARAMETER line)
        at = region.find(b" - PARAMETER")  # the one line of that shape
        start = region.rfind(b"\n", 0, at) + 1
        param = region[start:region.find(b"\n", at)]
    others = b"\n".join(line for line in data[:HEAD].split(b"\n")  # but training lines
                         if line[:4] != MARKER or line[_AT_EPOCH:_AT_EPOCH + 10] != _EPOCH)
    if not head_is(FAMILY, 90, others):
        return None
    parts = (b"\n" + region).split(b"\nDLL ")[1:]  # each DLL line (with any lines after it)
    if param is not None:
        del parts[next(i for i, p in enumerate(parts) if p.startswith(param[4:]))]
    return _window(data, parts, param)


def _window(data: bytes, parts: list[bytes], param: bytes | None) -> LeanRead | None:
    """The read from the training lines (`parts`: each without "DLL ", any non-DLL lines
    after it attached): each says the next iteration of one epoch; datetimes of one width
    compare as text."""
    head = parts[0][_DATETIME:_HEAD_END]  # " - Epoch: E Iteration: "
    first = int(parts[0][_HEAD_END:parts[0].index(b" ", _HEAD_END)])
    if not all(map(bytes.startswith, parts, _expected(head, first, len(parts)),
                   repeat(_DATETIME))):
        return None  # repeated, restarted or skipped iterations, or a second epoch
    stamps = list(map(itemgetter(slice(0, _DATETIME)), parts))
    if sorted(stamps) != stamps:
        return None  # back in time
    if stamps[0][:10] == stamps[-1][:10]:  # one day: the latest hour is the largest
        joined = b"".join(stamps)
        if microseconds(stamps[-1]) is None \
                or max(joined[14::_DATETIME]) > 53 or max(joined[17::_DATETIME]) > 53:
            return None  # a minute or second of 60 or more ("5" is 53), or no date
    elif None in map(microseconds, stamps):  # past midnight: each one
        return None
    skipped = max(0, SKIP + 1 - first)  # lines up to Iteration SKIP
    if len(stamps) - skipped != LAST + 1 \
            or data.find(MARKER + parts[0][:_HEAD_END]) + _EPOCH_SPACE >= HEAD:
        return None  # not the window's lines, or sniff would not score 90 on the first 4 KiB
    t_first = microseconds(stamps[skipped + FIRST - 1])
    t_last = microseconds(stamps[skipped + LAST - 1])
    if t_first is None or t_last is None or t_last <= t_first:
        return None
    stated, ws, config = {}, None, ""
    if param is not None:
        stamp, rest = param[4:].split(b" - PARAMETER", 1)
        if microseconds(stamp) is None or b"Namespace(" in rest:
            return None  # a printed Namespace (BERT's Config): the full path reads it
        stated, ws, config = _stated(rest)
    return LeanRead(FAMILY, FRAMEWORK, dict(stated), (t_last - t_first) / 1e6, LAST - FIRST,
                    True, ws, config)


@lru_cache(maxsize=256)
def _stated(payload: bytes) -> tuple[dict, int | None, str]:
    """The run fields, world size and configuration digest a PARAMETER line states (the
    repeats of a case print the same line: read once)."""
    params = parse_parameters(payload)
    ws = to_int(params.get("world_size"))
    return ({key: value for key, value, _ in dll_parameter_fields(params)},
            ws if ws is not None and ws > 0 else None, configuration_digest(params))


@cache
def _expected(head: bytes, first: int, n: int) -> list[bytes]:
    """What n usual training lines say after their datetime: `head` (the epoch and the word
    Iteration), then iterations `first`, `first` + 1, … one by one."""
    return [head + b"%d  train.loss : " % i for i in range(first, first + n)]
