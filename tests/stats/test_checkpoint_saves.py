"""A checkpoint save the log prints is a pause like an evaluation: the interval holding it is
not training. Megatron (the real Megatron-DeepSpeed log of tests/data/real, whose timer runs
across a save as across an evaluation: a save's seconds land on the next interval's elapsed
time) and LiBai (its stamps count the save) print the save's line; the window leaves that
interval out, and where every interval holds one the figure is flagged in words that say
it was a save."""

from __future__ import annotations

import datetime as dt
import gzip
import re
from pathlib import Path

import numpy as np
import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data"
MEGATRON = (DATA / "real" / "megatron_deepspeed_examples"
            / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4_origin.log.gz")
LIBAI = DATA / "libai" / "gpt2_stdout" / "1n8g" / "gpt2_b4_amp_1.log"
_ITERATION = re.compile(r"^ iteration +(\d+)/")


def _megatron(after, extra_ms: float, dated: bool = False) -> str:
    """The real log with a save after the iteration lines of `after` (Megatron-DeepSpeed's
    lines: the save, its timer, its end; Megatron-LM's dated first line where `dated`), and
    `extra_ms` more on the elapsed time of the interval each is in."""
    stamp = "[2024-05-02 10:11:12.345678] " if dated else ""
    out, held = [], False
    for ln in gzip.decompress(MEGATRON.read_bytes()).decode().splitlines(keepends=True):
        m = _ITERATION.match(ln)
        if m and held:
            ln = re.sub(r"\(ms\): ([\d.]+)", lambda v: f"(ms): {float(v.group(1)) + extra_ms:.1f}",
                        ln)
        held = held and not m
        out.append(ln)
        if m and int(m.group(1)) in after:
            it = int(m.group(1))
            out += [f"{stamp}saving checkpoint at iteration {it:7d} to /ckpt/gpt\n",
                    f"time (ms) | save-checkpoint: {extra_ms * 10:.2f}\n",
                    f"  successfully saved checkpoint at iteration {it:7d} to /ckpt/gpt\n"]
            held = True
    return "".join(out)


def _row(folder: Path, text: str, method: str, name: str = "b.log"):
    (folder / name).write_text(text)
    return run_throughput(parse_paths([folder / name], jobs=1, cache=False), method).iloc[0]


def test_megatron_save_lines_are_save_rows(tmp_path):
    """The save's first line, as Megatron-DeepSpeed and (dated) Megatron-LM print it: one
    row each, at the iteration it saves, stamped where dated."""
    (tmp_path / "b.log").write_text(_megatron([50], 0.0, dated=True))
    o = parse_paths([tmp_path / "b.log"], jobs=1, cache=False).observations
    saves = o[o["phase"] == M.CHECKPOINT]
    assert saves["metric"].tolist() == [M.SAVE] and saves["step"].tolist() == [50]
    assert saves["timestamp"].tolist() == [dt.datetime(2024, 5, 2, 10, 11, 12, 345678,
                                                       tzinfo=dt.timezone.utc).timestamp()]


def test_a_megatron_save_inside_the_window_is_left_out(tmp_path):
    """A save of 8 s after iteration 50 (+800 ms an iteration on 50 -> 60): counted, the
    window's figure fell ~12 % (390 samples/s for ~441); now that interval is left out as
    the evaluation's is, the window runs on, and its text says it was a save."""
    base = _row(tmp_path, gzip.decompress(MEGATRON.read_bytes()).decode(), "window", "a.log")
    row = _row(tmp_path, _megatron([50], 800.0), "window")
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(base["throughput"], rel=0.01)
    assert "hold evaluation or checkpoint save lines" in row["method"]


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_a_megatron_save_in_every_interval_flags_the_figure(tmp_path, method):
    """save_interval = log_interval, +320 ms each interval: no interval times training
    alone; the figure is kept, flagged, naming the saves."""
    row = _row(tmp_path, _megatron(range(10, 160, 10), 320.0), method)
    assert row["problem_kind"] == "evaluation_in_figure"
    assert "checkpoint save lines" in row["problem"]
    assert "checkpoint saves' time as training" in row["problem"]


@pytest.mark.parametrize("after", [10, 150])
def test_a_save_outside_the_window_changes_nothing(tmp_path, after):
    """A save in the warm-up (10 -> 20) or after the window's end (150 -> 160): the window's
    figure and text are the log's without it (its line numbers moved by the save's lines)."""
    base = _row(tmp_path, gzip.decompress(MEGATRON.read_bytes()).decode(), "window", "a.log")
    row = _row(tmp_path, _megatron([after], 800.0), "window")
    assert (row["throughput"], re.sub(r"line \d+", "", row["method"]), row["problem_kind"]) == \
        (base["throughput"], re.sub(r"line \d+", "", base["method"]), base["problem_kind"])


def _libai(folder: Path, pace: float, saves: dict[int, float]) -> float:
    """A LiBai log of 400 iterations at `pace` s, a line each, stamped to the second, with a
    save of `saves[it]` s printed after iteration `it`'s line (LiBai's
    ``Checkpointer.save``). Returns the window's training truth (iterations 20 to 120)."""
    text = LIBAI.read_text().split("\n")
    lines = text[:next(i for i, ln in enumerate(text) if "iteration: " in ln)]
    start, t = dt.datetime(2022, 11, 23, 11, 40, 5), 0.0
    for it in range(1, 401):
        t += 3.0 if it <= 2 else pace
        lines.append(f"[{start + dt.timedelta(seconds=t):%m/%d %H:%M:%S} lb.utils.events]: "
                     f" eta: 0:01:46  iteration: {it - 1}/400  consumed_samples: {32 * it}  "
                     f"total_loss: {10.8 - it * 1e-3:.4f}  time: {pace:.4f} s/iter  "
                     f"data_time: 0.0016 s/iter total_throughput: {32 / pace:.2f} samples/s "
                     "lr: 1.50e-04")
        if it in saves:
            lines.append(f"[{start + dt.timedelta(seconds=t):%m/%d %H:%M:%S} "
                         f"lb.utils.checkpoint]: Saving checkpoint to output/model_{it - 1:07d}")
            t += saves[it]
    (folder / "1n8g").mkdir(parents=True)
    (folder / "1n8g" / LIBAI.name).write_text("\n".join(lines) + "\n")
    return 32 / pace


def test_a_libai_save_inside_the_window_is_left_out(tmp_path):
    """A save of 8 s after iteration 60 at 0.5 s an iteration: counted, the window's 100
    iterations took 58 s, not 50 (~55 samples/s for 64); now it is left out."""
    truth = _libai(tmp_path, 0.5, {60: 8.0})
    result = parse_paths([tmp_path], cache=False)
    o = result.observations
    assert o[o["phase"] == M.CHECKPOINT]["line"].tolist() == \
        o[(o["phase"] == M.TRAIN) & (o["step"] == 60)]["line"].drop_duplicates().add(1).tolist()
    row = run_throughput(result, "window").iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(truth, rel=0.03)
    assert "hold checkpoint save lines" in row["method"]


def test_libai_saves_in_every_interval_flag_the_figure(tmp_path):
    """A save of 2 s after every iteration: no interval times training alone."""
    _libai(tmp_path, 0.5, dict.fromkeys(range(1, 401), 2.0))
    row = run_throughput(parse_paths([tmp_path], cache=False), "window").iloc[0]
    assert row["problem_kind"] == "evaluation_in_figure"
    assert "holds checkpoint save lines" in row["problem"]
    assert np.isfinite(row["throughput"])
