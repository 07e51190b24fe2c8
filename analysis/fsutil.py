"""Atomic file writes: a reader sees the old file or the whole new one, never a half.

Every file the suite writes for a user (CLI outputs, done markers, status, reports) goes
through :func:`atomic_path`: the content is written to a temporary file in the target's
folder and renamed over the target only when complete; on any error (a full disk, Ctrl-C)
the temporary file is removed and the target is left as it was. An error names the target,
never the temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text", "check_outputs",
           "check_outside_stores", "display_path"]


def display_path(path: str | os.PathLike) -> str:
    """`path` as printable text: bytes that are not UTF-8 and control characters (a name
    with an escape sequence or a line end must not drive the terminal, nor forge a
    ``file:line: kind`` line) become ``\\xNN`` escapes."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return text if text.isprintable() else _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def printable(text: str) -> str:
    """`text` as it is when printable ASCII, else as :func:`display_path` escapes it: the one
    rule for file names and run ids in frames, problems and terminal lines."""
    return text if text.isascii() and text.isprintable() else display_path(text)


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # a tab stays a tab


_UMASK_LOCK = threading.Lock()


def file_identity(st: os.stat_result) -> list[int]:
    """What must not change for a cache to keep what it read from a file: its size,
    ``mtime_ns``, inode and device (a file replaced by another of the same size and mtime:
    ``mv``, ``rsync -t``) and ``ctime_ns`` (one rewritten in place with its mtime put back,
    ``cp -p``: no tool sets it; a chmod or rename costs one read). A list, as JSON gives it
    back."""
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_ctime_ns]


def _new_file_mode(target: Path) -> int:
    """Permissions for the new file: the old file's, else what `open()` would give (umask)."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(target.stat().st_mode)
    return 0o666 & ~current_umask()


def current_umask() -> int:
    """This process's umask, read without changing it (Linux: /proc/self/status). Setting it
    to read it back, the usual way, leaves it 0 for a moment in which another thread's new
    files are created readable and writable by everyone (a report build writes files from
    two threads); that way is left for systems without the Umask line."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    with _UMASK_LOCK:
        umask = os.umask(0o077)  # the briefest window, and a safe one
        os.umask(umask)
    return umask


