"""What reading each log gave, kept between runs (``--no-cache`` turns it off).

Entries are keyed per file: its real path, size, ``mtime_ns``, inode, device and
``ctime_ns`` and whether it was named on the command line (the inode catches a file replaced
by another of the same size and mtime, ``mv``/``rsync -t``; ``ctime_ns``, which no tool sets,
one rewritten in place with its mtime put back, ``cp -p``; a chmod or rename costs one
read), in a store of its folder that also names how the files were read
(forced family, byte cap, first lines only) and the code version (a hash of the source of
the whole `analysis` package); a changed file is read again, a deleted one forgotten when its folder's store is next
written. One store per folder (a numpy ``.npz`` read without pickle: a JSON head and the
numeric columns of every entry concatenated; each distinct argument dump once, which the
entries stating it share when read) is one read and one write per folder, where an entry per
file cost more than reading the lines the DLPerf rules need. A store that cannot
be read or names another key is ignored and rewritten, never trusted. A file changed in the
last seconds is not cached (its next change could keep its size and ``mtime_ns``).
Each entry also keeps the log's copy signature (:func:`analysis.duplicate_runs.signature`:
its arrays, its hashed index keys among them, in the numeric columns), so a warm run only
looks them up and compares them. The entry of a run's
main log also keeps the run's figure by each method and window asked
for (:class:`RunFigures`), under a digest of all else it depends on (the run's row, its
files, the problems that withhold a figure): a run read from the store is not measured again.
Folder: ``$DLPERF_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlperf/parse``, else
``~/.cache/dlperf/parse``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from functools import cache
from pathlib import Path

import numpy as np

from analysis.duplicate_runs import Signature
from analysis.fsutil import (  # noqa: F401  (CACHE_DIR_ENV re-exported)
    CACHE_DIR_ENV,
    SETTLE_S,
    atomic_path,
    cache_dir,
    file_identity,
)
from analysis.parsers.base import Observations, ParsedLog, repeated
from analysis.problems import Problem

_NUMERIC = ("value", "line", "step", "epoch", "rank", "device", "timestamp")
_DTYPES = {"value": np.float64, "timestamp": np.float64}  # the others int64
_NAMES = ("phase", "metric", "unit")
#: A signature's arrays: their column in the store (rows as int64 bits) and dtype.
_SIGNATURE = (("stamps", "step", np.int64), ("steps", "step", np.int64),
              ("rows", "step", np.uint64), ("lines", "step", np.int64),
              ("table", "value", np.float64), ("keys", "step", np.uint64),
              ("near", "step", np.uint64))
_PACKAGE = Path(__file__).resolve().parent


@cache
def code_version() -> str:
    """Hash of the source of every module of the `analysis` package: any change to the code
    makes every entry stale, so no list of modules decides what a read depends on."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(_PACKAGE.rglob("*.py")):
        h.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def entry_name(real_path: str) -> str:
    """The name of a file's entry in its folder's store (its real path's last part)."""
    return os.path.basename(real_path)


def _problem_row(p: Problem) -> list:
    return [p.source, p.line, p.kind, p.reason, p.text, p.run_id]


