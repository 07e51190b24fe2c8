"""A DLE PyTorch BERT closing figure is its samples over the ``raw_train_time`` its closing
line states: a setup gap before the first step that time leaves out does not let a low
closing figure pass as a slow first step; a slow first step it counts stays healthy."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.stats import run_throughput

REAL = (Path(__file__).parents[1] / "data/real/paddle_perf_pytorch_bert/"
        "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8.log")
GB, STEP = 128 * 66 * 8, 5.55  # the real header's 8 GPUs x 128 x accumulation 66
NAME = "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8_1.log"
SKIPPED = 9  # AMP's skipped steps repeat iterations 0 and 1, as the real log's first lines do


def _stamp(t: datetime.datetime, whole: bool = False) -> str:
    return f"DLL {t:%Y-%m-%d %H:%M:%S} - " if whole else f"DLL {t:%Y-%m-%d %H:%M:%S.%f} - "


def _log(path: Path, steps: int, factor: float, gap: float, slow_first: float = 0.0,
         whole: bool = False) -> float:
    """The real log's header, then `SKIPPED` skipped steps and iterations 2 to `steps` at
    STEP s after `gap` s of setup from ``train_start`` that raw_train_time leaves out and
    `slow_first` s of a slow first step that it counts; the closing figure, the samples
    of `steps` iterations over raw_train_time, printed x `factor`; the stamps to the whole
    second where `whole`. Returns the true figure."""
    src = REAL.read_text().split("\n")
    head = [line.replace("max_steps=20.0", f"max_steps={steps}.0")
            .replace("steps_this_run=20.0", f"steps_this_run={steps}.0")
            for line in src[:65]]
    own = [line.split(" - ", 1)[1] for line in head if line.startswith("DLL 2023-08-02 02:37:04")]
    head = [line for line in head if not line.startswith("DLL 2023-08-02 02:37:04")]
    t = datetime.datetime(2023, 8, 2, 2, 37, 4, 257585)
    out = [*head, *(_stamp(t, whole) + line for line in own)]  # SEED, train_start, batch size, lr
    t += datetime.timedelta(seconds=gap + slow_first)
    for k in range(SKIPPED):
        t += datetime.timedelta(seconds=STEP)
        out.append(f"{_stamp(t, whole)}Training Epoch: 0 Training Iteration: {min(k, 1)}  "
                   f"average_loss : 11.18  learning_rate : 0.001  skipped_steps : {k + 1} ")
    raw = slow_first
    for it in range(2, steps + 1):
        d = STEP * (1 + 0.01 * ((it * 7) % 5 - 2) / 2)
        t, raw = t + datetime.timedelta(seconds=d), raw + d
        tail = "final_loss : 8.5654 None" if it == steps else \
            f"average_loss : {11 - 2 * it / steps:.6f}  learning_rate : 0.004  " \
            f"skipped_steps : {SKIPPED} "
        out.append(f"{_stamp(t, whole)}Training Epoch: 0 Training Iteration: {it}  {tail}")
    t += datetime.timedelta(seconds=1.79)
    out += [f"{_stamp(t, whole)} e2e_train_time : {raw + 30} s training_sequences_per_second : "
            f"{GB * steps / raw * factor} sequences/s final_loss : 8.565444946289062 None "
            f"raw_train_time : {raw} s", "+ set +x", "finished pretraining"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    return GB * steps / raw


def _row(tmp_path, method: str, **kw):
    _log(tmp_path / "1n8g" / NAME, **kw)
    return run_throughput(parse_paths([tmp_path], jobs=1, cache=False), method).iloc[0]


@pytest.mark.parametrize("factor,gap", [(0.85, 72), (0.90, 43), (0.80, 120)])
@pytest.mark.parametrize("method", ["dlperf", "reported"])
def test_a_low_closing_figure_is_not_a_setup_gap(tmp_path, method, factor, gap):
    row = _row(tmp_path, method, steps=100, factor=factor, gap=gap)
    assert row["problem_kind"] == "figure_mismatch"
    assert "raw_train_time" not in row["problem"] and "states the figure is over" in \
        row["problem"]
    assert main(["summarize", "--method", method, "--strict", "--no-cache",
                 str(tmp_path)]) != 0


@pytest.mark.parametrize("gap,slow_first,steps", [(72, 0.0, 100), (20, 45.0, 100),
                                                  (20, 90.0, 200)])
@pytest.mark.parametrize("method", ["dlperf", "reported"])
def test_a_right_closing_figure_passes(tmp_path, method, gap, slow_first, steps):
    right = _log(tmp_path / "1n8g" / NAME, steps=steps, factor=1.0, gap=gap,
                 slow_first=slow_first)
    row = run_throughput(parse_paths([tmp_path], jobs=1, cache=False), method).iloc[0]
    assert row["problem_kind"] in ("", "method_fallback"), row["problem"]
    # dlperf measures the steps where the log holds enough of them, else keeps the closing figure
    measured = method == "dlperf" and row["problem_kind"] == ""
    assert row["throughput"] == (pytest.approx(GB / STEP, rel=0.01) if measured
                                 else pytest.approx(right, rel=1e-9))
    assert main(["summarize", "--method", method, "--strict", "--no-cache",
                 str(tmp_path)]) == 0


def test_a_stated_time_longer_than_the_run_is_flagged(tmp_path):
    # the figure agrees with its stated time, but the time is longer than the log ran
    path = tmp_path / "1n8g" / NAME
    _log(path, steps=100, factor=1.0, gap=20)
    text = path.read_text().replace("raw_train_time : ", "raw_train_time : 1")
    path.write_text(text)
    row = run_throughput(parse_paths([tmp_path], jobs=1, cache=False), "reported").iloc[0]
    assert row["problem_kind"] == "figure_mismatch" and "does not fit" in row["problem"]


@pytest.mark.parametrize("steps,factor", [(12, 1.03), (20, 1.0)])
def test_a_closing_figure_counting_a_step_its_time_leaves_out_is_flagged(tmp_path, steps,
                                                                         factor):
    """raw_train_time no longer than the lines' span holds no first step, yet the figure
    counts it: 12 steps over 11 steps' time x1.03 is 12.6 % over the run's pace (it passed
    as the iterations from the run's start plus a slack of one interval)."""
    row = _row(tmp_path, "reported", steps=steps, factor=factor, gap=20)
    assert row["problem_kind"] == "figure_mismatch", (row["throughput"], GB / STEP)


@pytest.mark.parametrize("factor, kind", [(1.0, ""), (1.08, "figure_mismatch")])
def test_a_closing_figure_on_whole_seconds_is_checked_by_its_stamps(tmp_path, factor, kind):
    """Whole-second stamps over 500 steps (46 minutes) time the closing figure to 0.1 %: the
    lines print no rates, and a healthy one was no figure, "its whole-second timestamps over
    its 507 intervals cannot check them" (attack60 ptb_whole), though they did."""
    truth = _log(tmp_path / "1n8g" / NAME, steps=500, factor=factor, gap=0.0, whole=True)
    row = run_throughput(parse_paths([tmp_path], jobs=1, cache=False), "reported").iloc[0]
    assert row["problem_kind"] == kind, row["problem"]
    assert row["throughput"] == pytest.approx(truth * factor)
