"""A run's figure checked against what its log states: the iterations a window covers, the
stated global batch, printed units, clock jumps, a batch restated mid-log and the printed
throughput. DLLogger logs of batch 128 on 1 GPU at 50 ms an iteration (2,560 img/s) unless
the test says otherwise (dll_synth)."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

METHODS = ("dlperf", "window", "reported")
CHECK_KINDS = {"figure_mismatch", "timestamps_jump", "batch_changed", "unit_not_samples"}
REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def figures(folder: Path, **kw):
    result = parse_paths([folder], **kw)
    return result, {m: df.iloc[0] for m, df in run_throughputs(result, METHODS).items()}


def test_a_log_printed_every_10_iterations_counts_iterations_not_lines(tmp_path):
    S.write(tmp_path, S.lines(1500, every=10))
    _, runs = figures(tmp_path)
    for method in METHODS:
        assert runs[method]["throughput"] == pytest.approx(2560.0), method
        assert runs[method]["problem_kind"] == "", method
    assert runs["dlperf"]["iterations"] == 1000  # lines 20 to 120: 100 lines of 10
    assert "one line every 10 iterations" in runs["dlperf"]["method"]


def test_dllogger_counter_restarting_each_epoch(tmp_path):
    """Epochs of 100 iterations: the DLPerf line count missed iterations 1-5 of epoch 1 inside
    its window (-4.8 %); the interval across the restart is left out."""
    S.write(tmp_path, S.lines(400, epoch_len=100))
    _, runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        assert runs[method]["throughput"] == pytest.approx(2560.0), method
        assert "restarts 1 time(s)" in runs[method]["method"], method


def _oneflow(epochs) -> str:
    """OneFlow CNN lines every 20 iterations, the counter restarting each epoch;
    `epochs`: (iterations, samples/s) of each, 30 s of validation after each."""
    t, out = 1597933942.0, []
    for e, (n, speed) in enumerate(epochs):
        for i in range(20, n + 1, 20):
            t += 20 * 128 / speed
            out.append(f"train: epoch {e}, iter {i}, loss: 1.0, top_1: 0.0, top_k: 0.0, "
                       f"samples/s: {speed:.3f} {t:.4f}")
        t += 30.0
    return S.ONEFLOW_HEAD + "\n".join(out) + "\n"


def test_oneflow_counter_restarting_each_epoch(tmp_path):
    """Epoch 0 (1,024 samples/s) ends at iteration 100, epoch 1 (2,048) runs to 200: the
    rule's iterations 20 and 120 were taken from two epochs (731, slower than either)."""
    S.write(tmp_path, [_oneflow([(100, 1024), (200, 2048)])], "1n1g/resnet50_b128_fp32_1.log")
    _, runs = figures(tmp_path)
    dlperf = runs["dlperf"]
    assert dlperf["throughput"] == pytest.approx(2048.0) and dlperf["problem_kind"] == ""
    assert "of the epoch starting at line 14" in dlperf["method"]
    # the window's 100 iterations: 80 at 1,024 and 20 at 2,048, the validation left out
    assert runs["window"]["throughput"] == pytest.approx(128 * 100 / (80 / 8 + 20 / 16))


def test_oneflow_without_an_epoch_holding_the_rule_window_says_so(tmp_path):
    S.write(tmp_path, [_oneflow([(100, 1024), (100, 2048), (100, 2048)])],
            "1n1g/resnet50_b128_fp32_1.log")
    _, runs = figures(tmp_path)
    assert runs["dlperf"]["problem_kind"] == "method_fallback"  # complete: epochs too short
    assert "so no epoch reaches iteration 120" in runs["dlperf"]["problem"]
    assert np.isnan(runs["dlperf"]["throughput"])


