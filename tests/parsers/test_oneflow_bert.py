"""OneFlow BERT parser: fixtures in tests/data/oneflow_bert (SYNTHETIC, docs/formats.md §2/§8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _frames import rows

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_data

DATA = Path(__file__).resolve().parents[1] / "data" / "oneflow_bert"
T19, T119 = 1598056519.8844702, 1598056537.0029895


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


def test_family_and_meta(result):
    runs = result.runs.set_index("run_id")
    assert set(runs["family"]) == {"oneflow_bert"}
    run = runs.loc["with_timestamps/1n8g/bert_base_b96_fp32_1"]
    assert (run["model"], run["precision"], run["gpus_per_node"], run["global_batch_size"]) == \
        ("bert_base", "fp32", 8, 768)
    parsed = parsers.get("oneflow_bert").parse(
        LogText.read(DATA / "with_timestamps/1n8g/bert_base_b96_fp32_1.log"))
    assert parsed.meta["model"] == "bert_base"  # banner `bert` + 12 layers x 768
    assert parsed.meta["batch_size_per_device"] == 96
    assert parsed.meta_lines["batch_size_per_device"] == 7
    assert parsed.parameters["max_predictions_per_seq"] == "20"


def test_steps_stored_plus_one_with_values(result):
    rid = "with_timestamps/1n8g/bert_base_b96_fp32_1"
    tp = rows(result, rid, "throughput")
    assert tp["step"].tolist() == list(range(20, 201, 20))  # printed 19, 39, ...
    assert tp["value"].iloc[0] == 54.982 and tp["timestamp"].iloc[0] == T19
    at120 = tp[tp["step"] == 120].iloc[0]
    assert at120["value"] == 139.896 and at120["timestamp"] == T119
    loss = rows(result, rid, "loss")
    assert loss["value"].iloc[0] == 9.725
    assert 80 not in loss["step"].tolist()  # printed `nan`: a problem, not an observation
    probs = result.problems[result.problems["run_id"] == rid]
    assert probs[["line", "kind"]].values.tolist() == [[34, "non_finite_value"]]
    assert rows(result, rid, "mlm_loss")["value"].iloc[0] == 8.96
    assert rows(result, rid, "nsp_loss")["value"].iloc[0] == 0.766
    log = LogText.read(DATA / "with_timestamps/1n8g/bert_base_b96_fp32_1.log")
    assert log.line_text(int(tp["line"].iloc[0])).startswith("step: 19, total_loss: 9.725")
    mem = rows(result, rid, "memory_used", "memory")
    assert mem["value"].max() == 9549 and mem["device"].tolist() == list(range(8))


def test_dlperf_rule(result):
    est = parsers.get("oneflow_bert").dlperf(
        run_data(result, "with_timestamps/1n8g/bert_base_b96_fp32_1"))
    assert est.throughput == pytest.approx(768 * 100 / (T119 - T19), rel=1e-12)
    assert round(est.throughput, 2) == 4486.37  # 76800 / 17.1185193 s
    assert est.problem_kind == "" and "step 119" in est.method


def test_no_timestamps(result):
    rid = "no_timestamps/1n1g/bert_base_b96_fp32_1"
    tp = rows(result, rid, "throughput")
    assert tp["value"].iloc[0] == 52.257 and tp["timestamp"].isna().all()
    est = parsers.get("oneflow_bert").dlperf(run_data(result, rid))
    assert est.problem_kind == "missing_timestamps"
    assert est.throughput == pytest.approx(tp["value"].iloc[1:].mean())
    assert "older rule" in est.problem


def test_truncated_and_bad_lines(result):
    rid = "truncated/1n8g/bert_base_b96_fp32_1"
    probs = result.problems[result.problems["run_id"] == rid]
    assert probs["kind"].tolist() == ["bad_line", "bad_line"]
    assert probs["text"].tolist() == ["step: 40, total_loss: inf, mlm_loss: garbled",
                                      "step: 99, total_loss: 8.2"]
    assert probs["line"].tolist() == [24, 27]
    assert rows(result, rid, "loss")["step"].tolist() == [20, 40, 60, 80]
    est = parsers.get("oneflow_bert").dlperf(run_data(result, rid))
    assert est.problem_kind == "truncated" and not est.ok


def test_unrelated_step_text_is_not_a_bad_line():
    parsed = parsers.get("oneflow_bert").parse(LogText.from_bytes(
        b"step: warmup done\nstep: 0, total_loss: 1, mlm_loss: 1, nsp_loss: 0, throughput: 2\n",
        "mem"))
    assert parsed.problems == []
    assert len(parsed.obs) == 4


def test_sniff():
    cls = type(parsers.get("oneflow_bert"))
    assert cls.sniff(b"step: 19, total_loss: 11.078, mlm_loss: 10.407") == 95
    assert cls.sniff(b"Running bert: num_gpu_per_node = 8, num_nodes = 1.\n") == 90
    assert cls.sniff(b"train: epoch 0, iter 20") == 0
