"""Two statements a run's figure is checked against, read as its log means them.

Over whole-second stamps the samples an iteration the lines imply are a sum over their
intervals: an interval holding an evaluation (or a save, or an epoch's end) holds time its
printed rate leaves out, and is left out of it as the window method leaves it out. Steps
that count samples (``dllogger.log(step=samples_seen)``: ``Iteration: 128, 256, ...``) are
read as iterations where the log settles it: they advance the stated global batch a line and
the printed rates give one global batch a line by the stamps. DLE PyTorch lines of batch 128
on 1 GPU at 50 ms an iteration: 2,560 img/s."""

from __future__ import annotations

import math
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

TRUTH = 128 / 0.05
METHODS = ("dlperf", "window", "reported")
START = datetime(2022, 6, 9, 9, 15, 32, 123456)


def _stamp(t: datetime, whole: bool) -> str:
    return f"{t:%Y-%m-%d %H:%M:%S}" if whole else f"{t:%Y-%m-%d %H:%M:%S.%f}"


def _train(t: datetime, whole: bool, epoch: int, step: int, ips: float) -> str:
    return (f"DLL {_stamp(t, whole)} - Epoch: {epoch} Iteration: {step}  train.loss : 6.90000 "
            f"None train.compute_ips : {ips * 1.005:.2f} images/s train.total_ips : {ips:.2f} "
            "images/s train.lr : 0.1  train.grad_scale : 256.00000 None")


def _evaluated(stated: int = 128, epochs: int = 3, epoch_len: int = 300,
               evaluate_at=(15, 150), pause: float = 9.0, restart: bool = True,
               val_lines: bool = True) -> list[str]:
    """Whole-second stamps, a line an iteration with its own interval's rate (batch 128 at
    about 50 ms), the dump stating batch `stated`; after iterations `evaluate_at` of each
    epoch and at its end an evaluation of `pause` seconds, three ``Validation Iteration``
    lines (none where not `val_lines`: only the epoch's end shows), then an ``Epoch:`` line.
    The counter restarts each epoch where `restart`, else counts on."""
    out = [f"DLL {_stamp(START, False)} - PARAMETER data : /imagenet  arch : resnet50  "
           f"epochs : {epochs}  batch_size : {stated}  print_freq : 1  amp : True  "
           "world_size : 1", "RUNNING EPOCHS FROM 0 TO 3"]
    t = START + timedelta(seconds=10)
    for epoch in range(epochs):
        for it in range(1, epoch_len + 1):
            seconds = 0.5 if epoch == it - 1 == 0 else 0.05 * (1 + 0.004 * math.sin(it + epoch))
            t += timedelta(seconds=seconds)
            step = it if restart else epoch * epoch_len + it
            out.append(_train(t, True, epoch, step, 128 / seconds))
            if it not in evaluate_at and it != epoch_len:
                continue
            for v in range(1, 4):
                t += timedelta(seconds=pause / 3)
                if val_lines:
                    out.append(f"DLL {_stamp(t, True)} - Epoch: {epoch} Iteration: {step} "
                               f"Validation Iteration: {v}  val.loss : 2.50000 None val.top1 : "
                               "71.000 % val.total_ips : 2900.00 images/s")
        out.append(f"DLL {_stamp(t, True)} - Epoch: {epoch}  train.loss : 6.92500 None "
                   f"train.total_ips : {TRUTH:.2f} images/s val.top1 : 71.500 %")
    out.append(f"DLL {_stamp(t, True)} - Summary: train.loss : 6.5 None train.total_ips : "
               f"{TRUTH:.2f} images/s")
    return out


