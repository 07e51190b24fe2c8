"""The results store: a partitioned Parquet dataset of campaigns, embedded (nothing to start)
and queryable with pandas::

    pd.read_parquet("STORE/summary")     # one row per case and campaign (+ `campaign`)
    pd.read_parquet("STORE/runs")        # one row per run, with its environment facts
    pd.read_parquet("STORE/campaigns")   # one row per campaign

Each table holds one folder per campaign, ``<table>/campaign=<key>/part-0.parquet``, where
the key is the campaign's content digest (:func:`analysis.changes.sources.content_key`: its
observations, environment and stated settings), so adding the same campaign twice is a no-op. The ``campaigns`` row is written last: a campaign
is listed only once its runs and summary are complete.

The ``campaigns`` row also records the throughput method the campaign was measured with
(part of its key: the same logs by another method are another stored campaign) and a SHA-256
of its runs and summary files. Every read checks the store against them: a partition edited,
deleted or without its row, a second part file or any other file among the partitions, a
row under another key than the one it records, two keys with the same runs file (a campaign
copied whole) or a link among the tables is :class:`StoreDamage`, each named with how to
repair it; adding a damaged campaign again rewrites its partitions, and nothing is written
through a link. ``manifest.json`` lists every campaign added (a campaign whose partitions
were all deleted leaves no other trace), and each summary is checked against the stored
runs it summarises (repeats, median, min, max). A damaged store takes no new campaign
until it is repaired.

Each campaigns row keeps a record of the manifest as it stood once that campaign was added,
cut to a chain that grows linearly: the row's place in the order of adding (how many
campaigns the store had listed then, dropped ones included), its entry and that of the
campaign added just before it, and the drops since the last add. So a manifest deleted,
emptied, cut or unreadable is damage, never taken for a store written before the manifest
was kept; a campaign deleted with it is named by the next row's record, and places that no
record holds are counted: "2 campaign(s) added between X and Y are gone" (Y itself named
when gone too). What no file left can tell: the names of all but the last of several
campaigns deleted in a row with the manifest, campaigns added after the newest row left (all
of them, where no row is left) deleted with the manifest (or with their entries and its
count edited to match), and a drop made after the newest row was added (named lost again:
drop it again); the damage names the newest row, after which nothing is known. A lost
manifest is written again only by an explicit repair: adding again a campaign the store
holds or one named lost, or ``dlperf store drop``, never by the add of a new campaign; it
then lists each place no record names as a campaign dropped. Adds and drops hold the
store's lock (``.lock``), so concurrent adds lose no manifest entry.

A campaign some of whose runs' logs are copies of stored runs' (the copy test of
``compare``, the stored campaigns one side) is stored without them: its summary is made
again from the runs kept, as ``compare`` counts them. Runs alike to stored ones that the
logs cannot tell from reruns, or that state another setting, are stored and counted, and
their cases flagged (column ALIKE of ``runs``). A campaign added from the folder a stored
one was (``source``, its real path) holding every run of it (proven copies under the same
run ids) and more is that campaign grown since it was stored (a resume with more repeats):
stored whole, the stored one dropped. A campaign's ``started`` is that of the runs it stores.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import metrics as M
from analysis.changes import environment
from analysis.changes.compare import STATED, case_keys, copied_runs, counted_runs, figure_flags
from analysis.changes.sources import Campaign, started_at
from analysis.collect import records_of
from analysis.errors import UsageError
from analysis.fsutil import atomic_path, atomic_write_text, display_path, printable
from analysis.parsers.base import ParsedLog
from analysis.problems import Problem
from analysis.schema import CASE_COLUMNS, case_key, is_missing
from analysis.stats.case_stats import configuration, throughput_stats

TABLES = ("runs", "summary", "campaigns")
PART = "part-0.parquet"
ENV_PREFIX = "env_"
CAMPAIGN_COLUMNS = ["campaign", "name", "started", "added", "suite_commit", "source", "runs",
                    "cases", "hardware", "method"]
#: Partitions whose SHA-256 the campaigns row keeps (column ``<table>_sha256``).
CHECKED = ("runs", "summary")
#: The method of a campaign stored before the method was kept: unknown.
UNRECORDED = ""
#: Column of the runs table: each run's training rows that carry a step and its stated
#: configuration, as JSON ({"rows": {metric: [steps, times, values]}, "configuration": {key:
#: value}}): a store keeps no log, and a campaign added later is screened for copies of
#: stored runs by them (`compare.copied_runs`).
TRAINING = "training_rows"
#: Column of the runs table: why a run's log is alike to a stored run's (a copy stating
#: another setting, or one the logs cannot tell from a rerun made deterministic), '' when
#: it is not: stored and counted, as a comparison counts it, and its case flagged.
ALIKE = "alike_to_stored"
#: The store's list of the campaigns added to it ({"campaigns": {key: {name, source, method,
#: seq: its place in the order of adding, and "dropped": true once dropped}}, "count": how
#: many it lists}), written by every add and drop. Column LISTING of each campaigns row
#: keeps the manifest as it stood once that campaign was added, cut to the entries of that
#: campaign, of the one added just before it and of those dropped since the last add, with
#: the count then (its own seq): a chain, linear in the campaigns added.
MANIFEST = "manifest.json"
LISTING = "manifest"
#: Key prefix of the manifest's entry for a place in the order of adding that no record
#: names any more, written by a repair that accepts that campaign as gone (a dropped entry).
UNNAMED = "unnamed-"
#: The key damage() gives a fault of the manifest: adding again any campaign the store
#: holds repairs it, the add of a new one does not.
ANY_STORED = "*"
#: Summary columns that follow from the stored runs' throughputs whatever the confidence.
FROM_RUNS = ("repeats", "throughput_median", "throughput_min", "throughput_max")


class StoreDamage(UsageError):
    """The store's files are not those its campaigns rows describe."""


