"""Inputs of an attack on the checks of a run's figure that got a wrong number or a false
flag out of them: energy summed over GPUs the run did not use or over a clock that stepped,
an MLPerf run_stop before its run_start read as a time to train, repeats whose output
folders, seeds or dynamic loss scale differ flagged as a mixed configuration, uneven
iterations flagged as a figure mismatch while a clock step in a short window was not,
compare silent on flagged figures, and a spread of exactly 5 % flagged by float rounding.
DLLogger logs of batch 128 on 1 GPU at 50 ms an iteration (2,560 img/s) unless said."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats.energy import run_energy
from analysis.stats.summary import summarize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def _sidecar(gpus, seconds: float = 80.0, watts: float = 300.0) -> list[str]:
    """nvidia-smi samples every 500 ms from the log's first training second on."""
    out = ["timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
           "power.draw [W]"]
    t0 = S.START + timedelta(seconds=20)
    for k in range(int(seconds / 0.5) + 1):
        t = (t0 + timedelta(seconds=k * 0.5)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        out += [f"{t}, {g}, 1000 MiB, 143771 MiB, 90 %, {watts:.2f} W" for g in gpus]
    return out


def test_samples_of_more_gpus_than_the_run_used_give_no_energy(tmp_path):
    """A 1-GPU run whose sidecar sampled both GPUs of the node, nothing stating which was
    the run's: 600 W (both summed) was its power; the run drew 300 W. None of the samples
    is taken as the run's (foreign_gpu_sample)."""
    S.write(tmp_path, S.lines(1500))
    S.write(tmp_path, _sidecar((0, 1)), "1n1g/r50_b128_amp_1.gpu.csv")
    row = run_energy(parse_paths([tmp_path])).iloc[0]
    assert np.isnan(row["power_w"]) and np.isnan(row["energy_j"])
    assert row["note"].startswith("no power samples of the run") and "foreign_gpu_sample" in row["note"]


def test_samples_of_the_runs_own_gpu_give_its_energy(tmp_path):
    S.write(tmp_path, S.lines(1500))
    S.write(tmp_path, _sidecar((0,)), "1n1g/r50_b128_amp_1.gpu.csv")
    row = run_energy(parse_paths([tmp_path])).iloc[0]
    assert row["power_w"] == 300.0 and row["note"] == ""


T = 1_600_000_000_000


def _mllog(events: list[tuple[int, str, dict]]) -> str:
    head = [(T, "submission_benchmark", {}), (T, "global_batch_size", {})]
    values = {"submission_benchmark": "resnet", "global_batch_size": 3264}
    return "".join(":::MLLOG " + json.dumps({
        "namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME", "key": key,
        "value": values.get(key), "metadata": meta}) + "\n" for t, key, meta in head + events)


def test_a_run_stop_before_its_run_start_is_no_time_to_train(tmp_path):
    """run_stop 30 minutes before run_start (a clock stepped back, lines edited): -30 min
    was read as the run's time to train, without a problem."""
    log = tmp_path / "result_0.txt"
    log.write_text(_mllog([(T + 1_800_000, "run_start", {}),
                           (T, "run_stop", {"status": "success"})]))
    result = parse_paths([log])
    obs = result.observations
    assert obs[obs["metric"] == M.TIME_TO_TRAIN].empty
    found = result.problems[result.problems["kind"] == "impossible_value"]
    assert len(found) == 1 and "not after run_start" in found["reason"].iloc[0]


def test_an_mlperf_run_of_30_minutes_is_30_minutes(tmp_path):
    log = tmp_path / "result_0.txt"
    log.write_text(_mllog([(T, "run_start", {}), (T + 1_800_000, "run_stop",
                                                   {"status": "success"})]))
    obs = parse_paths([log]).observations
    assert obs.loc[obs["metric"] == M.TIME_TO_TRAIN, "value"].tolist() == [30.0]


def test_repeats_differing_in_outputs_and_seed_are_one_configuration(tmp_path):
    """DLE's ``workspace``, TF's ``logdir``, an ``output`` folder and a ``random_seed`` set
    per repeat were flagged ``mixed_configuration``."""
    for r in (1, 2, 3):
        S.write(tmp_path, S.lines(300, workspace=f"/results/rep{r}", logdir=f"/logs/r{r}",
                                  output=f"/out/{r}", random_seed=r),
                f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    summarize(result)
    assert "mixed_configuration" not in set(result.problems["kind"])


def test_repeats_differing_in_a_setting_are_still_flagged(tmp_path):
    for r, lr in ((1, "0.1"), (2, "0.1"), (3, "0.2")):
        S.write(tmp_path, S.lines(300, lr=lr, workspace=f"/results/rep{r}"),
                f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    summarize(result)
    flags = result.problems[result.problems["kind"] == "mixed_configuration"]
    assert len(flags) == 1 and "configuration differs in lr:" in flags["reason"].iloc[0]


def _uneven(n: int = 300, slow_every: int = 10, slow: float = 0.5,
            fast: float = 0.05) -> list[str]:
    """Every line one iteration, each printing its own rate; every `slow_every`-th
    iteration takes `slow` seconds (data loading), the others `fast`."""
    t = S.START + timedelta(seconds=20)
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1,
                       print_freq=1)]
    for i in range(1, n + 1):
        took = slow if i % slow_every == 0 else fast
        t += timedelta(seconds=took)
        out.append(S.train_line(t, 0, i, 128 / took))
    return out


def test_uneven_iterations_are_not_a_figure_mismatch(tmp_path):
    """Nine iterations of 50 ms and one of 500 ms: 1,347 img/s by timestamps, which is
    what the lines print (their harmonic mean); the median printed (2,560) flagged it."""
    from analysis.stats.per_run import run_throughputs

    S.write(tmp_path, _uneven())
    runs = run_throughputs(parse_paths([tmp_path]), ["dlperf", "window"])
    for method, df in runs.items():
        row = df.iloc[0]
        assert row["throughput"] == pytest.approx(128 * 10 / (9 * 0.05 + 0.5), abs=0.01), method
        assert row["problem_kind"] == "", method


def test_a_clock_step_under_the_jump_size_is_still_a_figure_mismatch(tmp_path):
    """25 s forward, under the 30 s a jump must last: the printed values say 2,560."""
    from analysis.stats.per_run import run_throughputs

    S.write(tmp_path, S.lines(300, jumps={60: 25.0}))
    runs = run_throughputs(parse_paths([tmp_path]), ["dlperf", "window"])
    for method, df in runs.items():
        assert df.iloc[0]["problem_kind"] == "figure_mismatch", method


def test_compare_flags_figures_that_disagree_with_their_logs(tmp_path):
    """NEW's logs state a global batch of 1,024 while printing 2,560 img/s: compare said
    +700 % faster with no word; the case is flagged with the runs' figure_mismatch."""
    from analysis.changes.compare import compare
    from analysis.changes.sources import from_folder

    for side, kw in (("base", {}), ("new", {"global_batch_size": 1024})):
        for r, seconds in ((1, 0.05), (2, 0.0501), (3, 0.0499)):
            S.write(tmp_path / side, S.lines(300, seconds=seconds, **kw),
                    f"1n1g/r50_b128_amp_{r}.log")
    row = compare(from_folder(tmp_path / "base"), from_folder(tmp_path / "new")).table.iloc[0]
    assert row["ratio"] == pytest.approx(8.0, rel=0.01)
    assert row["flags"] == "new: 3 of 3 run(s) figure_mismatch"


@pytest.mark.parametrize("measure, at", [(1, 21), (2, 22)])
def test_a_clock_step_in_a_window_of_one_or_two_intervals_is_flagged(tmp_path, measure, at):
    """`--method window --measure 2` over a 3,600 s clock step: 0.07 img/s, unflagged (too
    few intervals for a jump or for the printed median)."""
    from analysis.stats.per_run import run_throughputs

    S.write(tmp_path, S.lines(300, jumps={at: 3600.0}))
    row = run_throughputs(parse_paths([tmp_path]), ["window"], warmup=20,
                          measure=measure)["window"].iloc[0]
    assert row["throughput"] < 1.0
    assert row["problem_kind"] == "figure_mismatch"


@pytest.mark.parametrize("measure", [1, 2])
def test_uneven_iterations_in_a_short_window_are_not_flagged(tmp_path, measure):
    from analysis.stats.per_run import run_throughputs

    S.write(tmp_path, _uneven(slow_every=2, slow=0.06))
    row = run_throughputs(parse_paths([tmp_path]), ["window"], warmup=20,
                          measure=measure)["window"].iloc[0]
    assert row["problem_kind"] == ""


def test_a_spread_of_exactly_the_threshold_is_not_flagged(tmp_path):
    """2,924.61 to 3,074.59 around 2,999.60 is 5 % exactly; float rounding made it
    5.000000000000001 and flagged it "spread 5.0 % > 5 %"."""
    for r, speed in ((1, 2924.61), (2, 2999.60), (3, 3074.59)):
        S.write(tmp_path, S.lines(300, seconds=128 / speed, printed=speed),
                f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    row = summarize(result, "reported").iloc[0]
    assert row["spread_pct"] == pytest.approx(5.0)
    assert "wide_spread" not in set(result.problems["kind"])


def test_a_spread_just_above_the_threshold_is_flagged(tmp_path):
    for r, speed in ((1, 2924.60), (2, 2999.60), (3, 3074.59)):
        S.write(tmp_path, S.lines(300, seconds=128 / speed, printed=speed),
                f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    summarize(result, "reported")
    assert "wide_spread" in set(result.problems["kind"])


def test_a_clock_stepped_back_gives_no_energy(tmp_path):
    """75 s at 300 W (22,500 J) with the node's clock stepped back 60 s part-way, in the log
    and the samples alike: 17,850 J over a 60 s window, no note; the first to the last
    line is not how long the run took."""
    S.write(tmp_path, S.lines(1500, jumps={800: -60.0}))
    before = _sidecar((0,), seconds=40.0)
    after = [ln.replace(ln[:23], (datetime.strptime(ln[:23], "%Y/%m/%d %H:%M:%S.%f")
                                  - timedelta(seconds=20)).strftime("%Y/%m/%d %H:%M:%S.%f")[:23])
             for ln in before[1:]]
    S.write(tmp_path, before + after, "1n1g/r50_b128_amp_1.gpu.csv")
    row = run_energy(parse_paths([tmp_path])).iloc[0]
    assert np.isnan(row["energy_j"]) and np.isnan(row["window_s"])
    assert "goes back" in row["note"]


def test_a_clock_stepped_forward_gives_no_energy(tmp_path):
    """75 s at 300 W with the node's clock stepped 3,600 s forward part-way (log and
    samples alike): 1,102,350 J over a 3,675 s window, no note."""
    S.write(tmp_path, S.lines(1500, jumps={800: 3600.0}))
    before = _sidecar((0,), seconds=40.0)
    after = [ln.replace(ln[:23], (datetime.strptime(ln[:23], "%Y/%m/%d %H:%M:%S.%f")
                                  + timedelta(seconds=3640)).strftime("%Y/%m/%d %H:%M:%S.%f")[:23])
             for ln in before[1:]]
    S.write(tmp_path, before + after, "1n1g/r50_b128_amp_1.gpu.csv")
    row = run_energy(parse_paths([tmp_path])).iloc[0]
    assert np.isnan(row["energy_j"]) and np.isnan(row["power_w"])
    assert "no power sample for 3600.0 s inside the window" in row["note"]


def test_power_not_measured_now_and_then_still_gives_energy(tmp_path):
    """Every third sample [N/A]: the others still cover the window."""
    S.write(tmp_path, S.lines(1500))
    side = [ln.replace("300.00 W", "[N/A]") if k % 3 == 0 else ln
            for k, ln in enumerate(_sidecar((0,)))]
    S.write(tmp_path, side, "1n1g/r50_b128_amp_1.gpu.csv")
    row = run_energy(parse_paths([tmp_path])).iloc[0]
    assert row["power_w"] == 300.0 and row["note"] == ""


def test_a_loss_scale_restated_while_running_is_not_a_configuration(tmp_path):
    """DLE BERT states its dynamic loss scale as a PARAMETER each time it changes; three
    repeats ending at 1,024, 2,048 and 3,072 were flagged ``mixed_configuration``."""
    real = (Path(__file__).resolve().parents[1] / "data" / "real" / "paddle_perf_pytorch_bert"
            / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8.log")
    text = real.read_text()
    assert "PARAMETER loss_scale : 2048.0" in text
    for r in (1, 2, 3):
        (tmp_path / f"bert_fp16_bs128_gpu8_{r}.log").write_text(
            text.replace("PARAMETER loss_scale : 2048.0", f"PARAMETER loss_scale : {1024 * r}.0"))
    result = parse_paths([tmp_path])
    summarize(result)
    assert "mixed_configuration" not in set(result.problems["kind"])
