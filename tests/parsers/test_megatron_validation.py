"""Megatron's validation lines in the figures, numbers printed with a comma, and a job killed
after a few intervals, on the real Megatron-DeepSpeed log (tests/data/real/
megatron_deepspeed_examples): its timer runs across an evaluation, so the interval that holds
`validation loss at iteration 100` prints 896.8 ms against ~580."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from analysis import metrics as M
from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_throughput

ORIGIN = (Path(__file__).resolve().parents[1] / "data" / "real" / "megatron_deepspeed_examples"
          / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4_origin.log.gz")
_ITERATION = re.compile(r"^ iteration +(\d+)/")


def _lines() -> list[str]:
    return gzip.decompress(ORIGIN.read_bytes()).decode().splitlines(keepends=True)


#: What Megatron-LM prints after an evaluation since it stops its iteration timer around one.
EVALUATE_TIMER = ("(min, max) time across ranks (ms):\n    evaluate "
                  "........................................: (3190.41, 3201.27)\n")


def _validated(after, extra_ms: float, timer: str = "") -> str:
    """The real log with a copy of its validation block (the line between two rules, `timer`
    before it) after the iteration lines of `after` (iterations; the real one after 100
    stays), and `extra_ms` more on the elapsed time of each interval a copy is in (what the
    real interval 100 -> 110 shows: ~320 ms)."""
    lines = _lines()
    at = next(i for i, ln in enumerate(lines) if "validation loss at iteration 100" in ln)
    block, out, held = [timer] + lines[at - 1:at + 2], [], False
    for ln in lines:
        m = _ITERATION.match(ln)
        if m and held:
            ln = re.sub(r"\(ms\): ([\d.]+)", lambda v: f"(ms): {float(v.group(1)) + extra_ms:.1f}",
                        ln)
        held = held and not m
        out.append(ln)
        if m and int(m.group(1)) in after and int(m.group(1)) != 100:
            out += [x.replace("iteration 100", f"iteration {m.group(1)}") for x in block]
            held = True
    return "".join(out)


def _row(tmp_path, text: str, method: str):
    (tmp_path / "b.log").write_text(text)
    return run_throughput(parse_paths([tmp_path / "b.log"], jobs=1), method).iloc[0]


def test_the_validation_lines_are_evaluation_rows():
    result = parse_paths([ORIGIN], jobs=1)
    o = result.observations
    val = o[o["phase"] == M.VAL]
    assert val["step"].tolist() == [100]
    assert val["value"].tolist() == pytest.approx([9.082474])
    assert result.problems.empty


def test_the_window_leaves_the_validation_interval_out():
    """The real log: iterations 21-120 less the interval 100 -> 110 (896.8 ms), run on to
    130; before, the window summed it in (414.96 samples/s for this log, ~441.7)."""
    row = run_throughput(parse_paths([ORIGIN], jobs=1), "window").iloc[0]
    counted = [0.5777, 0.5821, 0.5785, 0.5777, 0.5808, 0.5759, 0.5759, 0.5842, 0.5803, 0.5825]
    assert row["throughput"] == pytest.approx(256 / (sum(counted) / 10), rel=1e-12)
    assert row["problem_kind"] == ""


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_a_validation_in_every_interval_flags_the_figure(tmp_path, method):
    """eval_interval = log_interval: every interval holds a validation, +320 ms each; no
    interval times training alone (285 samples/s for a pace of ~442): kept, flagged."""
    row = _row(tmp_path, _validated(range(10, 160, 10), 320.0), method)
    assert row["problem_kind"] == "evaluation_in_figure"
    assert "holds evaluation lines" in row["problem"]
    assert row["throughput"] < 300


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_validations_timed_apart_are_no_marks(tmp_path, method):
    """Megatron-LM since November 2023 stops its iteration timer around an evaluation and
    prints an `evaluate` timer after it: the interval's elapsed time is training alone, so
    a validation in every interval is no evaluation in a figure from those times; and no
    interval free of one is left for the stamps to check those times by: no figure, the
    evaluations named (the one rule: printed values the stamps cannot check give none)."""
    (tmp_path / "b.log").write_text(_validated(range(10, 160, 10), 0.0, EVALUATE_TIMER))
    result = parse_paths([tmp_path / "b.log"], jobs=1)
    val = result.observations[result.observations["phase"] == M.VAL]
    assert (val[val["metric"] == M.LOSS]["line"].tolist()
            == val[val["metric"] == M.TIMED_APART]["line"].tolist() != [])
    row = run_throughput(result, method).iloc[0]
    assert row["problem_kind"] == "missing_timestamps"
    assert "each of its 15 intervals between its training lines holds an evaluation, whose " \
           "time those times per iteration leave out and the stamps count" in row["problem"]


def test_a_named_validation_set_is_read():
    """`validation-<set> loss at iteration N`: Megatron-LM's line for each of several sets."""
    text = gzip.decompress(ORIGIN.read_bytes()).replace(b"validation loss at",
                                                        b"validation-pile loss at")
    parsed = parsers.get("megatron").parse(LogText.from_bytes(text, "mem"))
    assert [int(b["step"][0]) for b in parsed.obs.blocks if b["phase"] == M.VAL] == [100]


