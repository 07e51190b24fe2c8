"""References as gates: a file of expected throughputs per case, checked against a campaign.

A reference names a case by fields (any of ``framework, model, precision,
batch_size_per_device, num_nodes, gpus_per_node, case``; strings compare without regard to
case) or by ``key``, a glob on the case key (``PyTorch/resnet50/amp/b256/1n4g``), and gives
``value`` with ``lower``/``upper`` bounds or a ``tolerance`` (``5%``) around it, plus ``unit``
(samples/s) and ``source``. YAML: a mapping with ``references:`` (a list of such mappings)
and defaults for every entry (``unit``, ``source``, ``tolerance``), or just the list. CSV:
one reference per row, the same names as columns.

A case passes when its median throughput lies within [lower, upper] (as ReFrame checks a
performance reference); below is *slower*, above is *faster*. The median's bootstrap interval
is shown beside it. References no case matches are listed (*no runs*), never dropped.
"""

from __future__ import annotations

import fnmatch
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from analysis.campaign.spec_yaml import SpecError, parse_yaml
from analysis.changes import verdict
from analysis.changes.compare import case_keys
from analysis.errors import UsageError
from analysis.fsutil import display_path

FIELDS = ("framework", "model", "precision", "batch_size_per_device", "num_nodes",
          "gpus_per_node", "case")
_INT_FIELDS = ("batch_size_per_device", "num_nodes", "gpus_per_node")
KEYS = ("key", *FIELDS, "value", "lower", "upper", "tolerance", "unit", "source")
DEFAULT_KEYS = ("unit", "source", "tolerance")
UNITS = ("samples/s", "img/s", "images/s", "samples/sec", "sequences/s", "tokens/s")
WITHIN, SLOWER, FASTER, NO_RUNS = "within", verdict.SLOWER, verdict.FASTER, "no runs"
MAX_BYTES = 1 << 20
COLUMNS = ["reference", "case_key", "repeats", "median", "ci_low", "ci_high", "value",
           "lower", "upper", "ratio", "verdict", "unit", "source"]


def _entries_yaml(text: str, where: str) -> list[tuple[int, dict]]:
    try:
        data = parse_yaml(text, where)
    except SpecError as exc:
        raise UsageError(str(exc).replace("spec ", "references ", 1)) from None
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    defaults: dict = {}
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"references", *DEFAULT_KEYS})
        if unknown:
            raise UsageError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; "
                             f"valid: references, {', '.join(DEFAULT_KEYS)}")
        defaults = {k: data[k] for k in DEFAULT_KEYS if k in data}
        node = next((v for k, v in node.value if k.value == "references"), None)
        data = data.get("references")
    if not isinstance(data, list) or not data:
        raise UsageError(f"{where}: expected a list of references (or a mapping with "
                         "'references:')")
    lines = [n.start_mark.line + 1 for n in node.value]
    return [(line, {**defaults, **e} if isinstance(e, dict) else e)
            for line, e in zip(lines, data)]


def _entries_csv(text: str, where: str) -> list[tuple[int, dict]]:
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"{where}: not a readable CSV file ({' '.join(str(exc).split())})"
                         ) from None
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


def _reference(entry, at: str, default_tolerance: float) -> dict:
    if not isinstance(entry, dict):
        raise UsageError(f"{at}: a reference is a mapping of {', '.join(KEYS)}")
    unknown = sorted(set(map(str, entry)) - set(KEYS))
    if unknown:
        raise UsageError(f"{at}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(KEYS)}")
    if not any(k in entry for k in ("key", *FIELDS)):
        raise UsageError(f"{at}: name the case by key or by fields ({', '.join(FIELDS)})")
    for k in _INT_FIELDS:
        if k in entry and not str(entry[k]).strip().isdigit():
            raise UsageError(f"{at}: {k} must be a whole number, not {entry[k]!r}")
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
    if not math.isnan(value):
        lower = value * (1 - tolerance) if math.isnan(lower) else lower
        upper = value * (1 + tolerance) if math.isnan(upper) else upper
    lower = 0.0 if math.isnan(lower) else lower
    upper = math.inf if math.isnan(upper) else upper
    if lower > upper:
        raise UsageError(f"{at}: lower {lower:g} is above upper {upper:g}")
    unit = str(entry.get("unit", "samples/s"))
    if unit not in UNITS:
        raise UsageError(f"{at}: unit {unit!r} is not a throughput unit ({', '.join(UNITS)})")
    match = {k: entry[k] for k in ("key", *FIELDS) if k in entry}
    return {"match": match, "value": value, "lower": lower, "upper": upper, "unit": unit,
            "source": str(entry.get("source", ""))}