@dataclass
class Added:
    key: str
    name: str
    new: bool  # False: the campaign was already stored, intact
    repaired: bool = False  # True: it was stored, damaged, and has been written again
    #: its runs whose logs are copies of stored runs': left out of what is stored (nothing
    #: added where all are)
    copies: list[Problem] = field(default_factory=list)
    #: its runs alike to stored runs' logs that the logs cannot tell from reruns, or that
    #: state another setting: stored and counted, their cases flagged (ALIKE)
    alike: list[Problem] = field(default_factory=list)
    #: stored campaigns it holds every run of, and more (the same campaign grown since it
    #: was stored, as by a resume with more repeats): dropped, it stored whole; key -> name
    replaced: dict[str, str] = field(default_factory=dict)
    #: stored campaigns named by its key (chosen before it was stored): a reference by that
    #: name now means this campaign, the key winning
    shadowed: list[str] = field(default_factory=list)


def stored_key(content_key: str, method: str) -> str:
    """The key of a campaign measured with `method`: its content key for the default method
    (as stores kept it before the method was recorded), else a digest of both."""
    if method == "dlperf":
        return content_key
    return hashlib.sha256(f"{content_key}:{method}".encode()).hexdigest()[:16]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _portable(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns of one type in every partition: text as `string`, numbers as they are."""
    out = frame.copy()
    for c in out.columns:
        if out[c].dtype == object or isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype("string")
    return out


def _write(store: Path, table: str, key: str, frame: pd.DataFrame) -> str:
    """Write one partition (any other file in its folder removed); its SHA-256."""
    folder = store / table / f"campaign={key}"
    folder.mkdir(parents=True, exist_ok=True)
    for extra in _extra_files(folder):
        extra.unlink()
    with atomic_path(folder / PART) as tmp:
        _portable(frame).to_parquet(tmp, index=False)
        digest = _sha256(tmp)
    return digest


def _extra_files(folder: Path) -> list[Path]:
    """Files of a partition folder other than its part file (hidden ones, such as a write
    cut short, are not read by anyone and left alone)."""
    return sorted(p for p in folder.iterdir() if p.name != PART and not p.name.startswith("."))


def _partition(store: Path, table: str, key: str) -> Path:
    return store / table / f"campaign={key}" / PART


def nothing_measured(campaign: Campaign) -> str:
    """Why `campaign` has no run to store ('' where it has one): every run failed, or none
    has a figure (a throughput, or an MLPerf time to train; each too short for its method,
    cut off, ...): a campaign that measured
    nothing is not stored as if it had, as `compare` counts no such run either."""
    if campaign.runs.empty:
        return "every run failed"
    for frame, column in ((campaign.runs, "throughput"),  # MLPerf cases: a time to train
                          (campaign.summary, "time_to_train_min")):
        if column in frame.columns and np.isfinite(pd.to_numeric(
                frame[column], errors="coerce").to_numpy(float)).any():
            return ""
    kinds = sorted({str(k) for k in campaign.runs["problem_kind"].dropna()} - {""})
    return "no run has a figure" + (f": {', '.join(kinds)}" if kinds else "")


def add(store: str | Path, campaign: Campaign, name: str | None = None,
        method: str = "dlperf") -> Added:
    """Store `campaign`, measured with `method`, under `name` (default its own) unless it is
    there already and intact; a stored copy that is damaged is written again."""
    store = Path(store).expanduser()  # never a folder named "~" in the working folder
    if why := nothing_measured(campaign):
        raise UsageError(f"{display_path(campaign.label)} has no run to store ({why})")
    if store.exists() and not store.is_dir():
        raise UsageError(f"store {display_path(store)} is not a folder")
    _refuse_links(store, "nothing added")
    with _locked(store):
        return _add(store, campaign, name, method)


def _add(store: Path, campaign: Campaign, given: str | None, method: str) -> Added:
    key = stored_key(campaign.key, method)
    listed = _listed(store)
    faults = damage(store, listed) if _kept(store) else []
    stored_keys = set(listed["campaign"])
    others = [text for k, text in faults if k not in (key, "")
              and not (k == ANY_STORED and key in stored_keys)]
    if others and not any(k == key for k, _ in faults):  # a repair of its own goes on
        raise StoreDamage(f"store {display_path(store)} is damaged, nothing added (repair it "
                          "first): " + "; ".join(others))
    manifest_repaired = any(k == ANY_STORED for k, _ in faults)
    known = _recorded(store, listed)
    name = printable(given or campaign.name)  # shown on terminals: no escape sequences
    stored = _partition(store, "campaigns", key)
    was_stored = stored.is_file()
    if was_stored:
        try:
            row = _read_parquet(stored).iloc[0]
            if not _damage_of(store, key, row):
                _record(store, known)
                return Added(key, printable(str(row.get("name") or name)), False,
                             repaired=manifest_repaired)
            name = printable(given or str(row.get("name") or campaign.name))  # kept on repair
        except (UsageError, IndexError):
            pass  # its row itself is damaged: written again below
    grown = _grown_from(store, campaign, method, listed[listed["campaign"] != key])
    if grown and not given:  # a campaign grown keeps its stored name
        name = next(reversed(grown.values()))
    _check_name(store, name, listed[listed["campaign"] != key])
    copies, alike = stored_copies(store, campaign, method,
                                  listed[~listed["campaign"].isin([key, *grown])])
    copied = {p.run_id for p in copies}
    if copied and len(copied) == len(campaign.runs):
        return Added(key, name, False, copies=copies)  # measured nothing the store lacks
    own = counted_runs(campaign, copied)  # as a comparison counts them
    if copied and nothing_measured(own):  # nor did the runs besides the copies
        return Added(key, name, False, copies=copies)
    runs, summary = own.runs, own.summary
    env = campaign.env[campaign.env["run_id"].isin(runs["run_id"])]
    runs = runs.merge(env.rename(columns={c: ENV_PREFIX + c for c in environment.FACTS}),
                      on="run_id", how="left")
    rows, said = _training_rows(campaign), {p.run_id: p.reason for p in alike}
    runs[TRAINING] = [rows.get(str(r)) for r in runs["run_id"]]
    runs[ALIKE] = [said.get(str(r), "") for r in runs["run_id"]]
    digests = {"runs": _write(store, "runs", key, runs),
               "summary": _write(store, "summary", key, summary)}
    hardware = "; ".join(sorted({h for h in env["hardware"] if h}))
    row = {"name": name, "started": _started(campaign, runs),
           "added": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
           "suite_commit": campaign.suite_commit, "source": _source(campaign.label),
           "runs": len(runs), "cases": len(summary), "hardware": hardware,
           "method": method, "key": key, **{f"{t}_sha256": digests[t] for t in CHECKED}}
    was_listed = key in known and not known[key].get("dropped")
    for old in grown:  # dropped in the manifest this row records, then removed
        known[old] = {**known[old], "dropped": True}
    chain = _chain(listed, known, key)
    known[key] = chain[key] = {**_entry(row), "seq": chain[key]["seq"]}
    # the manifest before the row: a reader in between sees a campaign not yet complete,
    # never a row its manifest lacks
    _record(store, known)
    for old in grown:
        _remove(store, old)
    _write(store, "campaigns", key,
           pd.DataFrame([{**row, LISTING: _dumps(chain, chain[key]["seq"])}]))
    return Added(key, name, True, repaired=was_stored or was_listed, copies=copies,
                 alike=alike, replaced=grown,
                 shadowed=[str(k) for k in listed.loc[listed["name"] == key, "campaign"]])


def _started(campaign: Campaign, runs: pd.DataFrame) -> str:
    """When the stored `runs` of `campaign` started: the runs left out (copies of stored
    runs, which may be far older) are not the campaign's time."""
    if campaign.result is None or len(runs) == len(campaign.runs):
        return campaign.started
    obs = campaign.result.observations
    return started_at(obs[obs["run_id"].astype(str).isin(set(runs["run_id"].astype(str)))])


def _check_name(store: Path, name: str, listed: pd.DataFrame) -> None:
    """UsageError where `name` is another stored campaign's key: a reference to it would
    name two campaigns, and the key wins (a name that only starts a key is refused where
    it is used, as ambiguous)."""
    if name in set(listed["campaign"]):
        raise UsageError(f"the name {name!r} is the key of stored campaign {name} in store "
                         f"{display_path(store)}: a reference to it would name both; give "
                         "another --name")


def _source(label: str) -> str:
    """Where a campaign was added from, as the store keeps it: the real path of its folder or
    export (the same folder by any spelling, from any working folder), else `label`."""
    return os.path.realpath(label) if os.path.exists(label) else label


def _grown_from(store: Path, campaign: Campaign, method: str, listed: pd.DataFrame
                ) -> dict[str, str]:
    """The campaigns `listed` (measured with `method`) that `campaign` has grown from since
    they were stored: added from the same folder, each of their runs a proven copy of its
    run of the same id here, `campaign` holding more (a resume with more repeats); their
    names by key. Another folder holding copies of a stored campaign's logs beside runs of
    its own is another campaign: the copies are left out of it, the stored one kept."""
    ids = set(campaign.runs["run_id"].astype(str))
    here = _source(campaign.label)
    out = {}
    for k, name, source in zip(listed["campaign"], listed["name"], listed["source"],
                               strict=True):
        if str(source) != here or not os.path.isabs(here):
            continue  # a source stored as typed (relative) tells not which folder it was
        try:
            stored = set(_read_parquet(_partition(store, "runs", k))["run_id"].astype(str))
        except (UsageError, KeyError):
            continue  # named by damage()
        if stored and stored < ids and stored <= {p.run_id for p in stored_copies(
                store, campaign, method, listed[listed["campaign"] == k])[0]}:
            out[str(k)] = printable(str(name))
    return out


def _remove(store: Path, key: str) -> list[Path]:
    """Remove every partition of the campaign `key`; those there were."""
    left = [p for t in TABLES if (p := store / t / f"campaign={key}").is_dir()]
    for partition in left:
        shutil.rmtree(partition)
    return left


def drop(store: str | Path, key: str) -> str:
    """Remove the campaign `key` from `store` for good (its partitions, any left) and mark
    its manifest entry dropped, kept so that no row's copy of the manifest names it as lost;
    its name. Writes a lost or damaged manifest again: an explicit repair. A UsageError when
    it was dropped already and nothing of it is left to drop or repair."""
    store = Path(store).expanduser()
    if not store.is_dir() or not _kept(store):
        raise UsageError(f"{display_path(store)} is not a results store")
    _refuse_links(store, "nothing dropped")
    with _locked(store):
        known = _recorded(store, _listed(store))
        if key not in known:
            raise UsageError(f"no campaign {key!r} in store {display_path(store)}: give its "
                             "key in full, as `dlperf store list` or the damage names it")
        left = _remove(store, key)
        gone = known[key].get("dropped") and not left
        known[key] = {**known[key], "dropped": True}
        if not _record(store, known) and gone:
            raise UsageError(f"no campaign {key!r} in store {display_path(store)}: it was "
                             "dropped already, nothing dropped")
    return printable(str(known[key].get("name") or ""))


def _refuse_links(store: Path, what: str) -> None:
    links = _links(store) if store.is_dir() else []
    if links:  # writing through a link would change files outside the store
        raise StoreDamage(f"store {display_path(store)}: {what}: "
                          + "; ".join(_link_fault(p) for p in links))


@contextlib.contextmanager
def _locked(store: Path) -> Iterator[None]:
    """Hold the store's lock, waiting for it: one add or drop at a time, so that none
    writes the manifest over another's entry (the kernel frees it when its holder ends)."""
    store.mkdir(parents=True, exist_ok=True)
    fd = os.open(store / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _kept(store: Path) -> bool:
    """Whether `store` holds any part of a results store: its manifest, a campaigns folder
    or a partition (a log folder's own runs/ or summary/ folder is none)."""
    return (store / MANIFEST).exists() or (store / "campaigns").is_dir() or any(
        (store / t).is_dir() and any(p.name.startswith("campaign=") for p in (store / t).iterdir())
        for t in CHECKED)


def is_store(folder: Path) -> bool:
    """Whether `folder` is a results store an output must stay out of: its manifest lists
    campaigns, or a table of it holds ``campaign=`` partitions (a store whose manifest is
    lost is one). A folder merely named ``campaigns`` or holding another ``manifest.json``
    is not: a write there damages no store."""
    try:
        manifest = (folder / MANIFEST).read_text(encoding="utf-8", errors="replace")
    except OSError:
        manifest = ""
    return _listing(manifest) is not None or any(
        (folder / t).is_dir() and any(p.name.startswith("campaign=")
                                      for p in (folder / t).iterdir())
        for t in TABLES)


def _listing(text: str) -> tuple[dict, int] | None:
    """The campaigns a manifest's text lists, by key, and the count it states (how many it
    lists where it states none, as manifests before the count was kept); None when it is
    no such list."""
    try:
        data = json.loads(text)
        listed, count = data["campaigns"], data.get("count", len(data["campaigns"]))
        if isinstance(listed, dict) and all(isinstance(v, dict) for v in listed.values()) \
                and isinstance(count, int):
            return listed, count
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        pass
    return None


def _manifest(store: Path) -> tuple[dict | None, int, str]:
    """The campaigns `store`'s manifest lists, by key (None: it has none, as stores written
    before it was kept, or it is unreadable), the count it states, and what is wrong with
    it ('' when nothing)."""
    path = store / MANIFEST
    if not path.exists() and not path.is_symlink():
        return None, 0, ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        text = ""
    read = _listing(text)
    if read is None:
        return None, 0, f"{display_path(path)} is not a readable list of the store's campaigns"
    listed, count = read
    if count != len(listed):
        return listed, count, (f"{display_path(path)} lists {len(listed)} campaign(s), not "
                               f"the {count} its count states (an entry removed by hand?)")
    return listed, count, ""


def _entry(row) -> dict:
    """A campaign's manifest entry, from its campaigns `row` (its place apart)."""
    return {c: str(row.get(c) or "") for c in ("name", "source", "method")}


def _dumps(entries: dict, count: int) -> str:
    return json.dumps({"campaigns": entries, "count": count}, indent=1, sort_keys=True)


def _records(listed: pd.DataFrame) -> list[tuple[dict, int]]:
    """The entries and the count of each campaigns row's record (LISTING), oldest first."""
    if LISTING not in listed.columns:
        return []
    texts = listed.sort_values("added")[LISTING]
    return [read for text in texts if isinstance(text, str) and (read := _listing(text))]


def _merge(known: dict, entries: dict) -> None:
    """`entries` over `known`, each keeping the place a record gave it where it has none."""
    for key, entry in entries.items():
        seq = entry.get("seq", known.get(key, {}).get("seq"))
        known[key] = {**entry, **({} if seq is None else {"seq": seq})}


def _known(listed: pd.DataFrame, manifest: dict | None, count: int
           ) -> tuple[dict, list[int]]:
    """Every campaign the store has a record of, by key, with its manifest entry and place
    (`seq`): those its rows' records name, oldest first (a later record wins), the
    manifest's (stating `count`) and those of its rows; and the places up to the highest
    count any of them states that none holds: campaigns deleted with every record of
    them. An entry recorded before places were kept takes the first free place: those
    campaigns were added first."""
    known: dict = {}
    records = _records(listed)
    for entries, _ in records:
        _merge(known, entries)
    _merge(known, manifest or {})
    _merge(known, {str(r["campaign"]): _entry(r) for r in listed.to_dict("records")})
    held = {e.get("seq") for e in known.values()}
    free = (place for place in itertools.count(1) if place not in held)
    for entry in known.values():
        if not isinstance(entry.get("seq"), int):
            entry["seq"] = next(free)
    held = {e["seq"] for e in known.values()}
    last = max([count, *(n for _, n in records)])
    return known, [place for place in range(1, last + 1) if place not in held]


def _recorded(store: Path, listed: pd.DataFrame) -> dict:
    """What the manifest a writer writes lists: every campaign known, and an entry dropped
    for each place no record names (that writer is an explicit repair: those campaigns are
    gone for good)."""
    manifest, count, _ = _manifest(store)
    known, unnamed = _known(listed, manifest, count)
    known.update({f"{UNNAMED}{place}": {"name": "", "source": "", "method": "", "seq": place,
                                        "dropped": True} for place in unnamed})
    return known


def _chain(listed: pd.DataFrame, known: dict, key: str) -> dict:
    """The entries the campaigns row of `key`, being added, records: its own (its place:
    the one it had, else the next), that of the campaign added just before it and those
    dropped since the last row recorded a drop of them."""
    seq = known[key]["seq"] if key in known else max(
        (e["seq"] for e in known.values()), default=0) + 1
    recorded = {k for entries, _ in _records(listed) for k, e in entries.items()
                if e.get("dropped")}
    chain = {k: e for k, e in known.items() if k != key and (
        e["seq"] == seq - 1 or (e.get("dropped") and k not in recorded))}
    return {**chain, key: {"seq": seq}}


def _record(store: Path, known: dict) -> bool:
    """Write the manifest listing `known`, unless it does already; whether it was written."""
    path, text = store / MANIFEST, _dumps(known, len(known)) + "\n"
    try:
        if not path.is_symlink() and path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, ValueError):
        pass
    atomic_write_text(path, text)
    return True


def stored_copies(store: Path, campaign: Campaign, method: str, listed: pd.DataFrame
                  ) -> tuple[list[Problem], list[Problem]]:
    """The runs of `campaign` whose logs are copies of a run of the campaigns `listed`
    measured with `method`, by the training rows the store keeps (`compare.copied_runs`,
    those campaigns one side), and apart those the logs cannot tell from reruns made
    deterministic or that state another setting. A runs partition that cannot be read is
    left aside: the damage names it, and adding is how a damaged campaign is repaired."""
    frames = []
    for key in listed.loc[listed["method"].isin([method, UNRECORDED]), "campaign"]:
        with contextlib.suppress(UsageError):
            frames.append(_read_parquet(_partition(store, "runs", key)).assign(campaign=key))
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if TRAINING not in runs.columns:  # stored before the store kept them
        return [], []
    # many campaigns on one side: each run named with its own
    runs["run_id"] = runs["run_id"].astype(str) + ", stored campaign " + runs["campaign"]
    stored = Campaign(f"store {display_path(store)}", "", "", "", runs, pd.DataFrame(),
                      pd.DataFrame(), logs=_logs_of(runs))
    return copied_runs(stored, campaign)


def _training_rows(campaign: Campaign) -> dict[str, str]:
    """Each run's training rows that carry a step (`TRAINING`), by run id."""
    out: dict[str, dict] = {}
    stated: dict[str, dict] = {}
    for row, parsed, _ in campaign.logs or ():
        stated[str(row["run_id"])] = configuration(row.get("parameters"))
        for b in parsed.obs.blocks:
            n = b["n"]
            keep = np.broadcast_to((b["phase"] == M.TRAIN) & (b["step"] != -1), (n,))
            metric = np.broadcast_to(np.asarray(b["metric"], dtype=object), (n,))[keep]
            step, stamp, value = (np.broadcast_to(b[c], (n,))[keep]
                                  for c in ("step", "timestamp", "value"))
            run = out.setdefault(str(row["run_id"]), {})
            for m in dict.fromkeys(metric.tolist()):
                at = metric == m
                columns = run.setdefault(str(m), [[], [], []])
                for column, v in zip(columns, (step[at], stamp[at], value[at]), strict=True):
                    column.extend(v.tolist())
    return {rid: json.dumps({"rows": rows, "configuration": stated[rid]})
            for rid, rows in out.items() if rows}


def _logs_of(runs: pd.DataFrame) -> list[tuple[dict, ParsedLog, str]]:
    """(run, its training rows as a ParsedLog, its log) of each stored run that kept them."""
    logs = []
    stated = [c for c in STATED if c in runs.columns]
    for (rid, source, text), fields in zip(
            zip(runs["run_id"], runs["source"], runs[TRAINING], strict=True),
            runs[stated].to_dict("records"), strict=True):
        if not isinstance(text, str):
            continue
        parsed, kept = ParsedLog(""), json.loads(text)
        for metric, (steps, stamps, values) in kept["rows"].items():
            n = len(steps)
            parsed.obs.blocks.append({
                "n": n, "phase": M.TRAIN, "metric": metric, "unit": "",
                "step": np.array(steps, np.int64), "timestamp": np.array(stamps, float),
                "value": np.array(values, float),
                **{c: np.full(n, -1, np.int64) for c in ("line", "rank", "device", "epoch")}})
        logs.append(({**fields, "parameters": kept["configuration"],
                      "run_id": str(rid)}, parsed, str(source)))
    return logs


def _links(store: Path) -> list[Path]:
    """The store's table and partition folders and part files that are symbolic links."""
    out = []
    for table in TABLES:
        folder = store / table
        if folder.is_symlink():
            out.append(folder)
        elif folder.is_dir():
            out += [p for p in sorted(folder.iterdir()) if p.is_symlink()
                    or (p.is_dir() and (p / PART).is_symlink())]
    return out


def _link_fault(link: Path) -> str:
    return (f"{display_path(link)} is a link (to {display_path(str(link.readlink()))}): a "
            "store's tables and partitions are its own files, never written or read through "
            "a link; replace the link by the folder or file itself")


def _copies(listed: pd.DataFrame) -> list[str]:
    """Campaigns rows that are copies: a row under a key other than the one it was written
    for, or two keys holding the same runs partition (its SHA-256 recorded in both)."""
    out = []
    if "key" in listed.columns:
        for folder, written in zip(listed["campaign"], listed["key"], strict=True):
            if isinstance(written, str) and written and written != folder:
                out.append(f"campaign={folder} holds the campaign stored as {written} (a copy "
                           f"or a move): remove the campaign={folder} folders of runs, summary "
                           "and campaigns, and add that campaign again")
    if "runs_sha256" in listed.columns:
        sums = listed[listed["runs_sha256"].fillna("").astype(str) != ""]
        for digest, same in sums.groupby("runs_sha256")["campaign"]:
            keys = sorted(same)
            if len(keys) > 1:
                out.append(f"campaigns {', '.join(keys)} hold the same runs partition (SHA-256 "
                           f"{str(digest)[:12]}…): all but one are copies and would count it "
                           "twice; remove the copies' campaign=… folders and add the campaign "
                           "again")
    return out


def _read_parquet(path: Path) -> pd.DataFrame:
    """A store table or partition; a UsageError naming it when it cannot be read."""
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise UsageError(f"{display_path(path)}: a damaged store table ({' '.join(str(exc).split())[:200]}); "
                         "remove the damaged campaign=… folder and add that campaign again") from None


def _read(store: Path, table: str, keys: list[str]) -> pd.DataFrame:
    """The partitions of `table` of the campaigns `keys`, each read from its one part file,
    with its key as the ``campaign`` column."""
    frames = [_read_parquet(_partition(store, table, k)).assign(campaign=k) for k in keys]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def _damage_of(store: Path, key: str, row) -> list[str]:
    """What is wrong with the stored campaign `key` (its campaigns `row`), each with how to
    repair it; nothing when it is intact."""
    source = display_path(str(row.get("source") or "its logs"))
    again = f"add it again (dlperf store add {source} --store {display_path(store)})"
    out = []
    for table in TABLES:
        part = _partition(store, table, key)
        recorded = row.get(f"{table}_sha256")
        if table in CHECKED and not part.is_file():
            out.append(f"{display_path(part)} is missing (deleted?): {again}")
        elif isinstance(recorded, str) and recorded and _sha256(part) != recorded:
            out.append(f"{display_path(part)} has changed since it was added (edited or "
                       f"replaced): {again}")
        twice = " would count the campaign twice" if table in CHECKED else ""
        extra = _extra_files(part.parent) if part.parent.is_dir() else []
        out += [f"{display_path(p)}: a second file in the partition (a copy?){twice}: remove "
                f"it, or {again}" for p in extra]
    copied = row.get(LISTING)
    if isinstance(copied, str) and _listing(copied) is None:
        out.append(f"{display_path(_partition(store, 'campaigns', key))}: its copy of "
                   f"{MANIFEST} is unreadable (edited?): {again}")
    if not out:
        out += [f"{text} (edited?): {again}" for text in _summary_faults(store, key)]
    return out


def _summary_faults(store: Path, key: str) -> list[str]:
    """Cases whose stored summary is not what the stored runs give (FROM_RUNS), or whose
    median lies outside its own interval: an edit whose checksum was rewritten with it."""
    import pyarrow.parquet as pq

    part = _partition(store, "summary", key)
    summary = records_of(_read_parquet(part))
    runs_part = _partition(store, "runs", key)
    columns = [c for c in (*CASE_COLUMNS, "throughput")
               if c in pq.ParquetFile(runs_part).schema_arrow.names]
    if not summary or "throughput" not in columns or not set(FROM_RUNS) <= set(summary[0]):
        return []  # a store of another layout: nothing to check against
    values: dict[tuple, list] = {}
    for r in records_of(pd.read_parquet(runs_part, columns=columns)):
        values.setdefault(tuple(r.get(c) for c in CASE_COLUMNS), []).append(r["throughput"])
    out = []
    for row in summary:
        given = {c: row[c] for c in FROM_RUNS}
        wanted = {c: throughput_stats(values.get(tuple(row.get(c) for c in CASE_COLUMNS),
                                                 []))[c] for c in FROM_RUNS}
        low, median, high = (row.get(c) for c in ("interval_low", "throughput_median",
                                                  "interval_high"))
        if any(not _same(given[c], wanted[c]) for c in FROM_RUNS) or not (
                any(is_missing(v) for v in (low, median, high)) or low <= median <= high):
            out.append(f"case {case_key(row)} states {_figures(given)}, interval "
                       f"{_number(low)}–{_number(high)}; its stored runs give "
                       f"{_figures(wanted)}")
    if not out:
        return []
    more = f" (and {len(out) - 1} more case(s))" if len(out) > 1 else ""
    return [f"{display_path(part)} is not what the stored runs give: {out[0]}{more}"]


def _same(a, b) -> bool:
    if is_missing(a) or is_missing(b):
        return is_missing(a) and is_missing(b)
    return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=0.0))


