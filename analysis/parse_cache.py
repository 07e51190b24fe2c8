"""What reading one log gave, cached per file between runs (``--no-cache`` turns it off).

An entry is keyed by the file's real path, size and ``mtime_ns``, how it was read (forced
family, byte cap, first lines only) and the parser version (a hash of the reading code), so
a changed file or parser is read again. Entries are numpy ``.npz`` files read without
pickle; one that cannot be read or names another key is ignored and rewritten, never
trusted. A file changed in the last seconds is not cached (its next change could keep its
size and ``mtime_ns``). Folder: ``$DLPERF_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlperf/parse``,
else ``~/.cache/dlperf/parse``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from functools import cache
from pathlib import Path

import numpy as np

from analysis.fsutil import atomic_write_bytes
from analysis.parsers.base import Observations, ParsedLog
from analysis.problems import Problem

CACHE_DIR_ENV = "DLPERF_CACHE_DIR"
#: Files modified this recently (seconds) are not cached.
SETTLE_S = 2.0
_NUMERIC = ("value", "line", "step", "epoch", "rank", "device", "timestamp")
_NAMES = ("phase", "metric", "unit")
_PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dlperf" / "parse"


@cache
def parser_version() -> str:
    """Hash of the code that turns a file into what is cached."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted([*(_PACKAGE / "parsers").glob("*.py"),
                        *(_PACKAGE / n for n in ("checks.py", "logtext.py", "collect.py",
                                                 "metrics.py", "problems.py"))]):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def file_key(path: Path, how: dict) -> dict | None:
    """The key of `path` read `how`; None when it is not to be cached (unreadable, or
    changed in the last SETTLE_S seconds)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if time.time_ns() - st.st_mtime_ns < SETTLE_S * 1e9:
        return None
    return {"path": os.path.realpath(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "version": parser_version(), **how}


def _entry(key: dict) -> Path:
    name = hashlib.blake2b(json.dumps(key, sort_keys=True).encode(), digest_size=20).hexdigest()
    return cache_dir() / name[:2] / f"{name}.npz"


def _problem_row(p: Problem) -> list:
    return [p.source, p.line, p.kind, p.reason, p.text, p.run_id]


def save(key: dict, fields: dict, parsed: ParsedLog | None, problems: list[Problem]) -> None:
    """Store one read (`fields`: JSON-able scalars of it); what cannot be stored is not."""
    try:
        data = _encode(key, fields, parsed, problems)
    except (TypeError, ValueError):  # a value JSON cannot hold: read the file next time
        return
    entry = _entry(key)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(entry, data)
    except OSError:
        pass


def _encode(key: dict, fields: dict, parsed: ParsedLog | None, problems: list[Problem]) -> bytes:
    arrays: dict[str, np.ndarray] = {}
    head = {"key": key, "fields": fields, "problems": [_problem_row(p) for p in problems]}
    if parsed is not None:
        blocks = []
        for i, b in enumerate(parsed.obs.blocks):
            block = {"n": int(b["n"])}
            for name in _NUMERIC:
                arrays[f"{i}.{name}"] = np.ascontiguousarray(b[name])
            for name in _NAMES:
                if isinstance(b[name], str):
                    block[name] = b[name]
                else:
                    arrays[f"{i}.{name}"] = np.asarray(b[name], dtype=str)
            blocks.append(block)
        head["parsed"] = {"family": parsed.family, "meta": parsed.meta,
                          "meta_lines": parsed.meta_lines, "parameters": parsed.parameters,
                          "problems": [_problem_row(p) for p in parsed.problems],
                          "blocks": blocks}
    arrays["head"] = np.frombuffer(json.dumps(head).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def load(key: dict) -> tuple[dict, ParsedLog | None, list[Problem]] | None:
    """(fields, parsed, problems) stored for `key`, or None (absent, unreadable, other key)."""
    try:
        with np.load(_entry(key), allow_pickle=False) as z:
            head = json.loads(z["head"].tobytes())
            if head["key"] != key:
                return None
            parsed = None
            if head.get("parsed") is not None:
                p = head["parsed"]
                parsed = ParsedLog(p["family"], Observations(), p["meta"],
                                   {k: int(v) for k, v in p["meta_lines"].items()},
                                   p["parameters"], [Problem(*r) for r in p["problems"]])
                for i, block in enumerate(p["blocks"]):
                    b = {"n": int(block["n"])}
                    for name in _NUMERIC:
                        b[name] = z[f"{i}.{name}"]
                        if len(b[name]) != b["n"]:
                            return None
                    for name in _NAMES:
                        b[name] = block[name] if name in block else z[f"{i}.{name}"].astype(object)
                    parsed.obs.blocks.append(b)
            return head["fields"], parsed, [Problem(*r) for r in head["problems"]]
    except Exception:  # noqa: BLE001 - any damage to an entry makes it a miss, never an error
        return None
