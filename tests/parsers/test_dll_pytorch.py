"""PyTorch DLLogger stdout and JSON backend: values, steps, timestamps, lines, rules, problems."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import parsers
from analysis.collect import parse_paths
from analysis.estimate import RunData
from analysis.logtext import LogText
from analysis.parsers import _dllogger
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data" / "dll_pytorch"
UTC = dt.timezone.utc


def ts(*args) -> float:
    return dt.datetime(*args, tzinfo=UTC).timestamp()


def obs_of(result, run_id):
    o = result.observations
    return o[o["run_id"] == run_id]


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


@pytest.fixture(scope="module")
def per_run(result):
    return run_throughput(result, "dlperf").set_index("run_id")


def test_seed003_2020_lines(result):
    o = obs_of(result, "seed003_2020/2n8g/r50_b128_fp32_5")
    tput = o[o["metric"] == "throughput"].sort_values("line")
    assert len(tput) == 150 and set(o["phase"]) == {"train"}
    first = tput.iloc[0]
    assert (first["line"], first["step"], first["epoch"], first["value"]) == (10, 1, 0, 267.44)
    assert first["unit"] == "samples/s"
    assert first["timestamp"] == ts(2020, 9, 15, 14, 29, 13, 473765)
    loss = o[(o["metric"] == "loss") & (o["step"] == 12)].iloc[0]
    assert (loss["line"], loss["value"]) == (21, 6.67351)
    assert tput.iloc[-1]["step"] == 150 and tput.iloc[-1]["line"] == 159


def test_parameter_line_gives_run_fields(result):
    run = result.runs.set_index("run_id").loc["seed003_2020/2n8g/r50_b128_fp32_5"]
    assert (run["model"], run["precision"], run["batch_size_per_device"]) == ("resnet50", "fp32", 128)
    assert (run["num_nodes"], run["gpus_per_node"], run["global_batch_size"]) == (2, 8, 2048)
    params = run["parameters"]
    assert params["pretrained_weights"] == "" and params["fp16"] == "False"
    assert params["world_size"] == "16" and params["data"] == "/data/image"
    parsed = parsers.get("dll_pytorch").parse(LogText.read(DATA / "seed003_2020/2n8g/r50_b128_fp32_5.log"))
    assert parsed.meta_lines == {"model": 3, "batch_size_per_device": 3, "precision": 3,
                                 "num_nodes": 3, "gpus_per_node": 3, "train_start": 3}


def test_dlperf_rule_by_hand(per_run):
    # iterations 13..150 are 0.4 s apart: t(Iteration 125) - t(Iteration 25) = 40 s
    assert per_run.loc["seed003_2020/2n8g/r50_b128_fp32_5", "throughput"] == 2048 * 100 / 40
    # current version: 0.32 s per iteration, 1n1g bsz 256 → 256 x 100 / 32 s
    assert per_run.loc["current_version/1n1g/r50_b256_amp_1", "throughput"] == 800.0
    assert per_run.loc["validation_lines/1n1g/r50_b256_amp_1", "throughput"] == 800.0
    assert per_run.loc["no_fraction/1n1g/r50_b256_amp_1", "throughput"] == 256.0  # 1 s per iteration
    assert per_run.loc["json_backend/1n1g/r50_b256_amp_1", "throughput"] == 800.0


def test_gzip_and_crlf_ansi_read_like_the_plain_log(result):
    cols = ["line", "step", "metric", "value", "timestamp"]
    plain = obs_of(result, "seed003_2020/2n8g/r50_b128_fp32_5")[cols].reset_index(drop=True)
    for rid in ("gzip/2n8g/r50_b128_fp32_5", "crlf_ansi/2n8g/r50_b128_fp32_5"):
        pd.testing.assert_frame_equal(obs_of(result, rid)[cols].reset_index(drop=True), plain)


def test_current_version_phases_units_and_lines(result):
    o = obs_of(result, "current_version/1n1g/r50_b256_amp_1")
    train = o[o["phase"] == "train"]
    assert set(train["metric"]) == {"loss", "compute_throughput", "throughput", "lr"}
    assert set(o.loc[o["metric"].isin(["throughput", "compute_throughput"]), "unit"]) == {"samples/s"}
    assert set(o.loc[o["metric"] == "loss", "unit"]) == {""}  # printed unit 'None'
    it = train[train["metric"] == "throughput"].set_index("step")
    assert it.loc[1, "line"] == 4 and it.loc[75, "line"] == 78 and it.loc[76, "line"] == 80
    assert it.loc[1, "timestamp"] == ts(2021, 3, 23, 11, 45, 12)
    # 12 s + 25 x 0.32 s = 20 s: printed without a fraction
    assert it.loc[26, "timestamp"] == ts(2021, 3, 23, 11, 45, 20)
    assert it.loc[27, "timestamp"] == ts(2021, 3, 23, 11, 45, 20, 320000)
    lr = train[(train["metric"] == "lr") & (train["step"] == 150)]["value"]
    assert lr.tolist() == [pytest.approx(0.0384)]
    val = o[o["phase"] == "val"]
    # validation iterations, then the epoch and Summary lines' val.top1 (kept out of their phase)
    assert val[val["metric"] == "top1"]["value"].tolist() == [71.0, 72.0, 71.5, 71.5]
    assert set(val[val["metric"] == "top1"]["unit"]) == {"%"}
    assert val[val["metric"] == "compute_latency"]["unit"].iloc[0] == "ms"
    assert set(val["step"].dropna()) == {150}  # epoch and Summary val figures carry no step
    epoch = o[o["phase"] == "epoch"]
    assert epoch[epoch["metric"] == "throughput"]["value"].tolist() == [800.0]
    assert epoch["step"].isna().all() and (epoch["epoch"] == 0).all()
    summ = o[o["phase"] == "summary"]
    assert sorted(summ["metric"]) == ["loss", "throughput"]  # val.top1 went to the val phase
    mem = o[o["phase"] == "memory"]
    assert mem[["metric", "value", "unit"]].values.tolist() == [["memory_max_allocated", 12345.0, "MiB"]]
    run = result.runs.set_index("run_id").loc["current_version/1n1g/r50_b256_amp_1"]
    assert (run["precision"], run["batch_size_per_device"]) == ("amp", 256)
    assert run["parameters"]["model_arch"] == "resnet50"  # second PARAMETER line


def test_json_backend(result):
    o = obs_of(result, "json_backend/1n1g/r50_b256_amp_1")
    train = o[o["phase"] == "train"]
    loss = train[train["metric"] == "loss"].set_index("step")
    assert 3 not in loss.index and loss.loc[4, "value"] == pytest.approx(6.996)  # bare NaN: no row
    tp = train[train["metric"] == "throughput"].set_index("step")
    assert tp.loc[1, "timestamp"] == pytest.approx(1616499912.0)
    assert tp.loc[2, "timestamp"] == pytest.approx(1616499912.32)  # datetime with offset
    assert tp.loc[1, "line"] == 4 and tp.loc[1, "unit"] == "samples/s"
    assert o[o["phase"] == "summary"].set_index("metric")["value"].to_dict() == {"throughput": 800.0}
    # the summary's val.top1 is a validation figure, not the summary's
    assert o[(o["phase"] == "val") & (o["metric"] == "top1")]["value"].tolist()[-1:] == [71.5]
    probs = result.problems[result.problems["run_id"] == "json_backend/1n1g/r50_b256_amp_1"] \
        .sort_values("line")
    assert probs[["line", "kind"]].values.tolist() == [[6, "non_finite_value"], [155, "bad_line"]]
    assert result.runs.set_index("run_id").loc["json_backend/1n1g/r50_b256_amp_1", "family"] == "dll_json"


def test_truncated_and_non_master(per_run, result):
    tr = per_run.loc["truncated/2n8g/r50_b128_fp32_1"]
    assert tr["problem_kind"] == "truncated" and np.isnan(tr["throughput"])
    assert "only 55 training lines after Iteration 5 (of 60)" in tr["problem"]
    nm = result.runs.set_index("run_id").loc["non_master/2n8g/r50_b128_fp32_2"]
    assert nm["family"] == "dll_pytorch" and nm["problems"] == "no_training_lines"
    assert per_run.loc["non_master/2n8g/r50_b128_fp32_2", "problem_kind"] == "no_training_lines"


def test_dlperf_directly_on_run_data():
    parser = parsers.get("dll_pytorch")
    parsed = parser.parse(LogText.read(DATA / "no_fraction/1n1g/r50_b256_amp_1.log"))
    b = [x for x in parsed.obs.blocks if x["metric"] == "throughput" and x["phase"] == "train"][0]
    train = pd.DataFrame({"step": b["step"], "timestamp": b["timestamp"], "metric": "throughput",
                          "value": b["value"], "line": b["line"], "rank": pd.NA})
    est = parser.dlperf(RunData("r", "dll_pytorch", 256.0, train, {}))
    assert est.throughput == 256.0 and est.iterations == 100 and est.latency == 1.0
    assert "Iterations 25 and 125" in est.method
    short = parser.dlperf(RunData("r", "dll_pytorch", 256.0, train.iloc[:124], {}))
    assert short.problem_kind == "truncated"
    nobatch = parser.dlperf(RunData("r", "dll_pytorch", float("nan"), train, {}))
    assert nobatch.problem_kind == "missing_metadata"


FORMATS_LINES = [
    b"DLL 2020-09-15 14:29:13.473765 - Epoch: 0 Iteration: 1  train.loss : 7.09304  train.total_ips : 267.44 img/s",
    b"DLL 2020-09-15 14:29:14.427490 - Epoch: 0 Iteration: 2  train.loss : 6.93504  train.total_ips : 4294.91 img/s",
    b"DLL 2020-09-15 14:29:13 - Epoch: 0 Iteration: 1  train.loss : 6.93504 None train.compute_ips : 1234.57 images/s train.total_ips : 1200.10 images/s train.lr : 0.000256 ",
]


def test_formats_example_lines_and_bad_lines():
    text = b"\n".join([FORMATS_LINES[0], b"DLL this is not a DLL line", FORMATS_LINES[1],
                      b"DLL 2020-09-15 14:29:15 - Epoch: 0 Iteration: 3  train.loss : abc  train.total_ips : 5 img/s",
                      b"DLL 2020-13-45 14:29:15 - Epoch: 0 Iteration: 4  train.loss : 1  train.total_ips : 5 img/s",
                      FORMATS_LINES[2], b"DLL 2020-09-15 14:29:15 - Weird step  x : 1"]) + b"\n"
    parsed = parsers.get("dll_pytorch").parse(LogText.from_bytes(text, "t.log"))
    assert [(p.line, p.kind) for p in parsed.problems] == [
        (2, "bad_line"), (4, "bad_line"), (7, "bad_line"), (5, "bad_line")]
    assert parsed.problems[0].text == "DLL this is not a DLL line"
    rows = {(b["metric"], int(ln)): (float(v), float(t)) for b in parsed.obs.blocks
            for ln, v, t in zip(b["line"], b["value"], b["timestamp"], strict=True)}
    assert rows[("throughput", 1)] == (267.44, ts(2020, 9, 15, 14, 29, 13, 473765))
    assert rows[("throughput", 3)] == (4294.91, ts(2020, 9, 15, 14, 29, 14, 427490))
    assert rows[("throughput", 4)] == (5.0, ts(2020, 9, 15, 14, 29, 15))  # loss 'abc' dropped
    assert ("loss", 4) not in rows and ("throughput", 5) not in rows
    assert rows[("compute_throughput", 6)] == (1234.57, ts(2020, 9, 15, 14, 29, 13))
    assert rows[("lr", 6)][0] == 0.000256


def _lines(n: int, rng) -> bytes:
    """Training lines with assorted number spellings (plain, long, negative, sci, nan, None)."""
    spell = ["{:.5f}", "{:.2f}", "{!r}", "{:.3e}", "-{:.4f}", "nan", "None", "{:.0f}", "{:.12f}", "+{:.1f}"]
    out = []
    for i in range(1, n + 1):
        vals = [spell[int(rng.integers(len(spell)))].format(float(rng.uniform(0, 20000))) for _ in range(2)]
        frac = "" if i % 7 == 0 else f".{int(rng.integers(0, 10**6)):06d}"
        out.append(f"DLL 2021-01-0{1 + i % 9} 1{i % 10}:0{i % 10}:{i % 60:02d}{frac} - Epoch: {i // 50} "
                   f"Iteration: {i}  train.loss : {vals[0]}  train.total_ips : {vals[1]} img/s".encode())
    return b"\n".join(out) + b"\n"


def test_fast_path_agrees_with_general_path(monkeypatch):
    data = _lines(3000, np.random.default_rng(7))
    fast = _dllogger.read(LogText.from_bytes(data, "f.log"))
    monkeypatch.setattr(_dllogger, "_FAST_MIN_LINES", 10**9)
    slow = _dllogger.read(LogText.from_bytes(data, "f.log"))
    assert not fast.problems and not slow.problems

    def frame(r):
        return pd.concat([pd.DataFrame({"name": g.name, "line": g.line, "ts": g.timestamp, "epoch": g.epoch,
                                        "step": g.step, "value": g.value}) for g in r.groups]
                         ).sort_values(["name", "line"]).reset_index(drop=True)

    f, s = frame(fast), frame(slow)
    pd.testing.assert_frame_equal(f, s, check_exact=True)
    # a printed None is "not measured": no row (nan spellings stay NaN rows)
    printed = [ln.split(b" : ")[1].split()[0] for ln in data.splitlines()]
    expect = [float(x) for x in printed if x != b"None"]
    assert len(f) == 6000 - sum(ln.count(b": None ") + ln.endswith(b": None") for ln in data.splitlines())
    np.testing.assert_array_equal(f[f["name"] == "train.loss"]["value"].to_numpy(), np.array(expect))


def test_sniffing_separates_the_dll_families():
    pt = FORMATS_LINES[0] + b"\n"
    tf = b"DLL 2020-06-20 10:00:00.123456 - (0, 20) imgs_per_sec : 361.98376  cross_entropy : 6.9 \n"
    js = b'DLLL {"timestamp": "1570716921.842053", "type": "LOG", "step": [0, 5], "data": {}}\n'
    assert parsers.detect(pt).name == "dll_pytorch"
    assert parsers.detect(tf).name == "dll_tensorflow"
    assert parsers.detect(js).name == "dll_json"


def test_rule_skips_iterations_up_to_5_of_every_epoch(tmp_path):
    """Epochs of 60 iterations: lines with Iteration <= 5 of epochs 1 and 2 are skipped by the
    rule, not a gap in its window. Counted lines: epoch 0 Iterations 6-60 (55), epoch 1
    6-60 (55), so line 20 is epoch 0 Iteration 25 and line 120 epoch 2 Iteration 15; one
    second an iteration. The intervals across the two restarts (which hold the skipped
    iterations 1-5 that DLPerf's line count missed: 256 x 100 / 110 s, 9 % low) are left
    out: 98 iterations in 98 s, the run's 256 img/s."""
    start = dt.datetime(2020, 9, 15, 14, 29, 13, 473765)
    out, k = [], 0
    for epoch in range(3):
        for it in range(1, 61):
            k += 1
            stamp = (start + dt.timedelta(seconds=k)).isoformat(" ")
            out.append(f"DLL {stamp} - Epoch: {epoch} Iteration: {it}  train.loss : 6.45000  "
                       "train.total_ips : 256.00 img/s")
    (tmp_path / "1n1g").mkdir()
    (tmp_path / "1n1g" / "r50_b256_amp_1.log").write_text("\n".join(out) + "\n")
    row = run_throughput(parse_paths([tmp_path]), "dlperf").iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == 256.0
    assert row["iterations"] == 98 and "restarts 2 time(s)" in row["method"]


@pytest.mark.parametrize("record, reason", [
    ('{"type": "LOG", "step": [0, 5], "data": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}",
     "not JSON (maximum recursion depth"),
    ('{"type": "LOG", "step": [0, 99999999999999999999999], "data": {"train.loss": 1.0}}',
     "unrecognised step [0, 99999999999999999999999]"),
    ('{"type": "LOG", "step": [0, 5], "data": {"train.loss": ' + "9" * 400 + "}}",
     "of train.loss is beyond a float"),
])
def test_one_absurd_json_record_is_a_bad_line_not_a_lost_run(tmp_path, record, reason):
    src = DATA / "json_backend/1n1g/r50_b256_amp_1.json"
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / src.name).write_bytes(src.read_bytes() + f"DLLL {record}\n".encode())
    r = parse_paths([tmp_path], cache=False)
    bad = r.problems[r.problems["kind"] == "bad_line"]
    assert bad["reason"].str.contains(reason, regex=False).any(), r.problems
    assert "parser_error" not in set(r.problems["kind"])
    assert run_throughput(r)["throughput"].tolist() == [800.0]  # the run's figure stays