def _number(value) -> str:
    return "none" if is_missing(value) else f"{value:.10g}"


def _figures(figures: dict) -> str:
    return ", ".join(f"{c.removeprefix('throughput_')} {_number(v)}" for c, v in figures.items())


def damage(store: Path, listed: pd.DataFrame) -> list[tuple[str | None, str]]:
    """Every fault of the store: of each campaign listed in `listed` (its rows), of its
    manifest, of the campaigns it or a row's record names as added and no row holds,
    and files or partitions among the tables that no campaign row accounts for; each with
    the key of the campaign whose adding again repairs it ('' when any add does, ANY_STORED
    when that of any campaign the store holds does, None when none does)."""
    links = _links(store)
    if links:  # the files behind a link are not the store's: none is named for removal
        return [(None, _link_fault(p)) for p in links]
    out: list[tuple[str | None, str]] = [(None, text) for text in _copies(listed)] \
        if not listed.empty else []
    keys = set(listed["campaign"]) if not listed.empty else set()
    for _, row in listed.iterrows():
        out += [(str(row["campaign"]), text)
                for text in _damage_of(store, str(row["campaign"]), row)]
    manifest, count, problem = _manifest(store)
    known, unnamed = _known(listed, manifest, count)
    out += [(ANY_STORED, text) for text in _manifest_faults(
        store, listed, manifest, problem + "; " * bool(problem and unnamed)
        + "; ".join(_unnamed_faults(known, unnamed)))]
    if not (store / "campaigns").is_dir():
        out.append(("", f"{display_path(store / 'campaigns')} is missing (deleted?): it holds "
                        "each campaign's row"))
    gone = {k: v for k, v in known.items() if k not in keys and not v.get("dropped")}
    for key, entry in gone.items():
        left = [t for t in TABLES if (store / t / f"campaign={key}").exists()]
        what = (f"its campaigns row is missing ({', '.join(left)} left)" if left else
                "all its partitions are gone (deleted?)")
        method = f" --method {entry.get('method')}" if entry.get("method") not in (
            None, "", "dlperf") else ""
        out.append((key, f"campaign {key} ({printable(str(entry.get('name', '')))}), recorded "
                         f"as added ({MANIFEST}, or the record of the campaign added after it): "
                         f"{what}: add "
                         f"it again (dlperf store add "
                         f"{display_path(str(entry.get('source') or 'its logs'))} --store "
                         f"{display_path(store)}{method}), or drop it for good (dlperf store "
                         f"drop {key} --store {display_path(store)})"))
    for table in TABLES:
        folder = store / table
        if not folder.is_dir():
            continue
        for p in sorted(folder.iterdir()):
            if p.name.startswith("."):
                continue
            key = p.name.removeprefix("campaign=")
            if not p.is_dir() or not p.name.startswith("campaign="):
                out.append((None, f"{display_path(p)}: not a partition of the store (a copy?): "
                                  "remove it"))
            elif key in gone:
                continue  # named above, with its logs
            elif key not in keys and table != "campaigns":
                out.append((key, f"{display_path(p)}: a partition of no stored campaign (its "
                                 "campaigns row was deleted, or a copy of another partition): "
                                 "add that campaign again, or remove it if it is a copy"))
            elif key not in keys and (p / PART).exists():
                out.append((key, f"{display_path(p / PART)}: not a readable campaigns row: "
                                 "remove the campaign=… folders of this key and add the "
                                 "campaign again"))
    return out


