"""Running means since the run's start whose meter stops over a pause at each epoch's end
that no line names (a save): read as means over the stamps' time, the pauses scattered
them, no reading fitted, and the window's true figure was flagged as if its stamps held
time the rates leave out (attack59 runmean_slow: 512.22 figure_mismatch, rc 3; `reported`
said the rates count another batch). They are read over the training time now, the
epoch ends whose intervals the stamps show longer than their iterations left out.
DLE lines, batch 128, 0.25 s an iteration (512 img/s), epochs of 10 iterations, a line
every 5, 3 s pauses, a slow first iteration."""

from __future__ import annotations

import pytest

from analysis import parse_paths
from analysis.stats import run_throughput
from tests.stats import dll_synth as S

SHAPE = dict(mode="run", seed=39, iters=480, ipe=10, every=5, pace=0.25, jitter=0.01,
             digits=1, whole=False, pause=3.0, us=291421, closing=False)


@pytest.mark.parametrize("slow", [2.0, 8.0])
def test_healthy_means_stopped_at_epoch_ends_are_read_so(tmp_path, slow):
    S.printed_means(tmp_path, f=1.0, slow=slow, **SHAPE)
    result = parse_paths([tmp_path])
    for method in ("window", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(512, rel=0.01), method


@pytest.mark.parametrize("f", [0.9, 1.1])
def test_such_means_of_another_batch_are_flagged(tmp_path, f):
    S.printed_means(tmp_path, f=f, slow=2.0, **SHAPE)
    row = run_throughput(parse_paths([tmp_path]), "reported").iloc[0]
    assert row["problem_kind"] == "figure_mismatch", row["problem"]
