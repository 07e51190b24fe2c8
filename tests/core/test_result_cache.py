"""Whole results kept between calls (analysis.result_cache): a call on unchanged files gives
exactly the frames and per-run figures of a fresh parse without reading a file; any change
under the named paths, to the code or to the options is a miss; an edited runs frame gets
its own figures; a damaged entry is ignored and rewritten."""

from __future__ import annotations

import json
import os
import shutil
import time

import pandas as pd
import pytest

from analysis import collect, parse_cache, result_cache
from analysis.collect import parse_paths
from analysis.errors import LogProblemError
from analysis.stats import METHOD_NAMES
from analysis.stats.per_run import run_throughputs
from tests.conftest import DATA

OLD = time.time() - 3600  # older than SETTLE_S: files a result may be kept for


def _settled_copy(src, dst):
    shutil.copytree(src, dst)
    for path in [dst, *dst.rglob("*")]:
        os.utime(path, (OLD, OLD))
    return dst


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache" / "results"


def _no_reading(monkeypatch) -> list:
    """Calls that read files from now on (none is expected)."""
    calls = []
    real = collect._parse
    monkeypatch.setattr(collect, "_parse", lambda *a: calls.append(a) or real(*a))
    return calls


def _assert_same(a, b):
    pd.testing.assert_frame_equal(a.runs, b.runs, check_exact=True)
    pd.testing.assert_frame_equal(a.problems, b.problems, check_exact=True)


FAMILIES = sorted(p.name for p in DATA.iterdir() if p.is_dir() and p.name != "topology")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_kept_result_is_the_fresh_one_exactly(family, tmp_path, cache, monkeypatch):
    logs = _settled_copy(DATA / family, tmp_path / family)
    fresh = parse_paths([logs], jobs=1)
    fresh_runs = run_throughputs(fresh, METHOD_NAMES)
    parse_paths([logs], jobs=1, cache=True)  # kept
    first = parse_paths([logs], jobs=1, cache=True)
    run_throughputs(first, METHOD_NAMES)  # the figures are kept with it
    calls = _no_reading(monkeypatch)
    again = parse_paths([logs], jobs=1, cache=True)
    figures = run_throughputs(again, METHOD_NAMES)
    assert calls == []  # neither the parse nor the figures read a file
    _assert_same(fresh, again)
    for name in METHOD_NAMES:
        pd.testing.assert_frame_equal(fresh_runs[name], figures[name], check_exact=True)
    # observations are read again when asked for, and are those of a fresh parse
    pd.testing.assert_frame_equal(again.observations, fresh.observations, check_exact=True)
    assert len(calls) == 1


def _campaign(tmp_path):
    return _settled_copy(DATA / "dll_pytorch", tmp_path / "logs")


def _kept(logs):
    parse_paths([logs], jobs=1, cache=True)
    return parse_paths([logs], jobs=1, cache=True)


def _touch_old(path):
    os.utime(path, (OLD + 60, OLD + 60))


@pytest.mark.parametrize("change", ["edit", "add_log", "add_meta", "remove", "rename_folder"])
def test_any_change_under_the_paths_is_a_miss(change, tmp_path, cache, monkeypatch):
    logs = _campaign(tmp_path)
    _kept(logs)
    log = next(p for p in sorted(logs.rglob("*.log")))
    if change == "edit":
        log.write_text(log.read_text().replace("Iteration: 100 ", "Iteration: 100  "))
        _touch_old(log)
    elif change == "add_log":
        shutil.copy(log, log.with_name("extra_" + log.name))
        _touch_old(log.with_name("extra_" + log.name))
    elif change == "add_meta":
        (log.parent / "dlperf-meta.yaml").write_text("num_nodes: 1\n")
        _touch_old(log.parent / "dlperf-meta.yaml")
    elif change == "remove":
        log.unlink()
    else:
        folder = next(p for p in logs.iterdir() if p.is_dir())
        folder.rename(folder.with_name(folder.name + "_x"))
    calls = _no_reading(monkeypatch)
    got = parse_paths([logs], jobs=1, cache=True)
    assert len(calls) == 1
    _assert_same(parse_paths([logs], jobs=1), got)


