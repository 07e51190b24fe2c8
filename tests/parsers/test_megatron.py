"""Megatron-LM parser: fixtures in tests/data/megatron (SYNTHETIC, docs/formats.md §4)."""

from __future__ import annotations

import statistics
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from _frames import rows

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_data, run_throughput

DATA = Path(__file__).resolve().parents[1] / "data" / "megatron"
PLAIN = "iterations/1n4g/gpt_b1_amp_1"
DATED = "dated_torchrun/1n4g/gpt_b2_bf16_1"
SRUN = "srun_prefix/2n8g/gpt_b2_amp_1"
ELAPSED = [141.2, 140.1, 139.8, 140.6, 141.9, 140.3, 140.6, 139.5, 140.9,
           142.0, 140.4, 140.6, 139.9, 140.8, 141.1, 140.2, 140.7, 140.5]


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


def test_family_framework_meta(result):
    runs = result.runs.set_index("run_id")
    assert set(runs["family"]) == {"megatron"} and set(runs["framework"]) == {"Megatron-LM"}
    assert runs.loc[PLAIN, "precision"] == "amp" and runs.loc[DATED, "precision"] == "bf16"
    assert runs.loc[PLAIN, "global_batch_size"] == 4
    parsed = parsers.get("megatron").parse(LogText.read(DATA / (PLAIN + ".log")))
    assert parsed.meta["global_batch_size"] == 4 and parsed.meta["batch_size_per_device"] == 1
    assert parsed.meta["num_layers"] == 24 and parsed.meta["data_parallel"] == 4
    assert parsed.meta_lines["global_batch_size"] == 38  # the last iteration line (200)
    assert parsed.parameters["world_size"] == "4"


def test_example_lines(result):
    lat = rows(result, PLAIN, "latency")
    assert lat["step"].tolist() == list(range(10, 201, 10))
    assert lat["value"].iloc[:2].tolist() == pytest.approx([0.3562, 0.1406])
    assert lat["unit"].unique().tolist() == ["s"]
    loss = rows(result, PLAIN, "loss")
    assert 10 not in loss["step"].tolist()  # fully skipped interval prints no loss
    assert 100 not in loss["step"].tolist()  # nor does an all-NaN one
    assert loss["value"].iloc[0] == 10.05022
    assert rows(result, PLAIN, "samples")["value"].iloc[:2].tolist() == [40, 80]
    assert rows(result, PLAIN, "loss_scale")["value"].iloc[:2].tolist() == [8388608.0, 32768.0]
    assert rows(result, PLAIN, "grad_norm")["value"].iloc[0] == 217.199
    assert rows(result, PLAIN, "skipped_iterations")["value"].iloc[0] == 10
    nan_iters = rows(result, PLAIN, "nan_iterations")
    assert nan_iters[nan_iters["step"] == 100]["value"].iloc[0] == 1
    assert rows(result, PLAIN, "lr")["value"].iloc[1] == 2.02e-08
    assert result.problems[result.problems["run_id"] == PLAIN].empty


def test_memory_line(result):
    mem = result.observations[(result.observations["run_id"] == PLAIN)
                              & (result.observations["phase"] == "memory")]
    got = dict(zip(mem["metric"].astype(str), mem["value"], strict=True))
    assert got == {"memory_allocated": 1523.4, "memory_max_allocated": 2311.7,
                   "memory_reserved": 2560.0, "memory_max_reserved": 2560.0}
    assert set(mem["unit"]) == {"MiB"} and set(mem["step"]) == {10} and set(mem["rank"]) == {0}


def test_dlperf_median_latency(result):
    est = parsers.get("megatron").dlperf(run_data(result, PLAIN))
    expected = statistics.median([140.6] + ELAPSED) / 1000  # intervals after the first
    assert est.latency == pytest.approx(expected) == pytest.approx(0.1406)
    assert est.throughput == pytest.approx(4 / expected)
    assert "elapsed time per iteration" in est.method and est.problem_kind == ""


