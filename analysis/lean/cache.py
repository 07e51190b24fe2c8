"""What the lean readers gave, kept between runs: one JSON file per folder of logs under the
parse cache folder (``$DLPERF_CACHE_DIR``, see :func:`analysis.fsutil.cache_dir`).

An entry is used only for the same real path, size, ``mtime_ns``, inode, device and
``ctime_ns`` (as :mod:`analysis.parse_cache` keys its entries) and lean code (a hash of
the modules that read); files modified in the last :data:`~analysis.fsutil.SETTLE_S`
seconds are not kept (they may still be written); an unreadable or malformed store is
ignored and rebuilt, never trusted. Only reads that gave a figure are kept: a log the lane
gave up on is left to the full path (and its own cache)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from functools import cache
from pathlib import Path

from analysis.fsutil import SETTLE_S, cache_dir, file_identity
from analysis.lean.read import LeanRead

_PACKAGE = Path(__file__).resolve().parents[1]
#: The modules whose code decides what a lean read gives.
_CODE = ("lean/clock.py", "lean/dll_pytorch.py", "lean/oneflow_cnn.py", "lean/read.py",
         "lean/sniff.py", "layout.py", "logtext.py", "parsers/_fields.py",
         "parsers/_dll_lines.py", "parsers/_oneflow_lines.py")


@cache
def code_version() -> str:
    """Hash of the code that turns a file into a cached read."""
    h = hashlib.blake2b(digest_size=16)
    for name in _CODE:
        h.update(name.encode() + b"\0" + (_PACKAGE / name).read_bytes())
    return h.hexdigest()


class FolderStore:
    """The cached reads of the logs of one folder (by file name)."""

    def __init__(self, folder: str) -> None:
        name = hashlib.blake2b(folder.encode(), digest_size=16).hexdigest()
        self.path = cache_dir() / "lean" / name[:2] / f"{name}.json"
        self.folder = folder
        self.entries: dict[str, list] = {}
        self.changed = False
        try:
            doc = json.loads(self.path.read_bytes())
            if doc.get("version") == code_version() and doc.get("folder") == folder:
                self.entries = {k: v for k, v in doc["files"].items()
                                if isinstance(v, list) and len(v) == 9}
        except (OSError, ValueError, TypeError, AttributeError, KeyError):
            pass  # absent or corrupt: rebuilt

    def get(self, name: str, st: os.stat_result) -> LeanRead | None:
        e = self.entries.get(name)
        if e is None or e[0] != file_identity(st):
            return None
        try:
            return LeanRead(str(e[1]), str(e[2]), dict(e[3]), float(e[4]), int(e[5]),
                            bool(e[6]), None if e[7] is None else int(e[7]), str(e[8]))
        except (TypeError, ValueError):
            return None

    def put(self, name: str, st: os.stat_result, read: LeanRead) -> None:
        if time.time() - st.st_mtime < SETTLE_S:
            return
        self.entries[name] = [file_identity(st), read.family, read.framework,
                              read.stated, read.elapsed, read.iterations, read.rounded,
                              read.world_size, read.configuration]
        self.changed = True

    def save(self) -> None:
        """Write the store if it changed; a cache that cannot be written is no error."""
        if not self.changed:
            return
        files = {k: v for k, v in self.entries.items()  # a deleted log is forgotten
                 if os.path.exists(os.path.join(self.folder, k))}
        doc = {"version": code_version(), "folder": self.folder, "files": files}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:  # renamed into place whole; not synced to disk: a cache lost in a crash is rebuilt
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(json.dumps(doc, separators=(",", ":")).encode())
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
