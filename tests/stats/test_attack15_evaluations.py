"""Inputs of a fifteenth attack on evaluations and steps: results CARRIED on every training
line (the latest val.top1 printed with each iteration, changing only after an evaluation),
results printed one training line AFTER the evaluation, and DLLogger steps that are not
iterations. DLLogger logs of batch 128 on 1 GPU at 50 ms an iteration (2,560 img/s)."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402
from test_attack14_evaluations import BATCH, SECONDS, TRUTH, _rows  # noqa: E402


def _carried(n: int, every: int, evaluation: float, start: int = 1, late: int = 0,
             running: bool = False, only: bool = False) -> list[str]:
    """`n` iterations of 50 ms x lognormal(0.03); every `every`-th one then evaluates for
    `evaluation` s (in the interval its line ends). From iteration `start` on each line
    carries the latest result (`val.top1`), which changes `late` lines after each
    evaluation; `running`: a value that changes on every line; `only`: printed only on the
    line where it changes."""
    took = SECONDS * np.random.default_rng(7).lognormal(0.0, 0.03, n)
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, amp=True, world_size=1,
                       print_freq=1)]
    t, top1 = 20.0, 0.001
    for i in range(1, n + 1):
        t += float(took[i - 1]) + (evaluation if i % every == 0 else 0.0)
        changed = (i - late) % every == 0 and i > late
        if changed:
            top1 = 0.1 + i / 1000
        line = (f"DLL {S.stamp(S.START + timedelta(seconds=t))} - Epoch: 0 Iteration: {i}  "
                f"train.loss : {6.9 - i * 1e-3:.5f}")
        if i >= start and (changed or not only):
            line += f"  val.top1 : {(0.5 + i / 1e4) if running else top1:.5f}"
        out.append(line)
    return out


@pytest.mark.parametrize("every, evaluation, late, only", [
    (25, 0.3, 0, False), (10, 0.1, 0, False), (25, 0.3, 1, False), (25, 0.3, 1, True)])
def test_a_result_carried_on_every_line_marks_the_evaluation_where_it_changes(
        tmp_path, every, evaluation, late, only):
    """The latest result on every training line, changing after each 0.3 s evaluation:
    window 9,168.20 and dlperf 9,172.58 for 11,677.45 / 11,684.55 (-21.5 %), 0 problems,
    as a value on every line was taken for a running metric and no evaluation counted.
    Where it changes marks the interval the evaluation ran in; printed a line late (the
    results logged with the next iteration, carried or on that line alone: 9,168.50 /
    9,172.58, 0 problems), the slow interval before it is the one. The window leaves
    those out; the DLPerf rule, counting them, is flagged. A line late, the log cannot tell
    the results from a cheap evaluation after a stall: the window says both readings."""
    rows = _rows(tmp_path, _carried(300, every, evaluation, late=late, only=only))
    window, dlperf = rows["window"], rows["dlperf"]
    assert window["problem_kind"] == ("figure_mismatch" if late else ""), window["problem"]
    assert not late or "the log does not say which" in window["problem"]
    assert window["throughput"] == pytest.approx(TRUTH, rel=0.01)
    assert dlperf["problem_kind"] == "figure_mismatch", dlperf["problem"]
    assert dlperf["throughput"] < 0.9 * TRUTH


@pytest.mark.parametrize("start, running", [(5, False), (25, False), (1, True)])
def test_a_carried_result_without_evaluation_time_flags_nothing(tmp_path, start, running):
    """The carried result from iteration 5 or 25 on, with no evaluation time: every later
    interval read as holding an evaluation, evaluation_in_figure on the right figure. Only
    the lines where it changes mark one, and those run at the pace; a value changing on
    every line (a running metric) marks none."""
    rows = _rows(tmp_path, _carried(300, 25, 0.0, start=start, running=running))
    for method, row in rows.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method


def test_results_a_line_late_at_no_cost_mark_their_own_line(tmp_path):
    """Results a line after an evaluation that took no time: nothing is slow, the marks
    stay where they are printed, and nothing is flagged."""
    rows = _rows(tmp_path, _carried(300, 25, 0.0, late=1))
    for method, row in rows.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method


def _with_bare_summaries(every: int) -> list[str]:
    """300 iterations at 50 ms, one `Epoch: 0 Iteration: i` line each, and after every
    `every`-th a summary logged with a bare-number step (``dllogger.log(step=epoch, ...)``
    prints ``- 0  train.loss ...``)."""
    out = []
    for k, line in enumerate(S.lines(300)):
        out.append(line)
        if k and k % every == 0:
            when = line.split(" - ")[0]
            out.append(f"{when} - {k // every - 1}  train.loss : 3.42777  "
                       f"train.total_ips : {TRUTH:.2f} img/s")
    return out


@pytest.mark.parametrize("every", [50, 300])
def test_bare_number_epoch_summaries_beside_named_iterations_are_no_training_lines(
        tmp_path, every):
    """Epoch summaries with a bare-number step after `Epoch/Iteration` lines were read as
    training steps going back: steps_backwards "a log appended twice", and with one every
    50 iterations no figure at all. Beside training lines of a named form a bare number is
    the epoch's, as a ``(0,)`` step is."""
    S.write(tmp_path, _with_bare_summaries(every))
    result = parse_paths([tmp_path], jobs=1)
    assert not [p for p in result.problem_list() if p.kind == "steps_backwards"]
    for method in ("window", "dlperf", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method


def _counting_samples(form: str, stated: int = 150) -> list[str]:
    """150 iterations of batch 128 on 4 GPUs at 50 ms whose steps count the samples seen
    (512 a line), no rate and no print frequency; the dump states `iterations : stated`."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=BATCH, global_batch_size=512,
                       world_size=4, iterations=stated)]
    for i in range(1, 151):
        when = S.stamp(S.START + timedelta(seconds=20.0 + i * SECONDS))
        step = {"bare": f"{512 * i}", "tuple": f"(0, {512 * i})",
                "named": f"Epoch: 0 Iteration: {512 * i}"}[form]
        out.append(f"DLL {when} - {step}  train.loss : {6.9 - i * 1e-3:.5f}")
    return out


@pytest.mark.parametrize("form", ["bare", "tuple", "named"])
def test_steps_counting_samples_past_the_stated_iterations_are_flagged(tmp_path, form):
    """Steps counting samples (512 a line) with no rate and no print frequency: dlperf
    5,978,855.60 samples/s for 11,684.55 (x512), 0 problems. The dump's `iterations : 150`
    against steps reaching 76,800 by the global batch a line flags the figure
    meta_contradicted, kept as computed."""
    S.write(tmp_path, _counting_samples(form), name="1n4g/r50_b128_amp_1.log")
    result = parse_paths([tmp_path], jobs=1)
    rows = [run_throughput(result, m).iloc[0] for m in ("dlperf", "window")]
    rows = [row for row in rows if np.isfinite(row["throughput"])]  # TF tuples: no DLPerf rule
    assert rows
    for row in rows:
        assert row["problem_kind"] == "meta_contradicted", row["problem"]
        assert "the argument dump states iterations 150, and the steps reach 76800" \
            in row["problem"]
        assert row["throughput"] == pytest.approx(512 * TRUTH * 4, rel=0.01)


def test_a_counter_over_epochs_past_the_stated_iterations_is_no_sample_count(tmp_path):
    """Steps past `iterations` that advance one a line (a counter across epochs, or a
    dump's iterations per epoch) count iterations: nothing is said."""
    text = [line.replace(f"- {512 * i}  ", f"- {i}  ")
            for i, line in enumerate(_counting_samples("bare", stated=100))]
    S.write(tmp_path, text, name="1n4g/r50_b128_amp_1.log")
    result = parse_paths([tmp_path], jobs=1)
    for method in ("window", "dlperf"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == "", (method, row["problem"])
