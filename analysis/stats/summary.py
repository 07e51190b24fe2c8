"""Per-case statistics: median of repeats with an honestly labelled interval, spread, memory
peaks, speedup and efficiency, and what a case's log family adds (GPT: TFLOP/s per GPU,
`LogParser.case_figures`)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from analysis import parsers, schema
from analysis.collect import ParseResult, records_of
from analysis.parsers.base import LogParser
from analysis.problems import Problem
from analysis.schema import case_key
from analysis.stats import case_stats, energy
from analysis.stats.figure_checks import KEPT_FLAGGED
from analysis.stats.per_run import _case_groups, run_records
from analysis.stats.time_to_train import SCORE_DOUBTS

if TYPE_CHECKING:
    import pandas as pd

SUMMARY = schema.SUMMARY
SUMMARY_COLUMNS = schema.names(SUMMARY)
#: Summary columns a family may fill (LogParser.case_figures), as they are when it does not.
_NO_FIGURES = {"tflops_per_gpu": math.nan, "tflops_formula": "",
               "tflops_per_gpu_seed002": math.nan, "time_to_train_min": math.nan,
               "time_to_train_rule": ""}
_CASE_FIELDS = ("framework", "model", "precision", "num_nodes", "gpus_per_node", "num_devices",
              "batch_size_per_device", "case", "group")
#: The order of the summary's rows (a missing value last in each).
_ORDER = ("framework", "model", "precision", "batch_size_per_device", "case", "num_devices",
          "num_nodes")


def summarize(result: ParseResult, method: str = "dlperf", warmup: int | None = None,
              measure: int | None = None, confidence: float = 0.95,
              runs: pd.DataFrame | None = None,
              spread_threshold: float = case_stats.DEFAULT_SPREAD_THRESHOLD) -> pd.DataFrame:
    """One row per case (framework, model, precision, nodes, GPUs/node, batch size, case),
    with the columns and dtypes of SUMMARY (see there for each column's meaning).

    A case whose runs state different configurations (argument dumps), or whose repeats
    spread more than `spread_threshold` (a fraction), is flagged: `flags` says why, every
    run of it counts in `problems`, and a ``mixed_configuration`` / ``wide_spread`` problem
    is put in `result.problems` (replacing those of an earlier call), where every consumer
    of the problems (summarize, reports, --strict) finds it.

    The interval beside the median is min–max for n < 7 and the order-statistic confidence
    interval at `confidence` from n = 7 (analysis.stats.intervals); `interval_kind` says
    which. Memory: the median over runs of each run's peak, framework-reported and
    nvidia-smi sampled apart, with the max beside it and `memory_flag` where it stands out.
    Pass `runs` (from run_throughput) to avoid computing it twice.
    """
    import pandas as pd

    rows = summary_records(result, method, warmup, measure, confidence, runs, spread_threshold)
    return schema.coerce(pd.DataFrame(rows, columns=SUMMARY_COLUMNS), SUMMARY)


def summary_records(result: ParseResult, method: str = "dlperf", warmup: int | None = None,
                    measure: int | None = None, confidence: float = 0.95,
                    runs: pd.DataFrame | list[dict] | None = None,
                    spread_threshold: float = case_stats.DEFAULT_SPREAD_THRESHOLD
                    ) -> list[dict]:
    """The rows of :func:`summarize`'s frame, in its order, as dicts of its columns (typed
    as its dtypes: a missing count None, a missing float NaN); `runs` are
    :func:`~analysis.stats.per_run.run_records`' rows or run_throughput's frame. Computed
    from the runs' records and figures: no frame is built."""
    if runs is None:
        per_run = run_records(result, [method], warmup, measure)[method]
    else:
        per_run = runs if isinstance(runs, list) else records_of(runs)
    about = {r["run_id"]: r for r in result.run_records()}
    flagged = {rid for rid, r in about.items() if r["problems"] != ""}
    flagged |= {r["run_id"] for r in per_run if r["problem_kind"] != ""}
    doubted = {k: {p.run_id for p in result.problem_list() if p.kind == k} for k in DOUBTED_RUNS}
    rows, case_problems, runs_by_id = [], [], None
    for g in _case_groups(per_run):
        first = g[0]
        row = {c: _plain(first[c]) for c in _CASE_FIELDS}
        row.update(case_stats.throughput_stats([r["throughput"] for r in g], confidence))
        row.update(case_stats.memory_stats([r["memory_framework_mib"] for r in g],
                                           [r["memory_sampled_mib"] for r in g]))
        row["latency_ms"] = case_stats.median(case_stats.finite(r["latency_ms"] for r in g))
        row.update(energy.case_figures(g))
        row.update(_NO_FIGURES)
        family = first["family"]
        # what it adds (GPT: TFLOP/s); module_names: asking imports no other family
        if isinstance(family, str) and family in parsers.module_names():
            parser = parsers.get(family)
            if type(parser).case_figures is not LogParser.case_figures:
                import pandas as pd

                if runs_by_id is None:
                    runs_by_id = result.runs.set_index("run_id")
                row.update(parser.case_figures(result, runs_by_id,
                                               pd.Series([r["run_id"] for r in g]),
                                               _latency_at_batch(row, first)))
        row["outliers"] = sum(bool(r["outlier"]) for r in g)
        found = _case_flags(row, g, about, spread_threshold)
        row["flags"] = "; ".join([p.reason.split(":", 1)[0] for p in found]
                                 + row.pop(SCORE_DOUBTS, []))
        row["problems"] = len(g) if found else sum(r["run_id"] in flagged for r in g)
        row[case_stats.FIGURE_FLAGS] = [f"{n} of {len(g)} run(s) {k}" for k in KEPT_FLAGGED
                                        if (n := sum(r["problem_kind"] == k for r in g))] + [
            f"{n} of {len(g)} run(s) {k}" for k in DOUBTED_RUNS
            if (n := sum(str(r["run_id"]) in doubted[k] for r in g))]
        case_problems += found
        rows.append(row)
    result.replace_problems(CASE_KINDS, case_problems)
    case_stats.add_speedup(rows)
    rows = [_typed(row) for row in rows]
    rows.sort(key=lambda r: tuple((True, 0) if schema.is_missing(r[c]) else (False, r[c])
                                  for c in _ORDER))
    return rows