def test_the_stated_global_batch_is_the_runs(tmp_path):
    """4 GPUs x 128 x 2 accumulation steps: the PARAMETER line states 1,024."""
    S.write(tmp_path, S.lines(300, gpus=4, global_batch_size=1024, printed=20480),
            "1n4g/r50_b128_amp_1.log")
    result, runs = figures(tmp_path)
    assert result.runs["global_batch_size"].tolist() == [1024]
    for method in METHODS:
        assert runs[method]["throughput"] == pytest.approx(20480.0), method
        assert runs[method]["problem_kind"] == "", method


def test_a_throughput_in_tokens_is_not_samples(tmp_path):
    S.write(tmp_path, S.lines(300, unit="tokens/s", printed=2621440))
    result, runs = figures(tmp_path)
    assert np.isnan(runs["reported"]["throughput"])
    assert "prints its throughput only in tokens/s, not in samples/s" in runs["reported"]["problem"]
    found = result.problems[result.problems["kind"] == "unit_not_samples"]
    assert len(found) == 1 and "printed in tokens/s on 300 line(s)" in found["reason"].iloc[0]
    assert runs["dlperf"]["throughput"] == pytest.approx(2560.0)


def test_a_switch_to_kimg_is_converted(tmp_path):
    text = S.lines(300)
    text[151:] = [ln.replace("2560.00 images/s", "2.56 kimg/s") for ln in text[151:]]
    S.write(tmp_path, text)
    _, runs = figures(tmp_path)
    assert runs["reported"]["throughput"] == pytest.approx(2560.0)
    assert runs["reported"]["problem_kind"] == ""


@pytest.mark.parametrize("at", [60, 119])
def test_a_clock_jump_forward_gives_no_figure(tmp_path, at):
    """Daylight saving one hour forward inside the window gave 3.55 img/s."""
    S.write(tmp_path, S.lines(300, jumps={at: 3600.0}))
    _, runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        row = runs[method]
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method
        assert "jumps forward 3600.05 s" in row["problem"] and "0.05 s (median)" in row["problem"]
    assert runs["reported"]["throughput"] == pytest.approx(2560.0)  # the program's own timers


def test_a_jump_outside_the_window_changes_nothing(tmp_path):
    S.write(tmp_path, S.lines(300, jumps={200: 3600.0}))
    _, runs = figures(tmp_path)
    assert runs["dlperf"]["throughput"] == pytest.approx(2560.0)
    assert runs["dlperf"]["problem_kind"] == ""


def test_a_batch_changed_mid_log_gives_no_figure(tmp_path):
    """A job restarted in the same log with batch 256: the window method gave 5,120."""
    text = S.lines(200) + S.lines(200, batch=256, t0=S.START.replace(hour=12))
    S.write(tmp_path, text)
    result, runs = figures(tmp_path)
    for method in METHODS:
        assert np.isnan(runs[method]["throughput"]), method
        assert runs[method]["problem_kind"] == "batch_changed", method
        assert "batch_size : 128 on line 1 and batch_size : 256 on line 202" in runs[method]["problem"]
    assert (result.problems["kind"] == "batch_changed").sum() == 1


def test_derived_far_from_printed_is_flagged_with_both(tmp_path):
    """The header states world size 16 (2n8g) while the lines print 10,240 img/s from 8 GPUs."""
    S.write(tmp_path, S.lines(300, gpus=16, printed=10240), "2n8g/r50_b128_amp_1.log")
    _, runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        row = runs[method]
        assert row["throughput"] == pytest.approx(40960.0) and row["problem_kind"] == "figure_mismatch"
        assert "40,960.00 samples/s" in row["problem"] and "10,240.00 samples/s" in row["problem"]
    # the printed figure is kept, and flagged the other way round: the stated batch over the
    # lines' timestamps is 4x it
    row = runs["reported"]
    assert row["throughput"] == pytest.approx(10240.0) and row["problem_kind"] == "figure_mismatch"
    assert "10,240.00 samples/s" in row["problem"] and "40,960.00 samples/s" in row["problem"]


def test_near_printed_is_not_flagged(tmp_path):
    S.write(tmp_path, S.lines(300, printed=2560 * 1.04))
    _, runs = figures(tmp_path)
    assert runs["dlperf"]["problem_kind"] == ""


