"""The parse cache: an unchanged file is not read again and gives the same frames; a changed
file is read again; a damaged store is ignored and rewritten; `--no-cache` writes none.
Entries are kept per file in one store per folder."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from analysis import collect, parse_cache
from analysis.collect import parse_paths
from analysis.logtext import max_log_bytes
from tests.cli._helpers import run_cli

OLD = time.time() - 3600  # files older than parse_cache.SETTLE_S are cached


def _log(k: int, total_ips: str = "800.00") -> str:
    lines = [f"DLL 2026-11-21 10:00:00.{k:06d} - PARAMETER arch : resnet50  batch_size : 64  "
             "amp : True  world_size : 1 ", "RUNNING EPOCHS FROM 0 TO 1"]
    lines += [f"DLL 2026-11-21 10:{i // 60:02d}:{i % 60:02d}.{(k + i) % 999999:06d} - Epoch: 0 "
              f"Iteration: {i}  train.loss : 6.5  train.total_ips : {total_ips} img/s"
              for i in range(1, 131)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def logs(tmp_path, monkeypatch):
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "logs" / "1n1g"
    folder.mkdir(parents=True)
    for k in (1, 2, 3):
        path = folder / f"r50_b64_amp_{k}.log"
        path.write_text(_log(k, "nan" if k == 3 else "800.00"))
        os.utime(path, (OLD, OLD))
    return tmp_path / "logs"


def _entries(tmp_path):
    return sorted((tmp_path / "cache").rglob("*.npz"))


def _count_reads(monkeypatch) -> list:
    """The files read from now on."""
    reads = []
    real = collect._read_file
    monkeypatch.setattr(collect, "_read_file", lambda path, *a: reads.append(path) or real(path, *a))
    return reads


def test_an_unchanged_file_is_not_read_again(logs, tmp_path, monkeypatch):
    plain = parse_paths([logs], jobs=1)
    first = parse_paths([logs], jobs=1, cache=True)
    assert len(_entries(tmp_path)) == 1  # one store for the folder
    reads = _count_reads(monkeypatch)
    again = parse_paths([logs], jobs=1, cache=True)
    assert reads == []
    for a, b in ((plain, first), (plain, again)):
        assert a.observations.equals(b.observations)
        assert a.runs.equals(b.runs)
        assert a.problems.equals(b.problems)
    assert "non_finite_value" in set(again.problems["kind"])  # problems come back too


def test_a_changed_file_is_read_again(logs, monkeypatch):
    parse_paths([logs], jobs=1, cache=True)
    path = logs / "1n1g" / "r50_b64_amp_1.log"
    path.write_text(_log(1, "900.00"))  # same size, new time
    os.utime(path, (OLD + 60, OLD + 60))
    reads = _count_reads(monkeypatch)
    result = parse_paths([logs], jobs=1, cache=True)
    assert reads == [path]
    obs = result.observations
    ips = obs[(obs["run_id"] == "1n1g/r50_b64_amp_1") & (obs["metric"] == "throughput")]
    assert set(ips["value"]) == {900.0}


def test_a_fresh_file_is_not_cached(logs, monkeypatch):
    path = logs / "1n1g" / "r50_b64_amp_1.log"
    os.utime(path, None)  # just written: a change in the same instant could go unseen
    parse_paths([logs], jobs=1, cache=True)
    reads = _count_reads(monkeypatch)
    parse_paths([logs], jobs=1, cache=True)
    assert reads == [path]


def test_a_deleted_file_is_forgotten(logs, tmp_path, monkeypatch):
    parse_paths([logs], jobs=1, cache=True)
    (logs / "1n1g" / "r50_b64_amp_2.log").unlink()
    changed = logs / "1n1g" / "r50_b64_amp_1.log"
    os.utime(changed, (OLD + 60, OLD + 60))  # the store is written again
    parse_paths([logs], jobs=1, cache=True)
    head = parse_cache.FolderCache(str((logs / "1n1g").resolve()), {
        "family": None, "max_bytes": max_log_bytes(), "dlperf_only": False})
    assert sorted(head.entries) == ["r50_b64_amp_1.log", "r50_b64_amp_3.log"]


def _garbled_middle(data: bytes) -> bytes:
    """What a crash can leave of a store written without fsync: a block of other bytes."""
    mid = len(data) // 2
    return data[:mid] + bytes(b ^ 0xA5 for b in data[mid:mid + 512]) + data[mid + 512:]


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 not a zip", None, _garbled_middle,
                                    lambda data: data[:len(data) * 2 // 3]])
def test_a_damaged_store_is_ignored_and_rewritten(logs, tmp_path, monkeypatch, damage):
    plain = parse_paths([logs], jobs=1)
    parse_paths([logs], jobs=1, cache=True)
    entry = _entries(tmp_path)[0]
    if damage is None:  # a valid store of another key (read another way) under this name
        parse_paths([logs], jobs=1, cache=True, dlperf_only=True)
        other = next(p for p in _entries(tmp_path) if p != entry)
        entry.write_bytes(other.read_bytes())
    elif callable(damage):  # cut short or zeroed, as a crash before the data reached disk
        entry.write_bytes(damage(entry.read_bytes()))
    else:
        entry.write_bytes(damage)
    reads = _count_reads(monkeypatch)
    result = parse_paths([logs], jobs=1, cache=True)
    assert len(reads) == 3
    assert result.observations.equals(plain.observations)
    assert result.runs.equals(plain.runs)
    reads.clear()
    parse_paths([logs], jobs=1, cache=True)
    assert reads == []  # rewritten


def test_cli_no_cache(logs, tmp_path, dlperf_exe):
    env = {**os.environ, parse_cache.CACHE_DIR_ENV: str(tmp_path / "cache")}
    off = run_cli(dlperf_exe, "summarize", logs, "--format", "csv", "--no-cache", env=env)
    assert off.returncode == 0, off.stderr
    assert _entries(tmp_path) == []
    on = run_cli(dlperf_exe, "summarize", logs, "--format", "csv", env=env)
    again = run_cli(dlperf_exe, "summarize", logs, "--format", "csv", env=env)
    assert len(_entries(tmp_path)) == 1
    assert off.stdout == on.stdout == again.stdout
    assert off.stderr == on.stderr == again.stderr


def _replace_keeping_size_and_mtime(path, data: str, how: str) -> None:
    """Put `data` (of `path`'s size) in `path`, its mtime kept: ``cp -p other path`` (the
    same inode rewritten, as cp does onto an existing file) or ``mv other path`` (another
    inode, written in the same second)."""
    st = os.stat(path)
    assert len(data.encode()) == st.st_size
    if how == "cp -p":
        with open(path, "r+b") as fh:
            fh.write(data.encode())
    else:
        other = path.with_name("other.tmp")
        other.write_text(data)
        os.replace(other, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert (after.st_ino == st.st_ino) == (how == "cp -p")


@pytest.mark.parametrize("how", ["cp -p", "mv"])
def test_a_file_replaced_by_one_of_same_size_and_mtime_is_read_again(logs, how):
    parse_paths([logs], jobs=1, cache=True)
    path = logs / "1n1g" / "r50_b64_amp_1.log"
    _replace_keeping_size_and_mtime(path, _log(1, "900.00"), how)
    result = parse_paths([logs], jobs=1, cache=True)
    obs = result.observations
    ips = obs[(obs["run_id"] == "1n1g/r50_b64_amp_1") & (obs["metric"] == "throughput")]
    assert set(ips["value"]) == {900.0}
    assert obs.equals(parse_paths([logs], jobs=1).observations)


def test_any_change_to_the_package_source_makes_entries_stale(logs, tmp_path, monkeypatch):
    """The code version is a hash of every analysis/**/*.py: a module no list names (here a
    new one in a subpackage) changes it too."""
    package = tmp_path / "package"
    shutil.copytree(parse_cache._PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(parse_cache, "_PACKAGE", package)
    parse_cache.code_version.cache_clear()
    parse_paths([logs], jobs=1, cache=True)
    reads = _count_reads(monkeypatch)
    parse_paths([logs], jobs=1, cache=True)
    assert reads == []
    (package / "stats" / "added_module.py").write_text("X = 1\n")
    parse_cache.code_version.cache_clear()
    parse_paths([logs], jobs=1, cache=True)
    assert len(reads) == 3
    parse_cache.code_version.cache_clear()


def _count_figures(monkeypatch) -> list:
    """The runs measured by the ``dlperf`` method from now on."""
    from analysis.stats import methods

    measured = []
    get = methods.get
    monkeypatch.setattr(methods, "get", lambda name: (
        lambda rd, *a: measured.append(rd.run_id) or get(name)(rd, *a)) if name == "dlperf"
        else get(name))
    return measured


def _frame(result, **kw):
    from analysis.stats import run_throughput

    return run_throughput(result, "dlperf", **kw).drop(columns="outlier")


def test_a_runs_figure_is_kept_in_its_logs_entry(logs, monkeypatch):
    """A run read from the store is not measured again: its figure by the same method and
    window comes back, the same as measured; another window, another row (stated fields)
    or a changed file is measured."""
    from analysis.stats import run_throughput

    plain = run_throughput(parse_paths([logs], jobs=1), "dlperf")
    first = run_throughput(parse_paths([logs], jobs=1, cache=True), "dlperf")
    measured = _count_figures(monkeypatch)
    again = parse_paths([logs], jobs=1, cache=True)
    kept = run_throughput(again, "dlperf")
    assert measured == []
    assert plain.equals(first) and plain.equals(kept)
    assert kept["throughput"].notna().all()
    run_throughput(again, "window", warmup=3, measure=50)  # another method: its own figures
    path = logs / "1n1g" / "r50_b64_amp_1.log"
    path.write_text(_log(1, "900.00"))
    os.utime(path, (OLD + 60, OLD + 60))
    changed = _frame(parse_paths([logs], jobs=1, cache=True))
    assert measured == ["1n1g/r50_b64_amp_1"]
    assert changed.equals(_frame(parse_paths([logs], jobs=1)))
    measured.clear()
    meta = {"num_nodes": 1, "gpus_per_node": 2}  # the log's world_size 1 disagrees
    stated = _frame(parse_paths([logs], jobs=1, cache=True, meta=meta))
    assert len(measured) == 3  # another row (its problems): measured again
    assert stated.equals(_frame(parse_paths([logs], jobs=1, meta=meta)))


def test_a_kept_figure_is_by_window(logs, monkeypatch):
    from analysis.stats import run_throughput

    for warmup in (2, 3, 2):
        result = parse_paths([logs], jobs=1, cache=True)
        got = run_throughput(result, "window", warmup=warmup, measure=100)
        plain = run_throughput(parse_paths([logs], jobs=1), "window", warmup=warmup, measure=100)
        assert got.equals(plain)


def test_one_argument_dump_is_stored_once_and_shared_when_read(logs, tmp_path):
    import json

    import numpy as np

    parse_paths([logs], jobs=1, cache=True)
    [store] = _entries(tmp_path)
    with np.load(store) as z:
        head = json.loads(z["head"].tobytes())
    assert len(head["dumps"]) == 1  # three logs of one configuration
    assert {e["parsed"]["parameters"] for e in head["entries"].values()} == {0}
    again = parse_paths([logs], jobs=1, cache=True)
    dumps = [parsed.parameters for parsed in again.parsed_by_run().values() for parsed in parsed]
    assert len(dumps) == 3 and all(d is dumps[0] for d in dumps)
    assert dumps[0]["arch"] == "resnet50"


def test_a_store_whose_dump_index_is_wrong_is_ignored(logs, tmp_path, monkeypatch):
    import json

    import numpy as np

    parse_paths([logs], jobs=1, cache=True)
    [store] = _entries(tmp_path)
    with np.load(store) as z:
        columns = {k: z[k] for k in z.files}
    head = json.loads(columns["head"].tobytes())
    next(iter(head["entries"].values()))["parsed"]["parameters"] = 7  # no such dump
    columns["head"] = np.frombuffer(json.dumps(head).encode(), dtype=np.uint8)
    np.savez(store, **columns)
    reads = _count_reads(monkeypatch)
    parse_paths([logs], jobs=1, cache=True)
    assert len(reads) == 3  # every file read again, none trusted
