"""Inputs of a second attack on the checks of a run's figure (the attack's findings file)
that got a wrong number, a false flag or silence out of them. DLLogger logs of batch 128 on
1 GPU at 50 ms an iteration (2,560 img/s) unless said."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput
from analysis.stats.summary import summarize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def test_one_value_in_other_spellings_is_one_configuration(tmp_path):
    """lr 0.1, 0.10 and 1e-1, amp True and true: flagged mixed_configuration, --strict
    failed and the case had no speedup."""
    for r, (lr, amp) in enumerate((("0.1", "True"), ("0.10", "true"), ("1e-1", "True")), 1):
        text = S.lines(300, lr=lr)
        text[0] = text[0].replace("amp : True", f"amp : {amp}")
        S.write(tmp_path, text, f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    summarize(result)
    assert "mixed_configuration" not in set(result.problems["kind"])


def test_another_value_is_still_another_configuration(tmp_path):
    for r, lr in enumerate(("0.1", "0.10", "0.2"), 1):
        S.write(tmp_path, S.lines(300, lr=lr), f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    summarize(result)
    flags = result.problems[result.problems["kind"] == "mixed_configuration"]
    assert len(flags) == 1 and "configuration differs in lr:" in flags["reason"].iloc[0]
    assert "0.10" in flags["reason"].iloc[0]  # the values as the logs print them


def _memory_sidecar(mib: dict[int, int], seconds: float = 80.0) -> list[str]:
    """nvidia-smi samples every 500 ms from the log's first training second on, each GPU of
    `mib` at its memory used."""
    out = ["timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
           "power.draw [W]"]
    t0 = S.START + timedelta(seconds=20)
    for k in range(int(seconds / 0.5) + 1):
        t = (t0 + timedelta(seconds=k * 0.5)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        out += [f"{t}, {g}, {m} MiB, 143771 MiB, 90 %, 300.00 W" for g, m in mib.items()]
    return out


def test_another_jobs_gpu_is_not_the_runs_memory_peak(tmp_path):
    """A 1-GPU run whose sidecar sampled GPU 0 (1,000 MiB) and GPU 1 (70,000 MiB, another
    job), nothing stating which was its: 70,000 MiB was its peak, no problem."""
    S.write(tmp_path, S.lines(1500))
    S.write(tmp_path, _memory_sidecar({0: 1000, 1: 70000}), "1n1g/r50_b128_amp_1.gpu.csv")
    result = parse_paths([tmp_path])
    row = run_throughput(result, "window").iloc[0]
    assert np.isnan(row["memory_sampled_mib"])
    found = result.problems[result.problems["kind"] == "foreign_gpu_sample"]
    assert len(found) == 1
    assert "of 2 GPUs (0, 1) where the run used 1 on the node, and nothing states which" \
        in found["reason"].iloc[0]


def test_the_runs_own_gpu_alone_is_its_memory_peak(tmp_path):
    S.write(tmp_path, S.lines(1500))
    S.write(tmp_path, _memory_sidecar({0: 1000}), "1n1g/r50_b128_amp_1.gpu.csv")
    result = parse_paths([tmp_path])
    assert run_throughput(result, "window").iloc[0]["memory_sampled_mib"] == 1000.0
    assert "foreign_gpu_sample" not in set(result.problems["kind"])


def test_stated_gradient_accumulation_is_the_runs_global_batch(tmp_path):
    """PARAMETER `gradient_accumulation_steps : 2`, an iteration of 256 samples every
    100 ms, no throughput printed: 1,280 img/s, unflagged (compare then said -50 %)."""
    import re

    text = [re.sub(r"train\.total_ips : \S+ images/s ", "", ln)
            for ln in S.lines(300, seconds=0.1, gradient_accumulation_steps=2)]
    S.write(tmp_path, text)
    result = parse_paths([tmp_path])
    assert result.runs["global_batch_size"].tolist() == [256]
    for method in ("dlperf", "window"):
        row = run_throughput(result, method).iloc[0]
        assert row["throughput"] == pytest.approx(2560.0), method
        assert row["problem_kind"] == "", method


TF2 = Path(__file__).resolve().parents[1] / "data" / "real" / "dlperf_tf2" / "1n1g"


def _tf2_times(tmp_path, factor: float) -> Path:
    """The real DLPerf TF2 1n1g log with every printed examples/second times `factor`."""
    import re

    text = (TF2 / "rn50_b128_fp32_2.log").read_text()
    text = re.sub(r"seconds, (\d+\.\d+) examples/second",
                  lambda m: f"seconds, {float(m.group(1)) * factor:.2f} examples/second", text)
    S.write(tmp_path, text.splitlines(), "1n1g/rn50_b128_fp32_2.log")
    return tmp_path


def test_tf2_printed_rate_contradicting_its_own_seconds_is_flagged(tmp_path):
    """examples/second x 10 while each line's seconds and the stated global batch (128)
    say otherwise: dlperf 3,218.02 and reported 3,213.0 with no problem."""
    result = parse_paths([_tf2_times(tmp_path, 10.0)])
    for method in ("dlperf", "window", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == "figure_mismatch", method
        assert np.isfinite(row["throughput"]), method  # kept, flagged
    row = run_throughput(result, "dlperf").iloc[0]  # the rule's mean, held to the stamps
    assert "count another batch than the stated one" in row["problem"]
    assert "1,280.2 samples an iteration" in row["problem"]
    row = run_throughput(result, "window").iloc[0]
    assert "over the time per iteration the same lines print" in row["problem"]
    assert "90.0% apart" in row["problem"]


def test_the_real_tf2_log_is_not_flagged(tmp_path):
    result = parse_paths([_tf2_times(tmp_path, 1.0)])
    for method in ("dlperf", "window", "reported"):
        assert run_throughput(result, method).iloc[0]["problem_kind"] == "", method


def _with_closing(n: int, closing: float) -> list[str]:
    text = S.lines(n)
    return text + [f"DLL {S.stamp(S.START.replace(minute=47))} - Summary: train.loss : 6.9 None "
                   f"train.total_ips : {closing:.2f} images/s "]


@pytest.mark.parametrize("n, method", [(300, "reported"), (60, "dlperf")])
def test_a_closing_figure_ten_times_the_lines_is_flagged(tmp_path, n, method):
    """Every line prints 2,560 img/s, the Summary line 25,600: taken unchecked by
    `reported`, and by `dlperf` where the rule falls back to it (a short run)."""
    S.write(tmp_path, _with_closing(n, 25600.0))
    row = run_throughput(parse_paths([tmp_path]), method).iloc[0]
    assert row["throughput"] == 25600.0 and row["problem_kind"] == "figure_mismatch"
    assert "the closing figure 25,600.00 samples/s" in row["problem"]
    assert "from every pace the run's training lines state" in row["problem"]
    assert "intervals within epochs before the last / their seconds by the timestamps: 2,560.00" \
        in row["problem"]


def test_a_closing_figure_near_the_lines_is_not_flagged(tmp_path):
    S.write(tmp_path, _with_closing(300, 2500.0))
    row = run_throughput(parse_paths([tmp_path]), "reported").iloc[0]
    assert row["throughput"] == 2500.0 and row["problem_kind"] == ""


def test_an_earlier_attempts_samples_in_the_sidecar_are_not_the_runs_peak(tmp_path):
    """An attempt's samples (80,000 MiB) from 600 to 300 s before the run's first line,
    appended to the same file, then after a 300 s pause the run's own (1,000 MiB): 80,000
    was its peak (they lie within the 900 s allowed for start-up)."""
    S.write(tmp_path, S.lines(1500))
    head, *own = _memory_sidecar({0: 1000})
    t0 = S.START + timedelta(seconds=20 - 600)
    earlier = [f"{(t0 + timedelta(seconds=k * 0.5)).strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, 0, "
               "80000 MiB, 143771 MiB, 90 %, 300.00 W" for k in range(601)]
    S.write(tmp_path, [head, *earlier, *own], "1n1g/r50_b128_amp_1.gpu.csv")
    result = parse_paths([tmp_path])
    assert run_throughput(result, "window").iloc[0]["memory_sampled_mib"] == 1000.0
    found = result.problems[result.problems["kind"] == "foreign_gpu_sample"]
    assert len(found) == 1 and "after a pause of 300 s" in found["reason"].iloc[0]


def test_samples_of_the_runs_start_up_before_its_first_line_still_count(tmp_path):
    """Model build sampled without a pause from 120 s before the first line (90,000 MiB
    then): the run's own."""
    S.write(tmp_path, S.lines(1500))
    head, *own = _memory_sidecar({0: 1000})
    t0 = S.START + timedelta(seconds=20 - 120)
    build = [f"{(t0 + timedelta(seconds=k * 0.5)).strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, 0, "
             "90000 MiB, 143771 MiB, 90 %, 300.00 W" for k in range(240)]
    S.write(tmp_path, [head, *build, *own], "1n1g/r50_b128_amp_1.gpu.csv")
    result = parse_paths([tmp_path])
    assert run_throughput(result, "window").iloc[0]["memory_sampled_mib"] == 90000.0
    assert "foreign_gpu_sample" not in set(result.problems["kind"])


