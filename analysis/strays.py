"""Logs in a campaign folder that the campaign did not run ("strays").

``dlperf run`` writes, beside each log ``<N>n<G>g/<stem>.log``, a done marker ``<stem>.done``
(JSON; ``ok`` once the logs were finalized) and, in the campaign folder, ``status.json``
(each run's state: done / failed / pending). A folder holding done markers, or a
``status.json`` of that shape (its own, or one above it: its parent's, or one up to the folder
the user named, which names the folder's runs ``old/1n1g/<stem>``; the outermost decides, so a
campaign kept inside another is the outer one's to account for), is a campaign folder: there
a run counts only when it has a done marker of its own (its ``run_id``, where it states one,
names the log's stem; its ``campaign``, where it and ``status.json`` name one, is the
status's) that does not say the run failed (:func:`marker_failure`: an ``ok`` (other
tools: ``success``) that is not true in any spelling, a ``state`` (other tools: ``status``,
``result``) other than done, a non-zero exit code, or a node that exited non-zero or was
stopped; markers written by other tools stating none of these count as done, as reports
read them), and that ``status.json``, where there is
one, lists; or, without a done marker, when ``status.json`` lists it as done. The marker is
the run's own record, written once its logs are final, and ``dlperf run`` rebuilds
``status.json`` from the markers: a marker saying the run failed, or naming another run,
beside a ``status.json`` that lists the run as done is followed, and the conflict named in
the stray's reason (:func:`marker_denial`, the one reading ``dlperf run`` resumes by); a
marker saying done beside a ``status.json`` listing the run as failed is followed too, the run
counted with a ``status_conflict`` problem. A
run whose marker cannot be read (not JSON: a hand edit) counts unless ``status.json`` says
otherwise, with a ``bad_done_marker`` problem naming the marker, line and error; so does a
run whose marker is missing while other runs of its folder have theirs and ``status.json``
lists it as done (a ``missing_done_marker`` problem), and ``dlperf run`` reads both so too.
A done marker saying its run finished beside no log of the run is a ``missing_log`` problem
(:meth:`CampaignFolders.lost_logs`), and so is a run ``status.json`` lists as done with
neither file there. Any other log in
it (left by an earlier campaign, a failed attempt, or put there by hand) is a stray:
:func:`analysis.discover.find_logs` marks it, the full path leaves it out of the runs and says
why in a ``stray_log`` problem. A folder without markers
or status (published logs) is read as before; so is a file named on the command line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from analysis.fsutil import loads_json, read_json_object, read_record
from analysis.problems import Problem

#: Suffix of a run's done marker, beside its log.
MARKER_SUFFIX = ".done"
#: The campaign's status record, in the campaign folder.
STATUS_NAME = "status.json"


def _status_states(path: str) -> dict[str | None, str] | None:
    """Run id (and log path without ``.log``) -> state of a campaign's ``status.json``, and
    under ``None`` the campaign it names ("" none); None when the file is absent or not a
    campaign's status (no ``runs`` list)."""
    data = read_json_object(path)
    runs = data.get("runs") if data is not None else None
    if not isinstance(runs, list):
        return None
    name = data.get("campaign")
    states: dict[str | None, str] = {None: name if isinstance(name, str) else ""}
    for run in runs:
        if not isinstance(run, dict):
            continue
        state = str(run.get("state", ""))
        for key in (run.get("run_id"), run.get("log")):
            if isinstance(key, str) and key:
                states.setdefault(key[:-4] if key.endswith(".log") else key, state)
    return states


def enclosing_campaign(path: str | os.PathLike) -> Path | None:
    """The nearest folder above `path`, by its spelling or by its real path, holding a
    campaign ``status.json`` (whose campaign accounts for every log under it); None when none
    does."""
    for spelled in (os.path.abspath(path), os.path.realpath(path)):
        for folder in Path(spelled).parents:
            if _status_states(os.path.join(folder, STATUS_NAME)) is not None:
                return folder
    return None


