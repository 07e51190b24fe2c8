"""The run events of an MLPerf log printed by every rank (``srun -l``'s ``N: `` tags, each
rank's copy on its own clock, ms or a minute apart) are one event of one run, read on the
lowest rank's clock; a rank's own second run_start, copies between which another run's
event falls, or untagged copies at different times are not taken as one."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats import summarize

T0 = 1621118661300  # run_start, ms


def _line(key: str, t: int, rank: int | None = None, **meta) -> str:
    rec = {"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME", "key": key,
           "value": None, "metadata": meta}
    return ("" if rank is None else f"{rank}: ") + ":::MLLOG " + json.dumps(rec)


def _bert(minutes: float, ranks: int = 8, tagged: bool = True, ahead: dict | None = None
          ) -> list[str]:
    """A healthy BERT log: every rank prints init_start, init_stop, run_start, run_stop,
    rank r's copy r % 4 ms after rank 0's, plus `ahead`'s ms where its clock is ahead; the
    rest rank 0 alone."""
    def all_ranks(key, t, **meta):
        return [_line(key, t + r % 4 + (ahead or {}).get(r, 0), r if tagged else None, **meta)
                for r in range(ranks)]
    stop = T0 + round(minutes * 60_000)
    lines = [_line(k, T0 - 70_000, 0 if tagged else None, value=v) for k, v in
             (("submission_benchmark", "bert"), ("submission_org", "NVIDIA"))]
    lines = [ln.replace('"value": null', f'"value": "{v}"') for ln, v in
             zip(lines, ("bert", "NVIDIA"))]
    lines += all_ranks("init_start", T0 - 61_000) + all_ranks("init_stop", T0 - 100)
    lines += all_ranks("run_start", T0)
    lines += [_line("eval_accuracy", stop - 100, 0 if tagged else None, epoch_num=1)
              .replace('"value": null', '"value": 0.7215')]
    lines += all_ranks("run_stop", stop, status="success")
    return lines


def _case(folder: Path, logs: list[list[str]]) -> Path:
    case = folder / "bert"
    case.mkdir(parents=True)
    for i, lines in enumerate(logs):
        (case / f"result_{i}.txt").write_text("\n".join(lines) + "\n")
    return case


def _parse(folder: Path):
    result = parse_paths([folder], jobs=1)
    o = result.observations
    rows = o[(o["metric"] == M.TIME_TO_TRAIN) & (o["phase"] == M.SUMMARY)]
    return result, {Path(s).name: v for s, v in zip(rows["source"], rows["value"])}


def test_every_rank_printing_the_run_events_is_one_run_and_scores(tmp_path):
    """Ten runs of 20.0 … 24.5 min, each event printed by 8 ranks 0-3 ms apart: every log
    was several_runs ("more than one run"), no score; the case scores 22.25 min."""
    _case(tmp_path, [_bert(20 + i * 0.5) for i in range(10)])
    result, times = _parse(tmp_path)
    assert "several_runs" not in set(result.problems["kind"])
    assert times == {f"result_{i}.txt": pytest.approx(20 + i * 0.5, abs=1e-9) for i in range(10)}
    row = summarize(result, "reported").iloc[0]
    assert row["time_to_train_min"] == pytest.approx(22.25, abs=1e-9)


def test_the_same_rank_printing_run_start_twice_is_several_runs(tmp_path):
    """Rank 0's run_start again 2 s later (a restarted run): not another rank's copy."""
    lines = _bert(20.0)
    at = lines.index(_line("run_stop", T0 + 1_200_000, 0, status="success"))
    lines.insert(at, _line("run_start", T0 + 2_000, 0))
    _case(tmp_path, [lines])
    result, times = _parse(tmp_path)
    assert times == {}
    reason = result.problems[result.problems["kind"] == "several_runs"]["reason"].iloc[0]
    assert "more than one run in this log" in reason


@pytest.mark.parametrize("ahead_ms", [6_000, 60_000, 90_000])
def test_a_rank_whose_clock_is_ahead_is_one_run_and_scores(tmp_path, ahead_ms):
    """Rank 7's clock 6 s (60 s; 90 s, its init_start after rank 0's run_start) ahead, each
    rank printing each run event once: every log was several_runs ("more than one run … a
    run restarted"); one run a log, read on rank 0's clock, the case 22.25 min, and not
    "run_start before init_start" at 90 s."""
    _case(tmp_path, [_bert(20 + i * 0.5, ahead={7: ahead_ms}) for i in range(10)])
    result, times = _parse(tmp_path)
    assert "several_runs" not in set(result.problems["kind"])
    assert times == {f"result_{i}.txt": pytest.approx(20 + i * 0.5, abs=1e-9) for i in range(10)}
    assert summarize(result, "reported").iloc[0]["time_to_train_min"] == pytest.approx(22.25)


def _two_runs_said(folder, lines: list[str]) -> None:
    """The log of `lines` has no time and its several_runs reason names two run_starts."""
    _case(folder, [lines])
    result, times = _parse(folder)
    assert times == {}
    reason = result.problems[result.problems["kind"] == "several_runs"]["reason"].iloc[0]
    assert "run_start at 2 different times" in reason
    assert "more than one run in this log" in reason


def test_a_skewed_rank_printing_run_start_twice_is_several_runs_of_two_starts(tmp_path):
    """Rank 7's clock 60 s ahead, and rank 3 printing run_start again 90 s later (restarted):
    rank 7's copy is one start with the others' (it was counted a third), rank 3's second
    is another."""
    lines = _bert(20.0, ahead={7: 60_000})
    at = lines.index(_line("run_stop", T0 + 1_200_000, 0, status="success"))
    lines.insert(at, _line("run_start", T0 + 90_003, 3))
    _two_runs_said(tmp_path, lines)


def test_another_ranks_run_start_after_the_run_stop_is_several_runs(tmp_path):
    """Rank 3's run_start an hour after rank 0's, the 30 min run's run_stop between them:
    no copy of rank 0's start, however far clocks may be apart."""
    lines = _bert(30.0)
    lines[lines.index(_line("run_start", T0 + 3, 3))] = _line("run_start", T0 + 3_600_000, 3)
    _two_runs_said(tmp_path, lines)


def test_two_one_rank_runs_in_one_log_are_several_runs(tmp_path):
    """Rank 0's run, then rank 1's (two jobs written to one file): each rank prints each run
    event once, but one run's run_stop falls between the run_starts."""
    lines = [_line("run_start", T0, 0), _line("run_stop", T0 + 1_200_000, 0, status="success"),
             _line("run_start", T0 + 1_300_000, 1),
             _line("run_stop", T0 + 2_500_000, 1, status="success")]
    _case(tmp_path, [lines])
    result, times = _parse(tmp_path)
    assert times == {}
    assert "several_runs" in set(result.problems["kind"])


def test_untagged_copies_ms_apart_are_flagged_without_claiming_several_runs(tmp_path):
    """Without rank tags, copies 0-3 ms apart may be ranks or runs: the log does not say,
    so no time, and the reason does not claim more than one run."""
    _case(tmp_path, [_bert(20.0, tagged=False)])
    result, times = _parse(tmp_path)
    assert times == {}
    reason = result.problems[result.problems["kind"] == "several_runs"]["reason"].iloc[0]
    assert "printed more than once (several ranks, or several runs" in reason
    assert "more than one run in this log" not in reason
    assert math.isnan(summarize(result, "reported").iloc[0]["time_to_train_min"])


REAL_RESNET = Path(__file__).resolve().parents[1] / "data" / "real" / \
    "mlperf_v1_0_google_tf_resnet" / "result_0.txt"


def _every_rank(src: Path, late_ms: int, tagged: bool) -> list[str]:
    """The real log as two ranks print it, each line twice in turn: rank 1's copy
    `late_ms` on (its own clock), tagged ``0: ``/``1: `` or not."""
    out = []
    for line in src.read_text().splitlines():
        if ":::MLLOG " not in line:
            continue
        rec = json.loads(line.split(":::MLLOG ", 1)[1])
        late = dict(rec, time_ms=rec["time_ms"] + late_ms)
        for rank, r in ((0, rec), (1, late)):
            out.append((f"{rank}: " if tagged else "") + ":::MLLOG " + json.dumps(r))
    return out


@pytest.mark.parametrize(("late_ms", "tagged"), [(0, True), (0, False), (3_000, True),
                                                 (-90_000, True)])
def test_blocks_every_rank_prints_are_one_block_each(tmp_path, late_ms, tagged):
    """Each block_start printed by both ranks: its copies read as blocks of no time halved
    the pace the run's blocks were held to, and a rank's clock 3 s on read as a clock
    stepped back; every healthy run failed --strict as a clock step (attack77 mlrank)."""
    ranks, alone = tmp_path / "ranks", tmp_path / "alone"
    ranks.mkdir()
    alone.mkdir()
    (ranks / "result_0.txt").write_text(
        "\n".join(_every_rank(REAL_RESNET, late_ms, tagged)) + "\n")
    (alone / "result_0.txt").write_text(REAL_RESNET.read_text())
    result, minutes = _parse(ranks)
    kinds = set(result.problems["kind"])
    assert not kinds & {"timestamps_jump", "timestamps_backwards"}, result.problems
    _, truth = _parse(alone)
    assert minutes["result_0.txt"] == pytest.approx(truth["result_0.txt"])


def test_a_block_naming_its_first_epoch_oddly_is_read_not_a_crash(tmp_path):
    """A block_start whose first_epoch_num is a list (a hand-edited or broken log) names no
    epoch to tell copies by: read as a block, no internal error."""
    lines = REAL_RESNET.read_text().splitlines()
    at = next(k for k, ln in enumerate(lines) if '"key": "block_start"' in ln)
    lines[at] = re.sub(r'"first_epoch_num": [0-9.]+', '"first_epoch_num": [1]', lines[at])
    (tmp_path / "result_0.txt").write_text("\n".join(lines) + "\n")
    _, minutes = _parse(tmp_path)
    assert minutes["result_0.txt"] > 0