def _manifest_faults(store: Path, listed: pd.DataFrame, manifest: dict | None,
                     problem: str) -> list[str]:
    """What is wrong with the manifest (`problem`: unreadable, an entry removed, campaigns
    no record names), or that it is lost or does not list a campaign whose row was added
    with it (a row keeping a record); with the repair and the limit of what the rows left
    can tell."""
    copied = listed[listed[LISTING].notna()] if LISTING in listed.columns else listed[:0]
    path = display_path(store / MANIFEST)
    faults = [problem] if problem else []
    if manifest is None and not problem and not copied.empty:
        faults.append(f"{path} is missing (deleted?), yet its campaigns were added with it")
    unlisted = copied[~copied["campaign"].isin(list(manifest or {}))] if manifest is not None \
        else copied[:0]
    if not unlisted.empty:
        faults.append(f"{path} does not list " + ", ".join(
            f"campaign {k} ({printable(str(n))})" for k, n in zip(
                unlisted["campaign"], unlisted["name"], strict=True)) + " (edited by hand?)")
    if not faults:
        return []
    if listed.empty:  # nothing to write it again from: what it listed is beyond knowing
        return [f"{'; '.join(faults)}: the store holds no campaigns row that could tell what "
                f"it listed: remove {MANIFEST} and add again the campaigns it held"]
    newest = copied.sort_values("added").iloc[-1] if not copied.empty else None
    limit = (f"; the campaigns rows left record every campaign added up to "
             f"{newest['campaign']} ({printable(str(newest['name']))}, added "
             f"{newest['added']}), by name each one added just before a row, by count the "
             "others: one added after it and deleted leaves nothing the store can name") \
        if newest is not None else ""
    return [f"{'; '.join(faults)}{limit}: once each campaign named lost is added again or "
            f"dropped, add again any campaign the store holds (dlperf store add LOG_DIR "
            f"--store {display_path(store)}), which writes {MANIFEST} again from the rows "
            "(as adding again a campaign named lost does), taking each campaign no record "
            "names as dropped"]


