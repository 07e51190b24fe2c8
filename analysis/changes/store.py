"""The results store: a partitioned Parquet dataset of campaigns, embedded (nothing to start)
and queryable with pandas::

    pd.read_parquet("STORE/summary")     # one row per case and campaign (+ `campaign`)
    pd.read_parquet("STORE/runs")        # one row per run, with its environment facts
    pd.read_parquet("STORE/campaigns")   # one row per campaign

Each table holds one folder per campaign, ``<table>/campaign=<key>/part-0.parquet``, where
the key is the campaign's content digest (:func:`analysis.changes.sources.content_key`), so
adding the same campaign twice is a no-op. The ``campaigns`` row is written last: a campaign
is listed only once its runs and summary are complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from analysis.changes import environment
from analysis.changes.sources import Campaign
from analysis.errors import UsageError
from analysis.fsutil import atomic_path, display_path, printable

TABLES = ("runs", "summary", "campaigns")
PART = "part-0.parquet"
ENV_PREFIX = "env_"
CAMPAIGN_COLUMNS = ["campaign", "name", "started", "added", "suite_commit", "source", "runs",
                    "cases", "hardware"]


@dataclass
class Added:
    key: str
    name: str
    new: bool  # False: the campaign was already stored


def _portable(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns of one type in every partition: text as `string`, numbers as they are."""
    out = frame.copy()
    for c in out.columns:
        if out[c].dtype == object or isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype("string")
    return out


def _write(store: Path, table: str, key: str, frame: pd.DataFrame) -> None:
    folder = store / table / f"campaign={key}"
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(folder / PART) as tmp:
        _portable(frame).to_parquet(tmp, index=False)


def _partition(store: Path, table: str, key: str) -> Path:
    return store / table / f"campaign={key}" / PART


def add(store: str | Path, campaign: Campaign, name: str | None = None) -> Added:
    """Store `campaign` (under `name`, default its own) unless its key is already there."""
    store = Path(store).expanduser()  # never a folder named "~" in the working folder
    if store.exists() and not store.is_dir():
        raise UsageError(f"store {display_path(store)} is not a folder")
    key = campaign.key
    name = printable(name or campaign.name)  # shown on terminals: no escape sequences
    if _partition(store, "campaigns", key).is_file():
        return Added(key, name, False)
    env = campaign.env.rename(columns={c: ENV_PREFIX + c for c in environment.FACTS})
    runs = campaign.runs.merge(env, on="run_id", how="left")
    _write(store, "runs", key, runs)
    _write(store, "summary", key, campaign.summary)
    hardware = "; ".join(sorted({h for h in campaign.env["hardware"] if h}))
    row = {"name": name, "started": campaign.started,
           "added": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
           "suite_commit": campaign.suite_commit, "source": campaign.label,
           "runs": len(campaign.runs), "cases": len(campaign.summary), "hardware": hardware}
    _write(store, "campaigns", key, pd.DataFrame([row]))
    return Added(key, name, True)


def _read_parquet(path: Path) -> pd.DataFrame:
    """A store table or partition; a UsageError naming it when it cannot be read."""
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise UsageError(f"{display_path(path)}: a damaged store table ({' '.join(str(exc).split())[:200]}); "
                         "remove the damaged campaign=… folder and add that campaign again") from None


def _read(store: Path, table: str) -> pd.DataFrame:
    folder = store / table
    if not folder.is_dir() or not any(folder.glob(f"campaign=*/{PART}")):
        return pd.DataFrame()
    frame = _read_parquet(folder)
    if "campaign" not in frame.columns:
        raise UsageError(f"{display_path(folder)}: not a store table (no campaign column)")
    frame["campaign"] = frame["campaign"].astype(str)
    return frame


