"""What the figure checks read of a steady run: DLE PyTorch lines, batch 128 on 1 GPU at about
50 ms an iteration, each printing its own iteration's rate. Its rates read one way fit its
stamps tightly (their implied batches within FIT_SHARE) and give the stated batch, so no
other reading of them is made; no printed rate disagrees with its stamps, so no window is
searched for intervals the stamps' clock stepped. A step back however small is still
found where its rate disagrees, and the figures are those of the full checks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import figure_checks
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402
from test_clock_steps_rates import WINDOWS, _run  # noqa: E402


def _spy(monkeypatch, name: str) -> list:
    """The results of every call of figure_checks' function `name`, as the checks run."""
    seen, real = [], getattr(figure_checks, name)

    def spied(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(figure_checks, name, spied)
    return seen


@pytest.mark.parametrize("method", ["dlperf", "window"])
def test_a_steady_run_reads_its_rates_one_way(tmp_path, monkeypatch, method):
    """One reading made (each interval's own rate), none of the means over spans; the figure
    is the run's true rate, unflagged."""
    text, end = _run({})
    S.write(tmp_path, text)
    spans = _spy(monkeypatch, "_over_span")
    chosen = _spy(monkeypatch, "_rate_reading")
    row = run_throughputs(parse_paths([tmp_path], jobs=1), [method])[method].iloc[0]
    a, b = WINDOWS[method]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(128 * (b - a) / (end[b - 1] - end[a - 1]), rel=1e-4)
    assert [r.what for r in chosen] == ["its own interval's rate"]
    assert len(spans) == 1


@pytest.mark.parametrize("method", ["dlperf", "window"])
def test_a_window_whose_rates_all_agree_is_not_searched_for_steps(tmp_path, monkeypatch,
                                                                   method):
    """No printed rate off its stamps: the window's intervals are not timed by their rates to
    look for a step (_rate_times is not asked), and nothing is found stepped."""
    S.write(tmp_path, _run({})[0])
    timed = _spy(monkeypatch, "_rate_times")
    stepped = _spy(monkeypatch, "_stepped_by_rates")
    row = run_throughputs(parse_paths([tmp_path], jobs=1), [method])[method].iloc[0]
    assert row["problem_kind"] == ""
    assert stepped == [None] and timed == []


@pytest.mark.parametrize("method", ["dlperf", "window"])
def test_a_small_step_back_is_still_found(tmp_path, monkeypatch, method):
    """One step back of 6 ms (12 % of one iteration, 0.1 % of the window: its figure is not
    moved past MISMATCH): the rate of that interval disagrees with its stamps, and the window
    finds it stepped, at its line, timed by its printed rate."""
    S.write(tmp_path, _run({60: -0.006})[0])
    stepped = _spy(monkeypatch, "_stepped_by_rates")
    row = run_throughputs(parse_paths([tmp_path], jobs=1), [method])[method].iloc[0]
    assert row["problem_kind"] == ""
    (found,) = stepped
    assert found is not None and np.isfinite(found).sum() == 1
    # the interval into iteration 60, counted from the window's first line
    assert int(np.flatnonzero(np.isfinite(found))[0]) == 60 - WINDOWS[method][0] - 1
