"""LiBai parser: fixtures in tests/data/libai (CONSTRUCTED from LiBai's print formats,
docs/formats.md §13)."""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from _frames import rows

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data" / "libai"
STDOUT = "gpt2_stdout/1n8g/gpt2_b4_amp_1"
LOG_TXT_RUN = "v1_log_txt/1n8g/log"
CUT = "truncated/1n8g/gpt2_b4_amp_1"
GZ = "crlf_gz/1n8g/gpt2_b4_amp_1"
LOG_TXT = DATA / "v1_log_txt" / "1n8g" / "log.txt"
STEPS = list(range(20, 221, 20))


def _fixture_module():
    spec = importlib.util.spec_from_file_location("libai_fixtures", DATA / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIX = _fixture_module()


@pytest.fixture(scope="module")
def result():
    return parse_paths([DATA])  # the walk finds log.txt too


def figure(result, method, run_id):
    return run_throughput(result, method).set_index("run_id").loc[run_id]


def true_mean(first_step: int, last_step: int) -> float:
    """Mean seconds of the iterations completed after `first_step` up to `last_step`."""
    its = range(first_step, last_step)
    return sum(FIX.iteration_seconds(i) for i in its) / len(its)


def test_run_fields_from_config_command_line_and_world_size(result):
    run = result.runs.set_index("run_id").loc[STDOUT]
    assert (run["family"], run["framework"]) == ("libai", "OneFlow")
    assert (run["batch_size_per_device"], run["global_batch_size"], run["precision"]) == (4, 32, "amp")
    assert (run["data_parallel"], run["tensor_parallel"], run["pipeline_parallel"]) == (4, 2, 1)
    assert (run["num_layers"], run["hidden_size"], run["num_heads"], run["seq_length"]) == (
        24, 1024, 16, 1024)
    assert run["case"] == "2D_4x2x1_32_1024x24"
    parsed = parsers.get("libai").parse(LogText.read(DATA / (STDOUT + ".log")))
    log = LogText.read(DATA / (STDOUT + ".log"))
    assert "Command line arguments: Namespace(" in log.line_text(parsed.meta_lines["global_batch_size"])
    assert log.line_text(parsed.meta_lines["num_layers"]) == "model.cfg.num_layers = 24"
    assert "World size: 8" in log.line_text(parsed.meta_lines["data_parallel"])
    assert parsed.parameters["world_size"] == "8"
    assert parsed.parameters["train.dist.pipeline_num_layers"] == "model.cfg.num_layers"
    assert "train.dist.pipeline_num_layers" not in parsed.meta
    assert result.problems[result.problems["run_id"].isin([STDOUT, GZ])].empty


def test_metric_lines(result):
    tput = rows(result, STDOUT, "throughput")
    assert tput["step"].tolist() == STEPS  # printed 0-based: 19, 39, … 219
    assert tput["value"].iloc[0] == 60.36 and tput["unit"].unique().tolist() == ["samples/s"]
    assert rows(result, STDOUT, "samples")["value"].tolist() == [32 * s for s in STEPS]
    assert rows(result, STDOUT, "time_avg")["value"].iloc[0] == 0.5301
    assert rows(result, STDOUT, "data_time")["value"].iloc[0] == 0.0016
    assert set(rows(result, STDOUT, "lr")["value"]) == {1.5e-4}
    assert rows(result, STDOUT, "loss")["value"].iloc[0] == 10.58
    log = LogText.read(DATA / (STDOUT + ".log"))
    line = log.line_text(int(tput["line"].iloc[0]))
    assert line.startswith("[11/23 10:40:29 lb.utils.events]:  eta: 0:01:46  iteration: 19/220")
    # no year printed: read in the nominal common year 1901 (before 1970: no date), 10 s apart
    ts = rows(result, STDOUT, "throughput")["timestamp"].to_numpy(float)
    assert ts[0] == datetime(1901, 11, 23, 10, 40, 29, tzinfo=timezone.utc).timestamp()
    assert np.diff(ts).tolist() == [10.0] * 10


def test_interval_latency_from_the_running_means(result):
    """Each interval's mean s/iteration, from the printed running means (4 decimals): within
    the rounding of the two means it comes from."""
    lat = rows(result, STDOUT, "latency")
    assert lat["step"].tolist() == STEPS and lat["unit"].unique().tolist() == ["s"]
    assert lat["value"].iloc[0] == 0.5301  # the first print: the running mean itself
    for prev, step, value in zip(STEPS[:-1], STEPS[1:], lat["value"].iloc[1:], strict=True):
        bound = 5e-5 * ((step - 2) + (prev - 2)) / (step - prev)
        assert abs(value - true_mean(prev, step)) <= bound, (step, value)
    summary = rows(result, STDOUT, "latency", phase="summary")
    assert summary["value"].tolist() == [0.5025]


def test_window_and_reported(result):
    est = figure(result, "window", STDOUT)
    exact = 32 / true_mean(20, 120)
    assert exact == pytest.approx(64.0)
    assert abs(est["throughput"] - exact) <= exact * 5e-5 * (118 + 18) / 100 / 0.5
    assert est["iterations"] == 100
    lat = rows(result, STDOUT, "latency")  # per interval, from the printed running means
    reported = figure(result, "reported", STDOUT)
    assert reported["throughput"] == float(np.median(32 / lat[lat["step"] > 20]["value"]))
    assert reported["iterations"] == 10 and "from running means" in reported["method"]


def test_early_events_format_in_log_txt(result):
    """`consumed samples:` and `time: <s/it>(<samples/s>)`, the log.txt prefix."""
    run = result.runs.set_index("run_id").loc[LOG_TXT_RUN]
    assert (run["global_batch_size"], run["tensor_parallel"], run["data_parallel"]) == (32, 2, 4)
    tput = rows(result, LOG_TXT_RUN, "throughput")
    assert tput["value"].iloc[0] == 60.36 and tput["step"].tolist() == STEPS
    assert rows(result, LOG_TXT_RUN, "time_avg")["value"].iloc[0] == 0.5301
    assert figure(result, "window", LOG_TXT_RUN)["throughput"] == figure(result, "window", STDOUT)[
        "throughput"]


def test_global_batch_from_consumed_samples():
    text = (b"[11/23 10:40:01 libai]: Rank of current process: 0. World size: 2\n"
            b"[11/23 10:40:29 lb.utils.events]:  eta: 0:01:46  iteration: 19/220  "
            b"consumed_samples: 1280  total_loss: 10.58  time: 0.5301 s/iter  data_time: "
            b"0.0016 s/iter total_throughput: 120.72 samples/s lr: N/A  \n")
    parsed = parsers.get("libai").parse(LogText.from_bytes(text, "mem"))
    assert parsed.meta["global_batch_size"] == 64 and parsed.meta_lines["global_batch_size"] == 2
    assert parsed.meta["data_parallel"] == 2  # world 2, tensor and pipeline 1 (LiBai's defaults)
    assert "lr" not in {b["metric"] for b in parsed.obs.blocks}  # `N/A`: no scheduler


def test_parallel_sizes_as_libai_sets_them():
    """distributed.py caps tensor parallel at the world size and overwrites data parallel."""
    text = (b"[11/23 10:40:01 libai]: Rank of current process: 0. World size: 8\n"
            b"[11/23 10:40:01 libai]: Command line arguments: Namespace(config_file='c.py', "
            b"eval_only=False, fast_dev_run=False, opts=['train.dist.tensor_parallel_size=16', "
            b"'train.dist.data_parallel_size=3'], resume=False)\n")
    parsed = parsers.get("libai").parse(LogText.from_bytes(text, "mem"))
    assert (parsed.meta["tensor_parallel"], parsed.meta["pipeline_parallel"],
            parsed.meta["data_parallel"]) == (8, 1, 1)
    assert parsed.meta_lines["tensor_parallel"] == 1  # the world size decided it
    assert parsed.parameters["train.dist.data_parallel_size"] == "3"


def test_a_resumed_run_gives_no_interval_latencies():
    """After --resume the first timed iteration is not iteration 2: the count is unknown."""
    text = (FIX.training_log().replace("resume=False", "resume=True")).encode()
    parsed = parsers.get("libai").parse(LogText.from_bytes(text, "mem"))
    train = {b["metric"] for b in parsed.obs.blocks if b["phase"] == "train"}
    assert "latency" not in train and "throughput" in train


def test_truncated_log_and_nan_loss(result):
    probs = result.problems[result.problems["run_id"] == CUT].sort_values("line")
    log = LogText.read(DATA / (CUT + ".log"))
    last = log.data.count(b"\n") + 1
    assert probs[["line", "kind"]].values.tolist() == [[67, "non_finite_value"], [last, "bad_line"]]
    assert "iteration: 99/220" in log.line_text(67)
    assert probs["text"].iloc[1].endswith("total_loss: 8.362  ")
    assert rows(result, CUT, "throughput")["step"].tolist() == STEPS[:9]
    assert 100 not in rows(result, CUT, "loss")["step"].tolist()
    assert figure(result, "window", CUT)["throughput"] == figure(result, "window", STDOUT)[
        "throughput"]


def test_gzip_crlf_and_ansi_read_like_the_plain_file(result):
    raw = gzip.decompress((DATA / (GZ + ".log.gz")).read_bytes())
    assert raw.count(b"\r\n") > 50 and b"\x1b[32m" in raw
    cols = ["line", "step", "value"]
    for metric in ("throughput", "latency", "loss"):
        a, b = (rows(result, rid, metric)[cols].reset_index(drop=True) for rid in (STDOUT, GZ))
        assert a.equals(b), metric


def test_non_finite_throughput(tmp_path):
    dst = tmp_path / "1n8g" / "gpt2_b4_amp_1.log"
    dst.parent.mkdir()
    shutil.copy(DATA / (STDOUT + ".log"), dst)
    text = dst.read_text()
    assert text.count("total_throughput: 62.22 samples/s") == 1
    dst.write_text(text.replace("total_throughput: 62.22 samples/s", "total_throughput: inf samples/s"))
    result = parse_paths([tmp_path])
    found = result.problems[result.problems["kind"] == "non_finite_value"]
    assert len(found) == 1 and "throughput is not a finite number (inf)" in found["reason"].iloc[0]
    assert 40 not in rows(result, "1n8g/gpt2_b4_amp_1", "throughput")["step"].tolist()


def test_other_ranks_log_has_no_training_lines():
    """Only the main process prints metrics; `log.txt.rank1` holds the set-up lines."""
    text = (b"[11/23 10:40:01] libai INFO: Rank of current process: 1. World size: 8\n"
            b"[11/23 10:40:01] libai INFO: Command line arguments: Namespace(config_file='c.py', "
            b"eval_only=False, fast_dev_run=False, opts=[], resume=False)\n")
    parser = parsers.get("libai")
    assert parser.sniff(text) == 90 and parsers.detect(text).name == "libai"
    parsed = parser.parse(LogText.from_bytes(text, "rank1"))
    assert len(parsed.obs) == 0 and parsed.parameters["world_size"] == "8"


def test_sniff_steals_nothing():
    others = [p for p in DATA.parent.rglob("*")
              if p.is_file() and p.suffix not in (".py", ".md") and DATA not in p.parents]
    assert len(others) > 30
    for p in others:
        assert parsers.get("libai").sniff(LogText.read(p).data[:1 << 16]) == 0, p


def test_garbage_never_raises():
    parser = parsers.get("libai")
    for raw in (b"", b"[11/23 10:40:01 lb.utils.events]: iteration: 1/2",
                b"[11/23 10:40:01 lb.utils.events]:  iteration: 1/2  consumed_samples: x  lr: y",
                b"[11/23 10:40:01 libai]: Command line arguments: Namespace(opts=['train.x=')\n",
                b"[11/23 10:40:01 libai]: Contents of args.config_file=:\ntrain.a = \n",
                b"[11/23 10:40:01 lb.utils.events]:  iteration: 99999999999999999999/1  "
                b"consumed_samples: 1  time: 1 s/iter lr: 1",
                b"[11/23 10:40:01 libai]: Rank of current process: 0. World size: 99999999999\n"
                b"[11/23 10:40:01 libai]: Contents of args.config_file=c:\n"
                b"model.cfg.num_layers = 99999999999999999999\ntrain.dist.tensor_parallel_size = 0\n"):
        parser.parse(LogText.from_bytes(raw, "mem"))


def test_log_appended_twice(tmp_path):
    dst = tmp_path / "1n8g" / "gpt2_b4_amp_1.log"
    dst.parent.mkdir()
    text = (DATA / (STDOUT + ".log")).read_bytes()
    dst.write_bytes(text + text)
    result = parse_paths([tmp_path])
    kinds = result.problems["kind"].tolist()
    # no negative latency across the seam; the stamps go back there too
    assert kinds == ["timestamps_backwards", "steps_backwards"]
    lat = rows(result, "1n8g/gpt2_b4_amp_1", "latency")
    assert lat["value"].tolist()[11] == 0.5301  # the second copy starts a new run of prints
    est = run_throughput(result, "reported").iloc[0]
    assert np.isnan(est["throughput"]) and est["problem_kind"] == "steps_backwards"
    # the window (iterations 20 to 120) is timed by the first copy's stamps, as in any
    # timestamped family: the seam is outside it
    est = run_throughput(result, "window").iloc[0]
    assert est["throughput"] == 64.0


def test_eager_accumulation_counts_the_samples_of_one_iteration():
    """graph.enabled=False: an iteration is a micro-step holding global batch / accumulation."""
    text = (b"[11/23 10:40:01 libai]: Rank of current process: 0. World size: 8\n"
            b"[11/23 10:40:01 libai]: Command line arguments: Namespace(config_file='c.py', "
            b"eval_only=False, fast_dev_run=False, opts=['train.train_micro_batch_size=4', "
            b"'train.global_batch_size=32', 'train.dist.tensor_parallel_size=2', "
            b"'graph.enabled=False'], resume=False)\n"
            b"[11/23 10:40:29 lb.utils.events]:  eta: 0:01:46  iteration: 19/440  "
            b"consumed_samples: 640  total_loss: 10.58  time: 0.2650 s/iter  data_time: "
            b"0.0016 s/iter total_throughput: 60.38 samples/s lr: 1.50e-04  \n")
    parsed = parsers.get("libai").parse(LogText.from_bytes(text, "mem"))
    assert parsed.meta["data_parallel"] == 4  # 4 x 4 x accumulation 2 = 32
    assert parsed.meta["global_batch_size"] == 16 and parsed.meta_lines["global_batch_size"] == 2
    assert parsed.parameters["samples_per_optimizer_step"] == "32"
    graph = text.replace(b"'graph.enabled=False'", b"'graph.enabled=True'")
    assert parsers.get("libai").parse(LogText.from_bytes(graph, "m")).meta["global_batch_size"] == 32


def test_a_folder_walk_finds_libai_log_txt(tmp_path):
    """LiBai writes `<output_dir>/log.txt`: walking the campaign folder finds it."""
    case = tmp_path / "1n8g"
    case.mkdir()
    shutil.copy(LOG_TXT, case / "log.txt")
    (case / "notes.txt").write_text("not a log\n")
    result = parse_paths([tmp_path])
    assert list(result.runs["family"]) == ["libai"]
    assert result.problems.empty or "notes.txt" not in " ".join(result.problems["source"])


def test_reported_is_not_a_median_of_running_means_after_a_slow_start(tmp_path):
    """Iterations 0-59 take 1.5 s, the rest 0.5 s (64 samples/s). Every printed throughput
    is a running mean that averages in the slow start, so their median after a warm-up of
    60 was 35.8 samples/s; the intervals after the warm-up all ran at 64."""
    log = tmp_path / "1n8g" / "gpt2_b4_amp_1.log"
    log.parent.mkdir()
    log.write_text(FIX.training_log(seconds_of=lambda i: 1.5 if i < 60 else 0.5))
    result = parse_paths([tmp_path])
    printed = rows(result, "1n8g/gpt2_b4_amp_1", "throughput")
    biased = float(np.median(printed[printed["step"] > 80]["value"]))
    assert biased < 0.85 * 64
    est = run_throughput(result, "reported", warmup=60).iloc[0]
    assert est["throughput"] == pytest.approx(64.0, rel=2e-3)
    assert est["iterations"] == 8  # the intervals 60-80, …, 200-220
    assert run_throughput(result, "window", warmup=60, measure=100).iloc[0][
        "throughput"] == pytest.approx(64.0, rel=2e-3)


#: The two metric lines LiBai's README prints for its Baichuan SFT run (Oneflow-Inc/libai at
#: 9dcbe3b2, projects/Baichuan/README.md lines 32-33): an excerpt that begins mid-run.
BAICHUAN_EXCERPT = (
    b"[09/19 14:39:40 lb.utils.events]:  eta: 22:07:15  iteration: 87/18660  consumed_samples: "
    b"704  total_loss: 10.36  time: 4.2893 s/iter  data_time: 0.0105 s/iter total_throughput: "
    b"1.87 samples/s lr: 6.99e-07\n"
    b"[09/19 14:39:44 lb.utils.events]:  eta: 22:07:07  iteration: 88/18660  consumed_samples: "
    b"712  total_loss: nan  time: 4.2889 s/iter  data_time: 0.0104 s/iter total_throughput: "
    b"1.87 samples/s lr: 7.07e-07\n"
    b"NaN or Inf found in input tensor.\n")


def test_a_window_before_an_excerpts_first_line_says_the_log_begins_late(tmp_path):
    """The window (iterations 20-120) starts before the excerpt's first line: the reason says
    where the lines begin and end, not that the run stops there."""
    path = tmp_path / "baichuan.log"
    path.write_bytes(BAICHUAN_EXCERPT)
    row = run_throughput(parse_paths([path], family="libai", jobs=1), "window").iloc[0]
    assert row["problem_kind"] == "truncated"
    assert row["problem"].startswith("the log's first training line is at iteration 88, past "
                                     "the window's start, and its last at iteration 89;")