def _sample_steps(n: int = 200, stride: int = 128, samples_a_line: int = 128,
                  line_seconds: float = 0.05, gpus: int = 1, jitter: float = 0.0,
                  **stated) -> list[str]:
    """Sub-second stamps, `n` lines about `line_seconds` apart (each up to `jitter` of it
    longer or shorter, seeded, where given), each printing the rate of `samples_a_line`
    samples over its interval, whose steps advance `stride` a line; the dump states batch 128
    on `gpus`, no print frequency unless given (`stated`)."""
    params = "  ".join(f"{k} : {v}" for k, v in stated.items())
    out = [f"DLL {_stamp(START, False)} - PARAMETER data : /imagenet  arch : resnet50  "
           f"epochs : 1  batch_size : 128  amp : True  world_size : {gpus}  {params}",
           "RUNNING EPOCHS FROM 0 TO 1"]
    t = START + timedelta(seconds=10)
    rng = random.Random(59)
    for i in range(1, n + 1):
        seconds = line_seconds * (10 if i == 1 else 1 + 0.004 * math.sin(i))
        seconds *= 1 + rng.uniform(-jitter, jitter)
        t += timedelta(seconds=seconds)
        out.append(_train(t, False, 0, stride * i, samples_a_line / seconds))
    out.append(f"DLL {_stamp(t, False)} - Summary: train.loss : 6.5 None train.total_ips : "
               f"{samples_a_line / line_seconds:.2f} images/s")
    return out


def _figures(tmp_path: Path, text: list[str],
             name: str = "1n1g/r50_b128_amp_1.log") -> tuple[dict, list]:
    S.write(tmp_path, text, name)
    result = parse_paths([tmp_path], jobs=1, cache=False)
    figures = {m: df.iloc[0] for m, df in run_throughputs(result, METHODS).items()}
    return figures, result.problem_list()


@pytest.mark.parametrize(("evaluate_at", "pause"), [((15, 500), 9.0), ((15, 500, 550), 18.0)])
def test_whole_second_evaluations_are_left_out_of_the_batch_the_lines_imply(
        tmp_path, evaluate_at, pause):
    """Evaluations of 9 or 18 s inside epochs (outside the DLPerf rule's lines) over
    whole-second stamps: the base summed their
    intervals into the samples an iteration the printed rates imply (265 for 128), and every
    method's figure, right at 2,560, was flagged figure_mismatch ("the stated global batch
    or devices ... may not be what ran"). The reported (closing) figure is no figure:
    stretches of 0.75-24 s between evaluations time it only to 12-16 %.
    (Epochs of 600, 30 s, so the 24 s stretch the DLPerf window lies in checks the rates
    that time it to 5 %.)"""
    figures, problems = _figures(tmp_path, _evaluated(evaluate_at=evaluate_at, pause=pause,
                                                      epoch_len=600))
    assert problems == []
    for method, row in figures.items():
        if method == "reported":
            assert row["problem_kind"] == "missing_timestamps", row["problem"]
            assert "a longer run or finer stamps settle it" in row["problem"]
            continue
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method


def test_whole_second_epoch_ends_are_left_out_where_the_counter_counts_on(tmp_path):
    """A counter that counts on through its epochs, whose only marks of the evaluations are
    the epoch numbers: the intervals across an epoch's end are left out as the window method
    leaves them out. (Epochs of 500, 25 s: a second is under 5 % of one.)"""
    text = _evaluated(evaluate_at=(), restart=False, val_lines=False, pause=15.0,
                      epoch_len=500)
    figures, problems = _figures(tmp_path, text)
    assert problems == []
    for method, row in figures.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method


def test_whole_second_evaluations_leave_a_wrong_stated_batch_flagged(tmp_path):
    """The same log stating batch 256: its printed rates give 128 samples an iteration,
    evaluations left out or not, so no figure of the stated batch passes: each is flagged
    or, where its rates alone could time its whole-second window, withheld."""
    figures, _ = _figures(tmp_path, _evaluated(stated=256))
    for method, row in figures.items():
        assert row["problem_kind"] in ("figure_mismatch", "missing_timestamps"), method
        assert ("another batch" in row["problem"] or "stated global batch" in row["problem"]
                or "check them only to" in row["problem"])


