"""TensorFlow DLLogger stdout: tuple steps, Horovod rank prefixes, BERT, and the DLPerf rules."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data" / "dll_tensorflow"
MPI = "horovod_mpi_prefixes/1n8g/r50_b128_fp32_1"
GLOO = "horovod_gloo_prefixes/1n8g/r50_b128_amp_1"
BERT = "tf_bert/1n1g/bert_base_b32_fp16_1"


def ts(*args) -> float:
    return dt.datetime(*args, tzinfo=dt.timezone.utc).timestamp()


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


@pytest.fixture(scope="module")
def per_run(result):
    return run_throughput(result, "dlperf").set_index("run_id")


def test_mpi_prefixes_keep_every_rank(result):
    assert result.problems.empty
    o = result.observations[result.observations["run_id"] == MPI]
    tp = o[(o["metric"] == "throughput") & (o["phase"] == "train")]
    assert tp.groupby("rank")["value"].size().to_dict() == {0: 150, 1: 150}
    first = tp[tp["rank"] == 0].sort_values("line").iloc[0]
    # line 1 is INFO:tensorflow noise; rank 0 and rank 1 print each step
    assert (first["line"], first["epoch"], first["step"], first["value"]) == (2, 0, 20, 1000.0)
    assert first["timestamp"] == ts(2020, 6, 20, 10, 0, 0, 623456)
    assert first["phase"] == "train" and first["unit"] == "samples/s"
    assert set(o["metric"]) == {"throughput", "cross_entropy", "l2_loss", "loss", "lr"}
    lr = o[o["metric"] == "lr"]["value"]
    assert (lr == 1e-05).all()
    summ = o[o["phase"] == "summary"]
    assert summ[["metric", "value", "rank", "step"]].values.tolist() == [["throughput", 362.4, 0, pd_na()]]


def pd_na():
    import pandas as pd

    return pd.NA


def test_noise_lines_are_not_observations(result):
    o = result.observations[result.observations["run_id"] == MPI]
    text = (DATA / f"{MPI}.log").read_text().splitlines()
    noise = [i + 1 for i, ln in enumerate(text) if "INFO:tensorflow" in ln or "Iter #" in ln]
    assert len(noise) == 7 and not set(noise) & set(o["line"])


def test_rule_a_and_rule_b(per_run):
    mpi = per_run.loc[MPI]
    assert mpi["throughput"] == 1049.5  # mean of 1000.0 .. 1099.0 (global steps 20-119)
    # rule (b): 1024 x 99 / (99 x 0.5 s) = 2048
    assert "rule (b), global batch x 99 / (t100 - t1): 2048.00" in mpi["method"]
    assert "steps 20-119" in mpi["method"]
    gloo = per_run.loc[GLOO]
    assert gloo["throughput"] == round(2879.142978189404 + 49.5, 2)


def test_gloo_prefix_with_asctime(result):
    o = result.observations[result.observations["run_id"] == GLOO]
    tp = o[o["metric"] == "throughput"].sort_values("line")
    assert set(tp["rank"]) == {0}
    assert tp["value"].iloc[0] == 2879.142978189404  # full precision kept
    assert tp["step"].tolist()[:3] == [20, 21, 22]


def test_bert_rule_and_metrics(result, per_run):
    assert per_run.loc[BERT, "throughput"] == 128.0  # 32 x 100 / (100 x 0.25 s)
    assert "Iteration 120" in per_run.loc[BERT, "method"]
    o = result.observations[result.observations["run_id"] == BERT]
    train = o[o["phase"] == "train"]
    assert {"throughput", "mlm_loss", "nsp_loss", "loss", "lr", "loss_scaler"} <= set(train["metric"])
    tp = train[train["metric"] == "throughput"].set_index("step")
    assert tp.loc[20, "line"] == 21 and tp.loc[20, "unit"] == "samples/s" and tp["epoch"].isna().all()
    assert tp.loc[20, "timestamp"] == ts(2021, 3, 23, 11, 0, 10)
    mlm = train[(train["metric"] == "mlm_loss") & (train["step"] == 100)]["value"]
    assert mlm.tolist() == [pytest.approx(7.1134)]
    run = result.runs.set_index("run_id").loc[BERT]
    assert run["batch_size_per_device"] == 32


def test_formats_section7_lines():
    text = (b"DLL 2020-06-20 10:00:00.123456 - (0, 20) imgs_per_sec : 361.98376  cross_entropy : 6.9  "
            b"l2_loss : 0.38  total_loss : 7.3  learning_rate : 1e-05 \n"
            b"DLL 2021-03-23 11:48:38.824370 - (0, 120) total_ips : 2879.142978189404 \n"
            b"DLL 2020-06-20 10:05:00.000001 - () train_throughput : 362.4 \n"
            b"[1,0]<stderr>:INFO:tensorflow:Saving checkpoints\n"
            b"[1,0]<stdout>:Iter #0: 592.3 img/sec per GPU\n")
    parsed = parsers.get("dll_tensorflow").parse(LogText.from_bytes(text, "x.log"))
    assert parsed.problems == []
    got = sorted((str(b["phase"]), str(b["metric"]), int(b["line"][0]), float(b["value"][0]), int(b["step"][0]))
                 for b in parsed.obs.blocks)
    assert got == [("summary", "throughput", 3, 362.4, -1), ("train", "cross_entropy", 1, 6.9, 20),
                   ("train", "l2_loss", 1, 0.38, 20), ("train", "loss", 1, 7.3, 20),
                   ("train", "lr", 1, 1e-05, 20), ("train", "throughput", 1, 361.98376, 20),
                   ("train", "throughput", 2, 2879.142978189404, 120)]


def test_truncated_tf_run():
    lines = "".join(f"DLL 2020-06-20 10:00:{s % 60:02d} - (0, {s}) imgs_per_sec : 100.0 \n" for s in range(20, 70))
    log = LogText.from_bytes(lines.encode(), "1n1g/r50_b128_fp32_1.log")
    parser = parsers.get("dll_tensorflow")
    parsed = parser.parse(log)
    import pandas as pd

    from analysis.estimate import RunData
    train = pd.concat([pd.DataFrame({"step": b["step"], "timestamp": b["timestamp"], "metric": "throughput",
                                     "value": b["value"], "line": b["line"], "rank": pd.NA})
                       for b in parsed.obs.blocks]).sort_values("line")
    assert train["step"].tolist() == list(range(20, 70))
    est = parser.dlperf(RunData("r", "dll_tensorflow", 128.0, train, {"model": "resnet50"}))
    assert est.problem_kind == "truncated" and "only 50" in est.problem and np.isnan(est.throughput)
