"""OneFlow CNN parser: fixtures in tests/data/oneflow_cnn (SYNTHETIC, docs/formats.md §1/§8)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from _frames import rows

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_data

DATA = Path(__file__).resolve().parents[1] / "data" / "oneflow_cnn"
T20, T120 = 1597933942.9863544, 1597933977.6064055
SEED001 = [288.088, 385.628, 386.264, 385.723, 384.622, 385.367, 384.704, 384.927, 384.109,
           384.517]


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


def test_sniffed_and_framework(result):
    runs = result.runs.set_index("run_id")
    assert set(runs["family"]) == {"oneflow_cnn"}
    assert set(runs["framework"]) == {"OneFlow"}


def test_header_dump_to_meta_and_parameters():
    parsed = parsers.get("oneflow_cnn").parse(
        LogText.read(DATA / "with_timestamps/1n8g/resnet50_b128_fp32_1.log"))
    assert parsed.meta == {"model": "resnet50", "gpus_per_node": 8, "num_nodes": 1,
                           "batch_size_per_device": 128, "precision": "fp32"}
    # banner on line 2; dump lines: gpu_num_per_node 4, num_nodes 5, model 8, use_fp16 9, bsz 15
    assert parsed.meta_lines == {"model": 8, "gpus_per_node": 4, "num_nodes": 5,
                                 "precision": 9, "batch_size_per_device": 15}
    assert parsed.parameters["loss_print_every_n_iter"] == "20"
    assert parsed.parameters["node_ips"] == "['192.168.1.12']"
    assert len(parsed.parameters) == 20
    assert parsed.problems == []


def test_train_lines_values_steps_timestamps(result):
    rid = "with_timestamps/1n8g/resnet50_b128_fp32_1"
    tp = rows(result, rid, "throughput")
    assert tp["step"].tolist() == list(range(20, 201, 20))
    assert tp["epoch"].tolist() == [0] * 10
    assert tp["unit"].unique().tolist() == ["samples/s"]
    first = tp.iloc[0]
    assert first["value"] == 3988.891 and first["timestamp"] == T20
    at120 = tp[tp["step"] == 120].iloc[0]
    assert at120["value"] == 5917.583 and at120["timestamp"] == T120
    loss = rows(result, rid, "loss")
    assert loss.iloc[0]["value"] == 7.087004 and loss.iloc[0]["line"] == first["line"]
    assert rows(result, rid, "top1")["value"].iloc[-1] == 1.0
    assert rows(result, rid, "topk")["unit"].unique().tolist() == [""]
    # first train line is right after the 8-row memory block
    log = LogText.read(DATA / "with_timestamps/1n8g/resnet50_b128_fp32_1.log")
    assert log.line_text(int(first["line"])).startswith("train: epoch 0, iter 20, loss: 7.087004")


def test_memory_block(result):
    mem = rows(result, "with_timestamps/1n8g/resnet50_b128_fp32_1", "memory_used", "memory")
    assert mem["device"].tolist() == list(range(8))
    assert mem["value"].tolist() == [11838 + 13 * i for i in range(8)]
    assert mem["unit"].unique().tolist() == ["MiB"]
    util = rows(result, "with_timestamps/1n8g/resnet50_b128_fp32_1", "utilization", "memory")
    assert util["value"].tolist() == [100 - i for i in range(8)]
    assert mem["line"].tolist() == util["line"].tolist()


def test_dlperf_rule_with_timestamps(result):
    rid = "with_timestamps/1n8g/resnet50_b128_fp32_1"
    est = parsers.get("oneflow_cnn").dlperf(run_data(result, rid))
    expected = 8 * 128 * (120 - 20) / (T120 - T20)
    assert est.throughput == pytest.approx(expected, rel=1e-12)
    assert round(est.throughput, 3) == 2957.823  # 102400 / 34.6200511 s
    assert est.iterations == 100 and est.problem_kind == ""
    assert "120 − 20" in est.method


def test_no_timestamps_uses_older_rule(result):
    rid = "no_timestamps/1n1g/resnet50_b128_fp32_1"
    tp = rows(result, rid, "throughput")
    assert tp["value"].tolist() == SEED001
    assert tp["timestamp"].isna().all()
    est = parsers.get("oneflow_cnn").dlperf(run_data(result, rid))
    assert est.throughput == pytest.approx(sum(SEED001[1:]) / 9)
    assert round(est.throughput, 3) == 385.096  # 3465.861 / 9
    assert est.problem_kind == "missing_timestamps"
    assert "older rule" in est.problem and "no timestamps" in est.problem
    assert "first" in est.method and est.iterations == 9


def test_validation_lines_nan_inf(result):
    rid = "validation_lines/1n8g/resnet50_b128_fp32_1"
    val = rows(result, rid, "throughput", "val")
    assert val["value"].tolist() == [2014.683, 2100.5]
    assert val["step"].tolist() == [100, 200] and val["epoch"].tolist() == [0, 1]
    assert math.isnan(val["timestamp"].iloc[0]) and val["timestamp"].iloc[1] > T20
    assert rows(result, rid, "top1", "val")["value"].tolist() == [0.07462, 0.1013]
    assert rows(result, rid, "loss", "val").empty  # validation prints no loss
    loss = rows(result, rid, "loss")
    assert not {40, 60} & set(loss["step"])  # `nan` and `inf` are problems, not observations
    assert rows(result, rid, "throughput")["epoch"].unique().tolist() == [1]
    probs = result.problems[result.problems["run_id"] == rid]
    assert probs[["line", "kind"]].values.tolist() == [[39, "non_finite_value"]]
    assert "train loss is not a finite number (inf/nan) on 2 lines: 39, 40" \
        in probs["reason"].iloc[0]


def test_truncated_bad_line_and_rule(result):
    rid = "truncated/1n8g/resnet50_b128_fp32_1"
    probs = result.problems[result.problems["run_id"] == rid]
    assert probs["kind"].tolist() == ["bad_line"]
    log = LogText.read(DATA / "truncated/1n8g/resnet50_b128_fp32_1.log")
    last = len(log.data.split(b"\n"))
    assert probs["line"].iloc[0] == last
    assert probs["text"].iloc[0] == "train: epoch 0, iter 120, loss: 1.050499, top_1: 1.00"
    assert rows(result, rid, "throughput")["step"].tolist() == [20, 40, 60, 80, 100]
    est = parsers.get("oneflow_cnn").dlperf(run_data(result, rid))
    assert est.problem_kind == "truncated" and math.isnan(est.throughput)
    assert "iterations 20 and 120" in est.problem and "iteration 100" in est.problem


def test_non_master_has_no_training_lines(result):
    rid = "non_master/2n8g/resnet50_b128_fp32_1"
    probs = result.problems[result.problems["run_id"] == rid]
    assert probs["kind"].tolist() == ["no_training_lines"]
    run = result.runs.set_index("run_id").loc[rid]
    assert run["num_nodes"] == 2 and run["n_observations"] == 0
    est = parsers.get("oneflow_cnn").dlperf(run_data(result, rid))
    assert est.problem_kind == "no_training_lines" and not est.ok


def test_name_conflict_log_wins(result):
    rid = "name_conflict/1n1g/bert_base_b128_fp32_1"
    run = result.runs.set_index("run_id").loc[rid]
    assert run["model"] == "resnet50" and run["family"] == "oneflow_cnn"
    probs = result.problems[result.problems["run_id"] == rid]
    assert probs["kind"].tolist() == ["metadata_conflict"]
    assert probs["line"].iloc[0] == 8  # `model = resnet50` in the dump
    assert "model=bert_base" in probs["reason"].iloc[0]
    assert "model=resnet50" in probs["reason"].iloc[0]


def test_crlf_ansi_gzip_garbled_line(result):
    rid = "crlf_ansi_gz/1n1g/resnet50_b128_amp_1"
    run = result.runs.set_index("run_id").loc[rid]
    assert run["precision"] == "amp"  # use_fp16 = True
    probs = result.problems[result.problems["run_id"] == rid]
    assert probs["kind"].tolist() == ["bad_line"]
    assert probs["text"].iloc[0] == "train: epoch 0, iter 150, loss: 1.0, top_1: ??, samples/s: 1"
    tp = rows(result, rid, "throughput")
    assert tp["step"].tolist() == list(range(20, 201, 20))  # ANSI line 80 read, 150 skipped
    assert tp["timestamp"].isna().tolist() == [s == 60 for s in range(20, 201, 20)]
    assert rows(result, rid, "memory_used", "memory")["value"].tolist() == [7000.0]
    est = parsers.get("oneflow_cnn").dlperf(run_data(result, rid))
    t = dict(zip(tp["step"], tp["timestamp"], strict=True))
    assert est.throughput == pytest.approx(128 * 100 / (t[120] - t[20]))


def test_partial_timestamps_fall_back(result):
    rid = "with_timestamps/1n8g/resnet50_b128_fp32_1"
    run = run_data(result, rid)
    run.train.loc[run.train["step"] == 120, "timestamp"] = np.nan
    est = parsers.get("oneflow_cnn").dlperf(run)
    values = rows(result, rid, "throughput")["value"].to_numpy()
    assert est.problem_kind == "missing_timestamps"
    assert "do not both carry a timestamp" in est.problem
    assert est.throughput == pytest.approx(values[1:].mean())


def test_missing_global_batch(result):
    run = run_data(result, "with_timestamps/1n8g/resnet50_b128_fp32_1")
    run.global_batch_size = float("nan")
    est = parsers.get("oneflow_cnn").dlperf(run)
    assert est.problem_kind == "missing_metadata" and not est.ok


def test_garbage_never_raises():
    parser = parsers.get("oneflow_cnn")
    for raw in (b"", b"train: epoch ", b"train: epoch x\n\x00\xff\n",
                b"utilization.gpu [%], memory.used [MiB]\n", b"validation: epoch 0, iter"):
        parsed = parser.parse(LogText.from_bytes(raw, "mem"))
        assert len(parsed.obs) == 0
    bad = parser.parse(LogText.from_bytes(b"train: epoch 1, iter 2\nx\n", "mem"))
    assert [(p.line, p.kind) for p in bad.problems] == [(1, "bad_line")]


def test_sniff_scores():
    cls = type(parsers.get("oneflow_cnn"))
    assert cls.sniff(b"Running resnet50: num_gpu_per_node = 8, num_nodes = 1.\n") == 90
    assert cls.sniff(b"train: epoch 0, iter 20, loss: 1, top_1: 0, top_k: 0, samples/s: 1\n") == 95
    assert cls.sniff(b"Running bert: num_gpu_per_node = 8, num_nodes = 1.\n") == 0
    assert cls.sniff(b"step: 19, total_loss: 1\n") == 0
