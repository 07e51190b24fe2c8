"""The real Megatron-DeepSpeed log (tests/data/real/megatron_deepspeed_examples) edited as a
resumed job, a ramp-up or a long start-up would leave it: each figure follows what the log
states, or the run is flagged with a reason naming the values."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput, summarize
from analysis.stats.gpt_flops import NO_RECOMPUTATION

REAL = (Path(__file__).resolve().parents[1] / "data" / "real" / "megatron_deepspeed_examples"
        / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4.log.gz")
DUMP_BATCH = "global_batch_size ............................... 256"


@pytest.fixture(scope="module")
def real() -> str:
    return gzip.decompress(REAL.read_bytes()).decode()


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "gpt.log").write_text(text)
    return tmp_path


def _resumed(text: str, batch: int, dump: bool = True) -> str:
    """`text` followed by the same job resumed at iteration 130 with global batch `batch`
    (its argument dump restating it when `dump`, the lines printing it)."""
    second = text.replace("global batch size:   256", f"global batch size:   {batch}")
    if dump:
        second = second.replace(DUMP_BATCH, DUMP_BATCH.replace("256", str(batch)))
    second = re.sub(r"iteration +(\d+)/", lambda m: f"iteration {int(m.group(1)) + 120:8d}/",
                    second)
    return text + second


@pytest.mark.parametrize("method", ["dlperf", "window"])
def test_a_job_resumed_with_another_batch_has_no_figure(tmp_path, real, method):
    """256 for iterations 10-120, then 512 from 130: dlperf took 512 / the 256-batch
    latency (2x), window's TFLOP/s used 512 with 256's latency; now batch_changed, both
    batches and the line named, no figure and no TFLOP/s."""
    result = parse_paths([_write(tmp_path, _resumed(real, 512))])
    row = run_throughput(result, method).iloc[0]
    assert row["problem_kind"] == "batch_changed"
    assert "global batch size 256" in row["problem"] and "512 from line" in row["problem"]
    assert np.isnan(row["throughput"])
    case = summarize(result, method=method).iloc[0]
    assert np.isnan(case["tflops_per_gpu"])


def test_a_later_dump_stating_another_batch_is_said_where_lines_print_none(tmp_path, real):
    """Lines without a `global batch size` field (older Megatron): the second argument dump
    decides, and its line is named."""
    text = re.sub(r" global batch size: +\d+ \|", "", _resumed(real, 512))
    result = parse_paths([_write(tmp_path, text)])
    found = result.problems[result.problems["kind"] == "batch_changed"]
    assert len(found) == 1 and "states global_batch_size 256" in found["reason"].iloc[0]
    assert "states 512" in found["reason"].iloc[0]


def test_a_stated_ramp_up_is_not_a_batch_change_and_tflops_follow_the_printed_batch(
        tmp_path, real):
    """`rampup_batch_size` stated, lines print 128 for iterations 10-60 then 256: no flag;
    window's samples use each line's batch, and its TFLOP/s follow those samples (they were
    256's FLOPs over a latency of mixed batches: 128.9 for 332 samples/s)."""
    text = real.replace("rampup_batch_size ............................... None",
                        "rampup_batch_size ............................... ['128', '128', '5000']")
    text = re.sub(r"(iteration +(\d+)/[^\n]*global batch size: +)256",
                  lambda m: m.group(1) + ("128" if int(m.group(2)) <= 60 else "256"), text)
    assert "['128', '128', '5000']" in text
    result = parse_paths([_write(tmp_path, text)])
    assert "batch_changed" not in set(result.problems["kind"])
    case = summarize(result, method="window").iloc[0]
    run = result.runs.iloc[0]
    per_sample = NO_RECOMPUTATION.flops(1, 2048, run["num_layers"], run["hidden_size"],
                                        run["vocab_size"])
    assert case["tflops_per_gpu"] == pytest.approx(
        per_sample * case["throughput_median"] / 8 / 1e12, rel=1e-12)


def test_tflops_use_the_padded_vocabulary_the_log_states(tmp_path, real):
    """`> padded vocab (size: 50257) with 47 dummy tokens (new size: 50304)`: V = 50,304
    (108.62 TFLOP/s/GPU at 584.0 ms), not OneFlow's default 51,200 (109.08)."""
    assert "(new size: 50304)" in real
    result = parse_paths([_write(tmp_path, real)])
    assert result.runs["vocab_size"].tolist() == [50304]
    case = summarize(result).iloc[0]
    assert case["tflops_per_gpu"] == pytest.approx(
        NO_RECOMPUTATION.tflops_per_gpu(256, 2048, 12, 768, 50304, 0.584, 8), rel=1e-12)
    assert case["tflops_per_gpu"] == pytest.approx(108.617, abs=1e-3)


@pytest.mark.parametrize("where", ["before_dump", "long_dump_line"])
def test_an_argument_dump_after_megabytes_of_start_up_is_read(tmp_path, real, where):
    """2.8 MB of NCCL INFO lines before the dump, or a dump line of 2 MB: precision (amp),
    micro batch, case and TFLOP/s were lost (fp32 in the second), 0 problems."""
    if where == "before_dump":
        noise = "node-0:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\n" * 40000
        text = real.replace("------------------------ arguments", noise
                            + "------------------------ arguments", 1)
    else:
        text = re.sub(r"(  checkpoint_num_layers \.+)", lambda m: m.group(1) + "." * 2_000_000,
                      real, count=1)
    assert len(text) > 2_000_000
    result = parse_paths([_write(tmp_path, text)])
    run = result.runs.iloc[0]
    assert (run["precision"], run["batch_size_per_device"]) == ("amp", 4)
    case = summarize(result).iloc[0]
    assert case["case"] == "DP_8x1x1_256_768x12"
    assert case["tflops_per_gpu"] == pytest.approx(108.617, abs=1e-3)


def test_a_dump_without_its_end_line_is_said(tmp_path, real):
    text = real.replace("-------------------- end of arguments ---------------------", "", 1)
    text = re.sub(r"(  checkpoint_num_layers \.+)", lambda m: m.group(1) + "." * 1_100_000,
                  text, count=1)
    result = parse_paths([_write(tmp_path, text)])
    said = result.problems[result.problems["reason"].str.contains("end of arguments")]
    assert len(said) == 1 and "read its first 1,048,576 bytes only" in said["reason"].iloc[0]
