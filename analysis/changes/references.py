"""References: published or agreed throughputs per case and the hardware they were measured
on, checked against a campaign (``dlperf check``) and shown beside it (``dlperf report
--references``).

Every reference names one case completely — ``framework, model, precision,
batch_size_per_device, num_nodes, gpus_per_node`` (and ``case`` for GPT case labels) as
fields, or ``key``, the case key (``PyTorch/resnet50/amp/b256/1n4g``), or both when they
agree — and gives ``value`` with ``lower``/``upper`` bounds or a ``tolerance`` (``5%``)
around it, ``unit`` (samples/s; ``min``: an MLPerf case's time to train, lower is
better), ``source`` (a URL or citation; ``source_zh``, optional, the
same in Chinese for a Chinese report) and ``hardware``, the GPU
model and count of the machine it was measured on (``8x V100-SXM2-16GB``, see
:mod:`analysis.changes.gpus`). YAML: a mapping with ``references:`` (a list of such
mappings) and defaults for every entry (``unit``, ``source``, ``source_zh``, ``tolerance``,
``hardware``),
or just the list. CSV: one reference per row, the same names as columns.

A case passes when its median throughput lies within [lower, upper] (as ReFrame checks a
performance reference); below is *slower*, above is *faster*. The median's interval (as the
summary computes it) is shown beside it. Given the runs' GPUs (:func:`case_gpus`), a
reference measured on other GPUs than the case's runs is not a verdict: its row says *other
hardware* and why. Runs whose records state no GPUs are checked against the references of
their case when those name one machine (``excluded`` says the hardware was not checked), and
are *hardware unknown*, no verdict, when they name several. References no case matches are
listed (*no runs*), never dropped.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import yamlio
from analysis.changes import gpus, verdict
from analysis.changes.compare import case_keys, figure_flags
from analysis.errors import UsageError
from analysis.fsutil import display_path
from analysis.schema import case_key
from analysis.stats import case_stats

FIELDS = ("framework", "model", "precision", "batch_size_per_device", "num_nodes",
          "gpus_per_node", "case")
#: The fields every reference states (``case`` only for GPT case labels).
REQUIRED_FIELDS = FIELDS[:-1]
_INT_FIELDS = ("batch_size_per_device", "num_nodes", "gpus_per_node")
KEYS = ("key", *FIELDS, "value", "lower", "upper", "tolerance", "unit", "source", "source_zh",
        "hardware", "derived_from")
DEFAULT_KEYS = ("unit", "source", "source_zh", "tolerance", "hardware")
#: Names of samples/s, the unit of the medians a reference is checked against.
UNITS = ("samples/s", "img/s", "images/s", "samples/sec", "sequences/s")
#: The unit of a time-to-train reference (an MLPerf case's score, lower is better).
TIME_UNIT = "min"
WITHIN, SLOWER, FASTER, NO_RUNS = "within", verdict.SLOWER, verdict.FASTER, "no runs"
#: A case matched whose runs all gave no throughput (truncated, no training lines, …).
FAILED = "all runs failed"
OTHER_HARDWARE, HARDWARE_UNKNOWN = "other hardware", "hardware unknown"
#: Verdicts of a matched case that are not a verdict on its median (the reason in ``excluded``).
NO_VERDICT = (OTHER_HARDWARE, HARDWARE_UNKNOWN)
COLUMNS = ["reference", "case_key", "repeats", "median", "interval_low", "interval_high", "value",
           "lower", "upper", "ratio", "verdict", "unit", "source", "source_zh", "hardware",
           "derived_from", "run_hardware",
           "excluded", "flags"]
_KEY = re.compile(r"^([^/]+)/([^/]+)/([^/]+)/b(\d+|\?)/(\d+|\?)n(\d+|\?)g(?:/(.+))?$")
_GLOB = re.compile(r"[*?\[\]]")
#: A field of a case key that its logs do not state, as case keys print it (MLPerf's).
UNKNOWN = "?"


def _entries_yaml(text: str, where: str) -> list[tuple[int, dict]]:
    data = yamlio.parse(text, where)
    key = ""
    defaults: dict = {}
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"references", *DEFAULT_KEYS})
        if unknown:
            raise UsageError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; "
                             f"valid: references, {', '.join(DEFAULT_KEYS)}")
        defaults = {k: data[k] for k in DEFAULT_KEYS if k in data}
        key, data = "references", data.get("references")
    if not isinstance(data, list) or not data:
        raise UsageError(f"{where}: expected a list of references (or a mapping with "
                         "'references:')")
    lines = [n.start_mark.line + 1 for n in yamlio.node_at(text, key)[0].value]
    return [(line, {**defaults, **e} if isinstance(e, dict) else e)
            for line, e in zip(lines, data)]


def _entries_csv(text: str, where: str) -> list[tuple[int, dict]]:
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"{where}: not a readable CSV file ({' '.join(str(exc).split())})"
                         ) from None
    if frame.empty:  # a header alone: a check against it could never fail
        raise UsageError(f"{where}: no references (a header line and no rows)")
    return [(i + 2, {k: v for k, v in row.items() if v != ""})
            for i, row in enumerate(frame.to_dict("records"))]


def _number(entry: dict, key: str, at: str) -> float:
    value = entry.get(key)
    if value is None:
        return float("nan")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{at}: {key} must be a number, not {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise UsageError(f"{at}: {key} must be a finite number >= 0, not {value!r}")
    return number


def _case_fields(entry: dict, at: str) -> dict:
    """The case the entry names, as fields: its fields, its key's parts, both when they agree."""
    fields = {k: entry[k] for k in FIELDS if k in entry}
    for k in _INT_FIELDS:
        if k in fields and not str(fields[k]).strip().isdigit():
            raise UsageError(f"{at}: {k} must be a whole number, not {fields[k]!r}")
    if "key" in entry:
        key = str(entry["key"])
        found = _KEY.match(key)
        # a field that is "?" alone is the case key's unknown mark, not a wildcard
        if not found or any(_GLOB.search(p) for p in found.groups() if p not in (None, UNKNOWN)):
            raise UsageError(f"{at}: key {key!r} is not a case key such as "
                             "PyTorch/resnet50/amp/b256/1n4g (no wildcards; ? alone for a "
                             "field its logs do not state, as MLPerf/resnet/?/b?/?n?g)")
        for k, part in zip(FIELDS, found.groups()):
            if part is None:
                continue
            have = fields.setdefault(k, part)
            same = (str(have) == part if UNKNOWN in (str(have), part) else
                    int(have) == int(part) if k in _INT_FIELDS
                    else str(have).lower() == part.lower())
            if not same:
                raise UsageError(f"{at}: key {key!r} says {k} {part}, the entry {have}")
    missing = [k for k in REQUIRED_FIELDS if k not in fields]
    if missing:
        raise UsageError(f"{at}: name the case completely, by key or fields; missing "
                         f"{', '.join(missing)}")
    return {k: None if str(v) == UNKNOWN else int(v) if k in _INT_FIELDS else str(v)
            for k, v in fields.items()}


