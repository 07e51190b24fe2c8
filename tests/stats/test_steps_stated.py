"""The steps a figure counts, against what its log states: a stated print frequency, a stated
iteration count (iterations, max_steps, train_iters) and, where the dump states no print
frequency, a stride that is a multiple of the global or the per-device batch (steps that
may count samples). DLLogger logs of batch 128 on 4 GPUs at 50 ms an iteration (10,240
img/s), 150 iterations, no printed rate (dll_synth)."""

from __future__ import annotations

import sys
import warnings
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


def _log(stride: int, seconds: float = 0.05, batch: int = 128, gpus: int = 4, n: int = 150,
         **stated) -> list[str]:
    """`n` lines `seconds` apart whose steps advance `stride` a line (512: the samples seen,
    as ``dllogger.log(step=samples)`` prints them), `batch` on each of `gpus`; the dump
    states `stated` and no print frequency unless given."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=batch,
                       global_batch_size=batch * gpus, world_size=gpus, framework="PyTorch",
                       **stated)]
    for i in range(1, n + 1):
        when = S.stamp(S.START + timedelta(seconds=20.0 + i * seconds))
        out.append(f"DLL {when} - {stride * i}  train.loss : {6.9 - i * 1e-3:.5f}")
    return out


def _figures(tmp_path: Path, text: list[str], methods=METHODS) -> dict:
    S.write(tmp_path, text, name="1n4g/r50_b128_fp32_1.log")
    result = parse_paths([tmp_path], jobs=1, cache=False)
    return {m: df.iloc[0] for m, df in run_throughputs(result, methods).items()}


def _doubt(stride: int, batch: str, factor: str, also: str = "") -> str:
    """The text of steps that may count samples: the log cannot tell."""
    return (f"{batch}, and the dump states no print frequency: the steps may count samples "
            f"(the figure would then be {factor} too high{also}) or number iterations printed "
            f"every {stride}; the log does not say")


@pytest.mark.parametrize("every", [1, 10])
def test_steps_a_global_batch_apart_with_nothing_stated_may_count_samples(tmp_path, every):
    """Neither iterations nor print_freq stated (attack16's s4): dlperf gave 5,242,880
    samples/s, 0 problems, for 10,240. Steps 512 (or 10 x 512) apart may be samples or
    iterations printed that far apart: the figure is kept, flagged with both readings."""
    text = _log(512 * every, seconds=0.05 * every)
    for method, row in _figures(tmp_path, text).items():
        assert row["throughput"] == pytest.approx(512 * TRUTH, rel=1e-3), method  # kept
        assert row["problem_kind"] == "meta_contradicted", (method, row["problem"])
        times = "10 times " if every == 10 else ""
        assert f"advance {512 * every} steps a line" in row["problem"], method
        assert _doubt(512 * every, f"{times}the global batch 512", "512 times",
                      ", or 128 times, were they one device's") in row["problem"], method


@pytest.mark.parametrize("key", ["max_steps", "train_iters"])
def test_steps_ending_at_a_stated_count_of_batches_are_samples(tmp_path, key):
    """The run states its length (150) by another key than `iterations`, and its steps pass
    it to end at 150 x 512: they count samples."""
    for method, row in _figures(tmp_path, _log(512, **{key: 150})).items():
        assert row["problem_kind"] == "meta_contradicted", (method, row["problem"])
        assert f"the argument dump states {key} 150, and the steps reach 76800 (first past " \
               "it on line 2), 150 iterations of 512 samples: they count samples, and " \
               "the figure, counting them as iterations, is 512 times too high" in row["problem"], \
               method


@pytest.mark.parametrize("stated", [{}, {"max_steps": 150}, {"print_freq": 1}])
def test_steps_numbering_iterations_are_not_flagged(tmp_path, stated):
    """The same run numbered by iteration: its figure, unflagged."""
    for method, row in _figures(tmp_path, _log(1, **stated)).items():
        assert row["throughput"] == pytest.approx(TRUTH, rel=1e-3), method
        assert row["problem_kind"] == "", (method, row["problem"])


def test_steps_a_device_batch_apart_may_count_one_devices_samples(tmp_path):
    """Rank 0's own samples on 4 GPUs (attack18 #1): steps 128 apart, no multiple of the
    global batch 512; dlperf gave 1,310,983.77 samples/s, rc 0, for 10,240."""
    for method, row in _figures(tmp_path, _log(128)).items():
        assert row["throughput"] == pytest.approx(128 * TRUTH, rel=1e-2), method
        assert row["problem_kind"] == "meta_contradicted", (method, row["problem"])
        assert _doubt(128, "the per-device batch 128", "128 times") in row["problem"], method


def test_a_planned_count_the_steps_stay_under_leaves_the_doubt(tmp_path):
    """`iterations 100000` planned, the run stopped at 150 lines (attack18 #2): the steps
    (128 a line, batch 128 on 1 GPU) never pass it, so it settles nothing; dlperf gave
    327,745.94, rc 0, for 2,560."""
    text = _log(128, batch=128, gpus=1, iterations=100000)
    for method, row in _figures(tmp_path, text).items():
        assert row["problem_kind"] == "meta_contradicted", (method, row["problem"])
        assert _doubt(128, "the global batch 128", "128 times") in row["problem"], method
        assert "they count samples" not in row["problem"], method


def test_steps_of_a_slow_model_a_small_batch_apart_may_count_samples(tmp_path):
    """Batch 8 at 200 ms an iteration, steps 8 a line (attack18 #3): 25 ms a "step" is a
    GPU's pace, and dlperf gave 320.06, rc 0, for 40."""
    for method, row in _figures(tmp_path, _log(8, 0.2, batch=8, gpus=1)).items():
        assert row["problem_kind"] == "meta_contradicted", (method, row["problem"])
        assert _doubt(8, "the global batch 8", "8 times") in row["problem"], method


def test_a_count_stated_per_epoch_is_no_proof_of_samples(tmp_path):
    """`iterations 100` a epoch, a counter over 3 epochs printed every 10, global batch 2
    (attack18 #4): the steps pass 100 but end at 300, not 100 x 2, so they are not said to
    count samples (the old text said the right figure was 2 times too high)."""
    text = _log(10, 3.0, batch=1, gpus=2, n=30, iterations=100)
    for method, row in _figures(tmp_path, text, ("window",)).items():
        assert row["throughput"] == pytest.approx(2 / 0.3, rel=1e-3), method
        assert _doubt(10, "5 times the global batch 2", "2 times") in row["problem"], method
        assert "they count samples" not in row["problem"], method


def test_a_fast_step_is_no_proof_of_samples(tmp_path):
    """A tiny model at 0.6 ms an iteration, batch 4, a line every 100 (attack18 #5): under
    a millisecond is a CUDA-graph step's pace, so the stamps do not say the steps count
    samples (the old text said the right figure was 4 times too high)."""
    for method, row in _figures(tmp_path, _log(100, 0.06, batch=4, gpus=1)).items():
        assert row["throughput"] == pytest.approx(4 / 0.0006, rel=1e-3), method
        assert _doubt(100, "25 times the global batch 4", "4 times") in row["problem"], method


def test_a_stated_print_frequency_that_the_stride_keeps_is_believed(tmp_path):
    """print_freq 512 stated with lines 512 iterations apart: the dump says they are
    iterations (a stated frequency settles the stride)."""
    for method, row in _figures(tmp_path, _log(512, print_freq=512)).items():
        assert row["problem_kind"] == "", (method, row["problem"])
        assert np.isfinite(row["throughput"]), method


def test_a_printed_rate_of_zero_warns_nothing(tmp_path):
    """A rate line printing 0.00 (a first interval the program did not time) among lines 1 s
    apart stamped to 100 ms (attack18's x3): the rate check divided by it, and numpy's
    divide-by-zero warning reached stderr."""
    text = [S.parameter(S.START, arch="resnet50", batch_size=128, global_batch_size=512,
                        world_size=4, framework="PyTorch", print_freq=1)]
    seconds = 20.0 + np.cumsum(np.random.default_rng(0).normal(1.0, 0.1, 150))
    for i in range(1, 151):
        when = S.START + timedelta(seconds=round(seconds[i - 1], 1))
        rate = "" if i % 25 else f"  train.total_ips : {0 if i == 25 else 512:.2f} img/s"
        text.append(f"DLL {S.stamp(when)[:-5]}00000 - Epoch: 0 Iteration: {i}  "
                    f"train.loss : {6.9 - i * 1e-3:.5f}{rate}")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        row = _figures(tmp_path, text, ("window",))["window"]
    assert row["throughput"] == pytest.approx(512, rel=0.05), row["problem"]


def test_a_printed_rate_that_bears_the_steps_out_leaves_no_doubt(tmp_path):
    """The tiny model's lines (a line every 100 iterations at batch 4) printing the rate
    they ran at: 4 samples an iteration by the stamps and the rate, so the steps number
    iterations and nothing is said."""
    text = _log(100, 0.06, batch=4, gpus=1)
    text[1:] = [f"{ln}  train.total_ips : {4 / 0.0006:.2f} images/s" for ln in text[1:]]
    for method, row in _figures(tmp_path, text).items():
        assert row["throughput"] == pytest.approx(4 / 0.0006, rel=1e-3), method
        assert row["problem_kind"] == "", (method, row["problem"])
