"""The steps a figure counts, against what its log states: a stated print frequency, a stated
iteration count (iterations, max_steps, train_iters) and, where the dump states neither, the
run's own stamps. DLLogger logs of batch 128 on 4 GPUs at 50 ms an iteration (10,240 img/s),
150 iterations, no printed rate (dll_synth)."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

TRUTH = 512 / 0.05
METHODS = ("dlperf", "window")


def _log(stride: int, seconds: float = 0.05, **stated) -> list[str]:
    """150 lines `seconds` apart whose steps advance `stride` a line (512: the samples seen,
    as ``dllogger.log(step=samples)`` prints them), global batch 512; the dump states
    `stated` and no print frequency unless given."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, global_batch_size=512,
                       world_size=4, framework="PyTorch", **stated)]
    for i in range(1, 151):
        when = S.stamp(S.START + timedelta(seconds=20.0 + i * seconds))
        out.append(f"DLL {when} - {stride * i}  train.loss : {6.9 - i * 1e-3:.5f}")
    return out


def _figures(tmp_path: Path, text: list[str]) -> dict:
    S.write(tmp_path, text, name="1n4g/r50_b128_fp32_1.log")
    result = parse_paths([tmp_path], jobs=1, cache=False)
    return {m: df.iloc[0] for m, df in run_throughputs(result, METHODS).items()}


@pytest.mark.parametrize("every", [1, 10])
def test_steps_counting_samples_with_nothing_stated_are_flagged_by_the_stamps(tmp_path, every):
    """Neither iterations nor print_freq stated (attack16's s4): dlperf gave 5,242,880
    samples/s, 0 problems, for 10,240. The stamps put an iteration at 98 us. A line every
    10 iterations advances 10 global batches."""
    text = _log(512 * every, seconds=0.05 * every)
    for method, row in _figures(tmp_path, text).items():
        assert row["throughput"] == pytest.approx(512 * TRUTH, rel=1e-3), method  # kept
        assert row["problem_kind"] == "meta_contradicted", (method, row["problem"])
        times = "10 times " if every == 10 else ""
        assert f"advance {512 * every} iterations a line" in row["problem"], method
        assert f"{times}the global batch 512; the dump states no print frequency or " \
               "iteration count, and by the stamps an iteration would take 9.766e-05 s" \
               in row["problem"], method
        assert "512 times too high" in row["problem"], method


@pytest.mark.parametrize("key", ["max_steps", "train_iters"])
def test_steps_counting_samples_past_a_stated_step_count_are_flagged(tmp_path, key):
    """The run states its length by another key than `iterations` and no print frequency."""
    for method, row in _figures(tmp_path, _log(512, **{key: 150})).items():
        assert row["problem_kind"] == "meta_contradicted", (method, row["problem"])
        assert f"the argument dump states {key} 150, and the steps reach 76800 (first past " \
               "it on line 2)" in row["problem"], method


@pytest.mark.parametrize("stated", [{}, {"max_steps": 150}, {"print_freq": 1}])
def test_steps_numbering_iterations_are_not_flagged(tmp_path, stated):
    """The same run numbered by iteration: its figure, unflagged."""
    for method, row in _figures(tmp_path, _log(1, **stated)).items():
        assert row["throughput"] == pytest.approx(TRUTH, rel=1e-3), method
        assert row["problem_kind"] == "", (method, row["problem"])


def test_a_line_every_global_batch_of_iterations_at_a_gpu_pace_is_not_flagged(tmp_path):
    """A line every 512 iterations at 50 ms each (25.6 s a line), nothing stated: the stamps
    give an iteration a GPU's time, so nothing says the steps are samples."""
    for method, row in _figures(tmp_path, _log(512, seconds=25.6)).items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert row["throughput"] == pytest.approx(TRUTH, rel=1e-3), method


def test_a_stated_print_frequency_that_the_stride_keeps_is_believed(tmp_path):
    """print_freq 512 stated with lines 512 iterations apart: the dump says they are
    iterations, whatever the stamps (a stated frequency settles the stride)."""
    for method, row in _figures(tmp_path, _log(512, print_freq=512)).items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert np.isfinite(row["throughput"]), method
