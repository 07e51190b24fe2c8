"""May a spec resume in a campaign folder? What its done runs ran with, against what it would run.

A done marker (:mod:`analysis.campaign.records`) records what defined its run: the fields in
:data:`DEFINING` — the campaign's name, backend, workload, framework and device, the case
(model, nodes, GPUs, precision, batch size, repeat, iterations, warmup and the case's own
parameters), the working directory (the workload's code), node 0's environment — and every
node's command. Where the backend hands the nodes this shell's environment (local, Slurm),
node 0's environment also holds the variables its record (``<stem>.node0.env.json``) lists,
compared with what this shell would hand on, both as
:func:`analysis.run_settings.compared_variables` keeps them; every other variable node 0
inherits from the shell is in the marker's :data:`DIGESTS` as its name and a digest keyed by
the campaign's secret key (:func:`analysis.campaign.records.campaign_key`), never its value
(:func:`env_digests`): set, unset or changed, it is a difference too. Left out are the
variables that say where, when or how the shell was opened (:data:`SHELL_SESSION`), so a new
login, another terminal or a tmux pane resumes. A marker without digests (an older suite),
or with digests of another key (the key file moved or replaced; said on stderr), is compared
on the rest. A done run whose environment record is gone (deleted, or not copied with its
log) cannot be compared on the variables the record kept, and is refused like a difference
(:func:`record_gone`). The runner builds the marker the spec would write for the same run and
:func:`differences` compares the two, setting aside
where the run happened (the hosts and the rendezvous port, found by building the commands
twice with different ones) and the variables the backend adds per node (its GPU set). A
marker's warm-up is read from its node 0 command (:func:`warmup_run`), as the runner records
it: what the command gives the workload's warm-up option, else the program's default. An
older suite recorded 0 for every warm-up the spec did not state, though the built-in
workload's default of 20 ran; such a marker is compared as 20 (said on stderr), and a spec
that now states 0 is still refused, on its command. Times,
attempts, exit statuses and the suite version are how a run went, not what it ran: a newer
suite may resume a campaign (each marker names its suite).

A folder whose done runs differ is refused before anything runs (:class:`FolderMismatch`),
unless the caller starts afresh: :func:`move_aside` moves the folder's contents, never
deleting anything, into a dated sibling folder (outside the folder, so that a log walker such
as ``dlperf summarize OUT`` never reads the old runs with the new ones).
"""

from __future__ import annotations

import difflib
import fnmatch
import hmac
import os
import sys
import time
from pathlib import Path

from analysis.campaign import records
from analysis.discover import NoLogsError, find_logs
from analysis.env.capture import select_env
from analysis.errors import UsageError
from analysis.run_settings import compared_variables, is_compared
from analysis.strays import STATUS_NAME, marker_denial

#: The marker fields that say what a run ran (the others say how and when it went).
DEFINING = ("campaign", "backend", "workload", "framework", "device", "workdir", "case", "env")
#: Case fields the runner takes from the spec, not from the case: a done run of a case the
#: spec no longer has is compared on these (and the campaign-wide fields) only.
SPEC_WIDE_CASE = ("iterations", "warmup")
UNSET = "(unset)"
#: Variables that say where, when or how a shell (or the process running the campaign) was
#: opened, not how a run runs: not compared, so a resume from a new login, another terminal,
#: a tmux pane, an IDE, a notebook kernel or a make target is not refused. By kind: the
#: shell's bookkeeping; the terminal; the login session (ssh, X, desktop, systemd);
#: terminal multiplexers and terminal applications; a Jupyter kernel's and make's own.
SHELL_SESSION = (
    "PWD", "OLDPWD", "SHLVL", "_", "HOSTNAME", "COLUMNS", "LINES", "MOTD_SHOWN",
    "TERM", "TERM_*", "TERMCAP", "COLORTERM", "LS_COLORS", "LC_TERMINAL*", "VTE_VERSION",
    "WINDOWID", "WINDOWPATH", "GPG_TTY",
    "SSH_*", "KRB5CCNAME", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_SESSION_*",
    "XDG_SEAT*", "XDG_VTNR", "DBUS_SESSION_BUS_ADDRESS", "SESSION_MANAGER", "DESKTOP_SESSION",
    "INVOCATION_ID", "JOURNAL_STREAM", "MANAGERPID", "SYSTEMD_EXEC_PID",
    "TMUX", "TMUX_PANE", "STY", "WINDOW", "VSCODE_*", "GIT_ASKPASS", "GNOME_TERMINAL_*",
    "KONSOLE_*", "ITERM_*", "KITTY_*", "WT_SESSION", "WT_PROFILE_ID",
    "JPY_*", "PYDEVD_*", "MPLBACKEND", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "PAGER",
    "GIT_PAGER", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKE_TERMOUT", "MAKE_TERMERR",
)
#: The done marker's field of keyed digests: ``{"key": the key's own digest, "variables":
#: {name: digest}}``.
DIGESTS = "env_digests"


