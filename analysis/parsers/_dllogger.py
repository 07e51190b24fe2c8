"""Shared reading of NVIDIA DLLogger stdout lines for the DLL families (not a family itself).

A stdout line is ``DLL <datetime> - <step> <name> : <value> [<unit>] …`` (docs/formats.md §5):
metrics are separated by one space after a unit and by two when the unit is empty; the
datetime lacks its fraction when the microseconds are 0. :func:`read` splits every DLL line
of a log into a step kind, step numbers, a timestamp and (name, value, unit) triples and
returns them grouped per (kind, name, unit) as arrays, plus the PARAMETER dump.

Speed: the training lines of one file nearly always share one *shape* (the text with
every run of digits written as one ``0``, :mod:`analysis.parsers._shapes`). The first
line of a shape becomes a token template, read by the general path; the other lines of the
shape differ only in their digits, so they are read as token columns (``int``, ``float``
and one vectorised datetime conversion) — the same values the general path gives. Lines
of a shape the template does not cover in every token (PARAMETER, a value spelled ``nan``,
a time of another width, few lines) take the per-line general path, the reference
(the tests compare both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from analysis import metrics as M
from analysis.layout import meta_from_path
from analysis.logtext import LogText
from analysis.parsers._fields import INT64_MAX, dll_parameter_fields, parse_parameters, to_int
from analysis.parsers._shapes import (
    DECIMAL_SHAPES,
    datetime_columns,
    floats,
    has_digit,
    in_line_order,
    ints,
    line_shapes,
    rows_by_shape,
    tokens_of,
    unix_seconds,
)
from analysis.parsers.base import ParsedLog
from analysis.parsers.gpu_memory import add_memory_blocks
from analysis.problems import Problem
from analysis.user_meta import accumulation_counts, against_layout, is_count

# step kinds
TRAIN, VAL, EPOCH, SUMMARY, PARAMETER = "train", "val", "epoch", "summary", "parameter"

_DT = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?"
# Line shapes by which the two DLL families sniff (searched in "\n" + head: a literal prefix
# is searched for fast, where ``^`` with re.M is tried at every byte).
_LINE = rb"\nDLL " + _DT + rb" - "
PT_STEP = re.compile(_LINE + rb"(?:Epoch: \d+ |Summary:|Training Epoch: \d+ )")
TF_STEP = re.compile(_LINE + rb"(?:\(|Iteration: )")
PARAM = re.compile(_LINE + rb"PARAMETER ")
ANY = re.compile(_LINE)
#: The framework an argument dump states (``framework : PyTorch``, ``torch_version : 2.1``).
_STATED = re.compile(_LINE + rb"PARAMETER [^\n]*?\b(?:framework : (PyTorch|TensorFlow)\b"
                     rb"|(torch|pytorch|tf|tensorflow)_version : )", re.I)


def stated_framework(head: bytes) -> str:
    """'pytorch' or 'tensorflow' where a PARAMETER line of `head` ("\\n" + a log's head)
    states its framework, else '': what the program says of itself outweighs its step form,
    which dllogger prints as the program passes it (a tuple by default, ``str(step)``).
    The pattern's two literals are looked for first: its lazy scan of an argument dump's
    long line costs most of a sniff where the dump states neither."""
    lower = head.lower()
    if b"framework : " not in lower and b"_version : " not in lower:
        return ""
    m = _STATED.search(head)
    if m is None:
        return ""
    word = (m.group(1) or m.group(2)).lower()
    return "tensorflow" if word in (b"tf", b"tensorflow") else "pytorch"
_GENERAL = re.compile(rb"DLL (" + _DT + rb") - (.*)", re.S)
#: A bare-number step (``str(step)``): a training iteration, or (:func:`_bare_steps`) an
#: epoch where the log's training lines name their steps in another form.
_BARE = "bare"
#: (pattern on the stripped step text, kind, role of each captured number)
_STEPS = (
    (re.compile(rb"Epoch: (\d+) Iteration: (\d+) Validation Iteration: (\d+)"), VAL,
     ("epoch", "step", "val_step")),
    (re.compile(rb"Epoch: (\d+) Iteration: (\d+)"), TRAIN, ("epoch", "step")),
    # PyTorch BERT (run_pretraining.py) names its training steps with a formatter
    (re.compile(rb"Training Epoch: (\d+) Training Iteration: (\d+)"), TRAIN, ("epoch", "step")),
    (re.compile(rb"Epoch: (\d+)"), EPOCH, ("epoch",)),
    (re.compile(rb"Summary:"), SUMMARY, ()),
    (re.compile(rb"\(\)"), SUMMARY, ()),
    (re.compile(rb""), SUMMARY, ()),  # ``step=tuple()`` under a formatter prints nothing
    (re.compile(rb"\((\d+), (\d+), (\d+)\)"), VAL, ("epoch", "step", "val_step")),
    (re.compile(rb"\((\d+), (\d+)\)"), TRAIN, ("epoch", "step")),
    (re.compile(rb"\((\d+),?\)"), EPOCH, ("epoch",)),
    (re.compile(rb"Iteration: (\d+)"), TRAIN, ("step",)),
    (re.compile(rb"(\d+)"), _BARE, ("step",)),  # ``step=25``: dllogger prints ``str(step)``
)
_ROLES = ("epoch", "step", "val_step")
#: A Python logging record (``INFO:tensorflow:Saving checkpoints …``, TensorFlow's stderr)
#: written onto a DLL line without a newline between them: the DLL record ends before it.
_INTERLEAVED = re.compile(rb" (?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[A-Za-z_][\w.]*:")
_INT_TOKEN = re.compile(rb"(\D*)(\d+)(\D*)")
_NAN_WORDS = {b"nan", b"NaN", b"-nan"}
#: A value the program did not measure (DLE ResNet prints ``val.top1 : None %`` in a
#: training-only run): no observation and no problem, unlike a printed nan.
_NOT_MEASURED = {b"None", b"none", b"null", b"NULL"}
_FAST_MIN_LINES = 4  # fewer lines of one shape than this: the general path is cheaper


def not_measured(tok: bytes) -> bool:
    """Whether a printed value says "not measured" (``None``) rather than a number."""
    return tok.strip() in _NOT_MEASURED


def number(tok: bytes) -> float | None:
    """A printed value as float (nan words → NaN), or None when it is not a number."""
    try:
        return float(tok)
    except ValueError:
        return float("nan") if tok.strip() in _NAN_WORDS else None


# --- results ------------------------------------------------------------------------------

@dataclass
class Group:
    """Observations of one printed metric on lines of one step kind (arrays of equal length)."""

    kind: str
    name: str
    unit: str  # as printed, '' when absent or 'None'
    line: np.ndarray
    timestamp: np.ndarray
    epoch: np.ndarray  # -1 = not printed
    step: np.ndarray  # -1 = not printed
    value: np.ndarray


@dataclass
class DllRead:
    groups: list[Group] = field(default_factory=list)
    parameters: dict = field(default_factory=dict)  # name -> value text
    parameter_lines: dict = field(default_factory=dict)  # name -> line
    parameter_stamps: list = field(default_factory=list)  # (line, datetime text), in order
    problems: list[Problem] = field(default_factory=list)


# --- general path: one line at a time -----------------------------------------------------

def _split_metrics(toks: list[bytes], i: int):
    """(name, value, unit) triples from tokens starting at `i`, or an error text."""
    out = []
    n = len(toks)
    while i < n:
        if toks[i] == b"":
            i += 1
            continue
        if i + 2 >= n or toks[i + 1] != b":" or toks[i + 2] == b"":
            return f"expected '<name> : <value>' at {b' '.join(toks[i:i + 3]).decode('utf-8', 'replace')!r}"
        name, val = toks[i], toks[i + 2]
        i += 3
        unit = b""
        if i < n and toks[i] != b"" and not (i + 1 < n and toks[i + 1] == b":"):
            unit = toks[i]
            i += 1
        out.append((name, val, unit))
    return out


def _step_of(step_text: bytes):
    for pat, kind, roles in _STEPS:
        m = pat.fullmatch(step_text)
        if m:
            return kind, dict(zip(roles, (int(g) for g in m.groups()), strict=True))
    return None


def parse_line(line: bytes):
    """Read one DLL line (general path).

    Returns ``(datetime, kind, numbers, metrics)`` with numbers {role: int} and metrics
    [(name, value bytes, unit)], ``(datetime, PARAMETER, {}, rest)`` for the argument dump,
    or an error text.
    """
    m = _GENERAL.fullmatch(line)
    if not m:
        return "not 'DLL <YYYY-MM-DD HH:MM:SS[.ffffff]> - <step> <metrics>'"
    dt, rest = m.group(1), m.group(2)
    if rest.startswith(b"PARAMETER"):
        return dt, PARAMETER, {}, rest[len(b"PARAMETER"):]
    cut = _INTERLEAVED.search(rest)
    if cut:  # another stream's record written onto the line: not the DLL record's
        rest = rest[:cut.start()]
    toks = rest.split(b" ")
    first = next((i for i in range(len(toks) - 1) if toks[i] and toks[i + 1] == b":"), None)
    step_text = b" ".join(toks[:first] if first is not None else toks).strip()
    step = _step_of(step_text)
    if step is None:
        return f"unrecognised step {step_text[:60].decode('utf-8', 'replace')!r}"
    if any(v > INT64_MAX for v in step[1].values()):  # kept as int64
        return f"a step number beyond int64 in {step_text[:60].decode('utf-8', 'replace')!r}"
    metrics = _split_metrics(toks, first) if first is not None else []
    if isinstance(metrics, str):
        return metrics
    return dt, step[0], step[1], metrics


# --- fast path: one shape at a time ---------------------------------------------------------

@dataclass
class _Template:
    kind: str
    tokens: list  # per space-separated token: ("const", bytes) | ("date",) | ("time",) |
    #              ("int", role, pre, suf) | ("float",)
    metrics: list  # (name, unit) per float token, in order


def _template(line: bytes):
    """A token template from a DLL line the general path reads, or None."""
    parsed = parse_line(line)
    if isinstance(parsed, str) or parsed[1] == PARAMETER or not parsed[3]:
        return None
    _dt, kind, numbers, metrics = parsed
    toks = line.split(b" ")
    first = next(i for i in range(4, len(toks) - 1) if toks[i] and toks[i + 1] == b":")
    int_toks = [i for i in range(4, first) if _INT_TOKEN.fullmatch(toks[i])]
    if len(int_toks) != len(numbers):
        return None
    spec: list = [("const", t) for t in toks]
    spec[1], spec[2] = ("date",), ("time",)
    for i, role in zip(int_toks, [r for r in _ROLES if r in numbers], strict=True):
        pre, _, suf = _INT_TOKEN.fullmatch(toks[i]).groups()
        spec[i] = ("int", role, pre, suf)
    names = []
    i = first
    for name, _val, unit in metrics:
        while toks[i] == b"":
            i += 1
        spec[i + 2] = ("float",)
        names.append((name.decode("utf-8", "replace"), unit.decode("utf-8", "replace")))
        i += 3 + (1 if unit else 0)
    return _Template(kind=kind, tokens=spec, metrics=names)


def read(log: LogText) -> DllRead:
    """Every DLL line of `log`, grouped per (step kind, metric, unit) in line order;
    unreadable DLL lines become ``bad_line`` problems."""
    out = DllRead()
    lines = log.data.split(b"\n")
    acc: dict[tuple, list] = {}
    general: list[int] = []
    for shape, rows in rows_by_shape(line_shapes(log.data), b"DLL ").items():
        if len(rows) < _FAST_MIN_LINES or not _read_shape(lines, rows, shape, acc):
            general += rows
    general.sort()
    _general(log, general, [lines[i] for i in general], out, acc)
    _bare_steps(acc)
    _add_groups(acc, out)
    return out


def _read_shape(lines: list[bytes], rows: list[int], shape: bytes, acc: dict) -> bool:
    """Read the lines `rows` (0-based, all of `shape`) as token columns into `acc`, as the
    general path reads them; False (nothing added) when a token is not what the first
    line's template says for every line."""
    tpl = _template(lines[rows[0]])
    if tpl is None:
        return False
    kinds, width = shape.split(b" "), len(tpl.tokens)
    tokens = tokens_of([lines[i] for i in rows], width)
    if tokens is None or len(kinds) != width:
        return False
    ts = datetime_columns(tokens[1::width], tokens[2::width])
    if ts is None:
        return False
    nums, values = {}, []
    for k, tok in enumerate(tpl.tokens):
        if tok[0] == "const":
            # a token of no digit is the same text on every line of its shape
            if has_digit(tok[1]) and set(tokens[k::width]) != {tok[1]}:
                return False
        elif tok[0] == "int":
            _, role, pre, suf = tok
            col = tokens[k::width]
            if pre or suf:
                col = [t[len(pre):len(t) - len(suf)] for t in col]
            nums[role] = ints(col)
            if nums[role] is None:
                return False
        elif tok[0] == "float":
            if kinds[k] not in DECIMAL_SHAPES:
                return False
            values.append(floats(tokens[k::width]))
            if values[-1] is None:
                return False
    line = np.array(rows, np.int64) + 1
    missing = np.full(len(rows), -1, np.int64)
    epoch, step = nums.get("epoch", missing), nums.get("step", missing)
    for (name, unit), vals in zip(tpl.metrics, values, strict=True):
        key = (tpl.kind, name, "" if unit == "None" else unit)
        acc.setdefault(key, []).append((line, ts, epoch, step, vals))
    return True


def _bare_steps(acc: dict) -> None:
    """The rows of bare-number steps in `acc` as training iterations (dllogger prints
    ``str(step)`` of an int step), or, where other lines are training lines of a named
    form (``Epoch: 0 Iteration: 50``, ``(0, 50)``), as epochs: the program's epoch summaries
    (``dllogger.log(step=epoch, ...)``), as a ``(0,)`` step is one."""
    bare = [key for key in acc if key[0] == _BARE]
    epochs = any(key[0] == TRAIN for key in acc)
    for key in bare:
        parts = acc.pop(key)
        if epochs:
            parts = [(line, ts, step, np.full(len(line), -1, np.int64), vals)
                     for line, ts, _epoch, step, vals in parts]
        acc.setdefault((EPOCH if epochs else TRAIN,) + key[1:], []).extend(parts)


def _add_groups(acc: dict, out: DllRead) -> None:
    """One Group per (kind, name, unit) of `acc`, rows in line order, groups in the order of
    their first line."""
    found = []
    for (kind, name, unit), parts in acc.items():
        parts = [p for p in parts if len(p[0])]
        if not parts:
            continue
        cols = in_line_order(parts)
        found.append((int(cols[0][0]), Group(kind, name, unit, *cols)))
    found.sort(key=lambda item: item[0])
    out.groups += [g for _, g in found]


def _general(log: LogText, idx: list[int], texts: list[bytes], out: DllRead, acc: dict) -> None:
    """The DLL lines `texts` (0-based line indices `idx`) read one at a time into `acc`:
    the reference path."""
    rows_of: dict[tuple, list] = {}
    for li, text in zip(idx, texts, strict=True):
        parsed = parse_line(text)
        line = li + 1
        if isinstance(parsed, str):
            out.problems.append(_bad(log, line, parsed, text))
            continue
        dt, kind, nums, payload = parsed
        if kind == PARAMETER:
            out.parameter_stamps.append((line, dt))
            state_parameters(log, parse_parameters(payload).items(), line, out.parameters,
                             out.parameter_lines, out.problems)
            continue
        for name, val, unit in payload:
            if not_measured(val):
                continue
            v = number(val)
            if v is None:
                out.problems.append(_bad(log, line, f"value {val[:40].decode('utf-8', 'replace')!r} "
                                        f"of {name.decode('utf-8', 'replace')} is not a number", text))
                continue
            u = "" if unit in (b"", b"None") else unit.decode("utf-8", "replace")
            key = (kind, name.decode("utf-8", "replace"), u)
            rows_of.setdefault(key, []).append((line, dt, nums.get("epoch", -1), nums.get("step", -1), v))
    bad_dt: set[int] = set()
    for key, rows in rows_of.items():
        line, dts, ep, st, vals = (np.array(c) for c in zip(*rows, strict=True))
        ts = unix_seconds(dts.tolist())
        keep = np.isfinite(ts)
        for ln in line[~keep].tolist():
            if ln not in bad_dt:
                bad_dt.add(ln)
                out.problems.append(_bad(log, ln, "the datetime is out of range",
                                         log.line_text(ln).encode()))
        acc.setdefault(key, []).append((line[keep].astype(np.int64), ts[keep],
                                        ep[keep].astype(np.int64), st[keep].astype(np.int64),
                                        vals[keep].astype(np.float64)))


def _foreign_unit(log: LogText, g: Group, metric: str) -> Problem:
    first = int(g.line[0])
    return Problem(log.source, first, "unit_not_samples",
                   f"{g.name} is printed in {g.unit} on {len(g.line)} line(s) from line {first}, "
                   f"not in samples/s: kept as metric {metric!r}, not read as the run's "
                   "throughput", log.line_text(first)[:300])


#: PARAMETER keys whose value sets the samples of an iteration: a second PARAMETER line
#: stating another value is a job restarted in the same log with another batch.
BATCH_KEYS = ("batch_size", "batch_size_per_gpu", "train_batch_size", "global_batch_size",
              "world_size")


def state_parameters(log: LogText, items, line: int, params: dict, lines: dict,
                     problems: list[Problem]) -> None:
    """PARAMETER (key, value) `items` of `line` into `params` and `lines`; a BATCH_KEYS key
    stated again with another value is a ``batch_changed`` problem."""
    for key, val in items:
        if key in BATCH_KEYS and params.get(key, val) != val:
            problems.append(Problem(
                log.source, line, "batch_changed",
                f"the log states {key} : {params[key]} on line {lines[key]} and {key} : {val} "
                f"on line {line}: a job restarted in the same log with another batch, whose "
                "parts are two runs", log.line_text(line)[:300]))
        params[key] = val
        lines[key] = line


def _bad(log: LogText, line: int, reason: str, text: bytes) -> Problem:
    return Problem(log.source, line, "bad_line", f"unreadable DLL line: {reason}",
                   text[:300].decode("utf-8", "replace"))


# --- observations and run fields shared by the DLL families ----------------------------------

_PHASE_OF_KIND = {TRAIN: M.TRAIN, VAL: M.VAL, EPOCH: M.EPOCH, SUMMARY: M.SUMMARY}
_PREFIX_PHASE = {"train": M.TRAIN, "val": M.VAL, "eval": M.VAL, "valid": M.VAL,
                 "validation": M.VAL, "test": M.VAL}
#: Evaluation prefixes DLE models also write joined by an underscore (Transformer-XL
#: ``valid_loss``, NCF ``validation_loss``, EfficientDet ``eval_loss``, TFT ``val_loss``):
#: not ``train_``, which names training figures (``train_throughput``) as a whole.
_UNDERSCORE_PREFIX = re.compile(r"(val|valid|validation|eval|test)_(?=.)")


def map_metric(kind: str, printed: str, unit: str) -> tuple[str, str, str, float]:
    """(phase, canonical metric, unit, scale) of a printed metric on a line of step `kind`.

    A ``train.`` prefix, or an evaluation one (``val.``, ``eval.``, ``valid.``,
    ``validation.``, ``test.``, or any of them joined by ``_``), moves to the phase on
    iteration lines. Epoch and summary lines keep their own phase for ``train.`` and bare
    names, but evaluation figures go to the validation phase on every line: DLE ResNet prints ``train.total_ips``
    and ``val.total_ips`` on one ``Summary:`` line, and they must not become one series.
    ``memory_max_allocated`` in MiB goes to the memory phase.
    """
    prefix, dot, bare = printed.partition(".")
    if not dot or prefix not in _PREFIX_PHASE:
        joined = _UNDERSCORE_PREFIX.match(printed)
        prefix, bare = ((joined.group(1), printed[joined.end():]) if joined
                        else ("", printed))
    phase = _PHASE_OF_KIND.get(kind, M.TRAIN)
    if prefix and (kind == TRAIN or _PREFIX_PHASE[prefix] == M.VAL):
        phase = _PREFIX_PHASE[prefix]
    if bare == M.MEMORY_MAX_ALLOCATED and unit == M.MIB:
        return M.MEMORY, bare, M.MIB, 1.0
    metric, cunit = M.canonical(bare)
    scale = 1.0
    if cunit is None:
        cunit = M.SAMPLES_PER_S if bare.endswith("_ips") else unit
    elif cunit == M.SECONDS and unit == "ms":
        scale = 1e-3
    if cunit == M.SAMPLES_PER_S and unit:
        scale = sample_rate_scale(unit)
        if scale is None:  # tokens/s, say: another quantity, kept under its own name
            return phase, foreign_rate(metric, unit), unit, 1.0
    return phase, metric, cunit, scale


#: Printed units of a rate of samples (images, sequences), with an optional k/M prefix.
_SAMPLE_RATE = re.compile(r"([kKM]?)(?:img|imgs|image|images|sample|samples|seq|seqs|sequence|"
                          r"sequences|sentences|ex|examples)/(?:s|sec|second)")
_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6}