def test_options_code_and_working_folder_name_their_own_entries(tmp_path, cache, monkeypatch):
    logs = _campaign(tmp_path)
    _kept(logs)
    calls = _no_reading(monkeypatch)
    parse_paths([logs], jobs=1, cache=True, dlperf_only=True)
    parse_paths([logs], jobs=1, cache=True, meta={"num_nodes": 1})
    assert len(calls) == 2
    monkeypatch.chdir(tmp_path)
    parse_paths(["logs"], jobs=1, cache=True)  # sources are named from here
    monkeypatch.chdir(logs)
    parse_paths(["."], jobs=1, cache=True)
    assert len(calls) == 4
    result_cache.code_version.cache_clear()
    monkeypatch.setattr(result_cache, "code_version", lambda: "another version")
    parse_paths([logs], jobs=1, cache=True)
    assert len(calls) == 5


def test_a_file_still_being_written_keeps_nothing(tmp_path, cache):
    logs = _campaign(tmp_path)
    os.utime(next(logs.rglob("*.log")))  # written just now
    parse_paths([logs], jobs=1, cache=True)
    assert not cache.exists() or not list(cache.iterdir())


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"call": 1}', "rows"])
def test_a_damaged_entry_is_ignored_and_rewritten(damage, tmp_path, cache, monkeypatch):
    logs = _campaign(tmp_path)
    fresh = parse_paths([logs], jobs=1)
    _kept(logs)
    [entry] = list(cache.iterdir())
    if damage == "rows":  # valid JSON of the right call whose columns do not add up
        data = json.loads(entry.read_bytes())
        data["runs"]["rows"] += 1
        entry.write_text(json.dumps(data))
    else:
        entry.write_bytes(damage)
    result_cache._recent.clear()  # as another process finds it (this one knows the entry)
    calls = _no_reading(monkeypatch)
    got = parse_paths([logs], jobs=1, cache=True)
    _assert_same(fresh, got)
    assert len(calls) == 1
    json.loads(entry.read_bytes())  # rewritten, as JSON: nothing is unpickled
    parse_paths([logs], jobs=1, cache=True)
    assert len(calls) == 1


def test_an_edited_runs_frame_gets_its_own_figures(tmp_path, cache):
    logs = _campaign(tmp_path)
    kept = _kept(logs)
    before = run_throughputs(kept, ["dlperf"])["dlperf"]
    again = parse_paths([logs], jobs=1, cache=True)
    again.runs.loc[:, "global_batch_size"] = again.runs["global_batch_size"] * 2
    doubled = run_throughputs(again, ["dlperf"])["dlperf"]
    ok = before["throughput"].notna()
    assert (doubled["throughput"][ok] == 2 * before["throughput"][ok]).all()
    third = parse_paths([logs], jobs=1, cache=True)  # the kept figures are still the parse's
    third.runs = third.runs.iloc[:2].reset_index(drop=True)
    assert len(run_throughputs(third, ["dlperf"])["dlperf"]) == 2
    fourth = parse_paths([logs], jobs=1, cache=True)
    pd.testing.assert_frame_equal(run_throughputs(fourth, ["dlperf"])["dlperf"], before)


def test_strict_raises_for_a_kept_result_as_for_a_fresh_one(tmp_path, cache):
    logs = _campaign(tmp_path)
    with pytest.raises(LogProblemError) as fresh:
        parse_paths([logs], jobs=1, strict=True)
    _kept(logs)
    with pytest.raises(LogProblemError) as kept:
        parse_paths([logs], jobs=1, strict=True, cache=True)
    assert str(kept.value) == str(fresh.value)


def test_a_named_file_and_the_meta_files_beside_it(tmp_path, cache, monkeypatch):
    logs = _campaign(tmp_path)
    log = next(p for p in sorted(logs.rglob("*.log")))
    _kept(log)
    calls = _no_reading(monkeypatch)
    parse_paths([log], jobs=1, cache=True)
    assert calls == []
    meta = log.with_name(log.name[:-4] + ".meta.yaml")
    meta.write_text("num_nodes: 1\n")
    _touch_old(meta)
    parse_paths([log], jobs=1, cache=True)
    assert len(calls) == 1


