"""The lean path of `dlperf summarize --method dlperf` (issue 10): families read only what their
DLPerf rule needs, per-run figures come from what each file gave (no observations frame), and
they are those of a whole parse."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import parsers
from analysis.collect import CONTENT_KEY_SPAN, ParseResult, content_key, parse_paths
from analysis.logtext import LogText
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data"
START = dt.datetime(2026, 11, 21, 10, 0, 0, 250000)


def _dll(iters: int, edit: dict[int, str] | None = None) -> str:
    """A DLL PyTorch log; `edit` replaces the training line of an iteration (or adds lines
    before it when the text starts with '+')."""
    edit = edit or {}
    lines = [f"DLL {START} - PARAMETER arch : resnet50  batch_size : 256  amp : True  "
             "world_size : 8 ", "RUNNING EPOCHS FROM 0 TO 1"]
    for i in range(1, iters + 1):
        t = START + dt.timedelta(microseconds=300_000 * i + (i * 7919) % 1000)
        line = (f"DLL {t} - Epoch: 0 Iteration: {i}  train.loss : {7 - i / 1000:.5f}  "
                f"train.total_ips : {6000 + (i * 37) % 200:.2f} img/s")
        extra = edit.get(i, "")
        lines += [extra[1:], line] if extra.startswith("+") else [extra or line]
    return "\n".join(lines) + "\n"


def _oneflow(iters: int, edit: dict[int, str] | None = None) -> str:
    edit = edit or {}
    lines = ["Running resnet50: num_gpu_per_node = 8, num_nodes = 1.", "batch_size_per_device = 128",
             "use_fp16 = False", "-" * 40, "Time stamp: 2020-08-21-23:13:45"]
    for i in range(1, iters + 1):
        line = (f"train: epoch 0, iter {i}, loss: 6.5, top_1: 0.000000, top_k: 0.000000, "
                f"samples/s: {3000 + i % 50:.3f} {1.6e9 + 0.33 * i + (i % 7) * 1e-4:.7f}")
        extra = edit.get(i, "")
        lines += [extra[1:], line] if extra.startswith("+") else [extra or line]
    return "\n".join(lines) + "\n"


LOGS = {
    "pytorch/1n8g/r50_b256_amp_1.log": _dll(1000),
    # an epoch summary and a validation line inside the window: read the general way
    "pytorch/1n8g/r50_b256_amp_2.log": _dll(1000, {
        40: f"+DLL {START} - Epoch: 0  train.loss : 6.9 ",
        41: f"+DLL {START + dt.timedelta(seconds=12.3)} - Epoch: 0 Iteration: 40 "
            "Validation Iteration: 1  val.top1 : 0.5 %"}),
    # a printed nan inside the window: a problem at its line, and no figure (the rule counts
    # lines, as DLPerf's script does: without that line's throughput the count is off)
    "pytorch/1n8g/r50_b256_amp_3.log": _dll(1000, {
        60: f"DLL {START + dt.timedelta(seconds=18)} - Epoch: 0 Iteration: 60  "
            "train.loss : 6.9  train.total_ips : nan img/s"}),
    # a garbled line: the usual reading reports it; no figure either
    "pytorch/1n8g/r50_b256_amp_4.log": _dll(1000, {70: "DLL 2026-11-21 garbled"}),
    # the clock goes back one line after the window
    "pytorch/1n8g/r50_b256_amp_5.log": _dll(1000, {
        126: f"DLL {START} - Epoch: 0 Iteration: 126  train.loss : 6.9  "
             "train.total_ips : 6000.00 img/s"}),
    "oneflow/1n8g/resnet50_b128_fp32_1.log": _oneflow(1000),
    # a line without its timestamp and a validation line: the usual reading
    "oneflow/1n8g/resnet50_b128_fp32_2.log": _oneflow(1000, {
        50: "train: epoch 0, iter 50, loss: 6.5, top_1: 0.0, top_k: 0.0, samples/s: 3000.0"}),
    "oneflow/1n8g/resnet50_b128_fp32_3.log": _oneflow(1000, {
        30: "+validation: epoch 0, iter 29, top_1: 0.1, top_k: 0.2, samples/s: 100.0"}),
    "oneflow/1n8g/resnet50_b128_fp32_4.log": _oneflow(1000, {
        80: "train: epoch 0, iter 80, loss: 6.5, top_1: nan, top_k: 0.0, samples/s: -1.0 "
            "1600000026.4"}),
    "oneflow/1n8g/resnet50_b128_fp32_5.log": _oneflow(110),
}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("lean")
    for name, text in LOGS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return parse_paths([root], dlperf_only=True, jobs=1), parse_paths([root], jobs=1)


def test_lean_figures_equal_a_whole_parse(both):
    lean, whole = both
    cols = ["run_id", "throughput", "iterations", "problem_kind", "method"]
    a = run_throughput(lean, "dlperf")[cols].set_index("run_id")
    b = run_throughput(whole, "dlperf")[cols].set_index("run_id")
    assert a.equals(b)
    assert np.isfinite(a["throughput"]).sum() >= 6
    assert a.loc["pytorch/1n8g/r50_b256_amp_5", "problem_kind"] == "timestamps_backwards"
    for run in ("pytorch/1n8g/r50_b256_amp_3", "pytorch/1n8g/r50_b256_amp_4"):
        assert a.loc[run, "problem_kind"] == "window_gap" and np.isnan(a.loc[run, "throughput"])
    assert a.loc["oneflow/1n8g/resnet50_b128_fp32_5", "problem_kind"] == "truncated"


def test_only_the_lines_the_rule_reads_are_read(both):
    lean, _ = both
    last = lean.observations.groupby("run_id", observed=True)["line"].max()
    assert last["pytorch/1n8g/r50_b256_amp_1"] == 2 + 126  # iteration 126: the 121st after 5
    assert last["oneflow/1n8g/resnet50_b128_fp32_1"] == 5 + 121  # the line after iteration 120
    obs = lean.observations
    clean = obs["run_id"].isin(["pytorch/1n8g/r50_b256_amp_1", "oneflow/1n8g/resnet50_b128_fp32_1"])
    assert set(obs.loc[clean, "metric"]) == {"throughput"}  # loss and accuracies are not read


def test_problems_of_the_lines_read_are_those_of_a_whole_parse(both):
    lean, whole = both

    def problems(result, run):
        p = result.problems[result.problems["run_id"] == run]
        return sorted(zip(p["kind"], p["line"].astype(float)))

    for run in ("pytorch/1n8g/r50_b256_amp_3", "pytorch/1n8g/r50_b256_amp_4"):
        assert problems(lean, run) and problems(lean, run) == problems(whole, run), run
    assert ("non_finite_value", 62.0) in problems(lean, "pytorch/1n8g/r50_b256_amp_3")
    # what is checked is what is read: the negative samples/s, not the nan top_1 beside it
    run = "oneflow/1n8g/resnet50_b128_fp32_4"
    assert problems(lean, run) == [("impossible_value", 85.0)]
    assert problems(whole, run) == [("impossible_value", 85.0), ("non_finite_value", 85.0)]


def test_figures_need_no_observations_frame(both):
    lean, _ = both
    result = parse_paths([DATA / "dll_pytorch"], dlperf_only=True)
    runs = run_throughput(result, "dlperf")
    assert np.isfinite(runs["throughput"]).any()
    assert result._observations is None  # per-run figures came from what each file gave
    assert len(result.observations) > 0  # built when asked


@pytest.mark.parametrize("method", ["dlperf", "window", "reported"])
def test_figures_from_the_files_equal_those_from_the_frames(method):
    result = parse_paths([DATA])
    frames = ParseResult(result.observations, result.runs, result.problems)
    assert run_throughput(result, method).equals(run_throughput(frames, method))


def test_no_family_sniffs_above_its_max_score():
    """`detect` skips a family once another scored its `max_score`: the declared maximum
    must hold on every log the tests know."""
    families = parsers._registry.classes()
    for path in DATA.rglob("*"):
        if not path.is_file():
            continue
        head = LogText.read(path).head()
        for cls in families:
            for size in parsers.SNIFF_SIZES:
                assert cls.sniff(head[:size]) <= cls.max_score, (cls.name, path)


def test_duplicates_are_told_by_size_and_both_ends(tmp_path):
    """The content key reads 64 KiB at each end: a copy is found without hashing whole files;
    a log that differs inside its first or last 64 KiB is another run."""
    d = tmp_path / "1n1g"
    d.mkdir()
    base = _dll(200)
    (d / "r50_b256_amp_1.log").write_text(base)
    (d / "r50_b256_amp_2.log").write_text(base)  # a copy: a duplicate
    (d / "r50_b256_amp_3.log").write_text(base.replace("6000.00", "6001.00", 1))
    r = parse_paths([tmp_path])
    dups = r.problems[r.problems["kind"] == "duplicate_run"]
    assert list(dups["source"].map(lambda s: Path(s).name)) == ["r50_b256_amp_2.log"]
    assert len(r.runs) == 2


def test_logs_that_differ_only_in_the_middle_are_two_runs(tmp_path):
    """Equal sizes and ends make two logs candidates; they are compared whole before one is
    called a copy of the other."""
    d = tmp_path / "1n1g"
    d.mkdir()
    base = _dll(2000)
    assert len(base) > 3 * CONTENT_KEY_SPAN
    lines = base.split("\n")
    middle = len(lines) // 2
    changed = lines[middle].replace("train.loss : 6", "train.loss : 5")
    assert changed != lines[middle] and len(changed) == len(lines[middle])
    other = "\n".join(lines[:middle] + [changed] + lines[middle + 1:])
    assert content_key(base.encode()) == content_key(other.encode())
    (d / "r50_b256_amp_1.log").write_text(base)
    (d / "r50_b256_amp_2.log").write_text(other)
    r = parse_paths([tmp_path])
    assert "duplicate_run" not in set(r.problems["kind"])
    assert len(r.runs) == 2


def test_every_fixture_gets_the_figures_of_a_whole_parse():
    """What `dlperf summarize` reads (the rule's lines) gives every fixture run the figure,
    iterations, problem and memory of a whole parse: e.g. a OneFlow log without timestamps
    and without memory lines, where the older rule averages every printed value."""
    cols = ["throughput", "iterations", "problem_kind", "memory_framework_mib",
            "memory_sampled_mib"]
    lean = run_throughput(parse_paths([DATA], dlperf_only=True, jobs=1), "dlperf")
    whole = run_throughput(parse_paths([DATA], jobs=1), "dlperf")
    pd.testing.assert_frame_equal(lean.set_index("run_id")[cols], whole.set_index("run_id")[cols])
    run = "oneflow_cnn/name_conflict/1n1g/bert_base_b128_fp32_1"
    assert lean.set_index("run_id").loc[run, "iterations"] == 9


def test_a_nan_outside_the_window_leaves_the_figure(tmp_path):
    """Iteration 3's throughput printed nan (before the rule's lines): the same figure as the
    clean log; the same line inside the window: none (window_gap), never a figure over 100
    intervals that spans 101."""
    nan = "train.total_ips : nan img/s"
    clean, before, inside = (tmp_path / n / "1n8g" for n in ("clean", "before", "inside"))
    for folder, edit in ((clean, {}), (before, {3: 3}), (inside, {60: 60})):
        folder.mkdir(parents=True)
        text = _dll(1000)
        for i in edit:
            old = next(ln for ln in text.splitlines() if f" Iteration: {i}  " in ln)
            text = text.replace(old, old.rsplit("train.total_ips", 1)[0] + nan)
        (folder / "r50_b256_amp_1.log").write_text(text)
    figures = {}
    for name in ("clean", "before", "inside"):
        for lean in (True, False):
            runs = run_throughput(parse_paths([tmp_path / name], dlperf_only=lean, jobs=1),
                                  "dlperf")
            figures[name, lean] = (runs["throughput"].iloc[0], runs["problem_kind"].iloc[0])
    assert figures["before", True] == figures["before", False] == figures["clean", True]
    assert np.isfinite(figures["clean", True][0])
    for lean in (True, False):
        assert np.isnan(figures["inside", lean][0]) and figures["inside", lean][1] == "window_gap"