def sample_rate_scale(unit: str) -> float | None:
    """The factor that makes a printed rate of samples samples/s (``kimg/s``: 1,000), None
    when `unit` is not a rate of samples (``tokens/s``)."""
    m = _SAMPLE_RATE.fullmatch(unit)
    return None if m is None else _PREFIX[m.group(1)]


def foreign_rate(metric: str, unit: str) -> str:
    """The metric name of a throughput printed in a unit that is not samples/s."""
    return f"{metric} in {unit}"


def add_groups(parsed: ParsedLog, log: LogText, groups: list[Group]) -> None:
    """Add every group's rows to `parsed.obs` (ranks from stripped launcher prefixes)."""
    ranks: dict[int, np.ndarray] = {}
    for g in groups:
        phase, metric, unit, scale = map_metric(g.kind, g.name, g.unit)
        if g.unit and metric.endswith(foreign_rate("", g.unit)):
            parsed.problems.append(_foreign_unit(log, g, metric))
        rank = None
        if log.line_ranks:
            if id(g.line) not in ranks:
                ranks[id(g.line)] = log.ranks_at(g.line)
            rank = ranks[id(g.line)]
        parsed.obs.add(line=g.line, metric=metric, value=g.value * scale if scale != 1.0 else g.value,
                       phase=phase, unit=unit, step=g.step, epoch=g.epoch, timestamp=g.timestamp,
                       rank=rank)


