"""The DLPerf rule on a log whose steps count samples (``Iteration: 128, 256, ...``) and
restart each epoch reads it as the methods read it, in iterations: the first lines parsed
for it (``summarize --method dlperf`` parses a log's first lines only) hold its window in
iterations, so the log gives the figure and verdict of its twin numbered by iterations, and
a reason it gives counts the log's lines, restarts and epochs. DLE PyTorch lines of batch
128 on 1 GPU at 50 ms an iteration: 2,560 img/s."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

TRUTH = 128 / 0.05


def _restarting(iterations: int, epoch_len: int, samples: bool) -> list[str]:
    """`iterations` lines, one an iteration, the counter restarting each `epoch_len`; the
    steps count samples (128 an iteration) where `samples`; no print frequency stated."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1),
           "RUNNING EPOCHS FROM 0 TO 3"]
    for i in range(1, iterations + 1):
        epoch, it = divmod(i - 1, epoch_len)
        when = S.START + timedelta(seconds=10.5 + i * 0.05)
        out.append(S.train_line(when, epoch, (it + 1) * (128 if samples else 1), TRUTH))
    out.append(f"DLL {S.stamp(when)} - Summary: train.loss : 6.5 None train.total_ips : "
               f"{TRUTH:.2f} images/s")
    return out


def _dlperf(folder: Path, text: list[str]):
    """The dlperf figure of the log `text`, read as ``summarize --method dlperf`` reads it."""
    S.write(folder, text)
    result = parse_paths([folder], jobs=1, cache=False, dlperf_only=True)
    return run_throughputs(result, ("dlperf",))["dlperf"].iloc[0]


def _both(tmp_path: Path, iterations: int, epoch_len: int):
    return (_dlperf(tmp_path / "samples", _restarting(iterations, epoch_len, True)),
            _dlperf(tmp_path / "iterations", _restarting(iterations, epoch_len, False)))


def test_sample_steps_restarting_each_epoch_give_the_twins_figure(tmp_path):
    """Three epochs of 100 iterations: the first 128 lines read held 118 past Iteration 5 in
    iterations, and the rule fell back, method_fallback ("of 128 ... restarts 1 times"),
    where the twin numbered by iterations passes."""
    samples, iterations = _both(tmp_path, 300, 100)
    assert iterations["problem_kind"] == "", iterations["problem"]
    assert samples["problem_kind"] == "", samples["problem"]
    assert samples["throughput"] == iterations["throughput"] == pytest.approx(TRUTH, rel=1e-4)
    assert samples["iterations"] == iterations["iterations"] == 99  # the restart's left out
    assert "the steps count samples" in samples["method"]


@pytest.mark.parametrize(("iterations", "epoch_len", "restarts", "longest"),
                         [(300, 8, 37, 8), (152, 20, 7, 20)])
def test_a_rule_that_falls_back_counts_the_logs_lines(tmp_path, iterations, epoch_len,
                                                      restarts, longest):
    """Epochs too short for the rule's 120 lines: both logs fall back with the same reason,
    which counts the whole log's lines, restarts and longest epoch (the sample-numbered
    log's counted the first 128 lines read; "epochs of about" a mean that a short last
    epoch pulls down)."""
    samples, twin = _both(tmp_path, iterations, epoch_len)
    counted = sum(max(min(epoch_len, iterations - k) - 5, 0)
                  for k in range(0, iterations, epoch_len))
    for row in (samples, twin):
        assert row["problem_kind"] == "method_fallback"
        assert (f"only {counted} training lines after Iteration 5 of the log's {iterations}: "
                f"the iteration counter restarts {restarts} times (epochs of up to {longest} "
                "lines)") in row["problem"]
    assert samples["problem"] == twin["problem"]
    assert samples["throughput"] == twin["throughput"] == pytest.approx(TRUTH, rel=1e-4)