#: Each summary column's type (its dtype's), by name.
_TYPES = {c.name: c.dtype for c in SUMMARY}


def _typed(row: dict) -> dict:
    """A summary row with each value as the frame's column holds it (floats as float, NaN
    where missing; counts as int, None where missing)."""
    out = {}
    for name in SUMMARY_COLUMNS:
        v, kind = row.get(name), _TYPES[name]
        if kind == "float64":
            v = math.nan if schema.is_missing(v) else float(v)
        elif kind in ("Int64", "int64"):
            v = None if schema.is_missing(v) else int(v)
        elif kind == "bool":
            v = bool(v)
        out[name] = v
    return out


def _latency_at_batch(row: dict, first: dict) -> float:
    """ms per iteration of the case's global batch at its median throughput (what per-sample
    figures such as TFLOP/s need where the intervals printed other batches: a ramp-up); the
    median latency where the throughput or batch is unknown."""
    batch, rate = first.get("global_batch_size"), row.get("throughput_median")
    if schema.is_missing(batch) or rate is None or not math.isfinite(rate) or rate <= 0:
        return row["latency_ms"]
    return 1000.0 * float(batch) / float(rate)


def _plain(value):
    """A record's value as plain Python: None for NA/NaN, numpy scalars as int/float/str."""
    if schema.is_missing(value):
        return None
    return value.item() if hasattr(value, "item") and getattr(value, "shape", None) == () \
        else value


#: Problem kinds of a run's log that put its figure in doubt beside the figure's own
#: (figure_checks.KEPT_FLAGGED): a speedup measured against such a run says so.
DOUBTED_RUNS = ("metadata_conflict",)
#: Problem kinds of a whole case (summarize puts them in `result.problems`).
CASE_KINDS = ("mixed_configuration", "wide_spread")
#: Differing keys named in a flag at most (the rest are counted).
SHOWN_KEYS = 6