def _unnamed_faults(known: dict, unnamed: list[int]) -> list[str]:
    """Each run of places in the order of adding that no record names: how many campaigns,
    added between which two the store knows."""
    at = {e["seq"]: f"{k} ({printable(str(e.get('name', '')))})" for k, e in known.items()}
    out = []
    for first, last in _runs(unnamed):
        between = " and ".join(at[p] for p in (first - 1, last + 1) if p in at)
        where = (f" between {between}" if first - 1 in at and last + 1 in at else
                 f" after {between}" if first - 1 in at else
                 f" before {between}" if between else "")
        out.append(f"{last - first + 1} campaign(s) added{where} are gone, named by no "
                   "record left (each campaigns row names only the campaign added just "
                   "before it)")
    return out


def _runs(places: list[int]) -> list[tuple[int, int]]:
    """The runs of consecutive numbers in the sorted `places`, each as (first, last)."""
    out: list[tuple[int, int]] = []
    for place in places:
        if out and out[-1][1] == place - 1:
            out[-1] = (out[-1][0], place)
        else:
            out.append((place, place))
    return out


def _listed(store: Path) -> pd.DataFrame:
    """The campaigns rows as stored, each with its key; older rows lack the method and the
    checksums (unknown: unrecorded, not verified)."""
    folder = store / "campaigns"
    frames = []
    for part in sorted(folder.glob(f"campaign=*/{PART}")):
        try:
            frame = _read_parquet(part)
        except UsageError:
            continue  # named by damage(): a partition of no readable row
        frames.append(frame.assign(campaign=part.parent.name.removeprefix("campaign=")))
    if not frames:
        return pd.DataFrame(columns=CAMPAIGN_COLUMNS)
    frame = pd.concat(frames, ignore_index=True)
    if "method" not in frame.columns:
        frame["method"] = UNRECORDED
    frame["method"] = frame["method"].fillna(UNRECORDED).astype(str)
    return frame


