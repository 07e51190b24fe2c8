"""A case's statistics from its runs' figures, and its flags: used by
:func:`analysis.stats.summary.summarize`. Sums are exact (``math.fsum``), then rounded once:
the mean and the standard deviation do not depend on the order of the runs."""

from __future__ import annotations

import functools
import math
import re
import statistics
from collections.abc import Iterable

import numpy as np

from analysis.parsers._fields import namespace_items
from analysis.stats.intervals import median_interval

#: A case's max memory peak "stands out" when it exceeds the median of its runs' peaks by more
#: than this fraction: one run caught a transient sample (or really used more).
MEMORY_FLAG_ABOVE = 0.10
NAN = float("nan")


def finite(values: Iterable) -> list[float]:
    """The finite values of `values` as floats, in order (None and NaN left out)."""
    floats = (float(v) for v in values if v is not None)
    return [f for f in floats if math.isfinite(f)]


def median(values: list[float]) -> float:
    """The median of finite `values` (NaN when there is none)."""
    return statistics.median(values) if values else NAN


def throughput_stats(values: Iterable, confidence: float = 0.95) -> dict:
    """repeats, median, mean, std, min, max, interval and spread of one case's throughputs
    (non-finite values are not repeats; a zero median gives the spread as `ratio` does)."""
    ok = finite(values)
    n = len(ok)
    med = median(ok)
    mean = math.fsum(ok) / n if n else NAN
    interval = median_interval(ok, confidence)
    return {
        "repeats": n, "throughput_median": med, "throughput_mean": mean,
        "throughput_std": math.sqrt(math.fsum((x - mean) ** 2 for x in ok) / (n - 1))
        if n > 1 else NAN,
        "throughput_min": min(ok) if n else NAN, "throughput_max": max(ok) if n else NAN,
        "interval_low": interval.low, "interval_high": interval.high,
        "interval_kind": interval.kind, "interval_coverage": interval.coverage,
        "spread_pct": ratio(max(ok) - min(ok), med) * 100.0 if n > 1 else NAN,
    }


def memory_stats(framework: Iterable, sampled: Iterable) -> dict:
    """Median and max of one case's per-run memory peaks (framework-reported and nvidia-smi
    sampled, MiB), and whether a max stands out."""
    out, flag = {}, False
    for source, values in (("framework", framework), ("sampled", sampled)):
        v = finite(values)
        med, top = median(v), (max(v) if v else NAN)
        out[f"memory_{source}_mib"], out[f"memory_{source}_max_mib"] = med, top
        flag |= bool(v) and top > med * (1.0 + MEMORY_FLAG_ABOVE)
    out["memory_flag"] = flag
    return out


#: What a case's speedup is measured against: its 1n1g case of the same settings.
SPEEDUP_KEY = ("framework", "model", "precision", "batch_size_per_device")


#: Key of a summary row's figure flags while it is built (a list of texts; not a column).
FIGURE_FLAGS = "_figure_flags"

#: How a case's flags end that name runs whose time to train a clock step or a stall may
#: have changed: the score is kept (MLPerf counts a stall), so a comparison must say so.
SCORE_DOUBTED = "in the time to train"


def add_speedup(rows: list[dict]) -> None:
    """speedup: median / median of the 1n1g case of the same framework, model, precision and
    batch size (the first such row; cases without a case label only: GPT cases differ in
    more than device count; not one whose runs state different configurations: its median
    mixes them); scaling_efficiency: speedup / devices. A row measured against a 1n1g case
    that is flagged (its spread, its runs' figures: FIGURE_FLAGS) says so in its own
    `flags`: its speedup is as doubtful. In place."""
    base: dict[tuple, tuple[float, str, int]] = {}
    for r in rows:
        mixed = CONFIGURATION_DIFFERS in str(r.get("flags") or "")
        if r["num_nodes"] == 1 and r["gpus_per_node"] == 1 and r["case"] == "" and not mixed:
            doubt = [f for f in str(r.get("flags") or "").split("; ") if f] \
                + list(r.get(FIGURE_FLAGS) or [])
            base.setdefault(tuple(r[k] for k in SPEEDUP_KEY),
                            (r["throughput_median"], "; ".join(doubt), id(r)))
    for r in rows:
        ref, doubt, of = base.get(tuple(r[k] for k in SPEEDUP_KEY), (NAN, "", None)) \
            if r["case"] == "" else (NAN, "", None)
        r["speedup"] = ratio(r["throughput_median"], ref)
        devices = r["num_devices"]
        r["scaling_efficiency"] = ratio(r["speedup"], NAN if devices is None else devices)
        if doubt and of != id(r) and np.isfinite(r["speedup"]):
            note = f"{AGAINST_FLAGGED} ({doubt})"
            r["flags"] = f"{r['flags']}; {note}" if r.get("flags") else note


