"""Run fields a user states for logs that do not say them: ``--meta`` and meta files.

Most real logs are named ``slurm-123456.out``, not ``1n8g/r50_b256_amp_1.log``, so the
fields the path would give (nodes, GPUs per node, batch size, ...) can be stated instead:

- on the command line: ``--meta num_nodes=2,gpus_per_node=8`` (repeatable; applies to every
  run read);
- in a YAML mapping beside the logs: ``dlperf-meta.yaml`` (every run in that folder) or
  ``<stem>.meta.yaml`` (the run whose files share that stem, e.g. ``slurm-1234.meta.yaml``
  for ``slurm-1234.out``).

Keys are :data:`USER_KEYS`; integers must be positive (at most :data:`MAX_COUNT`), precision
one of :data:`PRECISIONS` (aliases such as fp16/float16/bfloat16 accepted). An unknown key or
a bad value is a usage error naming the key (and the file).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from analysis.errors import UsageError, shown_value
from analysis.layout import normalize_model, normalize_precision, run_stem
from analysis.parsers._fields import META_FIELDS, STAMPED_FIELDS, namespace_items

#: Keys a user may state (the derived `case` and `group` are not among them).
USER_KEYS = tuple(k for k in META_FIELDS if k not in ("case", "group", *STAMPED_FIELDS))
INT_KEYS = ("num_nodes", "gpus_per_node", "batch_size_per_device", "global_batch_size",
            "repeat", "data_parallel", "tensor_parallel", "pipeline_parallel", "seq_length",
            "num_layers", "hidden_size", "num_heads", "vocab_size")
PRECISIONS = ("fp32", "tf32", "bf16", "amp")
FOLDER_FILE = "dlperf-meta.yaml"
STEM_SUFFIX = ".meta.yaml"
#: Meta files are a handful of lines; anything larger is not one.
MAX_FILE_BYTES = 64 << 10
#: Largest count a run field may hold (nodes, GPUs, batch, sequence length, ...): far above
#: any real run, and small enough that products of counts (devices x batch) stay exact.
MAX_COUNT = (1 << 31) - 1


def is_count(value: object) -> bool:
    """Whether `value` is an int run fields can hold: 1 to MAX_COUNT (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_COUNT


def check_meta(values: Mapping[str, object], where: str = "--meta") -> dict:
    """Validated, normalised copy of `values` (raises UsageError naming `where` and the key)."""
    out: dict = {}
    for key, value in values.items():
        if key not in USER_KEYS:
            raise UsageError(f"{where}: unknown key {key!r}; valid: {', '.join(USER_KEYS)}")
        if isinstance(value, (dict, list, tuple, set)) or value is None:
            raise UsageError(f"{where}: {key} needs a single value, got {shown_value(value)}")
        text = str(value).strip()
        if key in INT_KEYS:
            try:
                number = int(text) if len(text) <= 20 else 0  # int() of 5000 digits raises
            except ValueError:
                number = 0
            if not is_count(number) or isinstance(value, (bool, float)):
                raise UsageError(f"{where}: {key} must be a positive integer (at most "
                                 f"{MAX_COUNT:,}), got {shown_value(value)}")
            out[key] = number
        elif key == "precision":
            prec = normalize_precision(text)
            if prec not in PRECISIONS:
                raise UsageError(f"{where}: precision must be one of {', '.join(PRECISIONS)} "
                                 f"(or fp16, float16, bfloat16, float32), got {shown_value(value)}")
            out[key] = prec
        elif not text:
            raise UsageError(f"{where}: {key} is empty")
        else:
            out[key] = normalize_model(text) if key == "model" else text
    return out


def parse_meta_option(text: str) -> dict:
    """``key=value[,key=value...]`` as given to ``--meta``, validated."""
    values: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--meta: expected KEY=VALUE, got {item.strip()!r}")
        values[key.strip()] = value
    if not values:
        raise UsageError("--meta: expected KEY=VALUE[,KEY=VALUE...], got nothing")
    return check_meta(values)


def merge_meta(items: Iterable[Mapping[str, object]] | Mapping[str, object] | None) -> dict:
    """One validated mapping from one mapping or several (later ones win)."""
    if not items:
        return {}
    if isinstance(items, Mapping):
        return check_meta(items)
    out: dict = {}
    for m in items:
        out.update(check_meta(m))
    return out


#: Run counts that a DLPerf layout path states and a meta file or --meta may contradict.
PATH_COUNTS = ("num_nodes", "gpus_per_node", "batch_size_per_device", "global_batch_size")


def against_path(path_meta: Mapping[str, object], meta: Mapping[str, object],
                 origin: Mapping[str, str]) -> list[str]:
    """Why each run count a statement (meta file, --meta: its `origin`) gives in `meta`
    otherwise than the path does: the statement is used, and said so, as a log's value
    against the path is."""
    return [f"{origin[k]} says {k}={meta[k]}, the path says {k}={path_meta[k]}; using "
            f"{origin[k]}'s value (one of them misnames the run)"
            for k in PATH_COUNTS
            if k in path_meta and origin.get(k, "the path") != "the path"
            and str(meta.get(k)) != str(path_meta[k])]


#: The most batches an iteration is taken to accumulate, where nothing but the statement
#: says it does: 2 to 8 are common and stay a note; a larger k (1,000 for an extra 0 and a
#: per-device value given as global, 10 for an extra 0 on the layout's batch) is more often a
#: slip than a run, and a figure k times the layout's must not pass ``--strict`` unsaid.
UNSTATED_ACCUMULATION_MAX = 8
#: Argument-dump keys that state an accumulation count (DLE BERT, Megatron, Lightning, HF).
_ACCUMULATION_KEY = re.compile(r"accum", re.IGNORECASE)


def accumulation_counts(parameters: Mapping[str, object]) -> set[int]:
    """The accumulation counts a log's argument dump states (keys naming an accumulation,
    whole values >= 1), those of a printed ``Namespace(...)`` in it too (DLE BERT's
    ``Config``)."""
    out = set()
    items = dict(parameters)
    for v in parameters.values():
        if "Namespace(" in str(v):
            items.update(namespace_items(str(v)))
    for k, v in items.items():
        text = str(v).strip()
        if _ACCUMULATION_KEY.search(str(k)) and text.isdigit() and int(text) >= 1:
            out.add(int(text))
    return out


def stated_global_batch(row: Mapping[str, object], origin: Mapping[str, str],
                        log_states: bool, stated_counts: set[int] = frozenset()
                        ) -> tuple[str, str] | None:
    """(kind, why) of :func:`against_layout` when a statement (meta file, --meta: its
    `origin`) gives the global batch of `row`. None when no statement gives it, a count is
    unknown, or the log states its global batch itself (its parser holds that value to the
    layout the log states)."""
    where = origin.get("global_batch_size", "the path")
    g, d, b = (row.get(k) for k in ("global_batch_size", "num_devices", "batch_size_per_device"))
    if log_states or where == "the path":
        return None
    return against_layout(g, d, b, where, stated_counts)


def against_layout(g: object, d: object, b: object, where: str,
                   stated_counts: set[int] = frozenset()) -> tuple[str, str] | None:
    """(kind, why) when the global batch `g` that `where` states is not what `d` devices x
    per-device batch `b` run an iteration: a whole multiple k >= 2 of them is a note naming
    the k batches each iteration would accumulate (the figure counts the stated samples)
    where the log states k (`stated_counts`, its argument dump's) or k is at most
    `UNSTATED_ACCUMULATION_MAX`; a larger k nothing states, and any other value, a
    ``metadata_conflict``. None when they agree or a count is unknown."""
    if not all(is_count(v) for v in (g, d, b)):
        return None
    k, rest = divmod(g, d * b)
    if k == 1 and not rest:
        return None
    implied = (f"{where} says global_batch_size={g:,} = {k:,} x ({d} device(s) x batch {b}): "
               f"the figures count {g:,} samples an iteration, as if each iteration "
               f"accumulated {k:,} batches")
    if k >= 2 and not rest and k in stated_counts:
        return ("accumulation_implied", f"{implied}, as the log's argument dump states")
    if k >= 2 and not rest and k <= UNSTATED_ACCUMULATION_MAX:
        return ("accumulation_implied", f"{implied}, which no accumulation count in the log "
                                        "states")
    if k >= 2 and not rest:
        return ("metadata_conflict",
                f"{implied}, which nothing else states: more than the "
                f"{UNSTATED_ACCUMULATION_MAX} an unstated accumulation is taken for (a slip, "
                f"an extra 0?); using {where}'s value: state the count in the log or correct "
                "the global batch")
    return ("metadata_conflict",
            f"{where} says global_batch_size={g:,}, not a whole multiple of the {d} device(s) "
            f"x batch {b} = {d * b:,} samples an iteration runs; using {where}'s value (one "
            "of them misnames the run)")


def load_meta_file(path: str | os.PathLike) -> dict:
    """The validated mapping of one meta file (UsageError naming the file on any fault)."""
    from analysis import yamlio  # yaml only when a meta file is read

    path = Path(path)
    text = yamlio.read_text(path, max_bytes=MAX_FILE_BYTES, what="a few KEY: VALUE lines")
    data = yamlio.parse(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a mapping of KEY: VALUE lines "
                         f"({', '.join(USER_KEYS)})")
    return check_meta({str(k): v for k, v in data.items()}, str(path))


class MetaFiles:
    """Meta files beside the logs, each read once per parse."""

    def __init__(self) -> None:
        self._cache: dict[Path, dict] = {}
        self._listed: dict[Path, set[str] | None] = {}

    def _get(self, path: Path) -> dict:
        if path not in self._cache:
            self._cache[path] = load_meta_file(path) if path.is_file() else {}
        return self._cache[path]

    def names(self, folder: Path) -> set[str] | None:
        """The names of the meta files in `folder` (listed once; None: it cannot be listed,
        every name is looked at)."""
        if folder not in self._listed:
            try:
                self._listed[folder] = {n for n in os.listdir(folder)
                                        if n == FOLDER_FILE or n.endswith(STEM_SUFFIX)}
            except OSError:
                self._listed[folder] = None
        return self._listed[folder]

    def for_log(self, log: Path) -> list[tuple[str, dict]]:
        """(origin, fields) of the folder's file, then the run's own (which wins)."""
        out = []
        names = self.names(log.parent)
        for name in (FOLDER_FILE, f"{run_stem(log)}{STEM_SUFFIX}"):
            if names is not None and name not in names:
                continue
            path = log.parent / name
            fields = self._get(path)
            if fields:
                out.append((str(path), fields))
        return out