#: Spellings of a true ``ok`` (JSON true, 1, or a word) in markers written by hand or by shells.
_OK_WORDS = {"true", "1", "yes", "ok", "done", "success", "succeeded"}
#: ``state`` words that say the run finished.
_DONE_STATES = {"done", "ok", "success", "succeeded", "finished", "completed", "complete"}
#: Top-level keys other tools' markers give a run's exit status in (0: it finished).
_EXIT_KEYS = ("exit_code", "returncode", "rc")
#: Top-level keys a marker states its run's state in, ours first, then other tools'
#: (``result`` only as a word: other tools keep a run's results under it too).
_STATE_KEYS = ("state", "status", "result")
#: Top-level flags that say the run succeeded: ours, then other tools'.
_OK_KEYS = ("ok", "success")


def _exit_status(value: object) -> bool:
    """Whether `value` states anything but a zero exit status: a non-zero number (``1.0``
    from tools that write numbers as floats, ``true``), its text (``"137"``, ``"1.0"``), a
    word (``"error"``), or a list or mapping holding any of these (``[1]``, ``{"code": 1}``).
    Null, ``""``, ``0`` and ``"0"`` say nothing failed."""
    if value is None:
        return False
    if isinstance(value, (bool, int, float)):
        return value != 0
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return any(map(_exit_status, value))
    text = str(value).strip()
    try:
        return float(text) != 0
    except ValueError:
        return bool(text)


def marker_failure(marker: dict) -> str:
    """Why done marker `marker` says its run did not finish ("" when it says done, or states
    none of ``ok``/``success``, ``state``/``status``/``result``, an exit code and nodes): any
    ``ok`` or ``success`` that is not true (``false``, ``0``, ``"false"``, null), the first of
    ``state``, ``status``, ``result`` stated other than done, a non-zero
    ``exit_code``/``returncode``/``rc`` (an integer or its text: markers of other tools), and
    a node of ``nodes`` (the campaign's own, one per node) with a non-zero ``rc`` or a
    ``stopped`` reason (killed on a timeout); a marker saying ``ok`` beside any of these
    contradicts itself, and the failure is kept (a run is counted only when nothing says no)."""
    state = next((v for k in _STATE_KEYS if (v := marker.get(k)) is not None
                  and (k != "result" or isinstance(v, str) and v.strip())), None)
    code = next(((k, marker[k]) for k in _EXIT_KEYS if _exit_status(marker.get(k))), None)
    reason = str(marker.get("reason") or "")
    bad_ok = next((k for k in _OK_KEYS if k in marker and not _true(marker[k])), None)
    if state is not None and str(state).strip().lower() not in _DONE_STATES:
        said = str(state)
    elif bad_ok:
        said = f'"{bad_ok}": {_json_text(marker[bad_ok])}' + (
            f' beside "state": {_json_text(state)}' if state else "")
    elif code:
        said = f'"{code[0]}": {_json_text(code[1])}'
    elif node := _failed_node(marker.get("nodes")):
        said = node + (' beside "ok": true' if "ok" in marker else "")
    else:
        return ""
    return said + (f" ({reason})" if reason else "")


def _true(value: object) -> bool:
    """Whether a marker's ``ok``/``success`` says true: JSON true, 1, or a word of `_OK_WORDS`."""
    return value is True or (type(value) is int and value == 1) or (
        isinstance(value, str) and value.strip().lower() in _OK_WORDS)


def _failed_node(nodes: object) -> str:
    """The first node of a marker's ``nodes`` whose ``rc`` is a non-zero exit status or whose
    ``stopped`` names why it was stopped, as ``nodes[0].rc 137, stopped "timeout"``; ""
    when none is (or `nodes` is no list)."""
    for i, node in enumerate(nodes if isinstance(nodes, list) else []):
        if not isinstance(node, dict):
            continue
        rc, stopped = node.get("rc"), node.get("stopped")
        said = [f"rc {_json_text(rc)}"] if _exit_status(rc) else []
        if isinstance(stopped, str) and stopped.strip():
            said.append(f"stopped {_json_text(stopped)}")
        if said:
            return f"nodes[{i}]." + ", ".join(said)
    return ""