#: How a row's flag begins when its speedup is measured against a flagged 1n1g case.
AGAINST_FLAGGED = "speedup against a flagged 1n1g case"


def ratio(a: float, b: float) -> float:
    """a / b as floating-point division gives it (IEEE: x / 0 is ±inf, 0 / 0 is NaN)."""
    if b == 0:
        return NAN if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


#: Spread of a case's repeats, (max - min) / median, above which the case is flagged.
DEFAULT_SPREAD_THRESHOLD = 0.05
#: Argument-dump keys that differ between repeats of one configuration: where and when a run
#: ran, by what the launchers print (torchrun: ``master_addr``, ``*_port``, ``*rank``,
#: ``rdzv_id``, ``dist_url``/``init_method``; Slurm: ``slurm_job_id``, ``slurm_jobid``,
#: ``slurm_job_nodelist``, ``slurm_procid``; wandb: ``wandb_run_id``; MPI:
#: ``ompi_comm_world_rank``; TF: ``worker_hosts``; OneFlow: ``node_ips``): by rule, a key
#: whose last word (split at ``_``, ``-``, ``.``; singular or plural) names an identity
#: (``id``, not a token's), a place (``host``, ``addr``, ``ip``, ``url``, a node list, a path,
#: dir or file; not ``gpus_per_node`` nor ``num_hosts``: a count is configuration) or a moment
#: (``date``, ``timestamp``, a start or end time); its name (``wandb_exp_name``), the paths of
#: its checkpoints and outputs (DLE's ``workspace``, TF's ``logdir``), its seed
#: (``seed``, ``random_seed``), its repeat number, and what DLE BERT restates as a PARAMETER
#: while it runs (the dynamic ``loss_scale``, the ``checkpoint_step`` reached), or writes
#: its DLLogger file to (``json_summary``): the last one stated differs from repeat to
#: repeat.
PER_RUN_KEYS = re.compile(
    r"^(hostfile|pid|repeat|time|save|load|workspace|logdir|output|loss_scale|checkpoint_step|"
    r"json_summary|init_method)$"
    r"|(?<!token)(?<!num)(?<!^n)(^|[-_.])(seed|(job)?id|rank|procid|host|hostname|addr|ip|"
    r"url|uri|endpoint|node_?list|nodename|date|timestamp|(start|end|submit|launch)_?time|"
    r"(run|job|exp|experiment)_?name)s?$|(^|[-_.])address(es)?$"
    r"|(_dir|_path|_file|_filename|_port)$", re.I)
ABSENT = "(absent)"


def configuration(params) -> dict[str, str]:
    """The keys of an argument dump (a run's stated configuration) that say how it ran, as
    text; {} for a run that states none. A value that is an ``argparse.Namespace`` repr
    (DLE BERT's ``Config``) is its items, ``Config.seed`` and so on, each judged as a key."""
    if not isinstance(params, dict):
        return {}
    out = {}
    for k, v in params.items():
        k, v = str(k), str(v)
        items = namespace_items(v) if "Namespace(" in v else {}
        if items:
            out.update((f"{k}.{sub}", value) for sub, value in items.items()
                       if not _per_run_key(sub))
        elif not _per_run_key(k):
            out[k] = v
    return out


@functools.lru_cache(maxsize=4096)
def _per_run_key(key: str) -> bool:
    """Whether `key` matches PER_RUN_KEYS, once per key: runs of one program state the
    same few dozen keys, a regex search each cost more than the rest of a run's summary."""
    # a configuration file (BERT's config_file) states the model, not where a run wrote
    return PER_RUN_KEYS.search(key) is not None and "config" not in key.lower()