BERT = (Path(__file__).resolve().parents[1] / "data" / "real" / "paddle_perf_pytorch_bert"
        / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8.log")


@pytest.mark.parametrize("edit, differs", [
    ({"seed=12439": "seed=4242"}, None),
    ({"results/dllogger.json": "results/rep2/dllogger.json",
      "results/checkpoints": "results/rep2/checkpoints"}, None),
    ({"config_file='bert_config_base.json'": "config_file='bert_config_large.json'"},
     "Config.config_file"),
])
def test_dle_bert_namespace_keys_are_judged_one_by_one(tmp_path, edit, differs):
    """Two repeats of the real DLE BERT log whose `Config` Namespace differs in its seed or
    its output paths were flagged mixed_configuration (the Namespace compared as one
    string); a different model config is still named, by its key."""
    text = BERT.read_text()
    (tmp_path / "bert_fp16_bs128_gpu8_1.log").write_text(text)
    for old, new in edit.items():
        assert old in text
        text = text.replace(old, new)
    # a repeat of its own timing (a copy with its header edited is one run, a duplicate_run)
    def own(m):
        moved = datetime.fromisoformat(m[0]) + timedelta(milliseconds=3 * (int(m[0][-3:]) % 7))
        return f"{moved:%Y-%m-%d %H:%M:%S.%f}"

    text = re.sub(r"(?<=DLL )\S+ \S+", own, text)
    (tmp_path / "bert_fp16_bs128_gpu8_2.log").write_text(text)
    result = parse_paths([tmp_path])
    summarize(result)
    flags = result.problems[result.problems["kind"] == "mixed_configuration"]
    if differs is None:
        assert flags.empty
    else:
        assert len(flags) == 1 and f"configuration differs in {differs}:" in flags["reason"].iloc[0]


def test_a_job_restarted_with_another_world_size_is_seen_by_the_dlperf_read(tmp_path):
    """300 iterations at world_size 1, then a PARAMETER line with world_size 2 and 300 more
    from Iteration 1: `--method dlperf` (which reads a log's first lines only) gave the first
    part's 2,560 with 0 problems, while window and reported said batch_changed."""
    text = S.lines(300) + S.lines(300, gpus=2, t0=S.START.replace(hour=12))
    S.write(tmp_path, text)
    result = parse_paths([tmp_path], dlperf_only=True)
    row = run_throughput(result, "dlperf").iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "batch_changed"
    assert "world_size : 1 on line 1 and world_size : 2 on line 302" in row["problem"]


def test_power_draw_average_of_newer_nvidia_smi_gives_energy(tmp_path):
    """A sidecar queried with `power.draw.average` and `power.draw.instant` (nvidia-smi 535
    on): no power, no energy, no word; the average is what `power.draw` was."""
    S.write(tmp_path, S.lines(1500))
    out = ["timestamp, index, memory.used [MiB], power.draw.average [W], power.draw.instant [W]"]
    t0 = S.START + timedelta(seconds=20)
    for k in range(161):
        t = (t0 + timedelta(seconds=k * 0.5)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        out.append(f"{t}, 0, 1000 MiB, 250.00 W, 300.00 W")
    S.write(tmp_path, out, "1n1g/r50_b128_amp_1.gpu.csv")
    row = run_throughput(parse_paths([tmp_path]), "window").iloc[0]
    assert row["power_w"] == 250.0 and row["energy_j"] > 0