def campaigns(store: str | Path) -> pd.DataFrame:
    """One row per stored campaign (CAMPAIGN_COLUMNS), oldest first."""
    store = Path(store).expanduser()  # a notebook's "~/results", as a shell would
    if not store.is_dir():
        raise UsageError(f"no such store: {display_path(store)} (make one with "
                         f"`dlperf store add LOG_DIR --store {display_path(store)}`)")
    if not _kept(store):  # a log folder or a typo'd path: not an empty store
        raise UsageError(f"{display_path(store)} is not a results store: it has no campaigns/ "
                         f"folder (make one with `dlperf store add LOG_DIR --store "
                         f"{display_path(store)}`)")
    frame = _listed(store)
    faults = [text for _, text in damage(store, frame)]
    if faults:
        raise StoreDamage(f"store {display_path(store)} is damaged: " + "; ".join(faults))
    if frame.empty:
        return pd.DataFrame(columns=CAMPAIGN_COLUMNS)
    return in_time_order(frame[CAMPAIGN_COLUMNS])


def in_time_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of stored campaigns oldest first: by the time the campaign started, or where
    that is unknown (logs without timestamps) the time it was added; ties by time added."""
    started = frame["started"].fillna("").astype(str)
    when = started.where(started != "", frame["added"].astype(str))
    return (frame.assign(_when=when).sort_values(["_when", "added"], kind="stable")
            .drop(columns="_when").reset_index(drop=True))


def _resolve(store: Path, listed: pd.DataFrame, ref: str, method: str | None) -> str:
    """The key of the stored campaign `ref` names: its key, a unique prefix of it (4
    characters or more) or its name (the most recent campaign of that name, measured with
    `method` where one is); a UsageError naming both when it is one campaign's name and the
    start of another's key."""
    if ref in set(listed["campaign"]):
        return ref
    named = listed[listed["name"] == ref]
    if method is not None and named["method"].isin([method, UNRECORDED]).any():
        named = named[named["method"].isin([method, UNRECORDED])]
    prefixed = listed[listed["campaign"].str.startswith(ref)] if len(ref) >= 4 else listed[:0]
    others = prefixed[~prefixed["campaign"].isin(named["campaign"])]
    if not named.empty and not others.empty:
        raise UsageError(f"{ref!r} is ambiguous in store {display_path(store)}: the name of "
                         f"stored campaign {named['campaign'].iloc[-1]} and the start of the "
                         "key of " + ", ".join(f"{k} ({printable(str(n))})" for k, n in zip(
                             others["campaign"], others["name"], strict=True))
                         + ": give the key of the one meant in full")
    if not named.empty:
        return str(named["campaign"].iloc[-1])
    if len(prefixed) == 1:
        return str(prefixed["campaign"].iloc[0])
    if len(prefixed) > 1:
        raise UsageError(f"{ref!r} matches {len(prefixed)} stored campaigns; give more of the key")
    raise UsageError(f"no log folder, export or campaign {ref!r} in store "
                     f"{display_path(store)} (dlperf store list shows them)")


