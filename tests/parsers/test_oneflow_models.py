"""OneFlow models (ResNet-50, Oneflow-Inc/models) parser: fixtures in tests/data/oneflow_models
(CONSTRUCTED from the program's print formats, docs/formats.md §12)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest
from _frames import rows

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data" / "oneflow_models"
GRAPH = "graph_dated/1n2g/resnet50_b192_amp_1"
EAGER = "eager_timestamp/1n1g/resnet50_b96_fp32_1"
CUT = "truncated/1n2g/resnet50_b192_amp_1"
GZ = "crlf_gz/1n2g/resnet50_b192_amp_1"
#: rank 0's printed samples/s at global steps 100..600 (make_fixtures.GRAPH_TRAIN)
RANK0 = [987.65, 1200.00, 1199.50, 1150.20, 1200.40, 1199.80]
ISSUE_LINE = (b"[1] [train], epoch: 0/50, iter: 100/3336, loss: 1.73143, lr: 0.004604, "
              b"top1: 0.00167, throughput: 161.66\n")


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])


def figure(result, method, run_id):
    table = run_throughput(result, method).set_index("run_id")
    return table.loc[run_id]


def test_family_and_run_fields_from_the_dump(result):
    runs = result.runs.set_index("run_id")
    assert set(runs["family"]) == {"oneflow_models"} and set(runs["framework"]) == {"OneFlow"}
    graph = runs.loc[GRAPH]
    assert (graph["num_nodes"], graph["gpus_per_node"], graph["batch_size_per_device"],
            graph["global_batch_size"], graph["precision"]) == (1, 2, 192, 384, "amp")
    assert runs.loc[EAGER, "precision"] == "fp32" and runs.loc[EAGER, "global_batch_size"] == 96
    parsed = parsers.get("oneflow_models").parse(LogText.read(DATA / (GRAPH + ".log")))
    log = LogText.read(DATA / (GRAPH + ".log"))
    assert log.line_text(parsed.meta_lines["gpus_per_node"]).startswith("  num_devices_per_node .")
    assert log.line_text(parsed.meta_lines["precision"]).startswith("  use_fp16 .")
    assert parsed.parameters["graph"] == "True" and parsed.parameters["print_interval"] == "100"
    assert result.problems[result.problems["run_id"].isin([GRAPH, EAGER, GZ])].empty


def test_every_rank_printed_one_global_figure_per_print(result):
    per_device = rows(result, GRAPH, "throughput_per_device")
    assert sorted(set(per_device["rank"])) == [0, 1] and len(per_device) == 12
    assert per_device[per_device["rank"] == 1]["value"].tolist()[:2] == [987.30, 1199.65]
    glob = rows(result, GRAPH, "throughput")
    assert set(glob["rank"]) == {0} and glob["unit"].unique().tolist() == ["samples/s"]
    # the sum of both ranks' own samples/s (rank 1 prints 0.35 less), on rank 0's row
    assert glob["value"].tolist() == pytest.approx([2 * v - 0.35 for v in RANK0])
    # `reported`: the median of those sums; not the value printed at step 100, whose
    # interval (1-100) holds the warm-up
    assert figure(result, "reported", GRAPH)["throughput"] == pytest.approx(
        float(np.median([2 * v - 0.35 for v in RANK0[1:]])))


def test_steps_count_iterations_across_epochs(result):
    tr = rows(result, GRAPH, "loss")
    rank0 = tr[tr["rank"] == 0]
    assert rank0["step"].tolist() == [100, 200, 300, 400, 500, 600]
    assert rank0["epoch"].tolist() == [0, 0, 0, 1, 1, 1]
    log = LogText.read(DATA / (GRAPH + ".log"))
    assert log.line_text(int(rank0["line"].iloc[3])).startswith(
        "[rank:0] [train], epoch: 1/2, iter: 100/300, loss: 6.40127")


def test_window_from_the_date_suffix(result):
    ts = rows(result, GRAPH, "throughput")["timestamp"].tolist()
    assert ts[1] - ts[0] == pytest.approx(16.0, abs=1e-6)  # 10:41:02.123 -> 10:41:18.123
    est = figure(result, "window", GRAPH)
    assert est["throughput"] == pytest.approx(384 * 100 / 16.0) and est["iterations"] == 100


def test_eager_lr_and_perf_counter_timestamps(result):
    lr = rows(result, EAGER, "lr")
    assert lr["value"].iloc[0] == 0.004604 and lr["step"].tolist() == [100, 200, 300, 400, 500]
    tput = rows(result, EAGER, "throughput")
    assert tput["value"].tolist() == [161.66, 320.11, 320.02, 319.87, 320.40]  # world size 1
    assert tput["timestamp"].iloc[0] == 3900.633892
    assert figure(result, "window", EAGER)["throughput"] == pytest.approx(320.11, abs=1e-3)
    # the value at step 100 (start-up, 161.66) measured iterations 1-100: not after warm-up
    assert figure(result, "reported", EAGER)["throughput"] == pytest.approx((320.11 + 320.02) / 2)


def test_eval_lines_are_validation_without_the_placeholder_loss(result):
    val = rows(result, GRAPH, "top1", phase="val")
    assert val[val["rank"] == 0]["value"].tolist() == [0.00244, 0.00488]
    assert rows(result, GRAPH, "loss", phase="val").empty
    assert rows(result, GRAPH, "throughput", phase="val")["value"].tolist() == [7135.24] * 2


def test_inline_nvidia_smi_block(result):
    mem = rows(result, GRAPH, "memory_used", phase="memory")
    assert mem["value"].tolist() == [30746, 30616] and mem["device"].tolist() == [0, 1]


def test_line_cut_mid_way_is_one_bad_line(result):
    probs = result.problems[result.problems["run_id"] == CUT]
    log = LogText.read(DATA / (CUT + ".log"))
    last = log.data.count(b"\n") + 1
    assert probs[["line", "kind"]].values.tolist() == [[last, "bad_line"]]
    assert probs["text"].iloc[0] == ("[rank:0] [train], epoch: 1/2, iter: 200/300, "
                                     "loss: 6.28904, ")
    assert rows(result, CUT, "throughput")["step"].tolist() == [100, 200, 300, 400]
    assert figure(result, "window", CUT)["throughput"] == pytest.approx(2400.0)


def test_gzip_and_crlf_read_like_the_plain_file(result):
    a, b = (rows(result, rid, "throughput_per_device") for rid in (GRAPH, GZ))
    cols = ["line", "step", "epoch", "rank", "timestamp", "value"]
    assert a[cols].reset_index(drop=True).equals(b[cols].reset_index(drop=True))
    assert gzip.decompress((DATA / (GZ + ".log.gz")).read_bytes()).count(b"\r\n") > 50


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    dst = tmp_path / "1n2g" / "resnet50_b192_amp_1.log"
    dst.parent.mkdir(parents=True)
    shutil.copy(DATA / (GRAPH + ".log"), dst)
    text = dst.read_text()
    assert text.count(old) == 1
    dst.write_text(text.replace(old, new))
    return dst


def test_non_finite_values_are_problems_not_data(tmp_path):
    path = _edited(tmp_path, "loss: 6.71140, top1: 0.00260, throughput: 1200.00",
                   "loss: nan, top1: 0.00260, throughput: inf")
    result = parse_paths([tmp_path])
    found = result.problems[result.problems["kind"] == "non_finite_value"]
    line = 1 + path.read_text().split("\n").index(
        next(t for t in path.read_text().split("\n") if "loss: nan" in t))
    assert set(found["line"]) == {line} and len(found) == 3  # loss, per-device and global
    assert np.isfinite(result.observations["value"]).all()
    assert 200 not in rows(result, "1n2g/resnet50_b192_amp_1", "throughput")["step"].tolist()


def test_the_issue_example_line():
    """Issue 10 item 6 quotes the rank as `[1]`; the sources print `[rank:1]`: both read."""
    parser = parsers.get("oneflow_models")
    assert parser.sniff(ISSUE_LINE) == 95
    parsed = parser.parse(LogText.from_bytes(ISSUE_LINE, "mem"))
    assert parsed.problems == []
    blocks = {b["metric"]: b for b in parsed.obs.blocks}
    assert blocks["throughput_per_device"]["value"].tolist() == [161.66]
    assert blocks["throughput_per_device"]["rank"].tolist() == [1]
    assert blocks["lr"]["value"].tolist() == [0.004604]
    assert blocks["loss"]["step"].tolist() == [100]
    assert "throughput" not in blocks  # no dump, no world size: no run figure claimed


def test_another_nodes_log_has_no_run_figure():
    """Rank 0 alone dumps the arguments: node 1's ranks print lines but no world size."""
    lines = b"".join(
        b"[rank:%d] [train], epoch: 0/50, iter: %d/834, loss: 6.9, top1: 0.001, "
        b"throughput: 1200.00 | 2021-11-23 10:41:%02d.%03d\n" % (r, it, it // 10, r)
        for it in (100, 200) for r in range(8, 16))
    parsed = parsers.get("oneflow_models").parse(LogText.from_bytes(lines, "node1"))
    metrics = {b["metric"] for b in parsed.obs.blocks}
    assert "throughput" not in metrics and "throughput_per_device" in metrics
    assert parsed.meta == {}


def test_sniff_the_dump_alone_and_steal_nothing():
    head = (DATA / (GRAPH + ".log")).read_bytes().split(b"***** Model Init *****")[0]
    head += b"Rum cmd python3 -m oneflow.distributed.launch --nproc_per_node 2 train.py\n"
    assert parsers.get("oneflow_models").sniff(head) == 80
    assert parsers.detect(head).name == "oneflow_models"  # over oneflow_gpt's dump guess (70)
    others = [p for p in (DATA.parent).rglob("*")
              if p.is_file() and p.suffix not in (".py", ".md") and DATA not in p.parents]
    assert len(others) > 30
    for p in others:
        assert parsers.get("oneflow_models").sniff(LogText.read(p).data[:1 << 16]) == 0, p


def test_garbage_never_raises():
    parser = parsers.get("oneflow_models")
    for raw in (b"", b"[", b"[rank:", b"[rank:0] [train]", b"[0] [eval], epoch: x",
                b"[rank:0] [train], epoch: 0/1, iter: 1/1, loss: 1, top1: 1, throughput: ",
                b"[rank:0] [train], epoch: 0/1, iter: 1/1, loss: 1, top1: 1, throughput: 1 | "
                b"2021-13-45 99:99:99.000",
                b"[rank:99999999999999999999] [train], epoch: 0/1, iter: 1/1, loss: 1, top1: 1, "
                b"throughput: 1",
                b"  num_nodes ...... 99999999999999999999\n",
                b"------------------------ arguments ------------------------\n  a .... \n"):
        parsed = parser.parse(LogText.from_bytes(raw, "mem"))
        assert all(p.kind == "bad_line" for p in parsed.problems)


def test_a_clock_going_back_refuses_the_window(tmp_path):
    path = _edited(tmp_path, "throughput: 1200.00 | 2021-11-23 10:41:18.123",
                   "throughput: 1200.00 | 2021-11-23 10:40:18.123")
    result = parse_paths([tmp_path])
    line = 1 + path.read_text().split("\n").index(
        next(t for t in path.read_text().split("\n") if "10:40:18.123" in t))
    back = result.problems[result.problems["kind"] == "timestamps_backwards"]
    assert back["line"].tolist() == [line]  # rank 0 only: rank 1's clock is in order
    est = run_throughput(result, "window").iloc[0]
    assert np.isnan(est["throughput"]) and est["problem_kind"] == "timestamps_backwards"


def test_log_appended_twice(tmp_path):
    dst = tmp_path / "1n2g" / "resnet50_b192_amp_1.log"
    dst.parent.mkdir(parents=True)
    text = (DATA / (GRAPH + ".log")).read_bytes()
    dst.write_bytes(text + text)
    result = parse_paths([tmp_path])
    steps = result.problems[result.problems["kind"] == "steps_backwards"]
    assert len(steps) == 1 and steps["line"].iloc[0] > text.count(b"\n")
    est = run_throughput(result, "reported").iloc[0]
    assert np.isnan(est["throughput"]) and est["problem_kind"] == "steps_backwards"


def _no_dump_log(tmp_path: Path, ranks, its=range(20, 201, 20),
                 name: str = "1n2g/resnet50_b192_amp_1.log") -> Path:
    """The lines as the issue quotes them: `[k]` prefix, no argument dump, no timestamp."""
    dst = tmp_path / name
    dst.parent.mkdir(parents=True)
    dst.write_text("".join(
        f"[{r}] [train], epoch: 0/1, iter: {it}/3000, loss: 6.9, top1: 0.001, "
        f"throughput: {1900 + r + it / 100:.2f}\n" for it in its for r in ranks))
    return dst


def test_rank_lines_without_the_dump_sum_over_the_ranks(tmp_path):
    """Regression: without the dump such logs gave no figure ("truncated: no throughput
    printed ..."). Every rank 0..k-1 prints its own samples/s: the run's is their sum."""
    _no_dump_log(tmp_path, (0, 1))
    result = parse_paths([tmp_path])
    glob = rows(result, "1n2g/resnet50_b192_amp_1", "throughput")
    assert set(glob["rank"]) == {0} and glob["step"].tolist() == list(range(20, 201, 20))
    assert glob["value"].tolist() == pytest.approx([3801 + it / 50 for it in range(20, 201, 20)])
    est = run_throughput(result, "reported").iloc[0]  # prints at 40..200 follow the warm-up
    assert est["throughput"] == pytest.approx(3801 + 120 / 50)
    win = run_throughput(result, "window").iloc[0]
    assert win["problem_kind"] == "missing_timestamps"


def test_one_rank_without_the_dump_takes_the_world_size_from_the_path(tmp_path):
    """Only rank 0 printed (--metric-local False) and no dump: the DLPerf path's 1n2g gives
    the world size; a path that states nothing leaves it unknown, and reported says so."""
    _no_dump_log(tmp_path / "a", (0,))
    est = run_throughput(parse_paths([tmp_path / "a"]), "reported").iloc[0]
    printed = [1900 + it / 100 for it in range(20, 201, 20)]
    assert est["throughput"] == pytest.approx(2 * np.median(printed[1:]), rel=0.01)
    _no_dump_log(tmp_path / "b", (0,), name="logs/train.log")
    est = run_throughput(parse_paths([tmp_path / "b"]), "reported").iloc[0]
    assert np.isnan(est["throughput"]) and est["problem_kind"] == "missing_metadata"
    assert "world size is unknown" in est["problem"] and "truncated" not in est["problem"]