def apply_parameters(parsed: ParsedLog, params: dict, lines: dict, source: str) -> None:
    """Run fields from a PARAMETER dump into `parsed.meta` / `meta_lines` (docs/formats.md §6):
    those of :func:`~analysis.parsers._fields.dll_parameter_fields`, then ``world_size``, which
    confirms the path's nodes × GPUs when they agree; when they do not, a
    ``metadata_conflict`` is reported and the global batch is taken as batch_size ×
    world_size (the log wins; nodes and GPUs stay the path's).
    """
    parsed.parameters.update(params)
    meta, mlines = parsed.meta, parsed.meta_lines

    def put(key, val, pkey):
        if val is not None:
            meta[key] = val
            mlines[key] = lines.get(pkey)

    for key, val, pkey in dll_parameter_fields(params):
        put(key, val, pkey)
    _stated_global_batch(parsed, put, params, lines, source)
    ws = to_int(params.get("world_size"))
    if ws is None or ws <= 0 or "num_nodes" in meta and "gpus_per_node" in meta:
        return
    path = meta_from_path(source)
    n, g = path.get("num_nodes"), path.get("gpus_per_node")
    bsz = meta.get("batch_size_per_device", path.get("batch_size_per_device"))
    if n is not None and g is not None and n * g == ws:
        put("num_nodes", n, "world_size")
        put("gpus_per_node", g, "world_size")
        return
    if n is not None and g is not None:
        parsed.problems.append(Problem(
            source, lines.get("world_size"), "metadata_conflict",
            f"the path says {n}n{g}g ({n * g} devices), the log says world_size={ws}; "
            f"using global batch = batch_size x world_size"))
    if bsz is not None and "global_batch_size" not in params:
        put("global_batch_size", int(bsz) * ws, "world_size")