def load_references(path: str | Path, default_tolerance: float = verdict.DEFAULT_THRESHOLD
                    ) -> list[dict]:
    """The references of a YAML (``.yaml``/``.yml``) or CSV file, validated; a UsageError
    names the file and line of the first bad entry."""
    path = Path(path)
    where = display_path(path)
    try:
        data = path.read_bytes()[:MAX_BYTES + 1]
    except OSError as exc:
        raise UsageError(f"cannot read references {where}: {exc.strerror}") from None
    if len(data) > MAX_BYTES:
        raise UsageError(f"references {where} is larger than {MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"references {where}: not UTF-8 text") from None
    entries = (_entries_csv if path.suffix.lower() == ".csv" else _entries_yaml)(text, where)
    return [_reference(e, f"{where}:{line}", default_tolerance) for line, e in entries]


def _label(match: dict) -> str:
    """The reference's case as a key, '*' where it names no field
    ('PyTorch/resnet50/fp32/b128/1n8g', '*/resnet50/amp/b*/1n1g')."""
    if "key" in match:
        return str(match["key"])
    f = {k: str(match.get(k, "*")) for k in FIELDS}
    label = (f"{f['framework']}/{f['model']}/{f['precision']}/b{f['batch_size_per_device']}/"
             f"{f['num_nodes']}n{f['gpus_per_node']}g")
    return label + (f"/{match['case']}" if match.get("case") else "")


def _matches(match: dict, row: dict, key: str) -> bool:
    if "key" in match and not fnmatch.fnmatchcase(key, str(match["key"])):
        return False
    for k in FIELDS:
        if k not in match:
            continue
        have = row.get(k)
        if have is None or (not isinstance(have, str) and pd.isna(have)):
            return False
        if k in _INT_FIELDS:
            if int(have) != int(match[k]):
                return False
        elif str(have).lower() != str(match[k]).lower():
            return False
    return True


def check(summary: pd.DataFrame, references: list[dict]) -> pd.DataFrame:
    """One row per (reference, matching case): the median, its interval, the bounds and the
    verdict (COLUMNS); a reference no case matches gets one row with verdict *no runs*."""
    keys = case_keys(summary)
    records = summary.to_dict("records")
    rows = []
    for ref in references:
        label = _label(ref["match"])
        hits = [(k, r) for k, r in zip(keys, records) if _matches(ref["match"], r, k)]
        base = {"reference": label, "value": ref["value"], "lower": ref["lower"],
                "upper": ref["upper"], "unit": ref["unit"], "source": ref["source"]}
        if not hits:
            rows.append({**base, "case_key": "", "repeats": 0, "median": np.nan,
                         "ci_low": np.nan, "ci_high": np.nan, "ratio": np.nan,
                         "verdict": NO_RUNS})
        for key, r in hits:
            median = float(r["throughput_median"])
            word = (NO_RUNS if not np.isfinite(median) else SLOWER if median < ref["lower"]
                    else FASTER if median > ref["upper"] else WITHIN)
            rows.append({**base, "case_key": key, "repeats": int(r["repeats"]), "median": median,
                         "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                         "ratio": median / ref["value"] if ref["value"] else np.nan,
                         "verdict": word})
    return pd.DataFrame(rows, columns=COLUMNS)
