"""Whole parse results kept between calls: re-reading an unchanged campaign costs
milliseconds (``parse_paths(..., cache=True)``, as notebooks and the CLI call it).

An entry answers one call: the paths as named, the working folder and the options. It is
used only while its fingerprint holds: every file and folder under the named paths (name,
kind, size, ``mtime_ns``, inode, device, ``ctime_ns``: a new, changed, removed or replaced
log, meta file or campaign record is a miss, a ``cp -p`` onto it too; a named folder's
parent ``status.json`` counts too, as it says which of the folder's logs are runs) and
the code version (the names, sizes and mtimes of the package's sources). It keeps the runs and problems frames
and the per-run figures computed from the result (by method, warm-up and window), column by
column in JSON with their dtypes (no pickle), rebuilt exactly. Observations are not kept:
asked for, they are read again through the per-file cache (:mod:`analysis.parse_cache`).
Nothing is kept while a file changed in the last SETTLE_S seconds; an entry that cannot be
read, or whose frames cannot be rebuilt, is a miss and is rewritten. Entries not written for
MAX_AGE_DAYS are deleted when another is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
import time
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis.discover import holds, is_pseudo
from analysis.fsutil import SETTLE_S, atomic_write_bytes, cache_dir, file_identity
from analysis.strays import STATUS_NAME
from analysis.user_meta import is_meta_name

if TYPE_CHECKING:
    import pandas as pd

_PACKAGE = Path(__file__).resolve().parent
#: Format of an entry; a different one is a miss.
_FORMAT = 1
#: Entries older than this are deleted when another is written.
MAX_AGE_DAYS = 30


@cache
def code_version() -> str:
    """Hash of the name, size and modification time of every source file of the package:
    any change to the code (an edit, another version installed) is a miss."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(_PACKAGE.rglob("*.py")):
        st = path.stat()
        h.update(b"%s %d %d\0" % (str(path.relative_to(_PACKAGE)).encode(), st.st_size,
                                   st.st_mtime_ns))
    return h.hexdigest()


class Unsettled(Exception):
    """A file under the named paths changed in the last SETTLE_S seconds."""


