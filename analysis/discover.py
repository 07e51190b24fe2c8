"""Find the log files under the paths a user names, each file once, with the run it belongs to.

A file is identified by its real path (``r`` and ``./r``, a folder named twice, a symbolic link
to a file already found: read once). Folders are walked recursively, following links to
folders once each (a link loop ends there). What cannot be walked or opened (a folder
without permission, a link loop, a dangling link, a FIFO named like a log, a link into /proc,
/sys or /dev, whose files hold the reader's own environment) becomes an ``unreadable_file``
problem instead of being skipped without a word; a second name for a file already found
(``r50_b256_amp_2.log -> r50_b256_amp_1.log``) is a ``duplicate_run``. A file found by walking
a campaign folder that the campaign did not run is marked a stray (:mod:`analysis.strays`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import DLPerfError, UsageError
from analysis.layout import run_stem
from analysis.problems import Problem
from analysis.strays import CampaignFolders

#: Suffixes (before an optional .gz) of files picked up when walking a folder.
WALK_SUFFIXES = (".log", ".out", ".err", ".txt", ".mem", ".gpu.csv", ".json")
#: Of those, the suffixes of a run's sidecars, read with its log.
SIDECARS = (".mem", ".gpu.csv")
#: Of those, the suffixes of files that may as well not be logs (published logs are often
#: ``.txt``, batch jobs write ``.out``/``.err``; so are READMEs and notes): found by walking,
#: such a file is a log only when a family recognises its content, and is skipped otherwise
#: (counted, not a problem). Named on the command line, it is read like any log.
PROBED_SUFFIXES = (".out", ".err", ".txt")
#: Whole file names read like ``.log`` files (LiBai's trainer writes ``<output_dir>/log.txt``).
WALK_NAMES = ("log.txt",)
#: File names never taken for logs when walking a folder (records the suite writes itself).
IGNORED_NAMES = ("env.json", "status.json", "campaign.json", "summary.json")
#: Saved ``nvidia-smi topo -m`` output (``topo*.txt``): read by reports, never a log.
TOPOLOGY_PREFIX = "topo"


class NoLogsError(DLPerfError):
    """The paths hold no log file at all (an empty folder, or one without logs)."""

    def __init__(self, paths: list[str]):
        super().__init__(f"no logs found under {', '.join(paths)}")
        self.paths = paths


class NoKnownLogsError(NoLogsError):
    """Files were found under the paths, but none is a log of a known format: no run."""

    def __init__(self, paths: list[str], looked_at: int, skipped: int, kinds: list[str]):
        parts = [f"{n} {what}" for n, what in (
            (skipped, "skipped as not logs"), (kinds.count("unknown_format"), "of no known format"),
            (kinds.count("unreadable_file"), "unreadable")) if n]
        files = f"{looked_at} file{'' if looked_at == 1 else 's'} looked at"
        DLPerfError.__init__(self, f"no log of a known format under {', '.join(paths)}: "
                                   f"{files}" + (f" ({', '.join(parts)})" if parts else ""))
        self.paths, self.looked_at, self.skipped = paths, looked_at, skipped


@dataclass(frozen=True)
class Found:
    """One log file: where it was reached, the run it belongs to, how it was named."""

    path: Path
    run_id: str  # the stem's path relative to the folder named on the command line
    relative_id: str  # the same, before two runs of one name in two folders were told apart
    run_key: tuple[str, str]  # (real folder, stem): files of one run share it
    explicit: bool  # named on the command line (not found by walking)
    real_path: str = ""  # the file's real path (links resolved), as found by the walk
    #: why the campaign folder it was found in did not run it (analysis.strays); "" if it did
    stray: str = ""


def is_log_name(name: str) -> bool:
    """True for file names the walk takes for logs (or their sidecars)."""
    if name in IGNORED_NAMES or name.endswith(".env.json"):
        return False
    base = name[:-3] if name.endswith(".gz") else name
    if base.startswith(TOPOLOGY_PREFIX) and base.endswith(".txt"):
        return False  # analysis.env.folder_records reads these
    return base.endswith(WALK_SUFFIXES) or base in WALK_NAMES


def is_probed_name(name: str) -> bool:
    """True for file names that are logs only when their content says so (PROBED_SUFFIXES)."""
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith(PROBED_SUFFIXES) and base not in WALK_NAMES


def _unreadable(path: Path, what: str, exc: OSError | None = None) -> Problem:
    why = f": {exc.strerror or exc}" if exc is not None else ""
    return Problem(str(path), None, "unreadable_file", f"{what}{why}")


#: Pseudo-filesystems: never walked (``/proc/self/root`` alone leads to the whole machine).
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


#: Folders of editors' own copies, never runs: Jupyter keeps ``<name>-checkpoint.log`` copies of
#: every file opened in it under ``.ipynb_checkpoints``, which would count each log twice.
COPY_FOLDERS = frozenset({".ipynb_checkpoints"})


def is_pseudo(real: str) -> bool:
    """Whether real path `real` is on a pseudo-filesystem (PSEUDO_ROOTS)."""
    return any(real == r or real.startswith(r + "/") for r in PSEUDO_ROOTS)


def holds(real: str, root_real: str) -> bool:
    """True when folder `real` contains the walk's root (a link to it is a loop)."""
    return root_real == real or root_real.startswith(real.rstrip("/") + "/")