def test_strict_cli_fails_on_a_flag(tmp_path):
    from analysis.cli import main

    S.write(tmp_path, S.lines(300, jumps={60: 3600.0}))
    assert main(["summarize", "--method", "window", str(tmp_path)]) == 0
    assert main(["summarize", "--method", "window", "--strict", str(tmp_path)]) != 0


REAL_FOLDERS = sorted(p for p in REAL.iterdir() if p.is_dir())


@pytest.mark.parametrize("folder", REAL_FOLDERS, ids=[p.name for p in REAL_FOLDERS])
def test_no_check_flags_a_healthy_real_log(folder):
    """No false flags: every method's figure of every published real run (the test bed)
    passes the checks."""
    result, _ = figures(folder)
    assert not set(result.problems["kind"]) & (CHECK_KINDS | {"meta_contradicted"})
    for method, runs in run_throughputs(result, METHODS).items():
        flagged = runs[runs["problem_kind"].isin(CHECK_KINDS | {"meta_contradicted"})]
        assert flagged.empty, (method, flagged[["source", "problem"]].values.tolist())


def test_a_batch_changed_in_a_json_log_gives_no_figure(tmp_path):
    """The DLLogger JSON backend: a second PARAMETER record with batch_size 512."""
    src = Path(__file__).resolve().parents[1] / "data" / "dll_pytorch" / "json_backend" / "1n1g"
    lines = (src / "r50_b256_amp_1.json").read_text().splitlines()
    at = len(lines) // 2
    lines.insert(at, lines[0].replace('"batch_size": 256', '"batch_size": 512'))
    S.write(tmp_path, lines, "1n1g/r50_b256_amp_1.json")
    _, runs = figures(tmp_path)
    for method in METHODS:
        assert runs[method]["problem_kind"] == "batch_changed", method
        assert np.isnan(runs[method]["throughput"]), method
        assert f"batch_size : 512 on line {at + 1}" in runs[method]["problem"]


def _unprinted(text: list[str]) -> list[str]:
    """The lines without their printed throughput (a log that prints loss and lr only)."""
    return [re.sub(r"train\.total_ips : \S+ images/s ", "", ln) for ln in text]


def test_a_clock_step_under_30_s_in_a_log_printing_no_throughput_gives_no_figure(tmp_path):
    """25 s forward inside the window, nothing printed to compare with: 426.67 img/s where
    the run ran 2,560, unflagged; one interval of 500 median ones is not an iteration."""
    S.write(tmp_path, _unprinted(S.lines(300, jumps={60: 25.0})))
    _, runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        row = runs[method]
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method
        assert "jumps forward 25.05 s from line 60 to line 61" in row["problem"], method
        assert "its 25 s beyond the median are 83.3% of the window's 30 s" in row["problem"]


def test_recurring_slow_iterations_in_a_log_printing_no_throughput_are_the_run(tmp_path):
    """Every 10th iteration takes 0.6 s (data loading), 12 median ones: the run's own
    intervals, so the figure (timestamps) stands unflagged."""
    text = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1,
                        print_freq=1)]
    t = S.START
    for i in range(1, 301):
        t += timedelta(seconds=0.6 if i % 10 == 0 else 0.05)
        text.append(S.train_line(t, 0, i, 1.0))
    S.write(tmp_path, _unprinted(text))
    _, runs = figures(tmp_path)
    assert runs["window"]["problem_kind"] == ""
    assert runs["window"]["throughput"] == pytest.approx(128 * 100 / 10.5)


def _uneven(global_batch_size: int) -> list[str]:
    """One line per iteration, each printing its own rate; every 10th iteration takes
    0.55 s (data loading), the others 50 ms: the run ran 1,280 img/s (the printed values'
    harmonic mean), their median is 2,560."""
    t = S.START + timedelta(seconds=20)
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1,
                       print_freq=1, global_batch_size=global_batch_size)]
    for i in range(1, 301):
        took = 0.55 if i % 10 == 0 else 0.05
        t += timedelta(seconds=took)
        out.append(S.train_line(t, 0, i, 128 / took))
    return out


