"""OneFlow GPT parser: fixtures in tests/data/oneflow_gpt (SYNTHETIC, docs/formats.md §3/§8).

Each fixture reproduces one row of the seed 002 report (latency, memory, throughput).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _frames import rows

from analysis import parsers
from analysis.collect import parse_paths
from analysis.estimate import RunData
from analysis.logtext import LogText
from analysis.stats import run_data

DATA = Path(__file__).resolve().parents[1] / "data" / "oneflow_gpt"
DP1 = "table/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16"
MPPP = "table/pretrain_gpt_4n8d_dp1_mp8_pp4_mbz16_gbz512_s2048_l24_h2304_nh24"
KV = "key_value/pretrain_gpt_4n8d_dp8_mp1_pp4_mbz2_gbz512_s2048_l16_h1536_nh16"
OLD = "batches_header/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l12_h768_nh12"
CONFLICT = "arg_conflict/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16"


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


# (run, seed 002 latency ms, memory MiB, throughput samples/s)
SEED002 = [(DP1, 406.16, 11066, 4.92), (MPPP, 19196.65, 15670, 26.67),
           (KV, 4006.318, 8712, 127.8), (OLD, 525.214, 7416, 15.23)]


@pytest.mark.parametrize(("rid", "latency_ms", "memory", "throughput"), SEED002)
def test_reproduces_seed_002_row(result, rid, latency_ms, memory, throughput):
    est = parsers.get("oneflow_gpt").dlperf(run_data(result, rid))
    assert est.problem_kind == ""
    assert est.latency * 1000 == pytest.approx(latency_ms, abs=0.005)  # 5 printed decimals
    assert round(est.throughput, 2) == pytest.approx(throughput, abs=0.005)
    gbs = result.runs.set_index("run_id").loc[rid, "global_batch_size"]
    assert est.throughput == pytest.approx(gbs / est.latency, rel=1e-12)
    assert "median" in est.method and "after the first" in est.method
    assert rows(result, rid, "memory_used", "memory")["value"].max() == memory


def test_latency_is_median_of_intervals_after_first(result):
    lat = rows(result, DP1, "latency")
    assert lat["unit"].unique().tolist() == ["s"]
    assert lat["value"].iloc[0] == 14.26962  # start-up interval, excluded
    est = parsers.get("oneflow_gpt").dlperf(run_data(result, DP1))
    assert est.latency == sorted(lat["value"].iloc[1:])[9] == 0.40616
    assert est.throughput == pytest.approx(2 / 0.40616)
    assert est.iterations == 190


def test_table_columns_and_repeated_header(result):
    tp = rows(result, MPPP, "throughput")
    assert tp["step"].tolist() == list(range(10, 201, 10))
    assert tp["value"].iloc[:2].tolist() == [35.88042, 39.02016]  # the docs/formats.md rows
    assert tp["unit"].unique().tolist() == ["samples/s"]
    samples = rows(result, MPPP, "samples")
    assert samples["value"].iloc[:2].tolist() == [5120, 10240]
    assert rows(result, MPPP, "micro_batches")["value"].iloc[:2].tolist() == [320, 640]
    loss = rows(result, MPPP, "loss")
    assert loss["value"].iloc[:2].tolist() == [11.23708, 10.43741]
    assert 30 not in loss["step"].tolist()  # printed `nan`: a problem, not an observation
    log = LogText.read(DATA / (MPPP + ".log"))
    row10, row20 = tp["line"].iloc[:2].tolist()
    assert log.line_text(row10).startswith("| 10       | 320")
    # between them: 8 memory rows + their header, then the table header again (2 lines)
    assert row20 - row10 == 1 + 9 + 2
    mem = rows(result, MPPP, "memory_used", "memory")
    assert mem["device"].tolist() == list(range(8)) and mem["line"].min() == row10 + 2
    probs = result.problems[result.problems["run_id"] == MPPP]
    assert probs[["line", "kind"]].values.tolist() == [[38, "non_finite_value"]]
    assert log.line_text(38).startswith("| 30 ") and "train loss" in probs["reason"].iloc[0]


def test_key_value_records(result):
    lat = rows(result, KV, "latency")
    assert lat["step"].tolist() == list(range(10, 201, 10))
    first = {m: rows(result, KV, m)["value"].iloc[0]
             for m in ("micro_batches", "samples", "throughput", "latency", "loss")}
    assert first == {"micro_batches": 320, "samples": 5120, "throughput": 35.88042,
                     "latency": 14.26962, "loss": 11.23708}
    assert result.problems[result.problems["run_id"] == KV].empty


def test_batches_header_and_cut_row(result):
    assert rows(result, OLD, "latency")["step"].tolist() == list(range(10, 201, 10))
    probs = result.problems[result.problems["run_id"] == OLD].sort_values("line", ascending=False)
    assert probs["kind"].tolist() == ["bad_line", "non_finite_value"]  # the cut row; a nan loss
    assert probs["text"].iloc[0] == "| 210      | 210             | 4"
    log = LogText.read(DATA / (OLD + ".log"))
    assert probs["line"].iloc[0] == log.data.count(b"\n") + 1


def test_argument_dump_meta(result):
    parsed = parsers.get("oneflow_gpt").parse(LogText.read(DATA / (MPPP + ".log")))
    assert parsed.meta == {
        "precision": "amp", "global_batch_size": 512, "hidden_size": 2304,
        "batch_size_per_device": 16, "num_heads": 24, "gpus_per_node": 8, "num_layers": 24,
        "num_nodes": 4, "vocab_size": 51200, "pipeline_parallel": 4, "seq_length": 2048,
        "tensor_parallel": 8}
    assert parsed.parameters["num_accumulation_steps"] == "32"
    assert parsed.parameters["vocab_size"] == "50257"  # padded_vocab_size wins in meta
    run = result.runs.set_index("run_id").loc[MPPP]
    assert (run["case"], run["group"]) == ("MP_PP_1x8x4_512_2304x24", "MP_PP")
    table = result.problems[result.problems["run_id"].str.startswith("table/")]
    assert set(table["kind"]) == {"non_finite_value"}  # the nan losses, nothing else


def test_argument_conflict_reported(result):
    probs = result.problems[result.problems["run_id"] == CONFLICT].sort_values("kind")
    assert probs["kind"].tolist() == ["metadata_conflict", "non_finite_value"]
    assert "num_layers=16" in probs["reason"].iloc[0]
    assert "num_layers=24" in probs["reason"].iloc[0]
    log = LogText.read(DATA / (CONFLICT + ".log"))
    assert log.line_text(int(probs["line"].iloc[0])).lstrip().startswith("num_layers ....")
    assert result.runs.set_index("run_id").loc[CONFLICT, "num_layers"] == 24


def test_one_interval_is_truncated():
    text = (b"| step | micro_batches | samples | throughput | latency | loss |\n"
            b"| 10 | 1 | 2 | 0.2 | 10.0 | 11.0 |\n")
    parser = parsers.get("oneflow_gpt")
    parsed = parser.parse(LogText.from_bytes(text, "mem"))
    assert parsed.problems == [] and len(parsed.obs) == 5
    train = parse_like(parsed)
    est = parser.dlperf(RunData("r", "oneflow_gpt", 2.0, train, {}))
    assert est.problem_kind == "truncated" and not est.ok


def parse_like(parsed):
    parts = [pd.DataFrame({"step": b["step"], "timestamp": b["timestamp"], "metric": b["metric"],
                           "value": b["value"], "line": b["line"], "rank": b["rank"]})
             for b in parsed.obs.blocks]
    return pd.concat(parts).sort_values("line").reset_index(drop=True)


def test_garbage_never_raises():
    parser = parsers.get("oneflow_gpt")
    for raw in (b"", b"|", b"| 10 |", b"step=", b"step=1,", b"batches=x,y=1,\n|||\n",
                b"---- arguments ----\n  a .... \n"):
        parser.parse(LogText.from_bytes(raw, "mem"))
    parsed = parser.parse(LogText.from_bytes(b"step=10,samples=20,latency=1.5,\nstep=20,sam", "m"))
    assert [(p.line, p.kind) for p in parsed.problems] == [(2, "bad_line")]
    assert len(parsed.obs) == 2


def test_sniff():
    cls = type(parsers.get("oneflow_gpt"))
    assert cls.sniff(b"| step     | micro_batches   | samples |") == 95
    assert cls.sniff(b"step=10,micro_batches=320,samples=5120,") == 95
    assert cls.sniff(b" iteration       10/ 1000000 | consumed samples:") == 0


OUR_GPT_HEAD = (b"------------------------ arguments ------------------------\n"
                b"  bf16 ............................................ True\n"
                b"  flops_formula ................................... "
                b"72*B*s*l*h^2*(1+s/(6h)+V/(12*l*h))\n"
                b"  framework ....................................... pytorch\n"
                b"  global_batch_size ............................... 2\n"
                b"  torch_version ................................... 2.11.0+cu130\n"
                b"-------------------- end of arguments ---------------------\n"
                b"Training...\n"
                b"| step | micro_batches | samples | throughput | latency | loss |\n"
                b"| 1 | 1 | 2 | 0.5 | 4.0 | 11.0 |\n| 2 | 2 | 4 | 5.0 | 0.4 | 10.9 |\n"
                b"| 3 | 3 | 6 | 5.0 | 0.4 | 10.8 |\n")


def test_dump_framework_sets_the_run_framework(tmp_path, result):
    """`framework ... pytorch` (workloads.gpt) makes the run PyTorch; the line is recorded.
    A OneFlow log without the entry stays OneFlow."""
    parsed = parsers.get("oneflow_gpt").parse(LogText.from_bytes(OUR_GPT_HEAD, "mem"))
    assert parsed.meta["framework"] == "PyTorch" and parsed.meta_lines["framework"] == 4
    name = "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16_1.log"
    (tmp_path / name).write_bytes(OUR_GPT_HEAD)
    ours = parse_paths([tmp_path])
    assert ours.runs["framework"].tolist() == ["PyTorch"]
    assert ours.problems.empty
    assert set(result.runs["framework"]) == {"OneFlow"}  # the fixtures state no framework


@pytest.mark.parametrize(("stated", "framework"), [
    (b"pytorch", "PyTorch"), (b"PyTorch", "PyTorch"), (b"torch", "PyTorch"),
    (b"oneflow", "OneFlow"), (b"Megatron-LM", "Megatron-LM"), (b"jax", "jax"), (b"", None)])
def test_dump_framework_names(stated, framework):
    text = OUR_GPT_HEAD.replace(b"pytorch", stated)
    parsed = parsers.get("oneflow_gpt").parse(LogText.from_bytes(text, "mem"))
    assert parsed.meta.get("framework") == framework


def _dump(**args) -> bytes:
    lines = [f"  {k} {'.' * (48 - len(k))} {v}" for k, v in args.items()]
    return ("------------------------ arguments ------------------------\n"
            + "\n".join(lines) + "\n-------------------- end of arguments ---------------------\n"
            "Training...\n| step | micro_batches | samples | throughput | latency | loss |\n"
            "| 10 | 10 | 160 | 1.0 | 16.0 | 11.0 |\n| 20 | 20 | 320 | 25.0 | 0.64 | 10.9 |\n"
            "| 30 | 30 | 480 | 25.0 | 0.64 | 10.8 |\n| 40 | 40 | 640 | 25.0 | 0.64 | 10.7 |\n"
            "| 50 | 50 | 800 | 25.0 | 0.64 | 10.6 |\n").encode()


MP8 = dict(micro_batch_size=16, num_accumulation_steps=1, num_gpus_per_node=8, num_nodes=1,
           pipeline_model_parallel_size=1, tensor_model_parallel_size=8)


@pytest.mark.parametrize("stated", [{"global_batch_size": "None"}, {}])
def test_global_batch_from_micro_batch_dp_and_accumulation(tmp_path, stated):
    """A dump without a global batch: micro × DP × accumulation (docs/formats.md §3), not
    micro × devices: 1n8g with TP 8 is 16 samples an iteration (the table's `samples` say
    so), never 128."""
    (tmp_path / "1n8g").mkdir()
    (tmp_path / "1n8g" / "gpt_b16_amp_1.log").write_bytes(_dump(**MP8, **stated))
    result = parse_paths([tmp_path])
    run = result.runs.iloc[0]
    assert run["global_batch_size"] == 16
    est = parsers.get("oneflow_gpt").dlperf(run_data(result, run["run_id"]))
    assert est.throughput == pytest.approx(16 / 0.64)


@pytest.mark.parametrize(("args", "gbs"), [
    (dict(MP8, tensor_model_parallel_size=2, pipeline_model_parallel_size=2,
          num_accumulation_steps=4), 16 * 2 * 4),
    (dict(MP8, data_parallel_size=2, num_accumulation_steps=3), 16 * 2 * 3)])
def test_global_batch_parts_in_the_dump(args, gbs):
    # the dump alone: the fixture's table grows 16 samples a step, which would overrule it
    dump = _dump(**args).split(b"Training...")[0]
    parsed = parsers.get("oneflow_gpt").parse(LogText.from_bytes(dump, "mem"))
    assert parsed.meta["global_batch_size"] == gbs