def test_a_process_reads_an_entry_once_and_hands_out_copies(tmp_path, cache, monkeypatch):
    logs = _campaign(tmp_path)
    first = _kept(logs)
    run_throughputs(first, ["dlperf"])
    built = []
    real = result_cache.frame_from_json
    monkeypatch.setattr(result_cache, "frame_from_json", lambda *a: built.append(1) or real(*a))
    real_loads = json.loads

    def no_entry_loads(text, **kw):
        assert not isinstance(text, bytes), "an entry read again"
        return real_loads(text, **kw)

    monkeypatch.setattr(result_cache.json, "loads", no_entry_loads)
    a = parse_paths([logs], jobs=1, cache=True)
    a_runs = run_throughputs(a, ["dlperf"])["dlperf"]
    assert len(built) == 1  # the kept figures (computed, not yet built from the entry)
    built.clear()
    a.runs.loc[0, "model"] = "changed"
    a.runs["parameters"][0]["changed"] = "1"
    a_runs.loc[0, "throughput"] = -1.0
    b = parse_paths([logs], jobs=1, cache=True)
    assert built == []  # the frames built by the first call of this process are used
    _assert_same(first, b)
    assert "changed" not in b.runs["parameters"][0]
    assert run_throughputs(b, ["dlperf"])["dlperf"]["throughput"][0] != -1.0
    assert built == []


def test_frames_keep_every_dtype_and_missing_value_in_place():
    """The JSON columns give back the frame exactly: missing values where they were (also
    when a column's values are all distinct), nullable ints, strings of both string dtypes,
    dicts, a file name that is not UTF-8, an empty frame."""
    import numpy as np

    df = pd.DataFrame({
        "text": pd.array(["b", "a", None, "c", "a"], dtype="string"),
        "plain": pd.Series(["x", None, "y", "z", "w"]),
        "count": pd.array([3, None, 1, 2, None], dtype="Int64"),
        "n": np.array([5, 4, 3, 2, 1], dtype=np.int64),
        "value": [1.5, float("nan"), 2.25, -0.0, 1e300],
        "flag": [True, False, True, True, False],
        "params": pd.Series([{"a": "1"}, {}, {"a": "1"}, {"b": "2"}, {}], dtype=object),
        "name": pd.Series(["ok", "bad\udcff", "ok", "ok", "ok"], dtype=object),
    })
    for frame in (df, df.iloc[::-1].reset_index(drop=True), df.iloc[:0]):
        kept = json.loads(json.dumps(result_cache.frame_to_json(frame)))
        pd.testing.assert_frame_equal(result_cache.frame_from_json(kept), frame,
                                      check_exact=True)


def test_entries_not_written_for_a_month_are_deleted(tmp_path, cache):
    logs = _campaign(tmp_path)
    _kept(logs)
    [entry] = list(cache.iterdir())
    stale = cache / ("0" * 40 + ".json")
    stale.write_text("{}")
    month = time.time() - (result_cache.MAX_AGE_DAYS + 1) * 86400
    os.utime(stale, (month, month))
    recent = cache / ("1" * 40 + ".json")
    recent.write_text("{}")
    parse_paths([logs], jobs=1, cache=True, dlperf_only=True)  # writes another entry
    assert entry.exists() and recent.exists() and not stale.exists()


def test_the_fingerprint_walks_as_discovery_does(tmp_path):
    """Links to a folder above the named one, or to /proc, are not followed (a loop, or the
    whole machine); a link to a folder beside it is, once; a file written now: no entry."""
    logs = _campaign(tmp_path)
    before = result_cache.fingerprint([str(logs)])
    (logs / "up").symlink_to(tmp_path)
    (logs / "proc").symlink_to("/proc")
    with_loops = result_cache.fingerprint([str(logs)])
    assert with_loops is not None and with_loops != before  # the links are entries
    other = _settled_copy(DATA / "oneflow_cnn", tmp_path / "other")
    (logs / "more").symlink_to(other)
    (logs / "again").symlink_to(other)
    linked = result_cache.fingerprint([str(logs)])
    log = next(other.rglob("*.log"))
    os.utime(log, (OLD + 60, OLD + 60))
    assert result_cache.fingerprint([str(logs)]) not in (linked, None)  # seen through the link
    os.utime(log)
    assert result_cache.fingerprint([str(logs)]) is None