def _json_text(value) -> str:
    """`value` as JSON writes it (``false``, ``0``, ``"false"``, ``null``)."""
    return json.dumps(value, default=str)


def _marker_run(marker: dict | None, stem: str) -> str:
    """The run id a done marker states where it is not run `stem`'s (a marker copied beside
    another log); "" when it is `stem`'s or states none (markers of other tools)."""
    run_id = marker.get("run_id") if marker is not None else None
    if not isinstance(run_id, str) or not run_id or run_id.rsplit("/", 1)[-1] == stem:
        return ""
    return run_id


def marker_denial(marker: dict, stem: str) -> str:
    """Why done marker `marker`, found beside run `stem`'s log, does not say that run
    finished, as the words after "its done marker": ``is another run's (run_id '…': a
    copy)`` or ``says <failure>`` (:func:`marker_failure`); "" when it says so."""
    owner = _marker_run(marker, stem)
    if owner:
        return f"is another run's (run_id {owner!r}: a copy)"
    failure = marker_failure(marker)
    return f"says {failure}" if failure else ""


def marker_fault(path: str) -> tuple[int | None, str] | None:
    """(line, why) when the done marker at `path` cannot be read as a JSON object (a hand
    edit, a disk fault); None when it can."""
    try:
        data = loads_json(read_record(path))
    except json.JSONDecodeError as exc:
        return exc.lineno, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except (OSError, ValueError) as exc:
        return None, f"not readable: {exc}"
    return None if isinstance(data, dict) else (1, "not a JSON object")