class FolderMismatch(UsageError):
    """The output folder holds done runs that the spec would run differently."""


def done_markers(out: Path) -> dict[str, dict]:
    """``{run_id: marker}`` of every done marker under `out` that says ``ok`` (in any
    spelling) of its own run (the one beside whose log it lies) and no failed state
    (:func:`analysis.strays.marker_denial`)."""
    found = {}
    for path in sorted(Path(out).glob("*/*.done")):
        marker = records.read_json(path)
        if marker and "ok" in marker and not marker_denial(marker, path.stem):
            found[f"{path.parent.name}/{path.stem}"] = marker
    return found


class Digest(str):
    """A variable's keyed digest among :func:`settings`: shown as set, never as its text."""


def _digest(key: bytes, name: str, value: str) -> str:
    message = f"{name}={value}".encode("utf-8", "surrogateescape")
    return hmac.new(key, message, "sha256").hexdigest()[:16]


def env_digests(environ: dict[str, str], launch_env: dict[str, str], key: bytes) -> dict:
    """The :data:`DIGESTS` of a run whose node 0 gets `environ` (this shell's) with
    `launch_env` on top: each variable of `environ` that the launch does not set and node 0's
    environment record does not hold as it is (off the allow-list, or redacted there), whose
    name says how a run runs (:func:`analysis.run_settings.is_compared`, not
    :data:`SHELL_SESSION`)."""
    env = {**environ, **launch_env}
    held = {k for k, v in select_env(env).items() if v == env[k]}
    names = [k for k in sorted(environ) if k not in launch_env and k not in held
             and is_compared(k) and not any(fnmatch.fnmatchcase(k, p) for p in SHELL_SESSION)]
    return {"key": _digest(key, "", ""),
            "variables": {k: _digest(key, k, environ[k]) for k in names}}


def digest_key(marker: dict) -> str | None:
    """The key's digest `marker`'s :data:`DIGESTS` were made with (None: it has none)."""
    field = marker.get(DIGESTS)
    if isinstance(field, dict) and isinstance(field.get("variables"), dict):
        return str(field.get("key"))
    return None


def key_warning(out: Path, run_ids: list[str]) -> None:
    """Say on stderr that done runs `run_ids` hold digests of another key than the folder's."""
    if run_ids:
        print(f"warning: {len(run_ids)} done run(s) in {out} (e.g. {run_ids[0]}) hold digests "
              f"of the variables they inherited made with another key than "
              f"{Path(out) / '.campaign' / 'env.key'} (moved or replaced): those variables "
              f"are not compared", file=sys.stderr, flush=True)


def stray_files(out: Path, runs: set[str]) -> list[str]:
    """The files under `out`, relative to it, of logs that are none of `runs` (the runs
    ``status.json`` lists) and that its records say the campaign did not run: the strays
    ``dlperf summarize`` leaves out (:mod:`analysis.strays`)."""
    try:
        found, _ = find_logs([out])
    except NoLogsError:
        return []
    return [os.path.relpath(f.path, out) for f in found if f.stray and f.run_id not in runs]