def test_dates_torchrun_ranks_and_cut_line(result):
    lat = rows(result, DATED, "latency")
    assert lat["step"].tolist() == list(range(10, 101, 10))
    first = datetime(2024, 5, 1, 10, 0, 7, tzinfo=timezone.utc).timestamp()
    assert lat["timestamp"].iloc[0] == first
    assert lat["timestamp"].diff().dropna().unique().tolist() == [2.0]
    assert set(lat["rank"]) == {3}
    assert rows(result, DATED, "tflops_per_gpu")["value"].iloc[0] == 12.3
    mem = rows(result, DATED, "memory_max_allocated", "memory")
    assert mem["value"].tolist() == [2311.7] and mem["rank"].tolist() == [0]
    probs = result.problems[result.problems["run_id"] == DATED]
    assert probs["kind"].tolist() == ["bad_line"]
    assert probs["line"].iloc[0] == 29
    assert probs["text"].iloc[0].endswith("iteration      110/ 1000000 | consumed samples:")
    est = parsers.get("megatron").dlperf(run_data(result, DATED))
    assert est.throughput == pytest.approx(8 / (statistics.median(ELAPSED[:9]) / 1000))


def test_srun_prefix_and_batch_ramp_up(result):
    lat = rows(result, SRUN, "latency")
    assert len(lat) == 19 and set(lat["rank"]) == {15}
    assert lat["value"].iloc[0] == 1.0
    run = result.runs.set_index("run_id").loc[SRUN]
    assert run["global_batch_size"] == 32  # the last printed, after ramp-up from 16
    assert run["num_layers"] == 24  # dump lines behind `0:   ` prefixes still read
    assert result.problems[result.problems["run_id"] == SRUN].empty


def test_non_master(result):
    probs = result.problems[result.problems["run_id"] == "non_master/2n8g/gpt_b2_amp_1"]
    assert probs["kind"].tolist() == ["no_training_lines"]
    est = parsers.get("megatron").dlperf(run_data(result, "non_master/2n8g/gpt_b2_amp_1"))
    assert est.problem_kind == "no_training_lines"


def test_garbage_never_raises():
    parser = parsers.get("megatron")
    for raw in (b"", b"iteration 1/", b"iteration 1/ 2 |", b"[Rank 0] (after 1 iterations) memory",
                b"\xff iteration 5/ 9 | lm loss: nan | elapsed time per iteration (ms): x |\n"):
        parser.parse(LogText.from_bytes(raw, "mem"))
    parsed = parser.parse(LogText.from_bytes(
        b" iteration 5/ 9 | lm loss: nan | elapsed time per iteration (ms): 1e3 |\n", "mem"))
    assert parsed.problems == []
    by_metric = {b["metric"]: b["value"][0] for b in parsed.obs.blocks}
    assert by_metric["latency"] == 1.0 and by_metric["loss"] != by_metric["loss"]


def test_sniff():
    cls = type(parsers.get("megatron"))
    assert cls.sniff(b" iteration       10/ 1000000 | consumed samples:           40 |") == 90
    assert cls.sniff(b"[Rank 0] (after 10 iterations) memory (MB) | allocated: 1") == 90
    assert cls.sniff(b"train: epoch 0, iter 20") == 0


