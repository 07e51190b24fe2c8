"""Inputs of a third attack on the checks of a run's figure that got a wrong number without
a flag out of them: figures made by the DLPerf rules from printed latencies or rates,
closing `Summary:` figures, families without a global printed rate, MLPerf clock steps
outside the block cadence, speedups against a flagged baseline, block recomputation with an
interleaved pipeline, GPU samples of GPUs the run did not use. Real logs (tests/data/real)
edited as the attack edited them, or DLLogger logs of batch 128 on 1 GPU at 50 ms an
iteration (2,560 img/s) unless said."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.changes.compare import compare
from analysis.changes.sources import from_result
from analysis.collect import parse_paths
from analysis.stats import run_throughput
from analysis.stats.gpt_flops import recomputed_layers
from analysis.stats.summary import summarize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "real"
GOOGLE = REAL / "mlperf_v1_0_google_tf_resnet"
MLPERF_META = {"num_nodes": 1, "gpus_per_node": 8}


def _kinds(result, run_id: str | None = None) -> set[str]:
    p = result.problems
    if run_id is not None:
        p = p[p["run_id"] == run_id]
    return set(p["kind"])


# --- 1. MLPerf: a clock step anywhere from run_start to run_stop -------------------------

def _shifted(text: str, where: str, ms: int) -> str:
    """`text` (an MLPerf result file) with `ms` added to every MLLOG time_ms from a point on:
    'lastblock' (the record after the last block_start), 'firstblock' (the first
    block_stop), 'afterstart' (the first block_start), 'runstop' (run_stop alone)."""
    lines = text.split("\n")
    keys = [(i, json.loads(ln.split(":::MLLOG ", 1)[1])["key"]) for i, ln in enumerate(lines)
            if ":::MLLOG " in ln]
    starts = [i for i, k in keys if k == "block_start"]
    first = {"lastblock": starts[-1] + 1, "afterstart": starts[0],
             "firstblock": next(i for i, k in keys if k == "block_stop"),
             "runstop": next(i for i, k in keys if k == "run_stop")}[where]
    last = first if where == "runstop" else len(lines)
    for i in range(first, last + 1 if where == "runstop" else last):
        if ":::MLLOG " in lines[i]:
            lines[i] = re.sub(r'"time_ms": (\d+)', lambda m: f'"time_ms": {int(m.group(1)) + ms}',
                              lines[i], count=1)
    return "\n".join(lines)


@pytest.mark.parametrize("where, ms", [("lastblock", 60_000), ("firstblock", 60_000),
                                       ("afterstart", 60_000), ("runstop", 60_000),
                                       ("afterstart", 86_400_000), ("firstblock", 13_000),
                                       ("lastblock", 13_000)])
def test_a_clock_step_outside_the_block_cadence_is_flagged(tmp_path, where, ms):
    """+60 s inside the last block, inside the first, between run_start and the first block,
    or before run_stop, and a run_start a day early: 4.97 (484.3) min, no flag; +13 s (5 %
    of the run) inside the first or the last block."""
    for k in range(5):
        text = (GOOGLE / f"result_{k}.txt").read_text()
        (tmp_path / f"result_{k}.txt").write_text(_shifted(text, where, ms) if k == 2 else text)
    result = parse_paths([tmp_path], meta=MLPERF_META, jobs=1)
    jumps = result.problems[result.problems["kind"] == "timestamps_jump"]
    assert list(jumps["run_id"]) == ["result_2"]
    assert "a clock step forward or a stall inside the run" in jumps["reason"].iloc[0]


def test_the_real_mlperf_runs_have_no_clock_flag():
    for folder in ("mlperf_v1_0_google_tf_resnet", "mlperf_v1_0_google_jax_unet3d",
                   "mlperf_v1_0_nvidia_mxnet_resnet"):
        result = parse_paths([REAL / folder], meta=MLPERF_META, jobs=1)
        assert "timestamps_jump" not in _kinds(result), folder


# --- 2. a DLPerf-rule figure from printed values the clock contradicts --------------------

def test_tf2_printed_seconds_and_rates_ten_times_the_clocks_are_flagged(tmp_path):
    """TimeHistory seconds /10 and examples/second x10 (consistent with each other and the
    stated batch): the default method gave 3,218 img/s, 0 problems; both clocks of the log
    say 100 steps take ~39.6 s."""
    src = REAL / "dlperf_tf2" / "1n1g" / "rn50_b128_fp32_2.log"

    def tenfold(m):
        return (f"TimeHistory: {float(m.group(1)) / 10:.2f} seconds, "
                f"{float(m.group(2)) * 10:.2f} examples/second")
    text = re.sub(r"TimeHistory: ([0-9.]+) seconds, ([0-9.]+) examples/second", tenfold,
                  src.read_text())
    out = tmp_path / "1n1g" / src.name
    out.parent.mkdir()
    out.write_text(text)
    result = parse_paths([tmp_path])
    for method in ("dlperf", "window", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == "figure_mismatch", method
    row = run_throughput(result, "dlperf").iloc[0]
    assert row["throughput"] == pytest.approx(3218.02, abs=0.01)
    assert "gives 1,280.2 samples an iteration" in row["problem"]


def test_the_real_tf2_logs_pass_every_method():
    result = parse_paths([REAL / "dlperf_tf2"])
    for method in ("dlperf", "window", "reported"):
        assert set(run_throughput(result, method)["problem_kind"]) == {""}, method


def test_a_mean_of_printed_rates_the_clock_halves_is_flagged():
    """DLE TF ResNet under Open MPI, 1n8g b128 (1,024 a step), lines 0.5 s apart printing
    ~1,000 img/s: the DLPerf rule (a), the mean of the printed rates, gave 1,049.5 unflagged."""
    row = run_throughput(parse_paths([DATA / "dll_tensorflow" / "horovod_mpi_prefixes"]),
                         "dlperf").iloc[0]
    assert row["throughput"] == pytest.approx(1049.5)
    assert row["problem_kind"] == "figure_mismatch"
    assert "the global batch 1,024" in row["problem"]
    assert "537.5 samples an iteration" in row["problem"]


# --- 3, 4. closing figures against the timestamps and the lines ---------------------------

def _closing(text: list[str], ips: float) -> list[str]:
    at = re.search(r"DLL (\S+ \S+)", text[-1]).group(1)
    return text + [f"DLL {at} - Summary: train.total_ips : {ips:.2f} images/s "]


def _unprinted(text: list[str]) -> list[str]:
    return [re.sub(r" train\.total_ips : [0-9.]+ \S+", "", ln) for ln in text]


@pytest.mark.parametrize("n, method", [(300, "reported"), (60, "dlperf"), (60, "reported")])
def test_a_closing_figure_ten_times_the_timestamps_is_flagged(tmp_path, n, method):
    """Lines that print no rate, 50 ms apart; Summary 25,600: taken with 0 problems."""
    S.write(tmp_path, _closing(_unprinted(S.lines(n)), 25600.0))
    row = run_throughput(parse_paths([tmp_path]), method).iloc[0]
    assert row["throughput"] == 25600.0 and row["problem_kind"] == "figure_mismatch"
    assert "by the timestamps: 2,560.00" in row["problem"]


@pytest.mark.parametrize("n, gpus, closing", [(60, 2, 2560.0), (300, 2, 2560.0),
                                              (60, 1, 1300.0)])
def test_a_closing_figure_half_the_lines_is_flagged(tmp_path, n, gpus, closing):
    """A per-GPU Summary on 2 GPUs (exactly half of every line and of the timestamps), and
    one 49 % below on 1 GPU: within the 50 % a closing figure was let fall below the lines."""
    S.write(tmp_path, _closing(S.lines(n, gpus=gpus), closing), f"1n{gpus}g/r50_b128_amp_1.log")
    result = parse_paths([tmp_path])
    for method in ("dlperf", "reported"):
        row = run_throughput(result, method).iloc[0]
        if row["throughput"] == closing:  # dlperf measures a run long enough for its rule
            assert row["problem_kind"] == "figure_mismatch", method


def _ptrn8(tmp_path: Path, closing: str) -> Path:
    src = REAL / "paddle_perf_pytorch_resnet" / "pytorch_gpu8_amp_bs256.txt"
    out = tmp_path / src.name
    out.write_text(src.read_text().replace("train.total_ips : 10515.76", closing))
    return out


RN50_8 = {"num_nodes": 1, "gpus_per_node": 8, "batch_size_per_device": 256}


def test_a_real_closing_figure_halved_is_flagged(tmp_path):
    """The real DLE PyTorch 8-GPU log with its closing 10,515.76 made 5,257.88: taken by both
    methods, --strict passed; its lines print a median of 10,943.6, harmonic mean 7,076.5."""
    result = parse_paths([_ptrn8(tmp_path, "train.total_ips : 5257.88")], meta=RN50_8)
    for method in ("dlperf", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["throughput"] == 5257.88 and row["problem_kind"] == "figure_mismatch", method


def test_the_real_closing_figure_is_not_flagged(tmp_path):
    result = parse_paths([REAL / "paddle_perf_pytorch_resnet"], meta=RN50_8)
    assert set(run_throughput(result, "reported")["problem_kind"]) == {""}


# --- 5. a clock step whose printed rate comes from the same clock -------------------------

@pytest.mark.parametrize("at, step", [(60, 5.0), (70, 2.0)])
def test_a_step_the_printed_rate_shows_too_gives_no_figure(tmp_path, at, step):
    """+5 s at iteration 60 (+2 s at 70), that line printing 128 / 5.05 s as DLE's
    time.time() rate does: the default method gave 1,280 (1,828.57), 0 problems."""
    text = S.lines(300, jumps={at: step})
    text = [ln.replace("train.total_ips : 2560.00",
                       f"train.total_ips : {128 / (step + 0.05):.2f}")
            if f" Iteration: {at} " in ln else ln for ln in text]
    S.write(tmp_path, text)
    result = parse_paths([tmp_path])
    for method in ("dlperf", "window"):
        row = run_throughput(result, method).iloc[0]
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method


# --- 6. a speedup against a flagged baseline ----------------------------------------------

def test_a_speedup_against_a_flagged_baseline_says_so(tmp_path):
    """1n1g repeats 33 % apart (wide_spread), 1n2g healthy: its efficiency 116.7 % carried
    no flag; a 1n1g run stating global batch 256 (figure_mismatch): efficiency 50 %."""
    S.write(tmp_path, S.lines(300), "a/1n1g/r50_b128_amp_1.log")
    S.write(tmp_path, S.lines(300, seconds=0.07), "a/1n1g/r50_b128_amp_2.log")
    S.write(tmp_path, S.lines(300, gpus=2), "a/1n2g/r50_b128_amp_1.log")
    rows = summarize(parse_paths([tmp_path / "a"]))
    two = rows[rows["num_devices"] == 2].iloc[0]
    assert "speedup against a flagged 1n1g case (spread 33.3 % > 5 %)" in two["flags"]
    S.write(tmp_path, S.lines(300, global_batch_size=256), "b/1n1g/r50_b128_amp_1.log")
    S.write(tmp_path, S.lines(300, gpus=2), "b/1n2g/r50_b128_amp_1.log")
    rows = summarize(parse_paths([tmp_path / "b"]))
    two = rows[rows["num_devices"] == 2].iloc[0]
    assert two["scaling_efficiency"] == pytest.approx(0.5)
    assert "speedup against a flagged 1n1g case (1 of 1 run(s) figure_mismatch)" in two["flags"]


def test_a_speedup_against_a_healthy_baseline_has_no_flag(tmp_path):
    S.write(tmp_path, S.lines(300), "1n1g/r50_b128_amp_1.log")
    S.write(tmp_path, S.lines(300, gpus=2), "1n2g/r50_b128_amp_1.log")
    rows = summarize(parse_paths([tmp_path]))
    assert list(rows["flags"]) == ["", ""]


# --- 7, 8, 9, 10. families without a global printed rate ----------------------------------

def _copy(src: Path, tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    files = [p for p in dst.rglob("*.log")]
    for p in files:
        text = p.read_text()
        assert text.count(old) >= count, p
        p.write_text(text.replace(old, new))
    return dst


def test_libai_stated_batch_the_consumed_samples_contradict_is_flagged(tmp_path):
    """`train.global_batch_size=64` where consumed_samples grow 32 an iteration: 128
    samples/s by window and reported, 0 problems."""
    folder = _copy(DATA / "libai" / "gpt2_stdout", tmp_path, "'train.global_batch_size=32'",
                   "'train.global_batch_size=64'")
    result = parse_paths([folder])
    for method in ("window", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == "figure_mismatch", method
        assert "grow by 32.0 an iteration" in row["problem"], method


def test_oneflow_models_stated_global_batch_the_rates_contradict_is_flagged(tmp_path):
    """train_global_batch_size 768 where every line prints 1,200 a device on 2 devices (384
    an iteration): window 4,800, 0 problems."""
    folder = _copy(DATA / "oneflow_models" / "graph_dated", tmp_path,
                   "train_global_batch_size ......................... 384",
                   "train_global_batch_size ......................... 768")
    row = run_throughput(parse_paths([folder]), "window").iloc[0]
    assert row["throughput"] == pytest.approx(4800.0)
    assert row["problem_kind"] == "figure_mismatch"


def test_mxnet_speed_lines_twice_their_timestamps_are_flagged(tmp_path):
    """Speedometer rates doubled (global batch 3,264, lines' own timestamps untouched):
    53,374 samples/s by reported, no flag."""
    text = gzip.decompress((REAL / "mlperf_v1_0_nvidia_mxnet_resnet" / "result_0.txt.gz")
                           .read_bytes()).decode()
    text = re.sub(r"Speed: ([0-9.]+) samples/sec",
                  lambda m: f"Speed: {float(m.group(1)) * 2:.2f} samples/sec", text)
    (tmp_path / "result_0.txt").write_text(text)
    row = run_throughput(parse_paths([tmp_path], meta=MLPERF_META), "reported").iloc[0]
    assert row["throughput"] > 50000 and row["problem_kind"] == "figure_mismatch"


def test_the_real_mxnet_speed_lines_are_not_flagged(tmp_path):
    text = gzip.decompress((REAL / "mlperf_v1_0_nvidia_mxnet_resnet" / "result_0.txt.gz")
                           .read_bytes())
    (tmp_path / "result_0.txt").write_bytes(text)
    row = run_throughput(parse_paths([tmp_path], meta=MLPERF_META), "reported").iloc[0]
    assert row["problem_kind"] == ""


def test_oneflow_gpt_global_batch_its_parts_contradict_is_flagged(tmp_path):
    """The suite's GPT log edited to global_batch_size 16 with samples, throughput and
    TFLOP/s doubled to match, its dump still micro 8 x accumulation 1 x DP 1: 131.33
    samples/s, 1,020 TFLOP/s/GPU, 0 problems."""
    src = next((Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "gpt_4gpu" / "1n1g")
               .glob("*_1.log"))
    out = []
    for ln in src.read_text().split("\n"):
        ln = ln.replace("global_batch_size ............................... 8",
                        "global_batch_size ............................... 16")
        cells = ln.split("|")
        if len(cells) == 10 and cells[1].strip().isdigit():
            cells[3] = f" {int(cells[3]) * 2:<15} "
            cells[4] = f" {float(cells[4]) * 2:<10.5f} "
            cells[7] = f" {float(cells[7]) * 2:<20.2f} "
            ln = "|".join(cells)
        out.append(ln)
    path = tmp_path / "1n1g" / "gpt_run_1.log"
    path.parent.mkdir()
    path.write_text("\n".join(out))
    result = parse_paths([path])
    conflict = result.problems[result.problems["kind"] == "metadata_conflict"]
    assert len(conflict) == 1
    assert "micro_batch_size 8 x num_accumulation_steps 1 x data_parallel_size 1 = 8" \
        in conflict["reason"].iloc[0]


# --- 11. clock steps back that leave every interval positive ------------------------------

@pytest.mark.parametrize("every, jumps, methods", [
    (1, {k: -0.045 for k in range(25, 122, 5)}, ("dlperf", "window")),
    (1, {k: -0.045 for k in range(30, 120, 9)}, ("dlperf", "window")),
    (10, {55: -0.45, 95: -0.45}, ("window",))])
def test_backward_steps_that_keep_intervals_positive_give_no_figure(tmp_path, every, jumps,
                                                                     methods):
    """20 (10) steps back of 45 ms in a window of 50 ms iterations, lines printing no rate:
    3,088 / 3,122 (2,813) img/s, 0 problems; a line every 10 iterations, two steps back of
    0.45 s: window 3,122."""
    S.write(tmp_path, _unprinted(S.lines(300 if every == 1 else 3000, every=every,
                                         jumps=jumps)))
    result = parse_paths([tmp_path])
    for method in methods:
        row = run_throughput(result, method).iloc[0]
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method
        assert "a clock stepped back" in row["problem"], method


def test_even_lines_without_a_step_keep_their_figure(tmp_path):
    S.write(tmp_path, _unprinted(S.lines(300)))
    row = run_throughput(parse_paths([tmp_path]), "window").iloc[0]
    assert row["throughput"] == pytest.approx(2560.0) and row["problem_kind"] == ""


# --- 12. block recomputation with an interleaved pipeline ---------------------------------

def test_block_recomputation_counts_each_model_chunk():
    """12 layers, 2 stages x 3 chunks of 2 layers, recompute_num_layers 1: Megatron-LM's
    `block` recomputes the first layer of each chunk (each ParallelTransformer of a chunk
    loops over its own layers), 6; the stages alone gave 2."""
    params = {"recompute_granularity": "full", "recompute_method": "block",
              "recompute_num_layers": "1", "pipeline_model_parallel_size": "2",
              "virtual_pipeline_model_parallel_size": "3",
              "num_layers_per_virtual_pipeline_stage": "2"}
    assert recomputed_layers(params, 12) == 6
    stated_by_size = {**params, "num_layers_per_virtual_pipeline_stage": "None"}
    assert recomputed_layers(stated_by_size, 12) == 6
    stated_by_layers = {**params, "virtual_pipeline_model_parallel_size": "None"}
    assert recomputed_layers(stated_by_layers, 12) == 6
    plain = {**params, "virtual_pipeline_model_parallel_size": "None",
             "num_layers_per_virtual_pipeline_stage": "None"}
    assert recomputed_layers(plain, 12) == 2
    assert recomputed_layers({**params, "recompute_num_layers": "2"}, 12) is None  # all


# --- 13. samples of GPUs the run did not use ----------------------------------------------

def _sidecar(mib: dict[int, int], seconds: float = 80.0) -> list[str]:
    out = ["timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
           "power.draw [W]"]
    t0 = S.START + timedelta(seconds=20)
    for k in range(int(seconds / 0.5) + 1):
        t = (t0 + timedelta(seconds=k * 0.5)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        out += [f"{t}, {g}, {m} MiB, 143771 MiB, 90 %, 300.00 W" for g, m in mib.items()]
    return out


def test_a_visible_devices_list_wider_than_the_run_does_not_name_its_gpu(tmp_path):
    """A 1-GPU run whose env record states CUDA_VISIBLE_DEVICES=0,1,2,3 (a launcher
    exporting the whole node), its sidecar sampling GPU 0 (1,000 MiB) and GPU 1 (70,000 MiB,
    another job): 70,000 MiB was its peak, no problem."""
    S.write(tmp_path, S.lines(1500))
    S.write(tmp_path, _sidecar({0: 1000, 1: 70000}), "1n1g/r50_b128_amp_1.gpu.csv")
    record = {"env": {"CUDA_VISIBLE_DEVICES": "0,1,2,3"},
              "gpus": [{"index": i, "name": "NVIDIA H200", "uuid": f"GPU-{i}"} for i in range(4)]}
    (tmp_path / "1n1g" / "r50_b128_amp_1.node0.env.json").write_text(json.dumps(record))
    result = parse_paths([tmp_path])
    row = run_throughput(result, "dlperf").iloc[0]
    assert not row["memory_sampled_mib"] == 70000.0
    notes = result.problems[result.problems["kind"] == "foreign_gpu_sample"]
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3, 4 GPUs, not which 1 were its" in notes["reason"].iloc[0]


def test_a_visible_devices_list_of_the_runs_gpus_keeps_its_samples(tmp_path):
    S.write(tmp_path, S.lines(1500))
    S.write(tmp_path, _sidecar({0: 1000, 1: 70000}), "1n1g/r50_b128_amp_1.gpu.csv")
    record = {"env": {"CUDA_VISIBLE_DEVICES": "0"},
              "gpus": [{"index": i, "name": "NVIDIA H200", "uuid": f"GPU-{i}"} for i in range(2)]}
    (tmp_path / "1n1g" / "r50_b128_amp_1.node0.env.json").write_text(json.dumps(record))
    assert run_throughput(parse_paths([tmp_path]), "dlperf").iloc[0]["memory_sampled_mib"] == 1000.0


def test_an_inline_nvidia_smi_block_of_the_whole_node_counts_the_runs_gpus(tmp_path):
    """A 1-GPU OneFlow CNN log whose inline nvidia-smi block lists the node's 8 GPUs, one of
    them another job's 70,000 MiB: 70,000 MiB was the run's peak. The rows carry no index,
    so nothing states which is the run's: none counts."""
    src = DATA / "oneflow_cnn" / "no_timestamps" / "1n1g" / "resnet50_b128_fp32_1.log"
    rows = "\n".join(["100 %, 12565 MiB", "0 %, 70000 MiB"] + ["0 %, 3 MiB"] * 6)
    text = src.read_text().replace("100 %, 12565 MiB", rows, 1)
    out = tmp_path / "1n1g" / src.name
    out.parent.mkdir()
    out.write_text(text)
    result = parse_paths([tmp_path])
    assert np.isnan(run_throughput(result, "window").iloc[0]["memory_sampled_mib"])
    assert "foreign_gpu_sample" in _kinds(result)


# --- text: a number that is no count, and the documented pause ----------------------------

def test_a_global_batch_that_is_no_count_is_said_as_printed(tmp_path):
    """`Global batch size: 1e400` was read as 1 and said as 'the log says
    batch_size_per_device=1'."""
    src = REAL / "dlperf_tf2" / "1n1g" / "rn50_b128_fp32_2.log"
    out = tmp_path / "1n1g" / src.name
    out.parent.mkdir()
    out.write_text(re.sub(r"Global batch size: 128", "Global batch size: 1e400",
                          src.read_text()))
    result = parse_paths([tmp_path])
    reasons = " ".join(result.problems["reason"])
    assert "batch_size_per_device=1" not in reasons
    assert "the log says Global batch size: 1e400, not a count of samples" in reasons


def test_the_documented_sampling_pause_is_the_codes():
    from analysis.gpu_samples import GAP_S
    text = (Path(__file__).resolve().parents[2] / "docs/formats.md").read_text()
    assert f"pause\n  of more than {GAP_S:g} s ahead" in text or \
        f"pause of more than {GAP_S:g} s ahead" in text


def test_a_speedup_against_a_baseline_whose_log_contradicts_its_statement_says_so(tmp_path):
    """A 1n1g baseline (its meta file) whose PARAMETER states world_size 2
    (metadata_conflict): the 1n2g row's speedup carried no word of it."""
    S.write(tmp_path, S.lines(300, gpus=2), "base/r50_b128_amp_1.log")
    (tmp_path / "base" / "r50_b128_amp_1.meta.yaml").write_text(
        "num_nodes: 1\ngpus_per_node: 1\nbatch_size_per_device: 128\n")
    S.write(tmp_path, S.lines(300, gpus=2, start=S.START + timedelta(hours=1)),
            "1n2g/r50_b128_amp_1.log")
    result = parse_paths([tmp_path])
    assert "metadata_conflict" in _kinds(result)
    rows = summarize(result)
    two = rows[rows["num_devices"] == 2].iloc[0]
    assert "run(s) metadata_conflict" in two["flags"]


def test_the_score_of_runs_with_a_clock_step_says_so(tmp_path):
    """The case's time-to-train rule named nothing of the flagged run it averages in."""
    for k in range(5):
        text = (GOOGLE / f"result_{k}.txt").read_text()
        (tmp_path / f"result_{k}.txt").write_text(
            _shifted(text, "lastblock", 60_000) if k == 2 else text)
    row = summarize(parse_paths([tmp_path], meta=MLPERF_META, jobs=1)).iloc[0]
    assert "1 of 5 run(s) timestamps_jump (a clock step or a stall inside the run: its " \
        "time to train is in doubt)" in row["time_to_train_rule"]
    assert row["flags"] == "1 of 5 run(s) timestamps_jump in the time to train"


def test_a_comparison_of_scores_with_a_clock_step_names_it(tmp_path):
    """compare called a score with three stepped runs 15.5 % slower and named no flag."""
    new = tmp_path / "new"
    new.mkdir()
    for k in range(5):
        text = (GOOGLE / f"result_{k}.txt").read_text()
        (new / f"result_{k}.txt").write_text(
            _shifted(text, "lastblock", 60_000) if k in (2, 3, 4) else text)
    base, stepped = (from_result(parse_paths([p], meta=MLPERF_META, jobs=1), str(p), p.name, [])
                     for p in (GOOGLE, new))
    row = compare(base, stepped).table.iloc[0]
    assert row["time_to_train_verdict"] == "slower"
    assert row["flags"] == "new: 3 of 5 run(s) timestamps_jump in the time to train"


TF_BERT = REAL / "paddle_perf_tensorflow_bert"
TF_BERT_META = {"num_nodes": 1, "gpus_per_node": 1, "batch_size_per_device": 128}


def test_bert_iterations_of_the_accumulation_its_log_states_are_not_flagged():
    """DLE TF BERT's Iteration is an optimizer step of the 528 micro batches its launch
    trace states: the printed rates x the clock are 528 stated batches an iteration."""
    result = parse_paths([TF_BERT], meta=TF_BERT_META)
    for method in ("dlperf", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["throughput"] == pytest.approx(704.708), method
        assert row["problem_kind"] in ("", "method_fallback"), method


def test_bert_rates_doubled_beyond_the_stated_accumulation_are_flagged(tmp_path):
    """Every printed throughput_train and the closing figure doubled: 1,056 stated batches
    an iteration by the clock, where the log states 528."""
    src = next(TF_BERT.glob("*.log"))
    text = re.sub(r"throughput_train : ([0-9.]+)",
                  lambda m: f"throughput_train : {float(m.group(1)) * 2:.3f}", src.read_text())
    (tmp_path / src.name).write_text(text)
    result = parse_paths([tmp_path], meta=TF_BERT_META)
    for method in ("dlperf", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["throughput"] == pytest.approx(1409.416), method
        assert row["problem_kind"] == "figure_mismatch", method
