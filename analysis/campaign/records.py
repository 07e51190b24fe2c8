"""What a campaign leaves on disk besides the logs: done markers, status, archived attempts.

- ``<out>/<N>n<G>g/<stem>.done`` — JSON written after the logs were finalized: ``ok``,
  ``state``, ``reason``, attempts, times, the suite that ran it (``suite``: version, commit,
  dirty; :mod:`analysis.suite_version`), backend, device, and per node the host, exit
  status, duration and command (secrets redacted). A run is complete only when its marker
  says ``ok``.
- ``<out>/status.json`` — one entry per run: state (done / failed / pending), reason,
  attempts; and ``suite``, the suite of the last ``run`` that wrote it.
- ``<out>/.campaign/failed/<N>n<G>g/<stem>.a<k>[-<n>].<file>.failed`` — the partial outputs of
  failed or interrupted attempts (suffix ``.failed`` so log walkers never take them for
  results; ``-<n>`` when attempt k was archived before, e.g. after two crashes).
- ``<out>/.campaign/env.key`` — the campaign's secret key (:func:`campaign_key`), readable by
  its owner alone: done markers keep a keyed digest of each variable a run inherited outside
  its environment record, which neither a copy of the log folders nor another user can
  guess values from (:mod:`analysis.campaign.resume`).
- ``<out>/.campaign/lock`` — one campaign run per output folder, and none in a folder above
  or below one another runs in (:func:`campaign_lock`): an
  exclusive ``fcntl.flock`` on the open file, which the kernel releases when the holder ends
  in any way (``kill -9`` included), so there is never a stale lock to remove by hand. The
  holder writes its pid, host and start time into it, so that a second run can say who holds
  it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from analysis.errors import DLPerfError
from analysis.fsutil import atomic_write_text
from analysis.fsutil import read_json_object as read_json
from analysis.redact import redact_tree
from analysis.strays import marker_denial

STATUS_COLUMNS = ["run_id", "config", "model", "precision", "batch_size", "repeat", "state",
                  "reason", "attempts", "duration_s", "log"]
STATES = ("done", "failed", "pending")


def write_json(path: Path, data: dict) -> None:
    """Write JSON atomically (temp file + rename), so readers never see half a record; URL
    passwords and token-shaped strings are hidden (:func:`analysis.redact.redact_tree`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(redact_tree(data, by_name=False), indent=1, default=str))


def disk_state(run, out: Path) -> tuple[str, str, int]:
    """(state, reason, attempts so far) of `run` from the files under `out`."""
    marker = read_json(run.path(out, ".done"))
    if marker is not None:
        attempts = int(marker.get("attempts_total", marker.get("attempt", 1)) or 1)
        # `ok` in any spelling, this run's, and no failed state (the reading strays use too)
        denial = marker_denial(marker, run.stem)
        finished = "ok" in marker and not denial
        if finished and run.log_path(out).exists():
            return "done", "", attempts
        there = finished_files(run, out)
        rel = [str(p.relative_to(out)) for p in [run.path(out, ".done"), *there]]
        again = f"To run it again, delete {', '.join(rel)} (in {out})"
        if finished:
            return "failed", (f"finished (done marker {rel[0]}) but its log "
                              f"{run.log_path(out).relative_to(out)} is missing; not re-run (its "
                              f"finished files would clash). {again}"), attempts
        if there:  # a failed attempt's files are archived: these are no attempt's of ours
            return "failed", (f"its done marker {rel[0]} {denial or 'does not say ok'}, "
                              f"yet its finished file(s) {', '.join(rel[1:])} are there; not "
                              f"re-run (they would clash). {again}"), attempts
        return "failed", str(marker.get("reason") or denial or "failed"), attempts
    if run.log_path(out).exists():
        return "failed", ("log exists without a done marker; kept and not re-run "
                          "(remove it to run again)"), 0
    return "pending", "", 0


def finished_files(run, out: Path) -> list[Path]:
    """The finished (final-named) files of `run` under `out` that exist."""
    return [p for k in range(run.case.num_nodes) for p in run.files(out, k) if p.exists()]


def kept_rows(out: Path, done: dict[str, dict], listed: set[str]) -> list[dict]:
    """The rows of the done runs in `done` (``{run_id: marker}``) that a spec no longer
    lists (`listed`: its run ids), e.g. after a retry of one case with a smaller matrix:
    runs the campaign ran stay listed in ``status.json`` (their status row as it was, else
    one from the marker)."""
    old = read_json(Path(out) / "status.json") or {}
    rows = {r.get("run_id"): r for r in old.get("runs") or [] if isinstance(r, dict)}
    out_rows = []
    for run_id in sorted(set(done) - listed):
        case = done[run_id].get("case") or {}
        row = {"config": run_id.split("/")[0], "model": case.get("model"),
               "precision": case.get("precision"),
               "batch_size": case.get("batch_size_per_device"), "repeat": case.get("repeat"),
               "attempts": done[run_id].get("attempts_total", 1),
               "duration_s": done[run_id].get("duration_s"), "log": f"{run_id}.log",
               **rows.get(run_id, {})}
        out_rows.append(dict(row, run_id=run_id, state="done", reason=""))
    return out_rows