def test_a_doubled_stated_batch_over_uneven_iterations_is_a_figure_mismatch(tmp_path):
    """The stated global batch 256 doubles the figure to 2,560, which the printed median
    matched, so it went unflagged; the lines ran at 1,280 (their harmonic mean)."""
    S.write(tmp_path, _uneven(256))
    _, runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        row = runs[method]
        assert row["throughput"] == pytest.approx(2560.0, rel=1e-3), method
        assert row["problem_kind"] == "figure_mismatch", method
        assert "rests on the stated global batch 256, while the throughput the run's lines " \
               "print times their seconds per iteration by the timestamps gives 128.0 " \
               "samples an iteration" in row["problem"], method


def test_the_true_batch_over_uneven_iterations_is_not_flagged(tmp_path):
    S.write(tmp_path, _uneven(128))
    _, runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        assert runs[method]["throughput"] == pytest.approx(1280.0, rel=1e-3), method
        assert runs[method]["problem_kind"] == "", method


#: A start off the whole second: lines 1 s apart from a whole one read as whole-second
#: stamps, too coarse for the 5 s window (tests/stats/test_coarse_window_rates.py).
OFF_THE_SECOND = S.START + timedelta(seconds=0.25)


def test_a_stated_print_frequency_the_lines_contradict_is_flagged(tmp_path):
    """The PARAMETER line says print_freq 10 while the lines advance 20 iterations each
    (lines of another run, or edited): nothing said so."""
    text = S.lines(3000, every=20, start=OFF_THE_SECOND)
    text[0] = text[0].replace("print_freq : 20", "print_freq : 10")
    S.write(tmp_path, text)
    _, runs = figures(tmp_path)
    for method in ("dlperf", "window"):
        row = runs[method]
        assert row["throughput"] == pytest.approx(2560.0), method  # the lines' steps counted
        assert row["problem_kind"] == "meta_contradicted", method
        assert "states print_freq 10 (a line every 10 iteration(s))" in row["problem"], method
        assert "advance 20 steps a line" in row["problem"], method


def test_a_stated_print_frequency_the_lines_keep_is_not_flagged(tmp_path):
    S.write(tmp_path, S.lines(3000, every=20, start=OFF_THE_SECOND))
    _, runs = figures(tmp_path)
    assert runs["dlperf"]["problem_kind"] == runs["window"]["problem_kind"] == ""


def test_one_odd_printed_value_over_even_iterations_is_not_a_mismatch(tmp_path):
    """Even 50 ms iterations printed every 20, one of the window's five lines printing twice
    its rate (as the OneFlow fixture with_timestamps does): the harmonic mean moves 11 %,
    the figure (the timestamps, the median) does not."""
    text = S.lines(3000, every=20, start=OFF_THE_SECOND)
    text[3] = text[3].replace("2560.00 images/s", "5120.00 images/s")  # iteration 60
    S.write(tmp_path, text)
    _, runs = figures(tmp_path)
    assert runs["window"]["throughput"] == pytest.approx(2560.0)
    assert runs["window"]["problem_kind"] == ""


@pytest.mark.parametrize("measure", [1, 2])
def test_a_stated_batch_37_percent_off_in_a_short_window_is_flagged(tmp_path, measure):
    """`--method window --measure 2` with the PARAMETER line stating global batch 176 where
    128 ran: 3,520 img/s unflagged (a short window is only held to 50 %)."""
    S.write(tmp_path, S.lines(300, global_batch_size=176))
    row = run_throughputs(parse_paths([tmp_path]), ["window"], warmup=20,
                          measure=measure)["window"].iloc[0]
    assert row["throughput"] == pytest.approx(3520.0)
    assert row["problem_kind"] == "figure_mismatch"
    assert "gives 128.0 samples an iteration" in row["problem"]
