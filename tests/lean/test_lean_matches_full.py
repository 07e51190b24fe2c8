"""The lean lane of `dlperf summarize` (analysis.lean) prints exactly what the full path
prints, or gives up and lets the full path print it: on clean corpora it answers, and on
every kind of log it does not read exactly it steps aside (the output is the same either
way; only the time differs)."""

from __future__ import annotations

import contextlib
import gzip
import io
import shutil

import pytest

from analysis.cli import main
from analysis.cli import summarize as cli
from analysis.lean.lane import run_rows, summary_rows

from ._corpus import dll_logs, oneflow_logs, write_corpus

FORMATS = ("csv", "json", "table", "markdown")
#: The generated corpus's repeats spread up to ~10 %: not flagged here, where the lane is to
#: answer (a flagged case: test_a_flagged_case_goes_to_the_full_path).
WIDE = 0.5


def _summarize(args: list[str], lean: bool, monkeypatch) -> tuple[int, str, str]:
    with monkeypatch.context() as m:
        if not lean:
            m.setattr(cli, "_lean", lambda args: False)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["summarize", *args])
    return code, out.getvalue(), err.getvalue()


def _same_output(root, monkeypatch, fmt: str = "csv") -> str:
    args = [str(root), "--format", fmt, "--no-cache", "--spread-threshold", "50%"]
    lean = _summarize(args, True, monkeypatch)
    full = _summarize(args, False, monkeypatch)
    assert lean == full
    return lean[1]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("lean") / "logs")


def _copy(corpus, tmp_path):
    return shutil.copytree(corpus, tmp_path / "logs")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_lane_answers_clean_logs_as_the_full_path_does(corpus, monkeypatch, fmt):
    assert summary_rows([corpus], jobs=1, cache=False, spread_threshold=WIDE) is not None
    text = _same_output(corpus, monkeypatch, fmt)
    assert "PyTorch" in text and "OneFlow" in text


def test_per_run_figures_are_the_full_paths(corpus):
    from analysis import parse_paths
    from analysis.stats import run_throughput

    lean = run_rows([corpus], jobs=1, cache=False)
    full = run_throughput(parse_paths([corpus], dlperf_only=True), "dlperf")
    assert [r["throughput"] for r in lean] == list(full["throughput"])  # exact, not approx


def _edit(path, old: bytes, new: bytes, count: int = 1):
    data = path.read_bytes()
    assert old in data, old
    path.write_bytes(data.replace(old, new, count))


def _line_of(path, needle: bytes) -> bytes:
    return next(ln for ln in path.read_bytes().split(b"\n") if needle in ln)


def _swap_times(path, a: int, b: int):
    """Swap the datetimes of the training lines of iterations a and b."""
    la, lb = (_line_of(path, b" Iteration: %d  " % i) for i in (a, b))
    data = path.read_bytes()
    data = data.replace(la, lb[:30] + la[30:]).replace(lb, la[:30] + lb[30:])
    path.write_bytes(data)


