"""OneFlow BERT parser: fixtures in tests/data/oneflow_bert (SYNTHETIC, docs/formats.md §2/§8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _frames import rows

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_data, run_throughput

DATA = Path(__file__).resolve().parents[1] / "data" / "oneflow_bert"
T19, T119 = 1598056519.8844702, 1598056537.0029895
STAMPED = "with_timestamps/1n1g/bert_base_b24_fp32_1"


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


def test_family_and_meta(result):
    runs = result.runs.set_index("run_id")
    assert set(runs["family"]) == {"oneflow_bert"}
    run = runs.loc[STAMPED]
    assert (run["model"], run["precision"], run["gpus_per_node"], run["global_batch_size"]) == \
        ("bert_base", "fp32", 1, 24)
    parsed = parsers.get("oneflow_bert").parse(LogText.read(DATA / f"{STAMPED}.log"))
    assert parsed.meta["model"] == "bert_base"  # banner `bert` + 12 layers x 768
    assert parsed.meta["batch_size_per_device"] == 24
    assert parsed.meta_lines["batch_size_per_device"] == 7
    assert parsed.parameters["max_predictions_per_seq"] == "20"


def test_steps_stored_plus_one_with_values(result):
    rid = STAMPED
    tp = rows(result, rid, "throughput")
    assert tp["step"].tolist() == list(range(20, 201, 20))  # printed 19, 39, ...
    assert tp["value"].iloc[0] == 54.982 and tp["timestamp"].iloc[0] == T19
    at120 = tp[tp["step"] == 120].iloc[0]
    assert at120["value"] == 139.896 and at120["timestamp"] == T119
    loss = rows(result, rid, "loss")
    assert loss["value"].iloc[0] == 9.725
    assert rows(result, rid, "mlm_loss")["value"].iloc[0] == 8.96
    assert rows(result, rid, "nsp_loss")["value"].iloc[0] == 0.766
    log = LogText.read(DATA / f"{rid}.log")
    assert log.line_text(int(tp["line"].iloc[0])).startswith("step: 19, total_loss: 9.725")
    mem = rows(result, rid, "memory_used", "memory")
    assert mem["value"].max() == 9500 and mem["device"].tolist() == [0]


def test_nan_loss_is_a_problem_not_an_observation(tmp_path):
    text = (DATA / f"{STAMPED}.log").read_text()
    line = text[:text.index("step: 79,")].count("\n") + 1
    copy = tmp_path / "1n1g" / "bert_base_b24_fp32_1.log"
    copy.parent.mkdir()
    copy.write_text(text.replace("step: 79, total_loss: 8.683", "step: 79, total_loss: nan"))
    result = parse_paths([tmp_path])
    assert 80 not in rows(result, "1n1g/bert_base_b24_fp32_1", "loss")["step"].tolist()
    assert result.problems[["line", "kind"]].values.tolist() == [[line, "non_finite_value"]]


@pytest.mark.parametrize("rid", [STAMPED, "truncated/1n8g/bert_base_b96_fp32_1"])
def test_printed_rates_are_the_stated_batch_over_the_stamps(result, rid):
    """As the writer prints them: every device's samples of the 20 steps since the last line
    over the seconds between the two stamps."""
    run = result.runs.set_index("run_id").loc[rid]
    tp = rows(result, rid, "throughput")
    seconds = tp["timestamp"].diff().iloc[1:]
    assert (tp["value"].iloc[1:] * seconds).values == pytest.approx(
        [run["global_batch_size"] * 20] * len(seconds), rel=1e-5)


def test_dlperf_rule(result):
    est = parsers.get("oneflow_bert").dlperf(run_data(result, STAMPED))
    assert est.throughput == pytest.approx(24 * 100 / (T119 - T19), rel=1e-12)
    assert round(est.throughput, 2) == 140.20  # 2400 / 17.1185193 s
    assert est.problem_kind == "" and "step 119" in est.method
    # the docs/formats.md §2 lines printed 139.896 for this window: the stated batch is what ran
    row = run_throughput(result).set_index("run_id").loc[STAMPED]
    assert row["throughput"] == est.throughput and row["problem_kind"] == ""


def test_no_timestamps(result):
    rid = "no_timestamps/1n1g/bert_base_b24_fp32_1"
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
