"""Evaluation results printed several training lines after the evaluation ran: the bundled
real ResNet-50 run (data/raw_logs/rn50_4gpu, 1n4g run 1, its own stamps) given a 0.3 s
evaluation every 25 iterations, in the interval its 25k-th line ends, and the latest result
carried on every training line from `late` lines after it."""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput
from analysis.stats.methods.window import evaluation_marks

RUN = Path(__file__).resolve().parents[2] / "data/raw_logs/rn50_4gpu/1n4g"
STEM = "resnet50_b128_fp32_1"
STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}")
ITERATION = re.compile(r"Epoch: 0 Iteration: (\d+) ")


def _with_evaluations(folder: Path, late: int, cost: float = 0.3, every: int = 25) -> Path:
    """Run 1 (printed rates dropped, as a log carrying results need not print them) with an
    evaluation of `cost` s after every `every`-th iteration, its result (`val.top1`) on every
    training line from `late` lines after it: the run's folder."""
    out, shift, due, top1 = [], 0.0, {}, 0.001
    for line in (RUN / f"{STEM}.log").read_text().split("\n"):
        it = ITERATION.search(line)
        when = STAMP.search(line)
        if when and (it or "Summary" in line):
            if it and int(it[1]) % every == 0:
                shift += cost
                due[int(it[1]) + late] = 0.1 + int(it[1]) / 1000
            moved = datetime.fromisoformat(when[0]) + timedelta(seconds=shift)
            line = (line[:when.start()] + f"{moved:%Y-%m-%d %H:%M:%S.%f}"
                    + line[when.end():]).split("  train.total_ips")[0]
            if it:
                top1 = due.pop(int(it[1]), top1)
                line += f"  val.top1 : {top1:.5f}"
        out.append(line)
    run = folder / "1n4g"
    run.mkdir(parents=True)
    for ext in (".done", ".node0.env.json"):
        shutil.copy(RUN / f"{STEM}{ext}", run / f"{STEM}{ext}")
    (run / f"{STEM}.log").write_text("\n".join(out))
    return folder


def _rows(folder: Path) -> dict:
    result = parse_paths([folder], jobs=1)
    return {m: run_throughput(result, m).iloc[0] for m in ("window", "dlperf")}


@pytest.fixture(scope="module")
def truth(tmp_path_factory) -> float:
    """The unedited run's window figure: training alone (11,677.45)."""
    folder = tmp_path_factory.mktemp("truth") / "1n4g"
    shutil.copytree(RUN, folder, ignore=lambda d, names: [n for n in names
                                                           if not n.startswith(STEM)])
    return float(_rows(folder.parent)["window"]["throughput"])


@pytest.mark.parametrize("late", [0, 1, 2, 3, 6])
def test_results_printed_lines_after_the_evaluation_leave_its_interval_out(
        tmp_path, truth, late):
    """Results carried from two or three lines after each evaluation: window 9,167.96 /
    9,167.47 and dlperf 9,172.58 for 11,677.45 / 11,684.55 (-21.5 %), 0 problems, as only
    a result one line late moved to the evaluation's interval. The slow interval recurring
    the same number of lines before every mark is the one: the window leaves it out and the
    DLPerf rule, which counts it, is flagged, as for results on time or a line late."""
    rows = _rows(_with_evaluations(tmp_path, late))
    window, dlperf = rows["window"], rows["dlperf"]
    assert window["problem_kind"] == "", window["problem"]
    assert window["throughput"] == pytest.approx(truth, rel=0.002)
    assert dlperf["problem_kind"] == "figure_mismatch", dlperf["problem"]
    assert dlperf["throughput"] < 0.9 * truth


@pytest.mark.parametrize("late", [2, 3])
def test_results_lines_late_after_evaluations_that_cost_nothing_stay_put(
        tmp_path, truth, late):
    """The same results with evaluations that took no time: no slow interval recurs before
    the marks, so they stay where printed and nothing is flagged."""
    rows = _rows(_with_evaluations(tmp_path, late, cost=0.0))
    for method, row in rows.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(truth, rel=0.002), method


def _timeline(n: int, slow: dict[int, float], seconds: float = 0.05):
    """n training lines (line number = step = index + 1) at `seconds` each with 0.2 %
    jitter, the interval ending at line i taking slow[i] s more."""
    took = seconds * np.random.default_rng(3).lognormal(0.0, 0.002, n)
    took += np.array([slow.get(i, 0.0) for i in range(1, n + 1)])
    steps = np.arange(1, n + 1)
    return (steps, None, steps.astype(float), np.cumsum(took)), steps


def test_a_stall_nearer_the_mark_before_is_not_taken_for_a_late_evaluation():
    """Marks every 10 lines with a stall 6 lines before each (4 after the mark before):
    farther back than half the marks' spacing, nothing says whose stall it is; the marks
    stay where printed. The same stall 3 lines before them moves them there."""
    for back, moved in ((6, False), (3, True)):
        timeline, steps = _timeline(200, {i - back: 0.3 for i in range(20, 201, 10)})
        marks = np.arange(20, 201, 10)
        got, _ = evaluation_marks(timeline, marks, timeline[3][marks - 1],
                                  [0.1 + i / 1000 for i in marks])
        want = marks - back if moved else marks
        assert got.tolist() == want.tolist(), back