def _stated_global_batch(parsed: ParsedLog, put, params: dict, lines: dict,
                         source: str) -> None:
    """The global batch a ``global_batch_size`` PARAMETER states: the samples of one logged
    iteration, gradient accumulation included. (DLE ResNet's ``optimizer_batch_size`` is
    not one: its lines count micro-batches.) It is held to the devices (``world_size``,
    else nodes x GPUs of the dump or the path) x per-device batch the log states, by the rule
    a --meta global batch meets (:func:`analysis.user_meta.against_layout`; accumulation
    counts the dump states, its ``Config`` Namespace's too, count as stated)."""
    value = to_int(params.get("global_batch_size"))
    if value is None or value <= 0:
        return
    put("global_batch_size", value, "global_batch_size")
    meta, path = parsed.meta, meta_from_path(source)
    devices = to_int(params.get("world_size"))
    if devices is None or devices <= 0:
        n, g = (meta.get(k, path.get(k)) for k in ("num_nodes", "gpus_per_node"))
        devices = n * g if is_count(n) and is_count(g) else None
    counts = accumulation_counts(params)
    odd = against_layout(value, devices, meta.get("batch_size_per_device",
                                                  path.get("batch_size_per_device")),
                         "the log", counts)
    if odd:
        parsed.problems.append(Problem(source, lines.get("global_batch_size"), *odd))