def _reference(entry, at: str, default_tolerance: float) -> dict:
    if not isinstance(entry, dict):
        raise UsageError(f"{at}: a reference is a mapping of {', '.join(KEYS)}")
    unknown = sorted(set(map(str, entry)) - set(KEYS))
    if unknown:
        raise UsageError(f"{at}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(KEYS)}")
    if not any(k in entry for k in ("key", *FIELDS)):
        raise UsageError(f"{at}: name the case by key or by fields ({', '.join(FIELDS)})")
    match = _case_fields(entry, at)
    value, lower, upper = (_number(entry, k, at) for k in ("value", "lower", "upper"))
    if "tolerance" in entry:
        try:
            tolerance = verdict.parse_threshold(str(entry["tolerance"]))
        except ValueError:
            raise UsageError(f"{at}: tolerance must be a percentage such as 5%, "
                             f"not {entry['tolerance']!r}") from None
    else:
        tolerance = default_tolerance
    if math.isnan(value) and math.isnan(lower) and math.isnan(upper):
        raise UsageError(f"{at}: give value (with a tolerance) or lower/upper bounds")
    if value < lower or value > upper:  # NaN compares false: only bounds the entry gives
        # the entry states two figures that cannot both be the reference's
        given = ", ".join(f"{k} {b:g}" for k, b in (("lower", lower), ("upper", upper))
                          if not math.isnan(b))
        raise UsageError(f"{at}: value {value:g} lies outside its own bounds ({given}); give "
                         "bounds around it, or only one of the two")
    if not math.isnan(value):
        lower = value * (1 - tolerance) if math.isnan(lower) else lower
        upper = value * (1 + tolerance) if math.isnan(upper) else upper
    lower = 0.0 if math.isnan(lower) else lower
    upper = math.inf if math.isnan(upper) else upper
    if lower > upper:
        raise UsageError(f"{at}: lower {lower:g} is above upper {upper:g}")
    unit = str(entry.get("unit", "samples/s"))
    if unit == "tokens/s":
        raise UsageError(f"{at}: unit tokens/s is not comparable with the medians (samples/s); "
                         "give the figure in samples/s (tokens/s divided by the sequence length)")
    if unit not in (*UNITS, TIME_UNIT):
        raise UsageError(f"{at}: unit {unit!r} is not a throughput unit ({', '.join(UNITS)}) "
                         f"nor {TIME_UNIT} (an MLPerf time to train)")
    source = str(entry.get("source", "")).strip()
    if not source:
        raise UsageError(f"{at}: give the source of the figure (a URL or citation)")
    hardware = _machine(entry, "hardware", at, "figure", "8x V100-SXM2-16GB")
    # a value computed from one measured elsewhere (4 x a 1-GPU figure x a stated efficiency)
    # names the machine it was measured on: a report says "derived", not "measured on"
    derived_from = _machine(entry, "derived_from", at, "figure it was derived from",
                            "1x H200") if "derived_from" in entry else ""
    return {"match": match, "value": value, "lower": lower, "upper": upper, "unit": unit,
            "source": source, "source_zh": str(entry.get("source_zh", "") or "").strip(),
            "hardware": hardware, "derived_from": str(derived_from), "at": at}


