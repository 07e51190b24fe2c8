"""GPU memory sidecars: .mem files and nvidia-smi / NVML sampling CSVs, alone and joined to runs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu_memory"


def ts(*args) -> float:
    return dt.datetime(*args, tzinfo=dt.timezone.utc).timestamp()


def test_mem_sidecar_bytes_to_mib():
    parsed = parsers.get("gpu_memory").parse(LogText.read(DATA / "mem_sidecar/1n1g/r50_b256_amp_1.mem"))
    (b,) = parsed.obs.blocks
    assert (b["metric"], b["phase"], b["unit"]) == ("memory_used", "memory", "MiB")
    assert b["value"].tolist() == [12358.0] and b["device"].tolist() == [0] and b["line"].tolist() == [1]
    assert np.isnan(b["timestamp"]).all() and parsed.problems == []


def test_mem_bad_value_is_a_problem():
    text = b"max device0 memory usage is: 1048576\nmax device1 memory usage is: lots\n"
    parsed = parsers.get("gpu_memory").parse(LogText.from_bytes(text, "a.mem"))
    assert [(p.line, p.kind) for p in parsed.problems] == [(2, "bad_line")]
    assert parsed.obs.blocks[0]["value"].tolist() == [1.0]


def test_smi_csv_samples():
    parsed = parsers.get("gpu_memory").parse(LogText.read(DATA / "smi_csv/1n1g/r50_b256_amp_1.gpu.csv"))
    by = {b["metric"]: b for b in parsed.obs.blocks}
    used = by["memory_used"]
    assert used["value"].tolist()[:4] == [1000.0, 1001.0, 1100.0, 1101.0]
    assert used["device"].tolist()[:2] == [0, 1]
    # line 10 prints [N/A] / [Not Supported]: no value, so no row (and no NaN), memory.total kept
    assert 10 not in used["line"].tolist() and 10 not in by["utilization"]["line"].tolist()
    assert 10 in by["memory_total"]["line"].tolist()
    assert used["line"].tolist()[:2] == [2, 3]
    assert used["timestamp"][2] == ts(2021, 3, 23, 11, 45, 0, 500000)
    assert set(by["memory_total"]["value"]) == {16160.0}
    assert by["utilization"]["unit"] == "%" and by["utilization"]["value"].tolist()[:3] == [50.0, 50.0, 51.0]
    assert [(p.line, p.kind) for p in parsed.problems] == [(11, "bad_line")]


def test_sidecars_join_their_run():
    result = parse_paths([DATA])
    runs = result.runs.set_index("run_id")
    assert runs.loc["smi_csv/1n1g/r50_b256_amp_1", "family"] == "dll_pytorch"
    assert runs.loc["mem_sidecar/1n1g/r50_b256_amp_1", "family"] == "dll_pytorch"
    o = result.observations
    mem = o[(o["run_id"] == "mem_sidecar/1n1g/r50_b256_amp_1") & (o["metric"] == "memory_used")]
    assert mem["source"].astype(str).str.endswith(".mem").all() and mem["value"].tolist() == [12358.0]
    per_run = run_throughput(result, "dlperf").set_index("run_id")
    # two peaks, kept apart: the allocator's (the log's Summary line) and nvidia-smi's samples
    assert per_run.loc["smi_csv/1n1g/r50_b256_amp_1", "memory_framework_mib"] == 12345.0
    # the 1-GPU run's sidecar samples GPUs 0 and 1 and nothing states which was its: no
    # sampled peak (1,301 MiB, GPU 1's, was taken as its), said as foreign_gpu_sample
    assert np.isnan(per_run.loc["smi_csv/1n1g/r50_b256_amp_1", "memory_sampled_mib"])
    foreign = result.problems[result.problems["kind"] == "foreign_gpu_sample"]
    assert foreign["run_id"].tolist() == ["smi_csv/1n1g/r50_b256_amp_1"]
    assert per_run.loc["mem_sidecar/1n1g/r50_b256_amp_1", "memory_sampled_mib"] == 12358.0
    assert np.isnan(per_run.loc["nvml_csv/1n1g/r50_b256_amp_1", "memory_framework_mib"])
    assert per_run.loc["smi_csv/1n1g/r50_b256_amp_1", "throughput"] == 800.0
    nvml = o[(o["run_id"] == "nvml_csv/1n1g/r50_b256_amp_1") & (o["metric"] == "memory_used")]
    assert nvml["value"].tolist() == [2048.0, 4096.0]
    assert nvml["timestamp"].tolist() == [ts(2026, 11, 21, 10, 0, 0, 250000), ts(2026, 11, 21, 10, 0, 0, 750000)]


def test_samples_no_gpu_can_give_are_bad_lines_not_the_runs_peak():
    head = "timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n"
    rows = ["2026/11/21 10:00:00.000, 0, 1000 MiB, 143771 MiB, 50 %",
            "2026/11/21 10:00:00.500, 0, 9999999999999999999999999 MiB, 143771 MiB, 50 %",
            "2026/11/21 10:00:01.000, 0, 150000 MiB, 143771 MiB, 50 %",
            "2026/11/21 10:00:01.500, 0, 2000 MiB, 143771 MiB, 250 %",
            "2026/11/21 10:00:02.000, 99999999999999999999999, 3000 MiB, 143771 MiB, 50 %"]
    text = (head + "\n".join(rows) + "\n").encode()
    parsed = parsers.get("gpu_memory").parse(LogText.from_bytes(text, "a.gpu.csv"))
    assert [(p.line, p.kind) for p in parsed.problems] == [(n, "bad_line") for n in (3, 4, 5, 6)]
    assert "1e+25 MiB is more than any GPU holds" in parsed.problems[0].reason
    assert "150000 MiB is more than memory.total 143771 MiB" in parsed.problems[1].reason
    assert "250 % is above 100 %" in parsed.problems[2].reason
    used = next(b for b in parsed.obs.blocks if b["metric"] == "memory_used")
    assert used["value"].tolist() == [1000.0]
    mem = b"max device0 memory usage is: 1048576\nmax device99999999999999999999 memory usage " \
          b"is: 1048576\nmax device0 memory usage is: 1e40\n"
    parsed = parsers.get("gpu_memory").parse(LogText.from_bytes(mem, "a.mem"))
    assert [(p.line, p.kind) for p in parsed.problems] == [(2, "bad_line"), (3, "bad_line")]