# (what is done to the copy, whether the lane still answers)
CASES = {
    "truncated": (lambda r: dll_logs(r)[0].write_bytes(
        b"\n".join(dll_logs(r)[0].read_bytes().split(b"\n")[:60]) + b"\n"), False),
    "timestamps back in the window": (lambda r: _swap_times(dll_logs(r)[1], 40, 41), False),
    "timestamps back before the window": (lambda r: _swap_times(dll_logs(r)[1], 3, 4), False),
    "a nan throughput": (lambda r: _edit(dll_logs(r)[2], b" Iteration: 50  train.loss : ",
                                         b" Iteration: 50  train.loss : nan  x : "), False),
    "iteration printed twice": (lambda r: _edit(dll_logs(r)[0], b" Iteration: 30  ",
                                                b" Iteration: 29  "), False),
    "an epoch line in the window": (lambda r: _edit(
        dll_logs(r)[0], b"\nDLL", b"\nDLL 2026-01-01 00:00:00 - Epoch: 0  train.loss : 1\nDLL"),
        False),
    "a copy of another run": (lambda r: shutil.copy(dll_logs(r)[0], dll_logs(r)[0].with_name(
        dll_logs(r)[0].name.replace("_1.log", "_99.log"))), False),
    "a meta file": (lambda r: (dll_logs(r)[0].parent / "dlperf-meta.yaml").write_text(
        "num_nodes: 1\n"), False),
    "the log's batch size differs from the path's": (lambda r: _edit(
        dll_logs(r)[0], b"batch_size : 256", b"batch_size : 128"), False),
    "world size differs from the path's": (lambda r: _edit(
        dll_logs(r)[0], b"world_size : ", b"world_size : 9"), False),
    "a memory line at the end": (lambda r: dll_logs(r)[0].write_bytes(
        dll_logs(r)[0].read_bytes() + b"DLL 2026-11-23 00:00:00 - Summary: "
        b"train.memory_max_allocated : 1234 MiB\n"), False),
    "CRLF line ends": (lambda r: dll_logs(r)[0].write_bytes(
        dll_logs(r)[0].read_bytes().replace(b"\n", b"\r\n")), False),
    "a gzip log": (lambda r: (dll_logs(r)[0].with_suffix(".log.gz").write_bytes(
        gzip.compress(dll_logs(r)[0].read_bytes())), dll_logs(r)[0].unlink()), False),
    "launcher rank prefixes": (lambda r: dll_logs(r)[0].write_bytes(b"".join(
        b"[1,0]<stdout>:" + ln + b"\n" for ln in dll_logs(r)[0].read_bytes().splitlines())),
        False),
    "a 5-digit fraction of a second": (lambda r: _edit(
        dll_logs(r)[0], _line_of(dll_logs(r)[0], b" Iteration: 70  ")[:30],
        _line_of(dll_logs(r)[0], b" Iteration: 70  ")[:29]), False),
    "a validation line before iteration 120": (lambda r: _edit(
        oneflow_logs(r)[0], b"\ntrain: epoch 0, iter 50,",
        b"\nvalidation: epoch 0, iter 50, top_1: 0.1, top_k: 0.2, samples/s: 9.0 1.0"
        b"\ntrain: epoch 0, iter 50,"), False),
    "a OneFlow line without a timestamp": (lambda r: _edit(
        oneflow_logs(r)[1], b", iter 60, ", b", iter 60, ", 1) or _strip_ts(oneflow_logs(r)[1], 60),
        False),
    "a OneFlow loss of nan": (lambda r: _edit(oneflow_logs(r)[0], b"iter 7, loss: ",
                                              b"iter 7, loss: nan, x: "), False),
    "a log of an unknown format": (lambda r: (dll_logs(r)[0].parent / "notes.log").write_text(
        "hello\n"), False),
    "a launch command before the DLL lines": (lambda r: dll_logs(r)[0].write_bytes(
        b"+ python3 -m torch.distributed.launch --nproc_per_node=1 main.py\n"
        + dll_logs(r)[0].read_bytes()), False),
    "a printed Namespace on the PARAMETER line": (lambda r: _edit(
        dll_logs(r)[0], b" - PARAMETER ", b' - PARAMETER Config : ["Namespace(fp16=True)"]  '),
        False),
    "noise lines between training lines": (lambda r: _edit(
        dll_logs(r)[0], b"\nDLL", b"\nsome warning from a library\nDLL", 30), True),
}


def _strip_ts(path, iteration: int):
    line = _line_of(path, b", iter %d, " % iteration)
    _edit(path, line, line.rsplit(b" ", 1)[0])


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_the_lane_does_not_read_goes_to_the_full_path(corpus, tmp_path, monkeypatch, case):
    root = _copy(corpus, tmp_path)
    change, answers = CASES[case]
    change(root)
    assert (summary_rows([root], jobs=1, cache=False, spread_threshold=WIDE) is not None) is answers
    _same_output(root, monkeypatch, "csv")
    _same_output(root, monkeypatch, "table")


def test_a_run_past_midnight_is_read(tmp_path, monkeypatch):
    """Datetimes of two days (the window spans them) compare as text the same as in time:
    the lane reads them."""
    gen = __import__("tests.lean._corpus", fromlist=["generator"]).generator()
    import numpy as np

    root = tmp_path / "logs" / "1n1g"
    root.mkdir(parents=True)
    rng = np.random.default_rng(1)
    for k in range(1, 4):
        text = gen._dll_log(rng, 256, 1, 1, 200)
        lines = text.split("\n")
        day = lines[4][4:14]  # the first training line's date
        shifted = "\n".join(ln.replace(day, "2026-11-30", 1) if "Iteration: " in ln and
                            int(ln.split("Iteration: ")[1].split()[0]) < 50 else
                            ln.replace(day, "2026-12-01", 1) for ln in lines)
        (root / f"r50_b256_amp_{k}.log").write_text(shifted)
    assert summary_rows([tmp_path / "logs"], jobs=1, cache=False, spread_threshold=WIDE) is not None
    _same_output(tmp_path / "logs", monkeypatch, "csv")


def test_many_logs_read_in_worker_processes(tmp_path, monkeypatch):
    root = write_corpus(tmp_path / "logs", files=60, iterations=130, seed=5)
    serial = summary_rows([root], jobs=1, cache=False, spread_threshold=WIDE)
    assert repr(summary_rows([root], jobs=2, cache=False, spread_threshold=WIDE)) == repr(serial)  # NaN == NaN
    _same_output(root, monkeypatch, "json")