def status_frame(rows: list[dict]) -> pd.DataFrame:
    """The campaign status table, one row per run. Columns: run_id, config, model, precision,
    batch_size, repeat, state (done / failed / pending), reason, attempts, duration_s, log."""
    frame = pd.DataFrame(rows, columns=STATUS_COLUMNS)
    return frame.astype({"attempts": "int64", "duration_s": "float64"}) if len(frame) else frame


def write_status(out: Path, name: str, rows: list[dict], suite: dict | None = None) -> None:
    """``status.json``: counts per state, the rows, and the `suite` that ran the campaign."""
    counts = {s: sum(r["state"] == s for r in rows) for s in STATES}
    record = {"campaign": name, "updated": time.time(), "counts": counts, "runs": rows}
    if suite is not None:
        record["suite"] = suite
    write_json(Path(out) / "status.json", record)


def _archived(dest: Path, run, tag: str, path: Path) -> Path:
    name = path.name.removesuffix(".partial")
    return dest / f"{run.stem}.{tag}{name[len(run.stem):]}.failed"


def archive(paths: list[Path], out: Path, run, attempt: int) -> list[str]:
    """Move a failed attempt's partial files out of the log folders; their new paths. An
    earlier archive of the same attempt number (a crash, then another) is never replaced:
    the later one is tagged ``a<k>-2``, ``a<k>-3``, ..."""
    dest = Path(out) / ".campaign" / "failed" / run.case.config
    present = [p for p in paths if p.exists()]
    tag, n = f"a{attempt}", 1
    while any(_archived(dest, run, tag, p).exists() for p in present):
        n += 1
        tag = f"a{attempt}-{n}"
    moved = []
    for p in present:
        dest.mkdir(parents=True, exist_ok=True)
        target = _archived(dest, run, tag, p)
        os.replace(p, target)
        moved.append(str(target.relative_to(out)))
    return moved


def campaign_key(out: Path, create: bool = True) -> bytes:
    """The key of the campaign in `out` (``.campaign/env.key``), made on first use: random,
    written whole under a temporary name and linked into place, so that two processes racing
    both end up with the one that got there first. Without `create` (a dry run writes
    nothing), a missing key is a random one kept nowhere: no marker's digests match it."""
    path = Path(out) / ".campaign" / "env.key"
    with contextlib.suppress(FileNotFoundError):
        return path.read_bytes()
    if not create:
        return secrets.token_bytes(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".env.key.", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    return path.read_bytes()


class CampaignBusy(DLPerfError):
    """Another process runs a campaign in this output folder."""


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["since"])))
        return f"pid {int(info['pid'])} on host {info['host']}, running since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet recorded its pid and host"


@contextlib.contextmanager
def campaign_lock(out: str | os.PathLike) -> Iterator[Path]:
    """``with campaign_lock(out) as path:`` holds the folder's lock (its file is `path`), or
    raises :class:`CampaignBusy` at once (it never waits) naming the holder: of `out`, or of
    a folder above or below it another `dlperf run` runs a campaign in (the two would write
    each other's logs). Each run takes its own lock before it looks for the other's, so of
    two started at once at least one sees the other; one refused leaves no folder it made."""
    path = Path(out) / ".campaign" / "lock"
    made = [p for p in (path.parent, Path(out), *Path(out).parents) if not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise CampaignBusy(
            f"campaign folder {path.parent.parent} is in use by another `dlperf run` "
            f"({holder}); wait for it to end or stop it, then run again") from None
    except BaseException:
        os.close(fd)
        raise
    if (other := _running_around(Path(out))) is not None:
        os.close(fd)
        if path.parent in made:
            path.unlink(missing_ok=True)
        for folder in made:  # the folders this call made, innermost first, if still empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        where = "inside" if Path(out).resolve() in other[0].resolve().parents else "around"
        raise CampaignBusy(
            f"refusing to run a campaign in {out}: another `dlperf run` ({other[1]}) runs one "
            f"in {other[0]}, {where} it, and the two would write each other's logs; wait for "
            "it to end, or write elsewhere")
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                              "since": time.time()}).encode(), 0)
    try:
        yield path
    finally:
        os.ftruncate(fd, 0)
        os.close(fd)  # closing the file releases the lock


def _running_around(out: Path) -> tuple[Path, str] | None:
    """(the folder, its holder) of a campaign lock another process holds now in a folder
    above `out` or below it; None where none is."""
    for folder in (*Path(os.path.abspath(out)).parents, *_campaign_folders(out)):
        if folder.resolve() == out.resolve():
            continue
        lock = folder / ".campaign" / "lock"
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return folder, _holder(fd)
        finally:
            os.close(fd)  # a lock it took is released with it
    return None


def _campaign_folders(top: Path) -> Iterator[Path]:
    """The folders under `top` (itself included) holding a ``.campaign`` folder, not looking
    inside those."""
    for root, dirs, _ in os.walk(top):
        if ".campaign" in dirs:
            dirs.remove(".campaign")
            yield Path(root)