def load(store: str | Path, ref: str, method: str | None = None) -> Campaign:
    """A stored campaign as a :class:`Campaign` (for compare and check); UsageError when it
    was measured with another method than `method` (None: any)."""
    store = Path(store)
    try:
        listed = campaigns(store)
    except StoreDamage:
        raise
    except UsageError as exc:
        raise UsageError(f"no log folder, export or stored campaign {ref!r}: {exc}") from None
    key = _resolve(store, listed, ref, method)
    row = listed.set_index("campaign").loc[key]
    if method is not None and row["method"] not in (method, UNRECORDED):
        raise UsageError(f"stored campaign {ref!r} ({key}) was measured with --method "
                         f"{row['method']}, not {method}: pass --method {row['method']}, or "
                         f"add its logs again with --method {method}")
    runs = _read_parquet(_partition(store, "runs", key))
    logs = _logs_of(runs) if TRAINING in runs.columns else None
    runs = runs.drop(columns=[TRAINING, ALIKE], errors="ignore")
    summary = _read_parquet(_partition(store, "summary", key))
    # a store written before a fact was kept (env_nccl_env) lacks its column: unknown there
    env_cols = [ENV_PREFIX + c for c in environment.FACTS if ENV_PREFIX + c in runs.columns]
    env = runs[["run_id", *env_cols]].rename(columns=lambda c: c.removeprefix(ENV_PREFIX))
    env = env.dropna(subset=["hardware"]).fillna("").astype(str)
    return Campaign(f"{ref} ({key})", str(row["name"]), str(row["started"]), key,
                    _plain(runs.drop(columns=env_cols)), _plain(summary), env,
                    str(row["suite_commit"] or ""), logs=logs)