def stray_note(out: Path, name: str, runs: set[str]) -> None:
    """Say on stderr which stray files (:func:`stray_files`) campaign `name` found in `out`."""
    strays = stray_files(out, runs)
    if strays:
        more = f", … ({len(strays)} in all)" if len(strays) > 5 else ""
        print(f"{name}: {len(strays)} stray file(s) in {out} that no done marker or "
              f"{STATUS_NAME} names, not counted as this campaign's runs: "
              f"{', '.join(strays[:5])}{more}", file=sys.stderr, flush=True)


def recorded_env(out: Path, run_id: str) -> dict[str, str] | None:
    """The variables node 0's environment record of done run `run_id` lists, as compared
    (:func:`analysis.run_settings.compared_variables`); None without a readable record."""
    record = records.read_json(Path(out) / f"{run_id}.node0.env.json")
    env = record.get("env") if record else None
    return compared_variables(env) if isinstance(env, dict) else None


def record_gone(marker: dict) -> bool:
    """Whether the run of done marker `marker`, whose node 0 environment record is missing
    or unreadable, wrote one (its node 0 ``env_capture`` says ok, or an older suite's does
    not say): the variables the record kept can no longer be compared, so it cannot resume."""
    node0 = next((n for n in marker.get("nodes") or []
                  if isinstance(n, dict) and n.get("node") == 0), {})
    return node0.get("env_capture", "ok") == "ok"


#: The refusal's line for a done run whose environment record is gone (:func:`record_gone`).
RECORD_GONE = ("node 0 environment record (<run>.node0.env.json): missing or unreadable, so "
               "the variables it kept cannot be compared; restore it")


def settings(marker: dict, drop_env: set[str] = frozenset(),
             inherited: dict[str, str] | None = None, digests: bool = False
             ) -> dict[str, object]:
    """The defining fields of `marker`, flat (``case.iterations``, ``env.NCCL_ALGO``,
    ``node 0 command``), without the variables in `drop_env`; `inherited`: the variables that
    reached node 0 besides the marker's ``env`` (its record, or this shell's); with
    `digests`, also its :data:`DIGESTS`, each a :class:`Digest`."""
    flat: dict[str, object] = {}
    marker = dict(marker, env={**(inherited or {}), **(marker.get("env") or {})})
    for key in DEFINING:
        value = marker.get(key)
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()
                         if not (key == "env" and k in drop_env)})
        elif key in marker:
            flat[key] = value
    if digests:
        flat.update({f"env.{k}": Digest(v) for k, v in marker[DIGESTS]["variables"].items()
                     if k not in drop_env})
    for n in marker.get("nodes") or []:
        flat[f"node {n.get('node')} command"] = [str(w) for w in n.get("command") or []]
    return flat


def warmup_run(marker: dict) -> dict:
    """`marker` with ``case.warmup`` the warm-up its node 0 command gave the program
    (:meth:`~analysis.campaign.workloads.Workload.warmup_given`), as this suite records it; the
    same `marker` where they agree, or where it records no command or another workload."""
    from analysis.campaign import workloads

    case, name = marker.get("case"), marker.get("workload")
    command = next((n.get("command") for n in marker.get("nodes") or []
                    if isinstance(n, dict) and n.get("node") == 0), None)
    if not isinstance(case, dict) or not isinstance(command, list) \
            or name not in workloads.names():
        return marker
    ran = workloads.get(name).warmup_given([str(w) for w in command])
    return marker if case.get("warmup") == ran else dict(marker, case=dict(case, warmup=ran))


def warmup_note(out: Path, relabelled: list[tuple[str, object, object]]) -> None:
    """Say on stderr which done runs (``(run_id, recorded, ran)``) record a warm-up other than
    the one their commands gave the program, and that the latter is compared."""
    if relabelled:
        run_id, recorded, ran = relabelled[0]
        what = "no warm-up setting" if ran is None else f"a warm-up of {ran}"
        print(f"note: {len(relabelled)} done run(s) in {out} (e.g. {run_id}) record warmup "
              f"{recorded}, but their commands ran {what} (an older suite recorded 0 where "
              f"the spec stated none, whatever ran): compared as {_show(ran)}",
              file=sys.stderr, flush=True)


