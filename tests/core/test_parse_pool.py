"""Files read in worker processes (`parse_paths(jobs=N)`, `dlperf … -j N`): the same frames,
in the same order, problems still per file and line, as in one process."""

from __future__ import annotations

import os

import pytest

from analysis.collect import parse_paths
from analysis.parse_pool import MIN_ITEMS, ordered_map
from tests.cli._helpers import run_cli


def _pid_and(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def test_ordered_map_uses_other_processes_and_keeps_the_order():
    items = list(range(MIN_ITEMS * 2))
    out = ordered_map(_pid_and, items, jobs=2)
    assert [sq for _, sq in out] == [x * x for x in items]
    assert {pid for pid, _ in out} - {os.getpid()}  # not all done here
    assert {pid for pid, _ in ordered_map(_pid_and, items, jobs=1)} == {os.getpid()}
    assert {pid for pid, _ in ordered_map(_pid_and, items[:MIN_ITEMS - 1], jobs=2)} == {os.getpid()}


def _fail_at(x: int) -> int:
    if x == 7:
        raise ValueError(f"item {x} is bad")
    return x


def _die_at(x: int) -> int:
    if x == 7 and os.getpid() != PARENT:
        os._exit(3)  # a worker killed in the middle of its share
    return x


PARENT = os.getpid()


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_an_error_in_a_worker_is_raised_here_and_no_worker_is_left():
    items = list(range(MIN_ITEMS * 2))
    with pytest.raises(ValueError, match="item 7 is bad"):
        ordered_map(_fail_at, items, jobs=2)  # 7 is odd: the child's share
    with pytest.raises(ValueError, match="item 7 is bad"):
        ordered_map(_fail_at, items, jobs=7)  # 7 is this process's share
    assert _no_children_left()


def test_a_worker_that_dies_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match="ended without its results"):
        ordered_map(_die_at, list(range(MIN_ITEMS * 2)), jobs=2)
    assert _no_children_left()


def test_more_jobs_than_items_and_big_results():
    items = list(range(MIN_ITEMS))
    out = ordered_map(_pid_and, items, jobs=500)  # one process per item at most
    assert [sq for _, sq in out] == [x * x for x in items]
    assert len({pid for pid, _ in out}) == MIN_ITEMS
    big = ordered_map(bytes, [1 << 20] * MIN_ITEMS, jobs=3)  # results far beyond a pipe's buffer
    assert [len(b) for b in big] == [1 << 20] * MIN_ITEMS
    assert _no_children_left()


def _log(k: int, bad_line: bool) -> str:
    lines = [f"DLL 2026-11-21 10:00:00.{k:06d} - PARAMETER arch : resnet50  batch_size : 64  "
             "amp : True  world_size : 1 ", "RUNNING EPOCHS FROM 0 TO 1"]
    for i in range(1, 131):
        lines.append(f"DLL 2026-11-21 10:{i // 60:02d}:{i % 60:02d}.{(k * 7 + i) % 999999:06d} - "
                     f"Epoch: 0 Iteration: {i}  train.loss : 6.5  train.total_ips : "
                     f"{'nan' if bad_line and i == 50 else f'{800 + k % 7}.00'} img/s")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("pool")
    for k in range(MIN_ITEMS + 12):
        folder = root / ("1n1g" if k % 2 else "1n2g")
        folder.mkdir(exist_ok=True)
        (folder / f"r50_b64_amp_{k + 1}.log").write_text(_log(k, bad_line=k % 10 == 3))
    (root / "1n1g" / "r50_b64_amp_999.log").write_text("")  # no parser reads an empty file
    return root


def test_frames_equal_one_process(campaign):
    one, many = parse_paths([campaign], jobs=1), parse_paths([campaign], jobs=2)
    assert one.observations.equals(many.observations)
    assert one.runs.equals(many.runs)
    assert one.problems.equals(many.problems)
    kinds = set(one.problems["kind"])
    assert {"non_finite_value", "unknown_format"} <= kinds
    assert (one.problems.loc[one.problems["kind"] == "non_finite_value", "line"] == 52).all()


def test_cli_jobs(campaign, dlperf_exe):
    one = run_cli(dlperf_exe, "summarize", campaign, "--format", "csv", "-j", "1")
    many = run_cli(dlperf_exe, "summarize", campaign, "--format", "csv", "--jobs", "2")
    assert one.returncode == many.returncode == 0, one.stderr
    assert one.stdout == many.stdout and one.stderr == many.stderr
    bad = run_cli(dlperf_exe, "summarize", campaign, "-j", "0")
    assert bad.returncode == 2
    assert "--jobs" in bad.stderr and "Traceback" not in bad.stderr