def fingerprint(paths: list[str]) -> str | None:
    """A hash of everything under `paths` a parse could read (links followed, each folder
    once, pseudo-filesystems not entered); None when a file is still being written."""
    h = hashlib.blake2b(digest_size=20)
    newest = time.time_ns() - int(SETTLE_S * 1e9)
    try:
        for raw in paths:
            h.update(b"\1" + os.fsencode(raw))
            try:
                st = os.stat(raw)
            except OSError as exc:
                h.update(f"!{exc.errno}".encode())
                continue
            _add(h, st, newest)
            if stat.S_ISDIR(st.st_mode):
                root = os.path.realpath(raw)
                _walk(h, os.fspath(raw), {root}, newest, root)
                _add_parent_status(h, os.fspath(raw), newest)
            else:  # a named file: the meta files beside it count too
                folder = os.path.dirname(os.fspath(raw)) or "."
                for name in sorted(os.listdir(folder)):
                    if is_meta_name(name):
                        h.update(b"\2" + os.fsencode(name))
                        _add(h, os.stat(os.path.join(folder, name)), newest)
    except Unsettled:
        return None
    except OSError as exc:  # a folder vanished while walked: a state no entry matches
        h.update(f"!{exc}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _add_parent_status(h, folder: str, newest: int) -> None:
    """The campaign status beside a named folder (``camp/1n1g`` named: ``camp/status.json``),
    which says whether the folder's logs are runs of the campaign (analysis.strays)."""
    path = os.path.join(os.path.dirname(os.path.abspath(folder)), STATUS_NAME)
    try:
        st = os.stat(path)
    except OSError:
        return
    h.update(b"\3")
    _add(h, st, newest)


def _add(h, st: os.stat_result, newest: int) -> None:
    if st.st_mtime_ns > newest and not stat.S_ISDIR(st.st_mode):
        raise Unsettled
    h.update(b"%d %d %d %d %d %d" % (st.st_mode, *file_identity(st)))


def _walk(h, folder: str, seen: set[str], newest: int, root: str) -> None:
    """Add `folder`'s entries to `h`, then its folders' (links to a folder followed once,
    not to one holding `root` or on a pseudo-filesystem: as discovery walks)."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        h.update(f"!{exc.errno}".encode())
        return
    rows, folders = [], []
    for entry in entries:
        try:
            st = entry.stat()
        except OSError as exc:
            rows.append((entry.name, exc.errno))
            continue
        rows.append((entry.name, st.st_mode, *file_identity(st)))
        if stat.S_ISDIR(st.st_mode):
            folders.append(entry)
        elif st.st_mtime_ns > newest:
            raise Unsettled
    h.update(repr(rows).encode("utf-8", "surrogateescape"))
    for entry in folders:
        if not entry.is_symlink():
            _walk(h, entry.path, seen, newest, root)
            continue
        real = os.path.realpath(entry.path)
        if real not in seen and not is_pseudo(real) and not holds(real, root):
            seen.add(real)
            _walk(h, entry.path, seen, newest, root)


# --- frames as JSON columns ------------------------------------------------------------
def _plain(value):
    """`value` as JSON holds it (numpy scalars as Python ones, a missing value as None)."""
    if isinstance(value, (str, dict, list, bool, int, float)) and not isinstance(value, np.generic):
        return value
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, np.floating):
        return float(value)
    import pandas as pd

    if value is None or (np.ndim(value) == 0 and pd.isna(value)):
        return None
    raise TypeError(f"cannot keep a {type(value).__name__}")


def frame_to_json(df: pd.DataFrame, like: pd.DataFrame | None = None) -> dict:
    """`df` as {"dtypes": [...], "columns": {name: values}}: numbers as they are, other
    columns as their distinct values and a code per row, a column equal to the one of its
    name in `like` by that name."""
    columns = {}
    for name in df.columns:
        s = df[name]
        if like is not None and name in like.columns and len(like) == len(df) and (
                _like(like[name], s.dtype).equals(s.reset_index(drop=True))):
            columns[name] = {"like": name}
            continue
        if s.dtype.kind in "fbiu" and str(s.dtype) == s.dtype.name.lower():
            columns[name] = s.to_numpy().tolist()
            continue
        values, codes = _distinct(s)
        columns[name] = {"values": values, "codes": (
            None if codes == list(range(len(codes))) else codes[0] if len(values) == 1 else codes)}
    return {"rows": len(df), "dtypes": [str(t) for t in df.dtypes], "columns": columns}


def _distinct(s: pd.Series) -> tuple[list, list[int]]:
    """The distinct values of `s` (JSON's kind; a missing one as None) and each row's code:
    by pandas' factorize where the dtype has no Python objects (strings, nullable ints)."""
    if s.dtype != object:
        import pandas as pd

        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        values = [_plain(v) for v in uniques.to_numpy(dtype=object)]
        if (codes < 0).any():
            codes = np.where(codes < 0, len(values), codes)
            values.append(None)
        return values, codes.tolist()
    codes, distinct = [], {}
    for v in s.to_numpy(dtype=object):
        v = _plain(v)
        key = json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else (type(v), v)
        codes.append(distinct.setdefault(key, (len(distinct), v))[0])
    return [v for _, v in distinct.values()], codes


def _like(column: pd.Series, dtype) -> pd.Series:
    """`column` in `dtype`, as a new array on a fresh index."""
    return column.astype(dtype).reset_index(drop=True).copy()


def frame_from_json(data: dict, like: pd.DataFrame | None = None) -> pd.DataFrame:
    """The frame `frame_to_json` kept (with the same `like`), with its dtypes."""
    import pandas as pd

    names, dtypes, rows = list(data["columns"]), data["dtypes"], int(data["rows"])
    if len(names) != len(dtypes):
        raise ValueError("columns and dtypes differ in number")
    cols = {}
    for name, dtype in zip(names, dtypes, strict=True):
        kept = data["columns"][name]
        if isinstance(kept, list):  # numbers
            col = np.array([math.nan if v is None else v for v in kept], dtype=dtype)
        elif "like" in kept:
            if like is None:
                raise ValueError(f"column {name} is like a frame not given")
            col = _like(like[kept["like"]], dtype).array
        else:
            values, codes = kept["values"], kept["codes"]
            if codes is None and dtype != "object":  # each row its own value
                col = pd.array(values, dtype=dtype)
            else:
                codes = (np.arange(rows) if codes is None else np.full(rows, codes, np.intp)
                         if isinstance(codes, int) else np.array(codes, dtype=np.intp))
                if dtype != "object":
                    col = pd.array(values, dtype=dtype).take(codes)
                else:  # rows share a dict here: Entry hands out copies (`_copy`)
                    distinct = np.empty(len(values), dtype=object)
                    distinct[:] = values
                    col = pd.Series(distinct[codes], dtype=object, copy=False)
        if len(col) != rows:
            raise ValueError(f"column {name} has {len(col)} rows, not {rows}")
        cols[name] = col
    return pd.DataFrame(cols, columns=names, index=pd.RangeIndex(rows), copy=False)


# --- entries ---------------------------------------------------------------------------
class Entry:
    """The kept result of one call: `frames` (runs, problems) when it holds for the files
    as they are now, else None; per-run figures by (method, warm-up, window)."""

    def __init__(self, call: dict, paths: list[str]) -> None:
        text = json.dumps({"format": _FORMAT, "cwd": os.getcwd(), "paths": paths, **call},
                          sort_keys=True, default=str)
        self.call = json.loads(text)  # as an entry holds it
        name = hashlib.blake2b(text.encode("utf-8", "surrogateescape"),
                               digest_size=20).hexdigest()
        self.path = cache_dir() / "results" / f"{name}.json"
        self.state = fingerprint(paths)
        self.data: dict | None = None
        self._built: dict[str, pd.DataFrame] = {}  # frames built from `data`, by part
        self._runs: pd.DataFrame | None = None  # the runs frame handed out, and a copy of it
        self._runs_copy: pd.DataFrame | None = None
        if self.state is not None:
            self._load()

    def _load(self) -> None:
        try:
            st = os.stat(self.path)
            file_key = (st.st_size, st.st_mtime_ns, st.st_ino)
            recent = _recent.get(self.path)
            if recent is not None and recent[0] == file_key:
                data, self._built = recent[1], recent[2]
            else:
                data = json.loads(self.path.read_bytes())
                _remember(self.path, file_key, data, self._built)
        except (OSError, ValueError):
            return
        if (isinstance(data, dict) and data.get("call") == self.call and
                data.get("state") == self.state and
                data.get("version") == code_version()):
            self.data = data

    def _frame(self, part: str, like: pd.DataFrame | None = None) -> pd.DataFrame:
        """A copy of the frame kept as `part` ("runs", "problems", "per_run|<method>|…"),
        built once per process."""
        df = self._built.get(part)
        if df is None:
            kept = self.data["per_run"][part[8:]] if part.startswith("per_run|") else \
                self.data[part]
            df = self._built[part] = frame_from_json(kept, like)
        return _copy(df)

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """(runs, problems) as the call gave them, or None."""
        if self.data is None:
            return None
        try:
            runs, problems = self._frame("runs"), self._frame("problems")
        except Exception:  # noqa: BLE001 - a damaged entry is a miss, never an error
            self.data = None
            return None
        self._hand_out(runs)
        return runs, problems

    def keep(self, runs: pd.DataFrame, problems: pd.DataFrame) -> None:
        """Keep the frames of a fresh parse (not while a file is unsettled)."""
        if self.state is None:
            return
        self._built = {}
        try:
            self.data = {"call": self.call, "state": self.state, "version": code_version(),
                         "runs": frame_to_json(runs), "problems": frame_to_json(problems),
                         "per_run": {}}
        except TypeError:  # a value JSON cannot hold: not kept
            self.data = None
            return
        self._hand_out(runs)
        self._write()

    def per_run(self, name: str, warmup: int, measure: int,
                runs: pd.DataFrame) -> pd.DataFrame | None:
        """The per-run figures by `name` kept for these runs (`runs` as they are now: a
        frame changed since the parse is not these runs), or None."""
        key = f"{name}|{warmup}|{measure}"
        if key not in (self.data or {}).get("per_run", {}) or not self._same_runs(runs):
            return None
        try:
            return self._frame(f"per_run|{key}", like=runs)
        except Exception:  # noqa: BLE001 - a damaged entry is a miss, never an error
            return None

    def keep_per_run(self, frames: dict[tuple[str, int, int], pd.DataFrame],
                     runs: pd.DataFrame) -> None:
        if self.data is None or not frames or not self._same_runs(runs):
            return
        try:
            for (name, warmup, measure), df in frames.items():
                self.data["per_run"][f"{name}|{warmup}|{measure}"] = frame_to_json(df, runs)
        except TypeError:
            return
        self._write()

    def _hand_out(self, runs: pd.DataFrame) -> None:
        self._runs, self._runs_copy = runs, runs.copy()

    def _same_runs(self, runs: pd.DataFrame) -> bool:
        """Whether `runs` is the frame handed out, unchanged (not one a user edited or
        replaced: figures kept for the parse are not its figures)."""
        return runs is self._runs and runs.equals(self._runs_copy)

    def _write(self) -> None:
        try:
            body = json.dumps(self.data, default=str, allow_nan=True).encode(
                "utf-8", "surrogateescape")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.path, body)
            st = os.stat(self.path)
        except (OSError, ValueError):  # a full disk or a read-only cache: not kept
            return
        _remember(self.path, (st.st_size, st.st_mtime_ns, st.st_ino), self.data, self._built)
        _forget_old(self.path.parent, st.st_mtime_ns)


def _forget_old(folder: Path, now_ns: int) -> None:
    """Delete the entries of `folder` not written for MAX_AGE_DAYS (best effort)."""
    oldest = now_ns - MAX_AGE_DAYS * 86400 * 10**9
    try:
        with os.scandir(folder) as it:
            old = [e.path for e in it if e.name.endswith(".json")
                   and e.stat(follow_symlinks=False).st_mtime_ns < oldest]
    except OSError:
        return
    for path in old:
        with contextlib.suppress(OSError):
            os.unlink(path)


#: Entries read or written by this process, by path: (file size, mtime_ns, inode), the
#: parsed JSON, the frames built from it. A notebook re-running a cell reads nothing again.
_recent: dict[Path, tuple[tuple, dict, dict]] = {}
_RECENT_MAX = 4


def _remember(path: Path, file_key: tuple, data: dict, built: dict) -> None:
    _recent.pop(path, None)
    _recent[path] = (file_key, data, built)
    while len(_recent) > _RECENT_MAX:
        _recent.pop(next(iter(_recent)))


def _copy(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` its receiver may change: the dicts of object columns copied too."""
    import pandas as pd

    out = df.copy()
    for name in out.columns:
        if out[name].dtype == object:
            values = out[name].to_numpy(copy=True)
            for i in np.flatnonzero([isinstance(v, dict) for v in values]):
                values[i] = dict(values[i])
            out[name] = pd.Series(values, index=out.index, dtype=object)
    return out