def _machine(entry: dict, key: str, at: str, what: str, example: str) -> gpus.Gpus:
    found = gpus.parse(entry.get(key, ""))
    if found is None:
        raise UsageError(f"{at}: {key} must be the GPU count and model of the machine the "
                         f"{what} was measured on, such as {example!r}, not {entry.get(key)!r}")
    return found


def load_references(path: str | Path, default_tolerance: float = verdict.DEFAULT_THRESHOLD
                    ) -> list[dict]:
    """The references of a YAML (``.yaml``/``.yml``) or CSV file, validated; a UsageError
    names the file and line of the first bad entry."""
    path = Path(path)
    where = display_path(path)
    text = yamlio.read_text(path, where, what="a references file")
    entries = (_entries_csv if path.suffix.lower() == ".csv" else _entries_yaml)(text, where)
    return [_reference(e, f"{where}:{line} (reference {i})", default_tolerance)
            for i, (line, e) in enumerate(entries, 1)]


def _matches(match: dict, row: dict) -> bool:
    for k, want in match.items():
        have = row.get(k)
        unknown = have is None or (not isinstance(have, str) and pd.isna(have))
        if want is None:  # the key's "?": a field the logs do not state
            if not unknown:
                return False
        elif unknown or (
                int(have) != want if k in _INT_FIELDS else str(have).lower() != want.lower()):
            return False
    return True