def summaries(store: str | Path, method: str | None = None) -> pd.DataFrame:
    """Every stored case summary (of the campaigns measured with `method`, when given; those
    stored before the method was kept are taken as they are) with its campaign's name,
    start time, method, hardware and ``figure_flags``: what its runs' figures are flagged
    with (:func:`analysis.changes.compare.figure_flags`)."""
    store = Path(store).expanduser()
    listed = campaigns(store)
    if method is not None:
        other = listed[~listed["method"].isin([method, UNRECORDED])]
        listed = listed[listed["method"].isin([method, UNRECORDED])]
        if listed.empty and not other.empty:
            raise UsageError(f"no campaign in store {display_path(store)} was measured with "
                             f"--method {method}; stored: " + ", ".join(
                                 f"{m} ({n})" for m, n in other["method"].value_counts().items()))
    keys = list(listed["campaign"])
    summary = _read(store, "summary", keys)
    if summary.empty:
        return summary
    runs = _read(store, "runs", keys)
    runs = runs.assign(case_key=case_keys(_plain(runs)))
    hw = runs.groupby(["campaign", "case_key"])[ENV_PREFIX + "hardware"].agg(
        lambda v: "; ".join(sorted({x for x in v.dropna() if x})))
    summary = summary.assign(case_key=case_keys(_plain(summary)))
    summary = summary.merge(listed[["campaign", "name", "started", "added", "method"]],
                            on="campaign")
    summary["hardware"] = [hw.get((c, k), "") for c, k in zip(summary["campaign"],
                                                               summary["case_key"])]
    flagged = {ck: "; ".join(figure_flags(g) + _alike_flags(g)) for ck, g in
               runs.groupby(["campaign", "case_key"])}
    summary["figure_flags"] = [flagged.get((c, k), "") for c, k in zip(summary["campaign"],
                                                                       summary["case_key"])]
    return summary


def _alike_flags(runs: pd.DataFrame) -> list[str]:
    """How many of a case's stored runs are alike to runs stored before them (ALIKE)."""
    n = int((runs[ALIKE].fillna("") != "").sum()) if ALIKE in runs.columns else 0
    return [f"{n} of {len(runs)} run(s) alike to stored runs' logs (copies stating another "
            "setting, or the logs cannot tell them from reruns made deterministic), "
            "counted"] if n else []


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its `string` columns (as _portable stored them) as Python objects again,
    None where missing, as the frames of a campaign read from logs have them."""
    out = frame.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.StringDtype):
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out