class CampaignFolders:
    """Why a run found in a folder is a stray ("" when it counts), each folder looked at once."""

    def __init__(self) -> None:
        self._folders: dict[str, tuple[set[str], dict[str, str] | None, str] | None] = {}
        self._statuses: dict[str, dict[str | None, str] | None] = {}
        #: (folder, stem) -> (line, why) of the counted runs whose done marker is damaged
        self._faults: dict[tuple[str, str], tuple[int | None, str]] = {}
        self._said: set[tuple[str, str]] = set()

    def _status(self, folder: str) -> dict[str | None, str] | None:
        """The states of the campaign ``status.json`` in `folder` (None: none), read once."""
        if folder not in self._statuses:
            self._statuses[folder] = _status_states(os.path.join(folder, STATUS_NAME))
        return self._statuses[folder]

    def _campaign_status(self, folder: str, named: str | None) -> tuple[dict | None, str]:
        """(states, run id prefix) of the outermost campaign ``status.json`` in `folder` or
        above it, up to its parent or, deeper below, up to the folder the user named
        (`named`; `folder` itself when it is that campaign folder): a campaign folder accounts
        for everything under it, so a campaign kept inside another is read by its own status
        only when it, or a folder inside it, is named; (None, "") when there is none."""
        top = os.path.dirname(folder)
        if named is not None and (top.startswith(os.path.join(named, "")) or (
                named == folder and self._status(folder) is not None)):
            top = named
        where, prefix, found = folder, "", (None, "")
        while True:
            if (status := self._status(where)) is not None:
                found = status, prefix
            if where == top:
                return found
            where, prefix = os.path.dirname(where), f"{os.path.basename(where)}/{prefix}"

    def _folder(self, folder: str, named: str | None = None):
        """(stems with a marker, status states or None, run id prefix in the status) of a
        campaign folder; None for a folder that is none (the first `named` decides)."""
        if folder not in self._folders:
            try:
                names = os.listdir(folder)
            except OSError:
                names = []
            markers = {n[: -len(MARKER_SUFFIX)] for n in names if n.endswith(MARKER_SUFFIX)}
            status, prefix = self._campaign_status(folder, named)
            self._folders[folder] = (markers, status, prefix) if markers or status is not None \
                else None
        return self._folders[folder]

    def stray_reason(self, folder: Path, stem: str, named: str | None = None) -> str:
        """Why run `stem` of `folder` (as walked from folder `named`, when one was) is not one
        the campaign ran; "" when it is, or when `folder` is no campaign folder."""
        info = self._folder(os.path.abspath(folder), named and os.path.abspath(named))
        if info is None:
            return ""
        why = self._why(Path(folder), stem, *info)
        if why and info[2].count("/") > 1:  # not beside its status: say whose, and as what
            why += f" (under campaign folder {_home(folder, info[2])}, as run {info[2]}{stem})"
        return why

    def _why(self, folder: Path, stem: str, markers: set[str], status: dict | None,
             prefix: str) -> str:
        """:meth:`stray_reason` of a campaign folder's run."""
        why = []
        state = status.get(prefix + stem) if status is not None else None
        if stem in markers:
            marker = read_json_object(os.path.join(folder, stem + MARKER_SUFFIX))
            denial = marker_denial(marker, stem) if marker is not None else ""
            named, ours = (marker or {}).get("campaign"), (status or {}).get(None)
            if isinstance(named, str) and named and ours and named != ours:
                # two campaigns' outputs in one folder: the status says whose the folder is
                return (f"its done marker names campaign {named!r}, {STATUS_NAME} names "
                        f"campaign {ours!r}")
            if marker is not None and not denial:
                if state == "failed":
                    # the runner writes no such pair (it rebuilds status.json from the
                    # markers): a hand edit; the marker is followed, the conflict said
                    self._faults[(str(folder), stem)] = (None, "status failed")
                    return ""
                # a status that lists runs but not this one says the campaign did not run it
                if status is None or prefix + stem in status:
                    return ""
                return f"its done marker says done, but {STATUS_NAME} does not list it"
            if denial and state == "done":
                # the runner writes no such pair (status.json is made from the markers, and
                # a resume rewrites it so): a hand edit, followed as a resume follows it
                return (f"its done marker {stem}{MARKER_SUFFIX} {denial}, while "
                        f"{STATUS_NAME} lists it as done: the two records conflict, and the "
                        "marker, the run's own record, is followed")
            if marker is None:
                line, fault = marker_fault(os.path.join(folder, stem + MARKER_SUFFIX))
                if status is None or state == "done":
                    # nothing says the campaign did not run it, and its log is there:
                    # counted, the damaged marker said (`damaged_marker`)
                    self._faults[(str(folder), stem)] = (line, fault)
                    return ""
                why.append(f"its done marker cannot be read ({fault})")
            else:
                why.append(f"its done marker {denial}")
        else:
            why.append("no done marker")
            if markers and state == "done":
                # the runner writes a marker for every run it ends: this one was lost after
                # (status.json is made from the markers); status.json is followed, as for a
                # marker that cannot be read, and the loss said (`damaged_marker`)
                self._faults[(str(folder), stem)] = (None, "missing")
        if status is not None:
            if state == "done":
                return ""
            why.append(f"{STATUS_NAME} lists it as {state}" if state else
                       f"not in {STATUS_NAME}")
        return ", ".join(why)

    def damaged_marker(self, folder: Path, stem: str, run_id: str) -> Problem | None:
        """A ``bad_done_marker``, ``missing_done_marker`` or ``status_conflict`` problem of
        run `stem` of `folder` when `stray_reason` counted it though its done marker cannot
        be read, is gone, or conflicts with ``status.json`` (once per run); None otherwise."""
        fault = self._faults.pop((str(folder), stem), None)
        if fault is None or (str(folder), stem) in self._said:
            return None
        self._said.add((str(folder), stem))  # once per run, not per file of it
        line, why = fault
        path = os.path.join(folder, stem + MARKER_SUFFIX)
        if why == "missing":
            return Problem(path, None, "missing_done_marker",
                           f"no done marker, while {STATUS_NAME} lists the run as done and "
                           "its log is there: counted, as status.json says (restore the "
                           "marker)", run_id=run_id)
        if why == "status failed":
            return Problem(path, None, "status_conflict",
                           f"its done marker says the run finished, while {STATUS_NAME} "
                           "lists it as failed: the two records conflict, and the marker, "
                           "the run's own record, is followed (a resume rewrites "
                           f"{STATUS_NAME} from the markers; to run it again, delete the "
                           "marker and its log)", run_id=run_id)
        return Problem(path, line, "bad_done_marker",
                       f"its done marker is {why}: whether the run finished is not stated; "
                       "it is counted, its log being there (fix or remove the marker)",
                       run_id=run_id)

    def lost_logs(self, logged: set[tuple[str, str]]) -> list[Problem]:
        """A ``missing_log`` problem for each run of the campaign folders looked at that
        finished while no log of it was found (`logged`: the ``(folder, stem)`` of every log
        found, folders as absolute paths): its done marker says so, or, both gone,
        ``status.json`` lists it as done."""
        lost = []
        for folder in sorted(f for f, info in self._folders.items() if info is not None):
            markers, _status, prefix = self._folders[folder]
            for stem in sorted(markers):
                if (folder, stem) in logged:
                    continue
                path = os.path.join(folder, stem + MARKER_SUFFIX)
                marker = read_json_object(path)
                if marker is not None and not marker_denial(marker, stem):
                    lost.append(Problem(
                        path, None, "missing_log",
                        "its done marker says the run finished, but no log of the run is "
                        "there: the run is not counted (restore the log; or delete the "
                        "marker and resume to run it again)",
                        run_id=str(marker.get("run_id") or stem)))
            if markers:  # a folder of other tools' runs (no markers): its status is theirs
                lost += _listed_done_without_files(folder, prefix, markers, logged)
        return lost