def case_gpus(runs: pd.DataFrame, env: pd.DataFrame) -> dict[str, str]:
    """Case key -> the GPUs its runs ran on ('4x NVIDIA H200'; distinct values joined with
    '; '; gpus.NOT_RECORDED when no run of the case has an environment record), from the runs
    (analysis.stats.RUN_COLUMNS) and their environment facts (environment.RUN_ENV_COLUMNS)."""
    hardware = dict(zip(env["run_id"].astype(str), env["hardware"].astype(str)))
    out: dict[str, list[str]] = {}
    for key, run_id in zip(case_keys(runs), runs["run_id"].astype(str)):
        out.setdefault(key, []).append(gpus.of_hardware(hardware.get(run_id, "")))
    return {k: "; ".join(dict.fromkeys(v for v in values if v)) for k, values in out.items()}


def hardware_mismatch(reference: gpus.Gpus, run_gpus: str, alone: bool = False
                      ) -> tuple[str, str]:
    """('', '') when the runs' GPUs are the reference's; else the verdict (OTHER_HARDWARE or
    HARDWARE_UNKNOWN) and why, in words; ('', why) when the runs record no GPUs and the
    reference is `alone`, of the only machine the references of the case name: the case
    is checked against it, as compare compares a side without records, and says so."""
    if not run_gpus:
        unrecorded = (f"reference measured on {reference}; the runs have no environment "
                      "record of their GPUs")
        if alone:
            return "", f"hardware not checked: {unrecorded}"
        return HARDWARE_UNKNOWN, f"{unrecorded}, and references of several machines name the case"
    if ";" in run_gpus:
        return OTHER_HARDWARE, (f"reference measured on {reference}; the runs ran on several "
                                f"kinds of machine ({run_gpus})")
    if not gpus.same(reference, gpus.parse(run_gpus)):
        return OTHER_HARDWARE, f"reference measured on {reference}, the runs on {run_gpus}"
    return "", ""


def _beyond(median: float, bound: float, sign: int) -> bool:
    """Whether `median` lies beyond `bound` (`sign` -1: below it, 1: above it) at the precision
    of the figures: a bound a tolerance puts at 98.0392 (100.04 - 2 %) is 98.03920000000001."""
    if bound == 0 or math.isinf(bound):  # no bound, or one no ratio can be taken to
        return sign * median > sign * bound
    return bool(verdict.past(sign * (median / bound - 1.0), 0.0) > 0)