def test_world_size_against_the_path_the_log_wins(tmp_path):
    """A log saved under 2n8g whose dump says world_size 4: the run has the log's 4 GPUs (2
    per node; per-GPU figures divide by 4) and a metadata_conflict names the dump's line;
    a world size the nodes do not divide keeps the path's, and says so."""
    text = (DATA / PLAIN).with_suffix(".log").read_text()
    (tmp_path / "2n8g").mkdir()
    (tmp_path / "2n8g" / "gpt_b1_amp_1.log").write_text(text)
    (tmp_path / "3n8g").mkdir()  # another run: not the same bytes (else a duplicate_run)
    (tmp_path / "3n8g" / "gpt_b1_amp_1.log").write_text(text + "training done\n")
    got = parse_paths([tmp_path])
    runs = got.runs.set_index("run_id")
    assert runs.loc["2n8g/gpt_b1_amp_1", ["num_nodes", "gpus_per_node", "num_devices"]].tolist() \
        == [2, 2, 4]
    conflict = got.problems[got.problems["run_id"] == "2n8g/gpt_b1_amp_1"]
    assert conflict["kind"].tolist() == ["metadata_conflict"]
    assert conflict["reason"].iloc[0] == ("the path says gpus_per_node=8, the log says "
                                          "gpus_per_node=2 (its world_size=4); using the "
                                          "log's value")
    world_line = text.splitlines().index(next(ln for ln in text.splitlines()
                                              if ln.lstrip().startswith("world_size"))) + 1
    assert conflict["line"].iloc[0] == world_line
    assert runs.loc["3n8g/gpt_b1_amp_1", ["num_nodes", "gpus_per_node"]].tolist() == [3, 8]
    kept = got.problems[got.problems["run_id"] == "3n8g/gpt_b1_amp_1"]
    assert kept[["kind", "line"]].values.tolist() == [["metadata_conflict", world_line]]
    assert kept["reason"].iloc[0].endswith("world_size=4, which 3 nodes do not divide; "
                                           "using the path's")


def test_multi_node_run_trains_on_its_last_node(tmp_path):
    """A 2-node run: node 0's log has the dump but no iteration lines (only the last rank
    prints them, docs/formats.md §4), node 1's has them. The run trains: no
    no_training_lines problem, and its figure is node 1's."""
    (tmp_path / "2n8g").mkdir()
    node0 = (DATA / "non_master/2n8g/gpt_b2_amp_1.log").read_text()
    node1 = "".join(line for line in (DATA / "iterations/1n4g/gpt_b1_amp_1.log").open()
                    if " iteration " in line)
    (tmp_path / "2n8g" / "gpt_b2_amp_1.log").write_text(node0)
    (tmp_path / "2n8g" / "gpt_b2_amp_1.node1.log").write_text(node1)
    result = parse_paths([tmp_path])
    assert result.problems.empty, result.problems[["kind", "reason"]]
    est = parsers.get("megatron").dlperf(run_data(result, "2n8g/gpt_b2_amp_1"))
    assert est.latency == pytest.approx(0.1406)


def _ramp_up_log(path: Path) -> None:
    """--rampup-batch-size 16 16 …: 16 for iterations 1-100, 32 to 150, 48 to 200, 64 to 300;
    the latency grows with the batch (160 samples/s throughout), the first interval 500 ms."""
    out, consumed = [], 0
    for it in range(1, 301):
        batch = 16 if it <= 100 else 32 if it <= 150 else 48 if it <= 200 else 64
        consumed += batch
        if it % 10 == 0:
            ms = 500.0 if it == 10 else batch / 160 * 1000
            out.append(f" iteration {it:8d}/{300:8d} | consumed samples: {consumed:12d} | "
                       f"elapsed time per iteration (ms): {ms:.1f} | learning rate: 1.0E-04 | "
                       f"global batch size: {batch:5d} | lm loss: 7.0E+00 |\n")
    path.parent.mkdir(parents=True)
    path.write_text("".join(out))


def test_dlperf_leaves_the_batch_ramp_up_out(tmp_path):
    """The run's global batch is the last printed (64); intervals printed at 16, 32 or 48 ran
    smaller batches in less time. Their latencies (median of all after the first: 300 ms,
    a 48 batch) over 64 gave 213.33 samples/s; the steady intervals give 64 / 0.4 = 160."""
    _ramp_up_log(tmp_path / "1n1g" / "gpt_b64_fp16_1.log")
    result = parse_paths([tmp_path])
    est = parsers.get("megatron").dlperf(run_data(result, "1n1g/gpt_b64_fp16_1"))
    assert est.latency == pytest.approx(0.4) and est.throughput == pytest.approx(160.0)
    assert "ramp-up" in est.method and est.problem_kind == ""
    assert rows(result, "1n1g/gpt_b64_fp16_1", "global_batch_size")["value"].iloc[[0, -1]].tolist(
        ) == [16, 64]