class FolderCache:
    """The entries of one folder's logs read `how`: :meth:`get` one, :meth:`put` a new one,
    :meth:`save` the store when it changed."""

    def __init__(self, folder: str, how: dict) -> None:
        self.folder = folder
        self.key = {"folder": folder, "version": code_version(), **how}
        name = hashlib.blake2b(json.dumps(self.key, sort_keys=True).encode(),
                               digest_size=20).hexdigest()
        self.path = cache_dir() / name[:2] / f"{name}.npz"
        self.entries: dict[str, dict] = {}
        self.columns: dict[str, np.ndarray] = {}
        self.new: dict[str, tuple] = {}
        self.figures: dict[str, dict] = {}  # entry name -> {figure key: kept figure}, to add
        self.shared: dict[tuple, np.ndarray] = {}  # read-only columns of the entries read
        self._load()

    def _load(self) -> None:
        try:
            with np.load(self.path, allow_pickle=False) as z:
                head = json.loads(z["head"].tobytes())
                columns = {name: z[name] for name in _NUMERIC}
        except Exception:  # noqa: BLE001 - a damaged or absent store is a miss, never an error
            return
        if head.get("key") != self.key:
            return
        try:  # each distinct argument dump is stored once: entries share its dict again
            dumps = head["dumps"]
            for entry in head["entries"].values():
                if entry.get("parsed"):
                    entry["parsed"]["parameters"] = dumps[entry["parsed"]["parameters"]]
        except (KeyError, TypeError, IndexError, AttributeError):
            return
        self.entries, self.columns = head["entries"], columns

    @staticmethod
    def _stat(path: Path, explicit: bool, real: str = "") -> dict | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        if time.time_ns() - st.st_mtime_ns < SETTLE_S * 1e9:
            return None
        return {"path": real or os.path.realpath(path), "file": file_identity(st),
                "explicit": explicit}

    def get(self, path: Path, explicit: bool, real: str = ""
            ) -> tuple[dict, ParsedLog | None, list[Problem], Signature | None] | None:
        """(fields, parsed, problems, signature) kept for `path` (whose real path is `real`,
        when the caller knows it) as it is now, or None."""
        stat = self._stat(path, explicit, real)
        entry = self.entries.get(entry_name(stat["path"])) if stat else None
        if entry is None or entry["stat"] != stat:
            return None
        try:
            return entry["fields"], self._parsed(entry.get("parsed")), [
                Problem(*r) for r in entry["problems"]], self._signature(entry.get("signature"))
        except (KeyError, TypeError, ValueError):
            return None

    def _signature(self, s: dict | None) -> Signature | None:
        if s is None:
            return None
        arrays = {}
        for (field, column, dtype), at, n in zip(_SIGNATURE, s["at"], s["n"], strict=True):
            a = self.columns[column][at:at + n]
            if len(a) != n:
                raise ValueError("a signature beyond the columns")
            arrays[field] = a.view(dtype)
        names = tuple(s["names"])
        return Signature(arrays["stamps"], arrays["steps"], arrays["rows"], s["resolution"],
                         s["distinct"], s["varied"], arrays["lines"], names,
                         arrays["table"].reshape(len(names), -1), arrays["keys"],
                         arrays["near"])

    def _parsed(self, p: dict | None) -> ParsedLog | None:
        if p is None:
            return None
        parsed = ParsedLog(p["family"], Observations(), p["meta"],
                           {k: int(v) for k, v in p["meta_lines"].items()}, p["parameters"],
                           [Problem(*r) for r in p["problems"]])
        shared = self.shared  # one array per stored column part, as parsed
        for block in p["blocks"]:
            n, cols = block["n"], block["cols"]
            if set(cols) != set(_NUMERIC):
                raise ValueError("a block without every column")
            b = {"n": n}
            for name, where in cols.items():
                if isinstance(where, list):  # one value repeated (read-only: shared)
                    key = ("=", name, where[0], n)
                    if key not in shared:
                        shared[key] = repeated(where[0], n, _dtype(name))
                    b[name] = shared[key]
                    continue
                key = (name, where, n)
                if key not in shared:
                    shared[key] = self.columns[name][where:where + n]
                    if len(shared[key]) != n:
                        raise ValueError("a block beyond the columns")
                b[name] = shared[key]
            for name in _NAMES:
                v = block[name]
                b[name] = v if isinstance(v, str) else np.array(v, dtype=object)
            parsed.obs.blocks.append(b)
        return parsed

    def figure(self, name: str, key: str, digest: str) -> dict | None:
        """The figure kept by `key` in the entry `name` (a file just found unchanged) when it
        was made from what `digest` sums up, else None."""
        kept = ((self.entries.get(name) or {}).get("figures") or {}).get(key)
        return kept["figure"] if isinstance(kept, dict) and kept.get("digest") == digest else None

    def put_figure(self, name: str, key: str, digest: str, figure: dict) -> None:
        """Keep `figure` by `key` in the entry `name` (written by :meth:`save`)."""
        self.figures.setdefault(name, {})[key] = {"digest": digest, "figure": figure}

    def put(self, path: Path, explicit: bool, fields: dict, parsed: ParsedLog | None,
            problems: list[Problem], real: str = "", signature: Signature | None = None
            ) -> str | None:
        """Keep what reading `path` gave (not when it changed in the last SETTLE_S); the
        name of its entry, or None when it is not kept."""
        stat = self._stat(path, explicit, real)
        if stat is None:
            return None
        name = entry_name(stat["path"])
        self.new[name] = (stat, fields, parsed, problems, signature)
        return name

    def save(self) -> None:
        """Write the store when entries or figures were added; entries of files gone are
        dropped. What cannot be written is not (the next run reads those files again). The
        store can be saved again after more figures were put."""
        if not self.new and not self.figures:
            return
        entries = {name: e for name, e in self.entries.items()
                   if name not in self.new and os.path.exists(e["stat"]["path"])}
        entries = {name: {**e, "parsed": _copied(e.get("parsed"))} if e.get("parsed") else e
                   for name, e in entries.items()}  # their offsets change below
        parts: dict[str, list] = {name: [] for name in _NUMERIC}
        ends = dict.fromkeys(_NUMERIC, 0)
        for entry in entries.values():  # kept entries: their columns move to the new arrays
            moved: dict[tuple, int] = {}
            for block in (entry.get("parsed") or {}).get("blocks", []):
                for name, where in block["cols"].items():
                    if isinstance(where, int):
                        key = (name, where, block["n"])
                        if key not in moved:
                            moved[key] = _append(parts, ends, name,
                                                 self.columns[name][where:where + block["n"]])
                        block["cols"][name] = moved[key]
            if entry.get("signature"):
                entry["signature"] = {**entry["signature"], "at": [
                    _append(parts, ends, column, self.columns[column][at:at + n])
                    for (_, column, _), at, n in zip(_SIGNATURE, entry["signature"]["at"],
                                                     entry["signature"]["n"], strict=True)]}
        try:
            for name, (stat, fields, parsed, problems, sig) in self.new.items():
                entries[name] = self._entry(stat, fields, parsed, problems, parts, ends)
                if sig is not None:
                    entries[name]["signature"] = _stored_signature(sig, parts, ends)
            for name, figures in self.figures.items():
                if name in entries:
                    entries[name] = {**entries[name],
                                     "figures": {**entries[name].get("figures", {}), **figures}}
            head = json.dumps({"key": self.key, **_shared_dumps(entries)}).encode()
        except (TypeError, ValueError):  # a value JSON cannot hold: read the files next time
            return
        columns = {name: np.concatenate(v).astype(_dtype(name)) if v else
                   np.empty(0, _dtype(name)) for name, v in parts.items()}
        self.entries, self.columns, self.new, self.figures = entries, columns, {}, {}
        try:  # not synced: a store cut short by a crash fails its zip CRCs when read
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(self.path, sync=False) as tmp:
                np.savez(tmp, head=np.frombuffer(head, dtype=np.uint8), **columns)
        except OSError:
            pass

    @staticmethod
    def _entry(stat: dict, fields: dict, parsed: ParsedLog | None, problems: list[Problem],
               parts: dict[str, list], ends: dict[str, int]) -> dict:
        """The entry of one file; its columns go to `parts`. A column repeating one value is
        kept as that value, and an array several blocks share (a line's metrics share their
        line, step and timestamp arrays) is stored once."""
        entry = {"stat": stat, "fields": fields, "problems": [_problem_row(p) for p in problems]}
        if parsed is not None:
            blocks, stored = [], {}
            for b in parsed.obs.blocks:
                n, cols = int(b["n"]), {}
                for name in _NUMERIC:
                    a = b[name]
                    if n == 1 or a.strides == (0,):
                        cols[name] = [a[0].item()]
                    else:
                        if (name, id(a)) not in stored:
                            stored[name, id(a)] = _append(parts, ends, name, a)
                        cols[name] = stored[name, id(a)]
                block = {"n": n, "cols": cols}
                for name in _NAMES:
                    v = b[name]
                    block[name] = v if isinstance(v, str) else [str(x) for x in v]
                blocks.append(block)
            entry["parsed"] = {"family": parsed.family, "meta": parsed.meta,
                               "meta_lines": parsed.meta_lines, "parameters": parsed.parameters,
                               "problems": [_problem_row(p) for p in parsed.problems],
                               "blocks": blocks}
        return entry