def test_a_median_of_mostly_validation_intervals_is_flagged(tmp_path):
    """Validations in 9 of the 15 intervals after the first (+320 ms; every other one, and
    the real one's next): the median is one of them; the 6 without one time training."""
    row = _row(tmp_path, _validated(range(10, 160, 20), 320.0), "dlperf")
    assert row["problem_kind"] == "figure_mismatch"
    assert "over the median of the 6 without one" in row["problem"]


def test_the_window_runs_on_past_validations(tmp_path):
    """Validations in 9 of the 15 intervals after the first: the window counts only the 6
    without one after its warm-up, running on past 120 to the log's end at 160; no flag."""
    row = _row(tmp_path, _validated(range(10, 160, 20), 320.0), "window")
    assert row["problem_kind"] == ""
    assert row["iterations"] == 60 and "8 interval(s) inside the window" in row["method"]
    assert 570 < row["latency_ms"] < 590


@pytest.mark.parametrize("printed", ["(ms): 578,5", "consumed samples: 2,560"])
def test_a_number_with_a_comma_is_a_bad_line(tmp_path, printed):
    """`578,5` was read as 578 and `2,560` as 2, silently: now the line is a bad_line
    naming the field, and it is not read."""
    lines = _lines()
    at = next(i for i, ln in enumerate(lines) if _ITERATION.match(ln) and " 50/" in ln)
    field = printed.split(":")[0]
    lines[at] = re.sub(re.escape(field) + r": +[\d.]+", printed, lines[at])
    (tmp_path / "b.log").write_text("".join(lines))
    result = parse_paths([tmp_path / "b.log"], jobs=1)
    bad = result.problems[result.problems["kind"] == "bad_line"]
    assert bad["line"].tolist() == [at + 1]
    assert printed.replace("(ms)", "elapsed time per iteration (ms)") in bad["reason"].iloc[0]
    steps = result.observations[result.observations["metric"] == M.LATENCY]["step"]
    assert 50 not in set(steps)


@pytest.mark.parametrize(("kept", "figure"), [(2, False), (3, False), (4, True)])
def test_a_killed_job_needs_three_intervals_after_the_first(tmp_path, kept, figure):
    """A job killed after `kept` iteration lines: the DLPerf rule (median after the first
    interval) needs 3 intervals after it, as after a ramp-up; before, 2 lines gave a figure
    from one interval."""
    lines = _lines()
    at = [i for i, ln in enumerate(lines) if _ITERATION.match(ln)][kept - 1]
    row = _row(tmp_path, "".join(lines[:at + 1]), "dlperf")
    if figure:
        assert row["problem_kind"] == "" and row["throughput"] > 400
    else:
        assert row["problem_kind"] == "truncated"
        assert f"{kept - 1} after the first (start-up, left out): at least 3" in row["problem"]