def _where_differ(stated: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Long values of equally many words (launch commands) cut to the words where they
    differ, each with the word before it ('--dist-backend gloo'); others as they are."""
    words = [v.split(" ") for _, v in stated]
    if len({len(w) for w in words}) != 1 or len(words[0]) < 4:
        return stated
    at = [i for i in range(len(words[0])) if len({w[i] for w in words}) > 1]
    return [(r, " … ".join(" ".join(w[max(i - 1, 0):i + 1]) for i in at))
            for (r, _), w in zip(stated, words, strict=True)]


def _environment_flag(key: str, where: str, sources: list[str], ids: list[str],
                      framework: str) -> list[Problem]:
    """A ``mixed_configuration`` problem when the runs of a case whose records state their
    NCCL settings, hardware, software versions, GPU power limit, launch command or launch
    variables state different ones (each compared over the runs that record it); an
    ``unreadable_file`` problem for each record beside a run's log that cannot be read (its
    settings are then compared without it)."""
    from analysis.run_settings import NCCL_RECORDED, folder_names, run_settings, setting_family

    folders = [os.path.dirname(s) for s in sources]  # text: a Path's parent costs more
    listed = {d: folder_names(Path(d)) for d in set(folders)}  # each folder once
    unreadable: list[Path] = []
    settings = [run_settings(Path(s), framework, listed[d], unreadable)
                for s, d in zip(sources, folders, strict=True)]
    broken = [Problem(str(p), None, "unreadable_file",
                      "an environment record beside the run's log is not a readable JSON "
                      "object: the run's environment is compared without it", run_id=key)
              for p in unreadable]
    if len(sources) < 2:
        return broken
    families = [{setting_family(k) for k in s} for s in settings]
    differ: dict[str, list[tuple[str, str]]] = {}
    for name in sorted({k for s in settings for k in s if k != NCCL_RECORDED}):
        family = setting_family(name)
        stated = [(r, s.get(name, case_stats.ABSENT))
                  for r, s, f in zip(ids, settings, families, strict=True) if family in f]
        if len(stated) > 1 and len({v for _, v in stated}) > 1:
            differ[name] = stated
    if not differ:
        return broken
    shown = list(differ)[:SHOWN_KEYS]
    more = f", … {len(differ) - len(shown)} more" if len(differ) > len(shown) else ""
    detail = "; ".join(f"{k}: " + ", ".join(f"{v} ({r})" for r, v in _where_differ(differ[k]))
                       for k in shown)
    return broken + [Problem(where, None, "mixed_configuration",
                    f"{case_stats.CONFIGURATION_DIFFERS} {', '.join(shown)}{more}: the runs "
                    f"of case {key} record {detail} in their environment; they are not "
                    "repeats of one case", run_id=key)]


def _case_flags(row: dict, g: list[dict], about: dict[str, dict],
                spread_threshold: float) -> list[Problem]:
    """The case problems of one case: its runs' stated configurations differ, its spread is
    above the threshold. Each reason starts with a short ``flags`` text, then a colon.
    `about` holds each run's record (its argument dump) by id."""
    key = case_key(row)
    sources = [str(r["source"]) for r in g]
    where = os.path.commonpath(sources) if sources else ""
    ids = [str(r["run_id"]) for r in g]
    dumps = [(about.get(r) or {}).get("parameters") or {} for r in ids]
    out = []
    differ = case_stats.differing_keys(dumps)
    if differ:
        stated = [r for r, d in zip(ids, dumps) if case_stats.configuration(d)]
        shown = list(differ)[:SHOWN_KEYS]
        more = f", … {len(differ) - len(shown)} more" if len(differ) > len(shown) else ""
        detail = "; ".join(f"{k}: " + ", ".join(f"{v} ({r})" for v, r in zip(differ[k], stated))
                           for k in shown)
        out.append(Problem(where, None, "mixed_configuration",
                           f"{case_stats.CONFIGURATION_DIFFERS} {', '.join(shown)}{more}: "
                           f"the runs of "
                           f"case {key} state {detail}; they are not repeats of one case",
                           run_id=key))
    framework = "" if schema.is_missing(row["framework"]) else str(row["framework"])
    out += _environment_flag(key, where, sources, ids, framework)
    spread = row["spread_pct"]
    if case_stats.spread_flagged(spread, spread_threshold):
        out.append(Problem(where, None, "wide_spread",
                           f"{case_stats.spread_text(spread, spread_threshold)}: the "
                           f"{row['repeats']} repeats of case {key} range from "
                           f"{row['throughput_min']:,.2f} to {row['throughput_max']:,.2f} "
                           f"samples/s (median {row['throughput_median']:,.2f})", run_id=key))
    return out