#: an accumulation count DLE BERT's launch script states in its shell trace or command line
#: (TensorFlow's ``+ num_accumulation_steps_phase1=528`` or ``--num_accumulation_steps=528``,
#: PyTorch's ``+ gradient_accumulation_steps=66`` or ``--gradient_accumulation_steps=66``)
_TRACED_ACCUMULATION = re.compile(
    rb"\b((?:num|gradient)_accumulation_steps(?:_phase[12])?)[ =]+(\d{1,7})\b")


#: The pretraining phase a DLE BERT run's estimator writes its checkpoints under.
_PHASE_DIR = re.compile(rb"'_model_dir': '[^']*/phase_([12])'")


def traced_accumulation(parsed: ParsedLog, log: LogText) -> ParsedLog:
    """`parsed` with the accumulation counts the launch script's trace or command line
    states as parameters, where its argument dump states no such key itself; of counts per
    phase, only its own phase's where the log names it (the estimator's ``phase_N`` model
    folder): the script states both phases', and the run is one of them."""
    phase = _PHASE_DIR.search(log.data)
    for m in _TRACED_ACCUMULATION.finditer(log.data):
        key = m.group(1).decode()
        if phase and key[-1:] in "12" and key.endswith(f"_phase{key[-1]}") \
                and key[-1] != phase.group(1).decode():
            continue
        parsed.parameters.setdefault(key, m.group(2).decode())
    return parsed