def campaigns(store: str | Path) -> pd.DataFrame:
    """One row per stored campaign (CAMPAIGN_COLUMNS), oldest first."""
    store = Path(store).expanduser()  # a notebook's "~/results", as a shell would
    if not store.is_dir():
        raise UsageError(f"no such store: {display_path(store)} (make one with "
                         f"`dlperf store add LOG_DIR --store {display_path(store)}`)")
    if not (store / "campaigns").is_dir():  # a log folder or a typo'd path: not an empty store
        raise UsageError(f"{display_path(store)} is not a results store: it has no campaigns/ "
                         f"folder (make one with `dlperf store add LOG_DIR --store "
                         f"{display_path(store)}`)")
    frame = _read(store, "campaigns")
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


def resolve(store: str | Path, ref: str) -> str:
    """The key of the stored campaign `ref` names: its key, a unique prefix of it (4
    characters or more) or its name (the most recent campaign of that name)."""
    try:
        listed = campaigns(store)
    except UsageError as exc:
        raise UsageError(f"no log folder, export or stored campaign {ref!r}: {exc}") from None
    if ref in set(listed["campaign"]):
        return ref
    prefixed = listed[listed["campaign"].str.startswith(ref)] if len(ref) >= 4 else listed[:0]
    if len(prefixed) == 1:
        return str(prefixed["campaign"].iloc[0])
    named = listed[listed["name"] == ref]
    if not named.empty:
        return str(named["campaign"].iloc[-1])
    if len(prefixed) > 1:
        raise UsageError(f"{ref!r} matches {len(prefixed)} stored campaigns; give more of the key")
    raise UsageError(f"no log folder, export or campaign {ref!r} in store "
                     f"{display_path(store)} (dlperf store list shows them)")


def load(store: str | Path, ref: str) -> Campaign:
    """A stored campaign as a :class:`Campaign` (for compare and check)."""
    store = Path(store)
    key = resolve(store, ref)
    row = campaigns(store).set_index("campaign").loc[key]
    runs = _read_parquet(_partition(store, "runs", key))
    summary = _read_parquet(_partition(store, "summary", key))
    # a store written before a fact was kept (env_nccl_env) lacks its column: unknown there
    env_cols = [ENV_PREFIX + c for c in environment.FACTS if ENV_PREFIX + c in runs.columns]
    env = runs[["run_id", *env_cols]].rename(columns=lambda c: c.removeprefix(ENV_PREFIX))
    env = env.dropna(subset=["hardware"]).fillna("").astype(str)
    for frame in (runs, summary):
        for c in frame.columns:
            if isinstance(frame[c].dtype, pd.StringDtype):
                frame[c] = frame[c].astype(object).where(frame[c].notna(), None)
    return Campaign(f"{ref} ({key})", str(row["name"]), str(row["started"]), key,
                    runs.drop(columns=env_cols), summary, env, str(row["suite_commit"] or ""))


def summaries(store: str | Path) -> pd.DataFrame:
    """Every stored case summary with its campaign's name, start time and hardware."""
    store = Path(store).expanduser()
    listed = campaigns(store)
    summary = _read(store, "summary")
    if summary.empty:
        return summary
    runs = _read(store, "runs")
    hw = runs.assign(case_key=_keys(runs)).groupby(["campaign", "case_key"])[
        ENV_PREFIX + "hardware"].agg(lambda v: "; ".join(sorted({x for x in v.dropna() if x})))
    summary = summary.assign(case_key=_keys(summary))
    summary = summary.merge(listed[["campaign", "name", "started", "added"]], on="campaign")
    summary["hardware"] = [hw.get((c, k), "") for c, k in zip(summary["campaign"],
                                                               summary["case_key"])]
    return summary


def _keys(frame: pd.DataFrame) -> list[str]:
    from analysis.changes.compare import case_keys

    plain = frame.copy()
    for c in plain.columns:
        if isinstance(plain[c].dtype, pd.StringDtype):
            plain[c] = plain[c].astype(object).where(plain[c].notna(), None)
    return case_keys(plain)
