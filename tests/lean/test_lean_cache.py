"""The lean lane keeps what it read per folder (analysis.lean.cache): an unchanged log is not
read again, a changed one is, a deleted one is forgotten, a corrupt store is ignored."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime

import pytest

from analysis.fsutil import CACHE_DIR_ENV
from analysis.lean import cache as lean_cache
from analysis.lean import lane

from ._corpus import dll_logs, write_corpus

#: The generated corpus's repeats spread up to ~10 %: not flagged here (the lane steps
#: aside from a flagged case, tests/lean/test_lean_matches_full.py).
WIDE = 0.5


@pytest.fixture
def logs(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    root = write_corpus(tmp_path / "logs", files=14, iterations=130)  # 2 logs a folder
    old = time.time() - 60  # settled files are kept
    for p in root.rglob("*.log"):
        os.utime(p, (old, old))
    return root


def _reads(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = lane.read_log
    monkeypatch.setattr(lane, "read_log", lambda path, limit: seen.append(path) or
                        real(path, limit))
    return seen


def test_an_unchanged_log_is_not_read_again(logs, monkeypatch):
    first = lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)
    seen = _reads(monkeypatch)
    assert repr(lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)) == repr(first)
    assert seen == []


def test_a_changed_log_is_read_again(logs, monkeypatch):
    lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)
    log = dll_logs(logs)[0]
    log.write_bytes(log.read_bytes() + b"one more line\n")
    seen = _reads(monkeypatch)
    lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)
    assert seen == [str(log)]


def test_a_deleted_log_is_forgotten_and_a_corrupt_store_ignored(logs, monkeypatch):
    lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)
    folder = dll_logs(logs)[0].parent
    store = lean_cache.FolderStore(os.path.realpath(folder))
    names = set(store.entries)
    gone = dll_logs(logs)[0]
    gone.unlink()
    lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)  # nothing new read: the store is not written ...
    store.path.write_text("{not json")  # ... so break it
    seen = _reads(monkeypatch)
    lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)
    assert sorted(seen) == sorted(str(p) for p in folder.glob("*.log"))  # read again
    kept = json.loads(store.path.read_text())["files"]
    assert gone.name in names and gone.name not in kept


def test_a_log_still_being_written_is_not_kept(logs):
    log = dll_logs(logs)[0]
    os.utime(log)  # modified just now
    lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)
    store = lean_cache.FolderStore(os.path.realpath(log.parent))
    assert log.name not in store.entries


def _earlier_iteration_125(data: bytes) -> bytes:
    """`data` with the time of Iteration 125 (the window's last line) halfway back to that
    of Iteration 124: the same size, another figure."""
    lines = data.split(b"\n")
    at = {int(ln.split(b"Iteration: ")[1].split()[0]): i for i, ln in enumerate(lines)
          if b" Iteration: " in ln}
    t124, t125 = (datetime.strptime(lines[at[k]][4:30].decode(), "%Y-%m-%d %H:%M:%S.%f")
                  for k in (124, 125))
    new = (t124 + (t125 - t124) / 2).strftime("%Y-%m-%d %H:%M:%S.%f").encode()
    lines[at[125]] = lines[at[125]][:4] + new + lines[at[125]][30:]
    return b"\n".join(lines)


@pytest.mark.parametrize("how", ["cp -p", "mv"])
def test_a_log_replaced_by_one_of_same_size_and_mtime_is_read_again(logs, how):
    before = lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)
    log = dll_logs(logs)[0]
    st = log.stat()
    data = _earlier_iteration_125(log.read_bytes())
    assert len(data) == st.st_size
    if how == "cp -p":  # cp onto an existing file rewrites its inode
        with open(log, "r+b") as fh:
            fh.write(data)
    else:
        other = log.with_name("other.tmp")
        other.write_bytes(data)
        os.replace(other, log)
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (log.stat().st_size, log.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    fresh = lane.summary_rows([logs], jobs=1, spread_threshold=WIDE, cache=False)
    assert repr(fresh) != repr(before)
    assert repr(lane.summary_rows([logs], jobs=1, spread_threshold=WIDE)) == repr(fresh)