def check(summary: pd.DataFrame, references: list[dict],
          gpus_by_case: dict[str, str] | None = None,
          runs: pd.DataFrame | None = None, failed_cases: dict | None = None
          ) -> pd.DataFrame:
    """One row per (reference, matching case): the median, its interval, the bounds and the
    verdict (COLUMNS); a reference no case matches gets one row with verdict *no runs*,
    a case whose runs all failed the verdict *all runs failed*.

    With `gpus_by_case` (:func:`case_gpus`), a reference is a verdict only for cases whose
    runs ran on its hardware, or record none (a case absent from it) while the references
    naming the case are of one machine (``excluded`` then says the hardware was not
    checked); the others get *other hardware* or *hardware unknown*, no ratio, and the
    reason in ``excluded``. Without it hardware is not compared.

    ``flags`` names why a matched case's median may not be what ran, as ``compare`` does:
    its summary's flags (configurations differ, spread above the default threshold) and,
    given `runs` (per-run figures), how many runs' figures disagree with their logs.

    `failed_cases` (``sources.Campaign.failed_cases``): cases whose every run failed before
    writing a log; a reference no case of the summary matches but one of these does (or
    may: folder_records.UNKNOWN_CASE, runs whose records do not state their whole case) is
    *all runs failed*, not *no runs*."""
    keys = case_keys(summary)
    runs_of = ({} if runs is None else
               {k: g for k, g in runs.assign(case_key=case_keys(runs)).groupby("case_key")})
    records = summary.to_dict("records")
    hits_of = [[(k, r) for k, r in zip(keys, records) if _matches(ref["match"], r)]
               for ref in references]
    machines: dict[str, set] = {}  # case key -> the machines of the references naming it
    for ref, hits in zip(references, hits_of):
        for key, _r in hits:
            machines.setdefault(key, set()).add(getattr(gpus.parse(str(ref["hardware"])),
                                                        "key", None))
    rows = []
    for ref, hits in zip(references, hits_of):
        base = {"reference": case_key({"case": "", **ref["match"]}), "value": ref["value"],
                "lower": ref["lower"], "upper": ref["upper"], "unit": ref["unit"],
                "source": ref["source"], "source_zh": ref.get("source_zh", ""),
                "hardware": str(ref["hardware"]), "derived_from": ref.get("derived_from", "")}
        # a failed run whose records leave a field unstated may be any value of it
        failed = [] if hits else [k for k, c in (failed_cases or {}).items() if _matches(
            {f: want for f, want in ref["match"].items() if c.get(f) is not None}, c)]
        for key in failed or ([""] if not hits else []):
            rows.append({**base, "case_key": key, "repeats": 0, "median": np.nan,
                         "interval_low": np.nan, "interval_high": np.nan, "ratio": np.nan,
                         "verdict": FAILED if key else NO_RUNS, "run_hardware": "",
                         "excluded": "", "flags": ""})
        timed = ref["unit"] == TIME_UNIT  # lower is better: above upper is slower
        for key, r in hits:
            _same_kind(ref, key, r)
            median = float(r.get("time_to_train_min", np.nan) if timed
                           else r["throughput_median"])
            run_gpus = "" if gpus_by_case is None else gpus_by_case.get(key, "")
            word, why = ("", "") if gpus_by_case is None else hardware_mismatch(
                ref["hardware"], run_gpus, len(machines[key]) == 1)
            low, high = (FASTER, SLOWER) if timed else (SLOWER, FASTER)
            if not word:
                word = (FAILED if not np.isfinite(median) else low
                        if _beyond(median, ref["lower"], -1) else high
                        if _beyond(median, ref["upper"], 1)
                        else WITHIN)
            ratio = (median / ref["value"] if ref["value"] and word not in NO_VERDICT
                     else np.nan)
            runs_of_case = runs_of.get(key)  # a time to train has no repeats nor interval
            rows.append({**base, "case_key": key, "repeats": len(runs_of_case) if timed and
                         runs_of_case is not None else int(r["repeats"]),
                         "median": median, "interval_low": np.nan if timed else r["interval_low"],
                         "interval_high": np.nan if timed else r["interval_high"],
                         "ratio": ratio, "verdict": word, "run_hardware": run_gpus,
                         "excluded": why, "flags": "; ".join(
                             case_stats.case_flags(r) + figure_flags(runs_of.get(key)))})
    return pd.DataFrame(rows, columns=COLUMNS)


def _same_kind(ref: dict, key: str, row: dict) -> None:
    """UsageError naming the reference entry where its unit is not the kind of figure its
    case gives (a time to train for a throughput case, or the reverse): a bad entry, not
    a case whose runs all failed."""
    figures = {kind: np.isfinite(float(row.get(col, np.nan)))
               for kind, col in ((TIME_UNIT, "time_to_train_min"),
                                 ("samples/s", "throughput_median"))}
    timed = ref["unit"] == TIME_UNIT
    if figures[TIME_UNIT if timed else "samples/s"] or \
            not figures["samples/s" if timed else TIME_UNIT]:
        return
    gives = "a throughput (samples/s)" if timed else f"a time to train ({TIME_UNIT})"
    raise UsageError(f"{ref.get('at', 'a reference')}: unit {ref['unit']} for case {key}, "
                     f"whose figure is {gives}")