@pytest.mark.parametrize("gpus", [1, 4])
def test_steps_that_count_samples_are_read_as_iterations_where_the_rates_settle_it(
        tmp_path, gpus):
    """``Iteration: 128, 256, ...`` with no print frequency stated, rates printed (attack21's
    c06): the base gave 327,676 (dlperf) and 327,568 (window), flagged figure_mismatch, and
    the right closing 2,560 flagged too, each blaming the stated global batch. The rates x
    each interval's seconds are 128 samples a line: one iteration a line, the steps count
    samples; the figures count iterations, and say so. On 4 GPUs the steps count rank 0's
    own samples (its batch 128) and the rates give the global batch 512 a line."""
    text = _sample_steps(samples_a_line=128 * gpus, gpus=gpus)
    figures, problems = _figures(tmp_path, text, f"1n{gpus}g/r50_b128_amp_1.log")
    assert problems == []
    for method, row in figures.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH * gpus, rel=0.01), method
    for method in ("dlperf", "window"):
        assert "the steps count samples" in figures[method]["method"], method
    assert figures["dlperf"]["iterations"] == 100


def test_steps_that_count_samples_with_one_line_an_iteration_stated(tmp_path):
    """print_freq 1 stated: a line an iteration, as the rates give; the base flagged the
    stride of 128 against it (meta_contradicted) or blamed the stated batch."""
    figures, _ = _figures(tmp_path, _sample_steps(print_freq=1))
    for method, row in figures.items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method


def test_a_stated_print_frequency_of_the_stride_is_still_a_print_frequency(tmp_path):
    """Steps 128 apart with print_freq 128 stated and rates of 128 iterations a line: a line
    every 128 iterations, as before; no note of samples."""
    text = _sample_steps(samples_a_line=128 * 128, line_seconds=0.05 * 128, print_freq=128)
    figures, _ = _figures(tmp_path, text)
    for method in ("dlperf", "window"):
        row = figures[method]
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=0.01), method
        assert "samples" not in row["method"].split(";")[-1], method


def test_a_stated_print_frequency_against_rates_of_one_iteration_a_line_is_flagged(tmp_path):
    """print_freq 128 stated, steps 128 apart, rates of one iteration a line: the log
    contradicts itself; the figure is not read as samples, and the flag says why."""
    figures, _ = _figures(tmp_path, _sample_steps(print_freq=128))
    assert figures["dlperf"]["throughput"] > 100 * TRUTH
    for method, row in figures.items():
        assert row["problem_kind"] == "figure_mismatch", (method, row["problem"])
        assert "the steps appear to count samples" in row["problem"], method
        assert "print_freq 128" in row["problem"], method


def test_steps_of_the_batch_with_rates_of_another_batch_are_still_flagged(tmp_path):
    """Steps 128 apart, the dump stating batch 128, rates of 256 samples a line: not one
    iteration of the stated batch a line, so no reading of samples settles it."""
    figures, _ = _figures(tmp_path, _sample_steps(samples_a_line=256))
    for method, row in figures.items():
        assert row["problem_kind"] == "figure_mismatch", (method, row["problem"])
        assert "the steps count samples" not in row["method"], method


def test_steps_that_count_samples_are_measured_as_the_same_run_numbered_by_iterations(
        tmp_path):
    """400 lines a global batch apart in steps, each iteration 50 ms +-10 %: the base
    measured the steps as they were, so the DLPerf rule's iterations 25..125 and the window
    method's 20 + 100 fell inside a line or two and the figure, divided by the stride after,
    rested on one interval (`iterations` 1). Measured in iterations, each figure is that of
    the same log numbered 1, 2, 3, ...: the same window, the same intervals."""
    by_samples, _ = _figures(tmp_path / "samples", _sample_steps(n=400, jitter=0.1))
    by_iterations, _ = _figures(tmp_path / "iterations",
                                _sample_steps(n=400, stride=1, jitter=0.1))
    assert by_iterations["dlperf"]["iterations"] == 100
    for method in METHODS:
        row, want = by_samples[method], by_iterations[method]
        assert row["problem_kind"] == want["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(want["throughput"], rel=1e-6), method
        assert row["latency_ms"] == pytest.approx(want["latency_ms"], rel=1e-6, nan_ok=True), method
        assert row["iterations"] == want["iterations"], method
    for method in ("dlperf", "window"):
        assert "the steps count samples" in by_samples[method]["method"], method
