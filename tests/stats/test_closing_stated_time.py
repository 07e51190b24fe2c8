"""A DLE PyTorch BERT closing figure is its samples over the ``raw_train_time`` its closing
line states: a setup gap before the first step that time leaves out does not let a low
closing figure pass as a slow first step; a slow first step it counts stays healthy."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

REAL = (Path(__file__).parents[1] / "data/real/paddle_perf_pytorch_bert/"
        "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8.log")
GB, STEP = 128 * 66 * 8, 5.55  # the real header's 8 GPUs x 128 x accumulation 66


def _log(path: Path, steps: int, factor: float, gap: float, slow_first: float = 0.0) -> None:
    """`steps` iterations at STEP s after `gap` s of setup from ``train_start`` that
    raw_train_time leaves out, and a first step `slow_first` s longer that it counts; the
    closing figure printed x `factor`."""
    head = [line.replace("max_steps=20.0", f"max_steps={steps}.0")
            .replace("steps_this_run=20.0", f"steps_this_run={steps}.0")
            for line in REAL.read_text().split("\n")[:65]
            if not line.startswith("DLL 2023-08-02 02:37:04")]  # its own train_start
    t = datetime.datetime(2023, 8, 2, 2, 37, 4)
    out = [*head, f"DLL {t:%Y-%m-%d %H:%M:%S.%f} - PARAMETER train_start : True "]
    t += datetime.timedelta(seconds=gap)
    raw = 0.0
    for it in range(1, steps + 1):
        d = STEP * (1 + 0.01 * ((it * 7) % 5 - 2) / 2) + (slow_first if it == 1 else 0.0)
        t, raw = t + datetime.timedelta(seconds=d), raw + d
        tail = "final_loss : 8.56 None" if it == steps else \
            "average_loss : 9.5  learning_rate : 0.004  skipped_steps : 0 "
        out.append(f"DLL {t:%Y-%m-%d %H:%M:%S.%f} - Training Epoch: 0 Training Iteration: "
                   f"{it}  {tail}")
    t += datetime.timedelta(seconds=1.8)
    out.append(f"DLL {t:%Y-%m-%d %H:%M:%S.%f} -  e2e_train_time : {raw + gap + 30} s "
               f"training_sequences_per_second : {GB * steps / raw * factor} sequences/s "
               f"final_loss : 8.56 None raw_train_time : {raw} s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")


def _row(tmp_path, method: str, **kw):
    _log(tmp_path / "1n8g" / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_"
         "bs128_gpu8_1.log", **kw)
    return run_throughput(parse_paths([tmp_path], jobs=1, cache=False), method).iloc[0]


@pytest.mark.parametrize("factor,gap", [(0.85, 72), (0.90, 43), (0.80, 120)])
@pytest.mark.parametrize("method", ["dlperf", "reported"])
def test_a_low_closing_figure_is_not_a_setup_gap(tmp_path, method, factor, gap):
    row = _row(tmp_path, method, steps=100, factor=factor, gap=gap)
    assert row["problem_kind"] == "figure_mismatch"
    assert "raw_train_time" not in row["problem"] and "states the figure is over" in \
        row["problem"]


@pytest.mark.parametrize("gap,slow_first,steps", [(72, 0.0, 100), (20, 45.0, 100),
                                                  (20, 90.0, 200)])
@pytest.mark.parametrize("method", ["dlperf", "reported"])
def test_a_right_closing_figure_passes(tmp_path, method, gap, slow_first, steps):
    row = _row(tmp_path, method, steps=steps, factor=1.0, gap=gap, slow_first=slow_first)
    assert row["problem_kind"] in ("", "method_fallback"), row["problem"]
    assert row["throughput"] > 0


def test_a_stated_time_longer_than_the_run_is_flagged(tmp_path):
    # the figure agrees with its stated time, but the time is longer than the log ran
    path = tmp_path / "1n8g" / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_" \
        "bs128_gpu8_1.log"
    _log(path, steps=100, factor=1.0, gap=20)
    text = path.read_text().replace("raw_train_time : ", "raw_train_time : 1")
    path.write_text(text)
    row = run_throughput(parse_paths([tmp_path], jobs=1, cache=False), "reported").iloc[0]
    assert row["problem_kind"] == "figure_mismatch" and "does not fit" in row["problem"]