def _walk(folder: Path, folder_real: str, seen_dirs: set[str], problems: list[Problem],
          root_real: str, rel: str = "") -> Iterator[tuple[Path, str, str]]:
    """(log file, its real path, its folder relative to the walk's root as "a/b/" or "")
    under `folder` (whose real path is `folder_real`), depth first in name order; problems
    for what cannot be read. Plain files and folders are told apart by the folder listing
    itself; links and anything odd are looked at with stat."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        problems.append(_unreadable(folder, "cannot list this folder", exc))
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            link = entry.is_symlink()
            kind = "dir" if entry.is_dir() else ("file" if entry.is_file() else "")
        except OSError:
            link, kind = True, ""
        if link or not kind:  # follow the link, or say what the entry is
            try:
                st = os.stat(path)
            except OSError as exc:
                dangling = exc.errno == errno.ENOENT
                if not dangling or is_log_name(entry.name):
                    what = "a dangling link" if dangling else "cannot open"
                    problems.append(_unreadable(path, what, None if dangling else exc))
                continue
            kind = "dir" if stat.S_ISDIR(st.st_mode) else ("file" if stat.S_ISREG(st.st_mode)
                                                           else "other")
        if kind == "dir":
            if entry.name in COPY_FOLDERS:
                continue
            real = os.path.realpath(path) if link else os.path.join(folder_real, entry.name)
            if is_pseudo(real) or holds(real, root_real):
                problems.append(_unreadable(path, "a link to a folder above this one or to a "
                                                  "pseudo-filesystem; not followed"))
            elif real not in seen_dirs:  # a second link to a folder, or a link loop
                seen_dirs.add(real)
                yield from _walk(path, real, seen_dirs, problems, root_real,
                                 f"{rel}{entry.name}/")
        elif is_log_name(entry.name):
            real = os.path.realpath(path) if link else os.path.join(folder_real, entry.name)
            if kind == "file" and link and is_pseudo(real):  # /proc/self/environ: the reader's
                problems.append(_unreadable(path, "a link to a pseudo-filesystem; not read"))
            elif kind == "file":
                yield path, real, rel
            else:
                problems.append(_unreadable(path, "not a regular file (a FIFO, socket or device)"))


def _candidates(raw: str | os.PathLike,
                problems: list[Problem]) -> Iterator[tuple[Path, str, str, str, bool]]:
    """(file, its stem, run id, real path, explicit) under one command-line path."""
    path = Path(raw)
    if not (path.is_dir() or path.is_file()):
        raise UsageError(f"not a regular file or folder: {path}" if path.exists()
                         else f"no such file or folder: {path}")
    root_real = os.path.realpath(path)
    if is_pseudo(root_real):
        raise UsageError(f"{path}: {', '.join(PSEUDO_ROOTS)} hold no logs; "
                         "name log files or folders")
    if path.is_file():
        yield path, run_stem(path), run_stem(path), root_real, True
        return
    for f, real, rel in _walk(path, root_real, {root_real}, problems, root_real):
        stem = run_stem(f)
        yield f, stem, rel + stem, real, False


def find_logs(paths: Iterable[str | os.PathLike]) -> tuple[list[Found], list[Problem]]:
    """Every log file under `paths` once, in a stable order, and the problems met walking.

    Raises UsageError for a path that does not exist and NoLogsError when nothing at all
    (no log, no problem) is found.
    """
    paths = list(paths)
    problems: list[Problem] = []
    found: list[Found] = []
    by_real: dict[str, Path] = {}
    run_ids: dict[tuple[str, str], str] = {}  # run key -> run id
    used: set[str] = set()
    linked: set[Path] = set()  # links said once, however many named paths reach them
    campaigns = CampaignFolders()
    for raw in paths:
        for f, stem, relative_id, real, explicit in _candidates(raw, problems):
            rid = relative_id
            first = by_real.get(real)
            if first is not None:
                if first.name != f.name and f not in linked:  # another name: a run found twice
                    linked.add(f)
                    problems.append(Problem(
                        str(f), None, "duplicate_run",
                        f"the same file as {first} (a link); counted once", run_id=rid))
                continue
            by_real[real] = f
            key = (os.path.dirname(real), stem)
            if key not in run_ids:
                if rid in used:  # the same relative name in another folder
                    rid = f.parent.joinpath(stem).as_posix()
                run_ids[key] = rid
                used.add(rid)
            stray = "" if explicit else campaigns.stray_reason(f.parent, stem, raw)
            damaged = None if explicit or stray else campaigns.damaged_marker(
                f.parent, stem, run_ids[key])
            if damaged is not None:
                problems.append(damaged)
            found.append(Found(f, run_ids[key], relative_id, key, explicit, real, stray))
    # a run's sidecars (memory, GPU samples) without its log are no log of it
    problems += campaigns.lost_logs({(os.path.abspath(x.path.parent), x.run_key[1]) for x in found
                                     if not x.path.name.removesuffix(".gz").endswith(SIDECARS)})
    if not found and not problems:
        raise NoLogsError([str(p) for p in paths])
    return found, problems
