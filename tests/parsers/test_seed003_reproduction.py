"""Seed 003 reproduction: DLL logs built so the DLPerf PyTorch rule must give the report's figures.

The logs have the seed-003 2020 shape (150 iterations printed every iteration, slow first
iterations); their timestamps are chosen so that global batch x 100 / (t(Iteration 125) -
t(Iteration 25)) rounds to the per-repeat figures of seed 003's extract-script output.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput, summarize

CASES = {
    # (folder, file prefix, per-device batch, devices): {repeat: figure}
    ("1n1g", "r50_b256_fp16", 256, 1): {1: 803.69, 2: 793.9, 3: 803.66, 4: 802.4, 5: 802.9},
    ("4n8g", "r50_b256_amp", 256, 32): {1: 22364.13, 2: 22551.16, 3: 22978.13, 4: 23049.75,
                                        5: 22053.98},
}
MEDIANS = {"1n1g": 802.9, "4n8g": 22551.16}


def _log(bsz: int, world: int, figure: float, seed: int) -> str:
    gb = bsz * world
    window_us = round(gb * 100 / figure * 1e6)  # t(Iteration 125) - t(Iteration 25)
    assert round(gb * 100 / (window_us / 1e6), 2) == figure
    rng = np.random.default_rng(seed)
    start = dt.datetime(2020, 9, 15, 14, 29, 13, 473765)
    t_us = {1: 0}
    slow = [954_000, 591_000, 368_000, 404_000]  # start-up: iterations 2..5
    for i in range(2, 26):
        t_us[i] = t_us[i - 1] + (slow[i - 2] if i <= 5 else window_us // 100 + int(rng.integers(-3000, 3000)))
    for i in range(26, 151):  # the window is exact; jitter inside it does not matter to the rule
        base = t_us[25] + (i - 25) * window_us // 100
        t_us[i] = base if i in (125,) else base + (int(rng.integers(-2000, 2000)) if i != 150 else 0)
    t_us[125] = t_us[25] + window_us
    lines = [f"DLL 2020-09-15 14:28:53.498443 - PARAMETER arch : resnet50  batch_size : {bsz}  "
             f"fp16 : False  amp : True  world_size : {world} ",
             "RUNNING EPOCHS FROM 0 TO 1"]
    for i in range(1, 151):
        t = start + dt.timedelta(microseconds=t_us[i])
        ips = 267.44 if i == 1 else gb / ((t_us[i] - t_us[i - 1]) / 1e6)
        lines.append(f"DLL {t} - Epoch: 0 Iteration: {i}  train.loss : {7.09304 - i / 1e4:.5f}  "
                     f"train.total_ips : {ips:.2f} img/s")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    root = tmp_path_factory.mktemp("seed003")
    for (folder, prefix, bsz, world), figures in CASES.items():
        (root / folder).mkdir()
        for r, fig in figures.items():
            (root / folder / f"{prefix}_{r}.log").write_text(_log(bsz, world, fig, seed=r))
    return parse_paths([root])


def test_each_repeat_reproduces_the_seed_figure(result):
    assert result.problems.empty, result.problems
    per_run = run_throughput(result, "dlperf").set_index("run_id")
    for (folder, prefix, _bsz, _world), figures in CASES.items():
        for r, fig in figures.items():
            row = per_run.loc[f"{folder}/{prefix}_{r}"]
            assert row["throughput"] == fig
            assert row["iterations"] == 100
            assert row["family"] == "dll_pytorch"


def test_case_medians_match_the_report(result):
    summary = summarize(result, method="dlperf").set_index(["num_nodes", "gpus_per_node"])
    assert summary.loc[(1, 1), "throughput_median"] == MEDIANS["1n1g"]
    assert summary.loc[(4, 8), "throughput_median"] == MEDIANS["4n8g"]
    assert summary.loc[(4, 8), "repeats"] == 5


def test_run_fields_come_from_the_parameter_line(result):
    runs = result.runs.set_index("run_id")
    run = runs.loc["4n8g/r50_b256_amp_3"]
    assert (run["model"], run["precision"], run["num_nodes"], run["gpus_per_node"]) == (
        "resnet50", "amp", 4, 8)
    assert run["global_batch_size"] == 8192
    assert runs.loc["1n1g/r50_b256_fp16_2", "global_batch_size"] == 256