def _state_train_start(parsed: ParsedLog, found: DllRead) -> None:
    """``train_start``: the stamp of the last PARAMETER line before the first training line
    (DLE BERT's ``train_start : True``), where the run's first step begins by the log's clock:
    the first training line is printed after that step, which a slow start (compilation, the
    first data shard) makes long."""
    firsts = [int(g.line[0]) for g in found.groups if g.kind == TRAIN and len(g.line)]
    before = [(line, dt) for line, dt in found.parameter_stamps if firsts and line < min(firsts)]
    if before:
        stamp = float(unix_seconds([before[-1][1]])[0])
        if np.isfinite(stamp):
            parsed.state("train_start", stamp, before[-1][0])


def parse_stdout(family: str, log: LogText, found: DllRead | None = None) -> ParsedLog:
    """A DLLogger stdout log of either framework read into a ParsedLog of `family` (from
    `found`, its lines read already, when given)."""
    parsed = ParsedLog(family)
    found = read(log) if found is None else found
    parsed.problems.extend(found.problems)
    add_groups(parsed, log, found.groups)
    apply_parameters(parsed, found.parameters, found.parameter_lines, log.source)
    _state_train_start(parsed, found)
    add_memory_blocks(log, parsed)  # a wrapper's nvidia-smi query teed into the log
    return parsed

