"""MLPerf's score of a case: the runs' times to train (minutes) combined by the round's rule
(docs/formats.md §15).

The rule, as mlperf-logging's result summarizer computes it (``_compute_strong_score_standalone``,
``_compute_olympic_average``; training rules "Benchmark results"): sort the times of the runs
that finished with status success, drop the `k` fastest, drop the `k` slowest less one for
each aborted run (an aborted run counts as a slowest one), and average the rest; with more
than `k` aborted runs there is no score. `k` is 4 for unet3d and 1 for every other benchmark.
A round asks for a set number of runs per benchmark (RUNS); a case with another number gets
its score with the difference said in `time_to_train_rule`, and one with fewer is flagged.
A ``scaling.json`` beside the result logs (SCALING_FILE) scales the score as the summarizer
does.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from analysis import metrics as M
from analysis.fsutil import loads_json, read_record
from analysis.parsers.mlperf import QUALITY_TARGETS, TARGET_UNKNOWN
from analysis.stats import case_stats

#: Runs a result needs per benchmark (mlperf-logging benchmark_meta, training).
RUNS = {"bert": 10, "dlrm": 5, "dlrm_dcnv2": 10, "gnmt": 10, "gpt3": 3, "maskrcnn": 5,
        "minigo": 10, "resnet": 5, "ssd": 5, "retinanet": 5, "stable_diffusion": 10,
        "transformer": 10, "ncf": 10, "rnnt": 10, "unet3d": 40, "gnn": 10,
        "llama2_70b_lora": 10}
#: Problem kinds of a run whose time to train is kept but in doubt (analysis.parsers.mlperf:
#: a block far slower than the others, a record stamped before an earlier one).
DOUBTED = ("timestamps_jump", "timestamps_backwards")

#: Key of a case row's doubts about its score while it is built (texts for its `flags`;
#: not a column).
SCORE_DOUBTS = "_score_doubts"
#: Fastest (and slowest) runs the score drops per benchmark; 1 for the others.
DROPPED = {"unet3d": 4}
#: The review committee's scaling of a benchmark's score: ``{"scaling_factor": x}`` in the
#: folder of its result logs, which the summarizer multiplies the score by
#: (``_get_scaling_factor``, ``_compute_strong_score_standalone``).
SCALING_FILE = "scaling.json"


def scored_by_time(rows) -> bool:
    """Whether a case is judged by its time to train (minutes, lower is better), not its
    throughput: no row of `rows` (its summary rows: the sides of a comparison, the campaigns
    of a trend; None for a side without it) has a throughput and one has a time to train.
    The one rule compare, trend and the trend chart share."""
    rows = [r for r in rows if r is not None]

    def known(col: str) -> bool:
        return any(isinstance(v := r.get(col), (int, float)) and math.isfinite(v) for r in rows)

    return not known("throughput_median") and known("time_to_train_min")


def olympic(times: list[float], aborted: int, benchmark: str | None) -> tuple[float, str]:
    """(score in minutes or NaN, how it was computed or why there is none)."""
    k = DROPPED.get(benchmark or "", 1)
    n = len(times) + aborted
    if aborted > k:
        return math.nan, (f"{aborted} of {n} runs aborted; the MLPerf rule drops at most {k}: "
                          "no score")
    kept = sorted(times)[k:len(times) - (k - aborted)]
    if not kept:
        return math.nan, (f"{n} run(s); the MLPerf rule drops the {k} fastest and the {k} "
                          "slowest: none left, no score")
    text = (f"MLPerf rule: mean of {len(kept)} of {n} runs' times to train after dropping "
            f"the {k} fastest and the {k} slowest")
    if aborted:
        text += f" ({aborted} aborted run{'s' if aborted > 1 else ''} counted as the slowest)"
    if benchmark not in QUALITY_TARGETS:
        text += f"; {benchmark or 'the benchmark'!s}: {TARGET_UNKNOWN}"
    need = RUNS.get(benchmark or "")
    if need is None:
        text += f"; {benchmark or 'the benchmark'!s} has no run count in the rules known here"
    elif need != n:
        text += f"; the round asks for {need} runs of {benchmark}, these are {n}"
    return math.fsum(kept) / len(kept), text


def _scaling(sources) -> tuple[float, str]:
    """(factor, what the rule text adds) of the SCALING_FILE in the folders of the logs
    `sources`: 1.0 and "" where there is none; NaN and why where one is no factor or the
    folders state different ones (the summarizer scores each folder alone)."""
    factors: dict[float, list[str]] = {}
    for folder in sorted({Path(str(s)).parent for s in sources}):
        path = folder / SCALING_FILE
        if not path.is_file():
            factors.setdefault(1.0, []).append(str(folder))
            continue
        try:
            data = loads_json(read_record(path))  # a record's size cap: one key
        except (OSError, ValueError, RecursionError) as e:
            where = f":{e.lineno}" if isinstance(e, json.JSONDecodeError) else ""
            return math.nan, f"{path}{where}: unreadable ({str(e)[:80]}); no score"
        value = data.get("scaling_factor") if isinstance(data, dict) else None
        if not (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value) and value > 0):
            return math.nan, (f"{path}: states no positive scaling_factor "
                              f"({str(data)[:60]}); no score")
        factors.setdefault(float(value), []).append(str(path))
    if len(factors) > 1:
        said = "; ".join(f"x {f:g} ({', '.join(p[:2])})" for f, p in sorted(factors.items()))
        return math.nan, (f"the case's logs sit in folders scaled differently ({said}): the "
                          "MLPerf summarizer scores each folder alone; no score")
    factor = next(iter(factors), 1.0)
    return factor, "" if factor == 1.0 else f"; x {factor:g} ({SCALING_FILE})"


def case_score(result, runs_by_id, run_ids) -> dict:
    """Summary columns time_to_train_min and time_to_train_rule of a case of MLPerf runs:
    `result` the ParseResult, `runs_by_id` its runs frame by run_id, `run_ids` the case's."""
    ids = set(run_ids)
    obs = result.observations
    rows = obs[(obs["metric"] == M.TIME_TO_TRAIN) & (obs["phase"] == M.SUMMARY)
               & obs["run_id"].isin(ids)]
    times = rows["value"].astype(float).tolist()
    problems = result.problems[result.problems["run_id"].isin(ids)]
    runs_of = problems.groupby("kind", observed=True)["run_id"].unique()
    of = {k: set(runs_of.get(k, ())) for k in ("run_aborted", "impossible_value", "several_runs")}
    # a run whose log gives no possible time (run_stop before run_start, run_start at 0 ms)
    # finished no valid run: it counts as an aborted one, as the checker would fail it
    impossible = of["impossible_value"] - set(rows["run_id"].astype(str))
    aborted = len(of["run_aborted"]) + len(impossible)
    several = sorted(of["several_runs"])
    if several:  # its runs are not the case's runs one a log, as the rules count them
        return {"time_to_train_min": math.nan, "time_to_train_rule": (
            f"{len(several)} log(s) of the case hold more than one run ({', '.join(several[:3])}"
            f"{', …' if len(several) > 3 else ''}): the MLPerf rules count one run a log; "
            "no score")}
    model = runs_by_id.loc[list(run_ids), "model"].dropna()
    benchmark = str(model.iloc[0]) if len(model) else None
    score, rule = olympic(times, aborted, benchmark)
    factor, said = _scaling(runs_by_id.loc[list(run_ids), "source"])
    if math.isnan(factor):
        score, rule = math.nan, said
    elif not math.isnan(score):
        score, rule = score * factor, rule + said
    doubted = problems[problems["kind"].isin(DOUBTED)]
    n, need = len(times) + aborted, RUNS.get(benchmark or "", 0)
    # fewer runs than the round asks for are not a result its rules accept: a gate that
    # compares the score must say so
    doubts = [f"{n} of the {need} runs the round asks for ({benchmark}) "
              f"{case_stats.SCORE_DOUBTED}"] if n < need else []
    for kind, runs in doubted.groupby("kind")["run_id"]:
        doubts.append(f"{runs.nunique()} of {len(ids)} run(s) {kind} {case_stats.SCORE_DOUBTED}")
        rule += (f"; {runs.nunique()} of {len(ids)} run(s) {kind} (a clock step or a stall "
                 "inside the run: its time to train is in doubt)")
    if impossible:
        rule += (f"; {len(impossible)} run(s) without a possible time (impossible_value) "
                 "counted as aborted")
    return {"time_to_train_min": score, "time_to_train_rule": rule, SCORE_DOUBTS: doubts}
