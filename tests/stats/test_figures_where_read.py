"""Per-run figures made in the worker that reads a run: the same as measured after the parse,
taken only when the run's final row and problems are those they were made with."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import methods
from analysis.stats.per_run import run_records


def _log(k: int, total_ips: str = "800.00") -> str:
    lines = [f"DLL 2026-11-21 10:00:00.{k:06d} - PARAMETER arch : resnet50  batch_size : 64  "
             "amp : True  world_size : 1 ", "RUNNING EPOCHS FROM 0 TO 1"]
    lines += [f"DLL 2026-11-21 10:{i // 60:02d}:{i % 60:02d}.{(k * 7919 + i * 104729) % 999999:06d}"
              f" - Epoch: 0 Iteration: {i}  train.loss : 6.5  train.total_ips : {total_ips} img/s"
              for i in range(1, 131)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def logs(tmp_path):
    folder = tmp_path / "logs" / "1n1g"
    folder.mkdir(parents=True)
    for k in (1, 2, 3):
        (folder / f"r50_b64_amp_{k}.log").write_text(_log(k, "nan" if k == 3 else "800.00"))
    return tmp_path / "logs"


def _values(rows: list[dict]) -> str:
    """The rows' values as text, numpy scalars as the Python numbers they equal (a figure
    from a worker comes back as plain floats, as the parse cache keeps it)."""
    return repr([{k: v.item() if isinstance(v, np.generic) else v for k, v in r.items()}
                 for r in rows])


def _measured(monkeypatch, name: str) -> list:
    """The runs `name` measures from now on."""
    seen = []
    get = methods.get
    monkeypatch.setattr(methods, "get", lambda n: (
        lambda rd, *a: seen.append(rd.run_id) or get(n)(rd, *a)) if n == name else get(n))
    return seen


@pytest.mark.parametrize(("method", "warmup", "measure"),
                         [("dlperf", None, None), ("window", 3, 50), ("reported", None, None)])
@pytest.mark.parametrize("jobs", [1, 2])
def test_figures_made_where_read_are_those_measured_after(logs, monkeypatch, method, warmup,
                                                          measure, jobs):
    monkeypatch.setattr("analysis.collect.MIN_PARALLEL", 1)  # workers even for three runs
    plain = run_records(parse_paths([logs], jobs=jobs), [method], warmup, measure)[method]
    made = parse_paths([logs], jobs=jobs, figures=([method], warmup, measure))
    measured = _measured(monkeypatch, method)
    got = run_records(made, [method], warmup, measure)[method]
    assert measured == []  # each taken from where its run was read
    assert _values(got) == _values(plain)
    assert {r["problem_kind"] for r in got} != {""}  # the run of NaN rates has a problem


def test_a_run_whose_row_changed_after_reading_is_measured_again(logs, monkeypatch):
    """A copy of run 1 found later adds a duplicate_run problem to run 1 after both were read:
    run 1 is measured again, the others are not; the figures are those measured after."""
    shutil.copy(logs / "1n1g" / "r50_b64_amp_1.log", logs / "1n1g" / "r50_b64_amp_4.log")
    plain = run_records(parse_paths([logs], jobs=1), ["dlperf"])["dlperf"]
    made = parse_paths([logs], jobs=1, figures=(["dlperf"], None, None))
    measured = _measured(monkeypatch, "dlperf")
    got = run_records(made, ["dlperf"])["dlperf"]
    assert measured == ["1n1g/r50_b64_amp_1"]
    assert _values(got) == _values(plain)


def test_figures_asked_for_an_unknown_method_fail_before_reading(logs):
    from analysis.errors import UnknownNameError, UsageError

    with pytest.raises(UnknownNameError):
        parse_paths([logs], figures=(["no_such_method"], None, None))
    with pytest.raises(UsageError):
        parse_paths([logs], figures=(["window"], -1, 5))


def test_a_method_failing_where_read_fails_only_where_the_run_is_measured(logs, monkeypatch):
    """A method that raises in the worker leaves the run to `run_records`, which raises as
    it did before figures were made where runs are read (and only for runs it measures)."""
    from analysis.stats import per_run

    def broken(*_):
        raise RuntimeError("a method bug")

    monkeypatch.setattr(per_run, "figures_where_read", broken)
    result = parse_paths([logs], jobs=1, figures=(["dlperf"], None, None))
    assert result.figures.made == {}
    monkeypatch.setattr(methods, "get", lambda name: broken)
    with pytest.raises(RuntimeError, match="a method bug"):
        run_records(result, ["dlperf"])
