"""`parse_paths(dlperf_only=True)` (what `dlperf summarize --method dlperf` asks for) parses a
log only as far as its family's DLPerf rule reads, and gives the figures of a whole parse."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.parsers._prefix import FIRST_LINES
from analysis.parsers._rules import PYTORCH_READS
from analysis.stats import run_throughput

START = dt.datetime(2026, 11, 21, 10, 0, 0, 123457)
WARNING = "[W reducer.cpp:1300] Warning: Grad strides do not match bucket view strides."


def _dll(iters: int, seed: int, tail: str = "", swap: int | None = None, preamble: int = 0) -> str:
    """A DLL PyTorch log; `swap`: that iteration's timestamp is moved before the previous;
    `preamble`: warning lines before the first iteration."""
    rng = np.random.default_rng(seed)
    us = np.cumsum(rng.integers(300_000, 330_000, iters))
    if swap is not None:
        us[swap - 1] = us[swap - 2] - 1000
    lines = [f"DLL {START} - PARAMETER arch : resnet50  batch_size : 256  amp : True  "
             "world_size : 8 ", "RUNNING EPOCHS FROM 0 TO 1"] + [WARNING] * preamble
    for i in range(1, iters + 1):
        t = START + dt.timedelta(microseconds=int(us[i - 1]))
        # printed rates near what the timestamps give (2,048 samples / ~0.315 s): a log whose
        # print contradicted its timestamps would be flagged figure_mismatch
        lines.append(f"DLL {t} - Epoch: 0 Iteration: {i}  train.loss : 6.5  "
                     f"train.total_ips : {rng.uniform(6300, 6700):.2f} img/s")
    return "\n".join(lines + ([tail] if tail else [])) + "\n"


def _oneflow(iters: int, seed: int, tail: str = "", swap: int | None = None,
             preamble: int = 0) -> str:
    rng = np.random.default_rng(seed)
    t = 1.6e9 + np.cumsum(rng.uniform(0.3, 0.33, iters))
    if swap is not None:
        t[swap - 1] = t[swap - 2] - 0.001
    lines = ["Running resnet50: num_gpu_per_node = 8, num_nodes = 1.", "batch_size_per_device = 128",
             "gpu_num_per_node = 8", "num_nodes = 1", "model = resnet50", "use_fp16 = False"]
    lines += [WARNING] * preamble
    lines += [f"train: epoch 0, iter {i}, loss: 6.500000, top_1: 0.000000, top_k: 0.000000, "
              f"samples/s: {rng.uniform(3000, 3200):.3f} {t[i - 1]:.7f}" for i in range(1, iters + 1)]
    return "\n".join(lines + ([tail] if tail else [])) + "\n"


DLL_MEMORY = ("DLL 2026-11-21 11:00:00.000001 - Summary: train.loss : 6.5 None "
              "train.total_ips : 6100.00 images/s train.memory_max_allocated : 12345.0 MiB ")
OF_MEMORY = "utilization.gpu [%], memory.used [MiB]\n100 %, 12565 MiB\n98 %, 12001 MiB"

LOGS = {
    "pytorch/1n8g/r50_b256_amp_1.log": _dll(1000, 1),
    "pytorch/1n8g/r50_b256_amp_2.log": _dll(1000, 2, tail=DLL_MEMORY),  # memory at the end
    "pytorch/1n8g/r50_b256_amp_3.log": _dll(100, 3),  # too short for the rule
    # Iteration 125 (counted line 120) is the last line of the first prefix; the next goes back
    "pytorch/1n8g/r50_b256_amp_4.log": _dll(1000, 4, swap=126, preamble=FIRST_LINES - 127),
    # a start-up longer than the fixed first prefix: the rule's lines are still read once
    "pytorch/1n8g/r50_b256_amp_5.log": _dll(1000, 5, preamble=3 * FIRST_LINES),
    "oneflow/1n8g/resnet50_b128_fp32_1.log": _oneflow(1000, 5),
    "oneflow/1n8g/resnet50_b128_fp32_2.log": _oneflow(1000, 6, tail=OF_MEMORY),
    "oneflow/1n8g/resnet50_b128_fp32_3.log": _oneflow(119, 7),
    # iteration 120 is the last line of the first prefix; the next goes back in time
    "oneflow/1n8g/resnet50_b128_fp32_4.log": _oneflow(1000, 8, swap=121, preamble=FIRST_LINES - 126),
}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("first_lines")
    for name, text in LOGS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    whole, lean = parse_paths([root]), parse_paths([root], dlperf_only=True)
    return whole, lean


def test_only_the_first_lines_are_parsed(both):
    whole, lean = both
    last = lean.observations.groupby("run_id", observed=True)["line"].max()
    # the first prefix ends with the rule's last training line (2 lines of header before
    # the first), after any start-up: no line after it is read, none parsed twice
    assert last["pytorch/1n8g/r50_b256_amp_1"] == 2 + PYTORCH_READS
    assert last["pytorch/1n8g/r50_b256_amp_5"] == 2 + 3 * FIRST_LINES + PYTORCH_READS
    assert last["oneflow/1n8g/resnet50_b128_fp32_1"] == 6 + 124
    assert whole.observations["line"].max() > 1000
    # a log with memory lines after them is read whole: the summary reports its peak
    assert last["pytorch/1n8g/r50_b256_amp_2"] == len(LOGS["pytorch/1n8g/r50_b256_amp_2.log"].splitlines())


def test_figures_problems_and_memory_equal_a_whole_parse(both):
    whole, lean = both
    cols = ["run_id", "throughput", "iterations", "problem_kind", "memory_framework_mib",
            "memory_sampled_mib"]
    a = run_throughput(whole, "dlperf")[cols].set_index("run_id")
    b = run_throughput(lean, "dlperf")[cols].set_index("run_id")
    assert a.equals(b)
    assert a.loc["pytorch/1n8g/r50_b256_amp_2", "memory_framework_mib"] == 12345.0
    assert np.isnan(a.loc["pytorch/1n8g/r50_b256_amp_2", "memory_sampled_mib"])
    assert a.loc["oneflow/1n8g/resnet50_b128_fp32_2", "memory_sampled_mib"] == 12565.0
    assert np.isnan(a.loc["oneflow/1n8g/resnet50_b128_fp32_2", "memory_framework_mib"])
    assert a.loc["pytorch/1n8g/r50_b256_amp_3", "problem_kind"] == "truncated"
    assert a.loc["pytorch/1n8g/r50_b256_amp_4", "problem_kind"] == "timestamps_backwards"
    assert a.loc["oneflow/1n8g/resnet50_b128_fp32_3", "problem_kind"] == "truncated"
    assert a.loc["oneflow/1n8g/resnet50_b128_fp32_4", "problem_kind"] == "timestamps_backwards"
    assert np.isfinite(a.loc["pytorch/1n8g/r50_b256_amp_1", "throughput"])
    assert np.isfinite(a.loc["oneflow/1n8g/resnet50_b128_fp32_1", "throughput"])