def _stored_signature(sig: Signature, parts: dict[str, list], ends: dict[str, int]) -> dict:
    """A signature's entry; its arrays go to `parts` (rows as their int64 bits)."""
    arrays = [np.ravel(getattr(sig, field)).view(np.int64 if column == "step" else np.float64)
              for field, column, _ in _SIGNATURE]
    return {"names": list(sig.names), "resolution": int(sig.resolution),
            "distinct": bool(sig.distinct), "varied": bool(sig.varied),
            "n": [len(a) for a in arrays],
            "at": [_append(parts, ends, column, a)
                   for (_, column, _), a in zip(_SIGNATURE, arrays, strict=True)]}


def _shared_dumps(entries: dict[str, dict]) -> dict:
    """The store's head: `entries` with each parse's argument dump as an index into
    ``dumps``, where each distinct dump is once (the runs of one folder mostly state the
    same one: stored per entry, the dumps were most of the head and of reading it)."""
    dumps: list[dict] = []
    index: dict[object, int] = {}
    out = {}
    for name, entry in entries.items():
        parsed = entry.get("parsed")
        if parsed:
            params = parsed["parameters"]
            key = index.get(id(params))
            if key is None:
                text = json.dumps(params, sort_keys=True)
                key = index.setdefault(text, len(dumps))
                if key == len(dumps):
                    dumps.append(params)
                index[id(params)] = key
            entry = {**entry, "parsed": {**parsed, "parameters": key}}
        out[name] = entry
    return {"dumps": dumps, "entries": out}