def _name_target(exc: OSError, target: Path, tmp_prefix: str | None) -> None:
    """Make `exc` name `target` where it names a temporary file or nothing."""
    named = exc.filename
    if named is None or (tmp_prefix and os.path.basename(os.fsdecode(named)).startswith(tmp_prefix)):
        exc.filename = str(target)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, sync: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside `target`; rename it onto `target` when the block ends,
    its data synced to disk first (not when `sync` is False: for caches whose reader
    detects a file cut short by a crash and rebuilds it).

    The temporary file is hidden (leading dot), marked ``.tmp`` and ends with `target`'s
    suffix, so writers that choose a format by extension still see the right one.
    A symbolic link is refused (OSError naming it and what it points to): writing through
    it would replace a file the user did not name, such as a raw log a link in a report
    folder points to. A target that is a device or a pipe (``/dev/stdout``, ``/dev/full``)
    is written in place: there is nothing to rename. A folder raises IsADirectoryError.
    """
    target = Path(target)
    if target.is_symlink():
        raise OSError(errno.ELOOP, "is a symbolic link: refusing to write through it (remove "
                      "the link, or write elsewhere)", str(target), None,
                      os.readlink(target))
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    if target.exists() and not target.is_file():
        try:
            yield target
        except OSError as exc:
            _name_target(exc, target, None)
            raise
        return
    folder = target.parent if str(target.parent) else Path(".")
    prefix = f".{target.name}."
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp" + target.suffix, dir=folder)
        os.close(fd)
        os.chmod(tmp, _new_file_mode(target))
        yield Path(tmp)
        if sync:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            _name_target(exc, target, prefix)
        raise


def check_outputs(outputs: list[Path], inputs: list[Path], force: bool,
                  stores: list[Path] = (), names: list[str] | None = None) -> None:
    """Refuse (UsageError) to write over an input file, into an input results store (of
    `stores`: every file in it is read as a part of it), through a symbolic link, onto a
    folder, over an existing file unless `force`, or one file as two outputs (the second
    written over the first). `names` says what names each output (an option, a parameter;
    its path where not given): outputs of one name are one. Paths are compared by their real
    paths (links, `..`, relative paths)."""
    from analysis.errors import UsageError

    read = {os.path.realpath(p) for p in inputs}
    written: dict[str, str] = {}
    for path, name in zip(map(Path, outputs), names or map(display_path, outputs), strict=True):
        shown = display_path(path)
        real = os.path.realpath(path)
        if real in read:
            raise UsageError(f"refusing to write {shown}: it is one of the input files")
        if written.setdefault(real, name) != name:
            raise UsageError(f"refusing to write {shown} twice: {written[real]} and {name} "
                             "name the same file, and one would overwrite the other; give "
                             "each its own file")
        check_outside_stores(path, stores)
        if path.is_symlink():
            raise UsageError(f"refusing to write {shown}: it is a symbolic link (to "
                             f"{display_path(os.readlink(path))}); remove it or write elsewhere")
        if path.is_dir():
            raise UsageError(f"cannot write {shown}: it is a folder")
        if path.exists() and not force:
            raise UsageError(f"{shown} exists; pass --force to replace it")


def check_outside_stores(path: str | os.PathLike, stores: list[Path]) -> None:
    """Refuse (UsageError) to write `path` (a file, or a folder of outputs) inside one of the
    results `stores` a command reads, by real paths: every file in a store is read as a part
    of it."""
    from analysis.errors import UsageError

    real = os.path.realpath(path)
    for store in map(os.path.realpath, stores):
        if os.path.commonpath([store, real]) == store:
            raise UsageError(f"refusing to write {display_path(path)}: it is inside the results "
                             f"store {display_path(store)}, which it would damage; write "
                             "elsewhere")


def atomic_write_bytes(target: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `target` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(target: str | os.PathLike, text: str) -> None:
    """Write `text` to `target` atomically, as UTF-8."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


#: Environment variable naming the folder of the parse caches.
CACHE_DIR_ENV = "DLPERF_CACHE_DIR"
#: Files modified this recently (seconds) are not cached: they may still be written.
SETTLE_S = 2.0


def cache_dir() -> Path:
    """Where parsed logs are kept: ``$DLPERF_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlperf/parse``,
    else ``~/.cache/dlperf/parse``."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dlperf" / "parse"


#: Deepest nesting of arrays and objects a JSON record of the suite may hold (records are a
#: few levels deep; Python's reader recurses once per level and fails past ~1,000).
MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in the JSON `data` (brackets inside strings do not
    count)."""
    depth = deepest = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub(b'""', data)):
        depth += 1 if m.group() in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def loads_json(data: bytes | str):
    """``json.loads(data)`` for files a user or another tool wrote: ValueError (as for text
    that is not JSON) when it nests deeper than MAX_JSON_DEPTH, before it is parsed."""
    import json

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    few = raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH  # then no need to look
    depth = 0 if few else json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"nested {depth:,} levels deep (at most {MAX_JSON_DEPTH} are read)")
    return json.loads(data)


#: Bytes a JSON record (done marker, status, environment record) may have.
MAX_RECORD_BYTES = 16 << 20


def read_record(path: str | Path) -> bytes:
    """The bytes of a small record file (a done marker, a status or environment record, a
    topology); OSError for anything but a regular file (a FIFO would block) or one larger
    than MAX_RECORD_BYTES."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{os.path.basename(path)} is not a regular file")
    if st.st_size > MAX_RECORD_BYTES:
        raise OSError(f"{os.path.basename(path)} holds {st.st_size:,} bytes, more than a "
                      f"record has ({MAX_RECORD_BYTES:,})")
    with open(path, "rb") as fh:
        return fh.read()


def read_json_object(path: str | Path) -> dict | None:
    """The JSON object in `path` (a done marker, a status record); None when the file is
    missing, unreadable, not a regular file, larger than MAX_RECORD_BYTES, not JSON, nested
    too deep or not an object."""
    try:
        data = loads_json(read_record(path))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