@pytest.mark.parametrize("warmup, measure, expected", [
    (20, 100, 160.0),  # 80 x 16 + 20 x 32 samples in 8 + 4 s (was 64 x 100 / 12 s = 533.33)
    (150, 100, 160.0),  # 50 x 48 + 50 x 64 samples in 15 + 20 s
    (0, 300, 12000 / 79),  # every sample, with the 10 x 500 ms start-up interval
])
def test_window_counts_each_interval_at_its_printed_batch(tmp_path, warmup, measure, expected):
    """A window across the batch-size ramp-up: each interval's samples are its printed
    global batch x its iterations, not the run's final batch."""
    _ramp_up_log(tmp_path / "1n1g" / "gpt_b64_fp16_1.log")
    row = run_throughput(parse_paths([tmp_path]), "window", warmup=warmup,
                         measure=measure).iloc[0]
    assert row["throughput"] == pytest.approx(expected)
    assert "ramp-up" in row["method"] and not row["problem_kind"]


def test_an_iteration_number_beyond_int64_does_not_lose_the_run(tmp_path):
    src = next((Path(__file__).resolve().parents[1] / "data" / "megatron" / "iterations")
               .glob("*/gpt_b1_amp_1.log"))
    d = tmp_path / "1n4g"
    d.mkdir()
    (d / "gpt_b1_amp_1.log").write_bytes(src.read_bytes())
    (d / "gpt_b1_amp_2.log").write_bytes(src.read_bytes().replace(
        b" iteration       20/", b" iteration 99999999999999999999999/", 1))
    r = parse_paths([tmp_path], cache=False)
    assert "parser_error" not in set(r.problems["kind"]), r.problems
    figures = run_throughput(r)["throughput"].tolist()
    assert len(figures) == 2 and figures[0] == figures[1]


def test_reported_says_the_format_prints_no_throughput(result):
    """Megatron prints latencies, no samples/s: `reported` said "truncated" (untrue)."""
    table = run_throughput(result, "reported")
    est = table[table["run_id"] == "iterations/1n4g/gpt_b1_amp_1"].iloc[0]
    assert np.isnan(est["throughput"]) and est["problem_kind"] == "method_fallback"
    assert "print no throughput in samples/s" in est["problem"] and "--method window" in est["problem"]
    assert "truncated" not in est["problem"] and "after iteration" not in est["problem"]


@pytest.mark.parametrize("point", [".", ","])
def test_dated_prefixes_keep_their_fraction_of_a_second(tmp_path, point):
    """A prefix printing a fraction (`[2024-05-01 10:00:07.250000]`, or with a decimal
    comma) is read to the microsecond, not cut to whole seconds, so a latency 7 % off the
    stamps is seen on a short run rather than hidden in a second's rounding."""
    log = tmp_path / "1n8g" / "gpt_b4_fp16_1.log"
    log.parent.mkdir()
    start = datetime(2024, 5, 2, 10, 11, 0, tzinfo=timezone.utc).timestamp() + 0.25
    lines = []
    for it in range(10, 101, 10):
        t = datetime.fromtimestamp(start + 0.5 * it, timezone.utc)
        stamp = t.strftime("%Y-%m-%d %H:%M:%S") + point + f"{t.microsecond:06d}"
        lines.append(f"[{stamp}]  iteration {it:8d}/     100 | consumed samples: {it * 256:12d} "
                     f"| elapsed time per iteration (ms): {500 * 0.93:.1f} | global batch size: "
                     "  256 | lm loss: 7.990000E+00 | loss scale: 65536.0 | number of skipped "
                     "iterations:   0 | number of nan iterations:   0 |")
    log.write_text("\n".join(lines) + "\n")
    run = parse_paths([tmp_path])
    stamps = rows(run, "1n8g/gpt_b4_fp16_1", "latency")["timestamp"]
    assert stamps.diff().dropna().tolist() == pytest.approx([5.0] * 9)
    assert stamps.iloc[0] == pytest.approx(start + 5.0)
    assert (stamps % 1).tolist() == pytest.approx([0.25] * 10)  # the quarter seconds are kept
    row = run_throughput(run, "dlperf").iloc[0]
    assert row["problem_kind"] == "figure_mismatch" and "275" in row["problem"]