def spec_wide(flat: dict[str, object]) -> dict[str, object]:
    """`flat` without what depends on the case (its commands and case fields but
    :data:`SPEC_WIDE_CASE`)."""
    return {k: v for k, v in flat.items()
            if not k.endswith(" command") and not (
                k.startswith("case.") and k.removeprefix("case.") not in SPEC_WIDE_CASE)}


def _show(value: object) -> str:
    if value is None:
        return UNSET
    return "set (value not recorded)" if isinstance(value, Digest) else str(value)


def _command_change(old: list[str], new: list[str], masked: set[int]) -> str:
    """'' when `old` and `new` agree outside the `masked` positions of `new`, else each
    differing stretch as 'old words' → 'new words' (with the word before it)."""
    if len(old) == len(new) and all(a == b or i in masked
                                    for i, (a, b) in enumerate(zip(old, new))):
        return ""
    parts = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal" or (a2 - a1 == b2 - b1 and set(range(b1, b2)) <= masked):
            continue
        before = old[a1 - 1:a1] if a1 and b1 else []
        parts.append(f"'{' '.join(before + old[a1:a2])}' → '{' '.join(before + new[b1:b2])}'")
    return "; ".join(parts)


def differences(old: dict[str, object], new: dict[str, object],
                masks: dict[str, set[int]] | None = None) -> list[str]:
    """'key: old → new' for every key whose value differs (UNSET where one side lacks it).
    `masks`: per command key, the word positions of the new command that say where the run
    happens (not compared)."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if key.endswith(" command"):
            change = _command_change(list(a or []), list(b or []), (masks or {}).get(key, set()))
            if change:
                out.append(f"{key}: {change}")
        elif isinstance(a, Digest) and isinstance(b, Digest) and a != b:
            out.append(f"{key}: another value (values not recorded)")
        elif a != b:
            out.append(f"{key}: {_show(a)} → {_show(b)}")
    return out


def masked_positions(first: dict[str, object], second: dict[str, object]) -> dict[str, set[int]]:
    """Per command key, the positions where two builds of the same run's commands (other
    hosts, other port) differ: the words that say where the run happens."""
    masks = {}
    for key, words in first.items():
        if key.endswith(" command"):
            other = second.get(key) or []
            masks[key] = {i for i, w in enumerate(words)
                          if i >= len(other) or other[i] != w}
    return masks


def mismatch_message(out: Path, changes: dict[str, list[str]]) -> str:
    """The refusal: each difference once, with how many done runs (and the first) have it."""
    by_change: dict[str, list[str]] = {}
    for run_id, lines in changes.items():
        for line in lines:
            by_change.setdefault(line, []).append(run_id)
    lines = [f"  {line} ({len(ids)} done run(s), e.g. {ids[0]})"
             for line, ids in by_change.items()]
    return (f"campaign folder {out} holds {len(changes)} done run(s) that this spec would run "
            f"differently, or whose records cannot tell (old → new; env.*: the spec's env and, on the local and Slurm "
            f"backends, the variables this shell exports); nothing was run:\n"
            + "\n".join(lines) + "\n"
            "Run the old spec from the old environment to resume, give another folder "
            "(-o OUT_DIR), or start afresh "
            "with --fresh (the folder's contents are moved aside into a dated folder beside "
            "it, nothing is deleted).")


def move_aside(out: Path, keep: Path) -> Path | None:
    """Move everything in `out` but `keep` (the lock ``<out>/.campaign/lock``, held by the
    caller) into ``<out>.<YYYYmmdd-HHMMSS>`` beside it (``-2``, ``-3``, ... when taken);
    returns that folder, or None when there was nothing to move."""
    out, keep = Path(out), Path(keep)
    entries = [p for folder in (out, keep.parent) if folder.is_dir()
               for p in sorted(folder.iterdir()) if p not in (keep, keep.parent)]
    if not entries:
        return None
    dest = base = out.with_name(f"{out.name}.{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while dest.exists():
        n += 1
        dest = base.with_name(f"{base.name}-{n}")
    for path in entries:
        target = dest / path.relative_to(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    return dest