@pytest.mark.parametrize("old, new", [
    (b"Iteration: 29 ", b"Iteration: 99999999999999999999999 "),
    (b"Epoch: 0 Iteration: 29 ", b"Epoch: 99999999999999999999999 Iteration: 29 "),
])
def test_a_step_number_beyond_int64_is_a_bad_line_not_a_lost_run(tmp_path, old, new):
    d = tmp_path / "1n1g"
    d.mkdir()
    lines = ["DLL 2026-11-21 10:00:00.000001 - PARAMETER arch : resnet50  batch_size : 4  "
             "precision : amp  world_size : 1 "]
    lines += [f"DLL 2026-11-21 10:00:{i // 10:02d}.{(i % 10) * 100000:06d} - Epoch: 0 "
              f"Iteration: {i}  train.loss : 6.9  train.total_ips : 160.0 img/s"
              for i in range(1, 151)]
    (d / "resnet50_b4_amp_1.log").write_bytes("\n".join(lines).encode().replace(old, new) + b"\n")
    r = parse_paths([tmp_path], cache=False)
    assert "parser_error" not in set(r.problems["kind"]), r.problems
    [bad] = r.problems[r.problems["kind"] == "bad_line"].itertuples()
    assert bad.line == 30 and "a step number beyond int64" in bad.reason