def differing_keys(dumps: list) -> dict[str, list[str]]:
    """Of the runs of one case that state a configuration, each key whose value is not the
    same in all of them (:func:`canonical`: not its spelling), with the value of each such
    run as printed (ABSENT where it lacks the key)."""
    configs = [c for c in _configurations(dumps) if c]
    if len(configs) < 2:
        return {}
    first = configs[0]
    if all(c is first or c == first for c in configs):
        return {}
    keys = sorted(set().union(*configs))
    out = {}
    for k in keys:
        values = [c.get(k, ABSENT) for c in configs]
        if len(set(values)) > 1 and len({_stated(k, v) for v in values}) > 1:
            out[k] = values
    return out


#: A job id in a configuration file's name (BigScience's ``ds_config.<SLURM_JOBID>.json``):
#: a run of 5 or more digits between separators of the last path segment, which has an
#: extension. A digit run joined to a word (``zero2``, ``zero3``) names another configuration.
JOB_ID_IN_FILE_NAME = re.compile(r"(?<=[._-])\d{5,}(?=(?:[._-][^/]*)?\.[A-Za-z]\w*$)")


def _stated(key: str, value: str) -> str:
    """The value key `key` states (:func:`canonical`), a configuration file written per job
    being one file whatever its job id."""
    text = canonical(value)
    return JOB_ID_IN_FILE_NAME.sub("#", text) if "config" in key.lower() else text


def _configurations(dumps: list) -> list[dict[str, str]]:
    """:func:`configuration` of each dump, computed once per distinct dump (the runs of a
    case mostly state one: a read from the parse cache shares its dict, a fresh read has
    equal ones)."""
    by_id: dict[int, dict] = {}
    by_items: dict[tuple, dict] = {}
    out = []
    for d in dumps:
        c = by_id.get(id(d))
        if c is None:
            try:
                items = tuple(d.items()) if isinstance(d, dict) else None
                c = by_items.get(items) if items is not None else None
                if c is None:
                    c = configuration(d)
                    if items is not None:
                        by_items[items] = c
            except TypeError:  # a value that cannot be hashed: judged on its own
                c = configuration(d)
            by_id[id(d)] = c
        out.append(c)
    return out


def canonical(text: str) -> str:
    """`text` as the value it states: a number as its float (``0.1``, ``0.10`` and ``1e-1``
    are one learning rate), a boolean whatever its case (Python's ``True``, YAML's
    ``true``); other text as printed."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower()
    try:
        number = float(t)
    except ValueError:
        return t
    return repr(number) if math.isfinite(number) else t


def spread_flagged(spread_pct: float, threshold: float = DEFAULT_SPREAD_THRESHOLD) -> bool:
    """Whether a case's spread (in %) is above `threshold` (a fraction: 0.05 is 5 %). A
    spread equal to it up to float rounding is not above it: 2,924.61 to 3,074.59 around
    2,999.60 is 5 % exactly, and computed as 5.000000000000001."""
    limit = threshold * 100.0
    return (math.isfinite(spread_pct) and spread_pct > limit
            and not math.isclose(spread_pct, limit, rel_tol=1e-9))


def spread_text(spread_pct: float, threshold: float) -> str:
    """How a flagged spread is named: ``spread 13.4 % > 5 %``."""
    return f"spread {spread_pct:.1f} % > {threshold * 100:g} %"


#: How a case flag of differing configurations begins.
CONFIGURATION_DIFFERS = "configuration differs in"


def case_flags(row: dict, threshold: float = DEFAULT_SPREAD_THRESHOLD) -> list[str]:
    """The flags of a summary row at a spread `threshold`: the configuration flag and the
    doubts about its time to train it holds (``flags``, when its summary has the column),
    and its spread when above `threshold`."""
    held = row.get("flags")
    out = [f for f in (held.split("; ") if isinstance(held, str) else [])
           if f.startswith(CONFIGURATION_DIFFERS) or f.endswith(SCORE_DOUBTED)]
    spread = row.get("spread_pct")
    if isinstance(spread, (int, float)) and spread_flagged(float(spread), threshold):
        out.append(spread_text(float(spread), threshold))
    return out