def _copied(parsed: dict) -> dict:
    """A kept entry's parse with its own block dicts, whose column offsets `save` rewrites
    (the entry read from the old store keeps the old offsets until the new one replaces it)."""
    return {**parsed, "blocks": [{**b, "cols": dict(b["cols"])} for b in parsed["blocks"]]}


def figure_digest(key: str, row: dict, files: list[str], stated: dict) -> str:
    """What a run's figure by `key` depends on besides its files' text: the row's fields (not
    its ``parameters``, which its files' text alone gives: a JSON or repr of a whole argument
    dump per run cost more than the figure), its files (sorted), the stated problems."""
    # values alone: the keys are the code's (RUN_FIELDS), and the code's version keys stores
    fields = [v for k, v in row.items() if k != "parameters"]
    text = repr((key, fields, files, sorted(stated.items())))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class RunFigures:
    """The per-run figures a parse already holds: those the store keeps, each in the entry
    of its main log, by method and window (`key`), and those made where the run was read (a
    worker process), each under :func:`figure_digest` of what else makes the figure. A kept
    figure is given back only for a run whose files were all found unchanged in the store,
    a figure made now only when the run's final row and problems give the same digest."""

    def __init__(self) -> None:
        self.runs: dict[str, tuple[FolderCache, str, list[str], bool]] = {}
        self.made: dict[str, tuple[list[str], dict[str, tuple[str, dict]]]] = {}

    def add(self, run_id: str, store: FolderCache, name: str, files: list[str],
            unchanged: bool) -> None:
        """Run `run_id`, whose main log has the entry `name` in `store` as it is now, and
        whose files are `files` (`unchanged`: all found unchanged in their stores, rather
        than read and kept now)."""
        self.runs[run_id] = (store, name, sorted(files), unchanged)

    def add_made(self, run_id: str, files: list[str], figures: dict[str, tuple[str, dict]]) -> None:
        """The figures made for run `run_id` where it was read: {key: (digest, figure)}, the
        digest of the row, `files` and problems known there."""
        self.made[run_id] = (sorted(files), figures)

    def forget_made(self, run_id: str) -> None:
        """Drop the figures made for `run_id` (its id names more than one run)."""
        self.made.pop(run_id, None)

    def get(self, run_id: str, key: str, row: dict, stated: dict) -> dict | None:
        """The figure of run `run_id` by `key`, made from `row` and `stated`, or None: the
        store's, else one made where the run was read (then also kept in the store)."""
        store, name, files, unchanged = self.runs.get(run_id, (None, "", [], False))
        if unchanged:
            return store.figure(name, key, figure_digest(key, row, files, stated))
        made_files, made = self.made.get(run_id, ([], {}))
        digest, figure = made.get(key, ("", None))
        if figure is None or digest != figure_digest(key, row, made_files, stated):
            return None
        if store is not None:
            store.put_figure(name, key, digest, figure)
        return figure

    def put(self, run_id: str, key: str, row: dict, stated: dict, figure: dict) -> None:
        """Keep `figure`, made from `row` and `stated`, for run `run_id` by `key` (nothing
        for a run not added)."""
        store, name, files, _ = self.runs.get(run_id, (None, "", [], False))
        if store is not None:
            store.put_figure(name, key, figure_digest(key, row, files, stated), figure)

    def save(self) -> None:
        """Write the stores that were given figures."""
        for store in {id(s): s for s, _, _, _ in self.runs.values()}.values():
            store.save()


def _dtype(name: str):
    return _DTYPES.get(name, np.int64)


def _append(parts: dict[str, list], ends: dict[str, int], name: str, a: np.ndarray) -> int:
    """Add `a` to the column `name` to be written; its offset there."""
    parts[name].append(a)
    ends[name] += len(a)
    return ends[name] - len(a)
