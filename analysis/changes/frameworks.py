"""Frameworks side by side (the summary of DLPerf v1.0), never across hardware.

Runs are compared only where two or more frameworks ran the same setting (model, precision,
batch size per device, nodes, GPUs per node and GPT case label) on the same hardware type
(:func:`analysis.run_settings.hardware_type`: GPU model and count, CPU, memory,
architecture, from the environment records). Every measurement — a framework's runs from
one source folder with one recorded framework version — is a row: two of one framework in
one setting are both shown and flagged as duplicates, never merged or dropped. What cannot
be compared is listed with the reason (:data:`REASONS`), a measurement of a single run
included: one run shows no spread, so its median is not a figure to rank frameworks by.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

import numpy as np
import pandas as pd

from analysis.changes import environment
from analysis.errors import UnknownNameError
from analysis.i18n import Translator

SETTING = ["model", "precision", "batch_size_per_device", "num_nodes", "gpus_per_node", "case"]
COLUMNS = [*SETTING, "hardware", "framework", "framework_version", "source", "repeats",
           "throughput_median", "throughput_min", "throughput_max", "baseline", "relative",
           "duplicates", "baseline_measurements"]
EXCLUDED_COLUMNS = [*SETTING, "framework", "hardware", "framework_version", "source",
                    "repeats", "reason", "elsewhere"]
#: Why a measurement is left out.
NOT_RECORDED, MIXED, ALONE, NO_THROUGHPUT, SINGLE_RUN = (
    "hardware_not_recorded", "mixed_hardware", "alone", "no_throughput", "single_run")
REASONS = (NOT_RECORDED, MIXED, ALONE, NO_THROUGHPUT, SINGLE_RUN)
_CASE_FOLDER = re.compile(r"^\d+n\d+[gd]$")


@dataclass
class FrameworkComparison:
    """`table`: one row per compared measurement (COLUMNS); `excluded`: one row per
    measurement left out, with its reason (EXCLUDED_COLUMNS)."""

    table: pd.DataFrame
    excluded: pd.DataFrame


def source_folder(log_path: str) -> str:
    """The folder a run's log came from, without DLPerf's case folder ('…/pytorch/1n8g/x.log'
    -> '…/pytorch')."""
    parts = list(PurePath(str(log_path)).parent.parts)
    while parts and _CASE_FOLDER.match(parts[-1]):
        parts.pop()
    return str(PurePath(*parts)) if parts else "."


def _measurements(runs: pd.DataFrame, env: pd.DataFrame) -> pd.DataFrame:
    """The runs with their hardware, framework version and source folder."""
    facts = env.set_index("run_id")
    run_ids = runs["run_id"].astype(str)

    def fact(name: str) -> list[str]:
        return [str(facts[name].get(r, "")) for r in run_ids]

    frame = runs.assign(
        hardware=fact("hardware"), framework_version=fact("frameworks"),
        source=[source_folder(s) for s in runs["source"].astype(str)])
    frame["case"] = frame["case"].astype(object).where(frame["case"].notna(), "")
    for c in SETTING[:-1] + ["framework"]:
        frame[c] = frame[c].astype(object).where(frame[c].notna(), "?")
    return frame


def _summary(key: tuple, group: pd.DataFrame) -> dict:
    values = group["throughput"].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    return {**dict(zip([*SETTING, "hardware", "framework", "framework_version", "source"], key)),
            "repeats": int(values.size),
            "throughput_median": float(np.median(values)) if values.size else np.nan,
            "throughput_min": float(values.min()) if values.size else np.nan,
            "throughput_max": float(values.max()) if values.size else np.nan}


def _excluded(row: dict, reason: str, elsewhere: str = "") -> dict:
    return {**{c: row[c] for c in EXCLUDED_COLUMNS if c in row}, "reason": reason,
            "elsewhere": elsewhere}


def compare(runs: pd.DataFrame, env: pd.DataFrame, baseline: str | None = None,
            compare_unrecorded: bool = False) -> FrameworkComparison:
    """Frameworks side by side from per-run throughputs (analysis.stats.RUN_COLUMNS) and the
    runs' environment facts (environment.RUN_ENV_COLUMNS, e.g. :func:`environment.run_env`).

    `baseline` is the framework the others are divided by (default: the first by name in each
    setting; one that no run has is an UnknownNameError listing those that ran). Runs without an environment record are left out unless `compare_unrecorded`,
    which compares them with each other as one unknown machine (their hardware shown empty).
    """
    ran = sorted(set(runs["framework"].dropna()))
    if baseline is not None and baseline not in ran:  # a typo must not pick another baseline
        raise UnknownNameError("baseline framework", baseline, ran)
    frame = _measurements(runs, env)
    keys = [*SETTING, "hardware", "framework", "framework_version", "source"]
    cells = [_summary(k, g) for k, g in frame.groupby(keys, sort=False, dropna=False)]
    rows, excluded = [], []
    by_setting: dict[tuple, list[dict]] = {}
    for cell in cells:
        if cell["repeats"] == 0:
            excluded.append(_excluded(cell, NO_THROUGHPUT))
        elif cell["repeats"] == 1:
            excluded.append(_excluded(cell, SINGLE_RUN))
        elif ";" in cell["hardware"]:
            excluded.append(_excluded(cell, MIXED))
        elif not cell["hardware"] and not compare_unrecorded:
            excluded.append(_excluded(cell, NOT_RECORDED))
        else:
            by_setting.setdefault(tuple(cell[c] for c in SETTING), []).append(cell)
    for setting_cells in by_setting.values():
        for hardware in dict.fromkeys(c["hardware"] for c in setting_cells):
            here = [c for c in setting_cells if c["hardware"] == hardware]
            frameworks = sorted({c["framework"] for c in here})
            if len(frameworks) < 2:
                others = sorted({f"{c['framework']}: {c['hardware'] or '?'}"
                                 for c in setting_cells if c["hardware"] != hardware})
                excluded += [_excluded(c, ALONE, "; ".join(others)) for c in here]
                continue
            rows += _side_by_side(here, baseline if baseline in frameworks else frameworks[0])
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["repeats"] = table["repeats"].astype(int)
    return FrameworkComparison(table, pd.DataFrame(excluded, columns=EXCLUDED_COLUMNS))


def _side_by_side(cells: list[dict], base: str) -> list[dict]:
    """The rows of one setting on one hardware: relative to `base` when `base` has exactly
    one measurement here; duplicates counted per framework."""
    count = {f: sum(c["framework"] == f for c in cells) for f in {c["framework"] for c in cells}}
    base_cells = [c for c in cells if c["framework"] == base]
    base_median = base_cells[0]["throughput_median"] if len(base_cells) == 1 else np.nan
    return [{**c, "baseline": base, "relative": c["throughput_median"] / base_median,
             "duplicates": count[c["framework"]], "baseline_measurements": len(base_cells)}
            for c in cells]


# ---- in one language ------------------------------------------------------------------------

def _num(value: float, digits: int = 2) -> str:
    return "–" if pd.isna(value) else f"{value:,.{digits}f}"


def table_text(comparison: FrameworkComparison, lang: str) -> pd.DataFrame:
    """The compared rows with headers and numbers in `lang` (text cells, for display)."""
    t = comparison.table

    say = Translator(lang)

    def note(r) -> str:
        parts = []
        if r.duplicates > 1:
            parts.append(say("fw.duplicate", count=r.duplicates, framework=r.framework))
        if r.baseline_measurements > 1 and r.framework != r.baseline:
            parts.append(say("fw.baseline_duplicated", framework=r.baseline,
                             count=r.baseline_measurements))
        return "; ".join(parts)

    def relative(r) -> str:
        if r.framework == r.baseline and r.baseline_measurements == 1:
            return say("fw.is_baseline")
        return "–" if pd.isna(r.relative) else say("fw.relative", ratio=_num(r.relative),
                                                    baseline=r.baseline)

    rows = list(t.itertuples(index=False))
    out = pd.DataFrame({
        say("fw.col.model"): [r.model for r in rows],
        say("fw.col.precision"): [r.precision for r in rows],
        say("fw.col.batch"): [str(r.batch_size_per_device) for r in rows],
        say("fw.col.devices"): [f"{r.num_nodes} × {r.gpus_per_node}" for r in rows],
        say("fw.col.case"): [r.case for r in rows],
        say("fw.col.hardware"): [r.hardware or say("fw.not_recorded") for r in rows],
        say("fw.col.framework"): [r.framework for r in rows],
        say("fw.col.version"): [r.framework_version or say("fw.not_recorded") for r in rows],
        say("fw.col.source"): [r.source for r in rows],
        say("fw.col.repeats"): [str(r.repeats) for r in rows],
        say("fw.col.median"): [_num(r.throughput_median) for r in rows],
        say("fw.col.range"): [f"{_num(r.throughput_min)}–{_num(r.throughput_max)}"
                              for r in rows],
        say("fw.col.relative"): [relative(r) for r in rows],
        say("fw.col.note"): [note(r) for r in rows],
    })
    if not any(r.case for r in rows):
        out = out.drop(columns=say("fw.col.case"))
    return out


def excluded_text(comparison: FrameworkComparison, lang: str) -> list[str]:
    """One sentence in `lang` per measurement left out, saying why."""
    out, say = [], Translator(lang)
    for r in comparison.excluded.to_dict("records"):
        what = (f"{r['framework']} {r['model']} {r['precision']} b{r['batch_size_per_device']} "
                f"{r['num_nodes']}n{r['gpus_per_node']}g{' ' + r['case'] if r['case'] else ''} "
                f"({r['source']})")
        if r["reason"] == ALONE and not r["hardware"]:  # compared unrecorded: none to name
            text = say("fw.excluded.alone_unrecorded", what=what)
        else:
            text = say(f"fw.excluded.{r['reason']}", what=what,
                               hardware=r["hardware"])
        if r["elsewhere"]:
            text = say("fw.excluded.others", text=text, others=r["elsewhere"])
        out.append(text)
    return out


def section(runs: pd.DataFrame, envs, lang: str = "en", baseline: str | None = None,
            compare_unrecorded: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """A report section: the side-by-side table in `lang` and the sentences saying what was
    left out and why (`envs`: the report's env records, analysis.env.folder_records.EnvInput)."""
    comparison = compare(runs, environment.run_env(runs, envs), baseline, compare_unrecorded)
    return table_text(comparison, lang), excluded_text(comparison, lang)
