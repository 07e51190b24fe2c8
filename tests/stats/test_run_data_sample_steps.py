"""`per_run.run_data` (what notebooks plot and new rules are tried on) gives a run as the
methods measure it: a log whose steps count samples (``Iteration: 128, 256, ...``) comes
back with its steps in iterations, as its figures count them, and a method given it yields
the figure ``summarize`` gives. DLE PyTorch lines of batch 128 on 1 GPU at 50 ms an
iteration: 2,560 img/s."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis import metrics as M
from analysis import parsers
from analysis.collect import parse_paths
from analysis.stats.per_run import run_data, run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

TRUTH = 128 / 0.05
LINES = 300


def _log(samples: bool) -> list[str]:
    """`LINES` lines, one an iteration; each step the samples seen where `samples`."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1),
           "RUNNING EPOCHS FROM 0 TO 1"]
    for i in range(1, LINES + 1):
        when = S.START + timedelta(seconds=10.5 + i * 0.05)
        out.append(S.train_line(when, 0, i * (128 if samples else 1), TRUTH))
    return out


def _parsed(folder: Path, samples: bool):
    S.write(folder, _log(samples))
    result = parse_paths([folder], jobs=1, cache=False)
    return result, result.runs["run_id"].iloc[0]


@pytest.mark.parametrize("samples", [True, False])
def test_run_data_steps_are_the_iterations_its_figures_count(tmp_path, samples):
    result, rid = _parsed(tmp_path, samples)
    steps = run_data(result, rid).series(M.THROUGHPUT)["step"].to_numpy()
    # before, where the steps count samples: 128, 256, ..., 38400
    np.testing.assert_array_equal(steps, np.arange(1, LINES + 1))


def test_a_method_given_run_data_gives_the_summarized_figure(tmp_path):
    result, rid = _parsed(tmp_path, True)
    summarized = run_throughputs(result, ("dlperf",))["dlperf"].iloc[0]
    assert "the steps count samples" in summarized["method"]
    est = parsers.get(result.runs["family"].iloc[0]).dlperf(run_data(result, rid))
    assert est.throughput == pytest.approx(summarized["throughput"], rel=1e-12)
    assert est.throughput == pytest.approx(TRUTH, rel=1e-4)
    assert est.iterations == summarized["iterations"]
