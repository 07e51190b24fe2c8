"""`parse_paths(jobs=N)` / `-j N`: worker processes read the runs when there are many, and the
frames are the same for every N."""

from __future__ import annotations

import os

import pytest

from analysis.collect import MIN_PARALLEL, map_in_processes, parse_paths

LINE = ("DLL 2026-11-21 10:{m:02d}:{s:02d}.{us:06d} - Epoch: 0 Iteration: {i}  train.loss : 6.5  "
        "train.total_ips : {ips}.00 img/s")


def _pid_and(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def _fail_at_7(x: int) -> int:
    if x == 7:
        raise ValueError("seven")
    return x


def test_workers_do_the_work_in_order():
    items = list(range(MIN_PARALLEL * 2))
    out = map_in_processes(_pid_and, items, jobs=2)
    assert [x for _, x in out] == [x * x for x in items]
    assert {pid for pid, _ in out} - {os.getpid()}  # other processes took part
    assert {pid for pid, _ in map_in_processes(_pid_and, items, jobs=1)} == {os.getpid()}
    few = map_in_processes(_pid_and, items[:MIN_PARALLEL - 1], jobs=2)
    assert {pid for pid, _ in few} == {os.getpid()}


def test_an_error_in_a_worker_is_raised_here():
    with pytest.raises(ValueError, match="seven"):
        map_in_processes(_fail_at_7, list(range(MIN_PARALLEL * 2)), jobs=2)


def test_frames_are_the_same_for_every_number_of_jobs(tmp_path):
    folder = tmp_path / "1n1g"
    folder.mkdir()
    for k in range(MIN_PARALLEL + 12):
        lines = [LINE.format(m=i // 60, s=i % 60, us=k, i=i, ips=800 + k) for i in range(1, 140)]
        (folder / f"r50_b64_amp_{k + 1}.log").write_text("\n".join(lines) + "\n")
    (folder / "r50_b64_amp_99.log").write_text("not a log\n")
    one = parse_paths([tmp_path], jobs=1, dlperf_only=True)
    two = parse_paths([tmp_path], jobs=2, dlperf_only=True)
    assert one.observations.equals(two.observations)
    assert one.runs.equals(two.runs)
    assert one.problems.equals(two.problems) and "unknown_format" in set(one.problems["kind"])