def _listed_done_without_files(folder: str, prefix: str, markers: set[str],
                               logged: set[tuple[str, str]]) -> list[Problem]:
    """A ``missing_log`` problem for each run of `folder` that its campaign's ``status.json``
    lists as done while neither its log nor its done marker is there (a row's ``log`` that
    another run's row or marker claims is not its own: a hand edit)."""
    status = os.path.join(_home(folder, prefix), STATUS_NAME)
    data = read_json_object(status) or {}
    rows = [run for run in data.get("runs") or [] if isinstance(run, dict)]
    ids = {run["run_id"] for run in rows if isinstance(run.get("run_id"), str)}
    lost = []
    for run in rows:
        if str(run.get("state", "")) != "done":
            continue
        keys = [k.removesuffix(".log") for k in (run.get("run_id"), run.get("log"))
                if isinstance(k, str) and k.startswith(prefix)]
        stems = [k[len(prefix):] for k in keys if "/" not in k[len(prefix):]
                 and not _claimed(folder, k, run.get("run_id"), ids)]
        if stems and not any(s in markers or (folder, s) in logged for s in stems):
            lost.append(Problem(
                status, None, "missing_log",
                f"{STATUS_NAME} lists run {run.get('run_id') or stems[0]} as done, but "
                "neither its log nor its done marker is there: the run is not counted "
                "(restore them; or resume to run it again)",
                run_id=str(run.get("run_id") or stems[0])))
    return lost


def _home(folder: str | Path, prefix: str) -> str:
    """The campaign folder whose ``status.json`` names the runs of `folder` as
    ``<prefix><stem>``."""
    for _ in range(prefix.count("/")):
        folder = os.path.dirname(folder)
    return str(folder)


def _claimed(folder: str, key: str, run_id: object, ids: set[str]) -> bool:
    """Whether run `key` (a status row's run id or log, without ``.log``) is another run's than
    `run_id`: another row has it as its run id, or its done marker names another run."""
    if key == run_id:
        return False
    marker = read_json_object(os.path.join(folder, key.rsplit("/", 1)[-1] + MARKER_SUFFIX))
    named = marker.get("run_id") if marker is not None else None
    return key in ids or (isinstance(named, str) and bool(named) and named != run_id)
