"""A store whose manifest.json is deleted, emptied, cut or unreadable while a campaign is
deleted too: each campaigns row keeps a copy of the manifest as it stood once it was added,
so the lost campaign is named (key, name, logs) where a later row records it, the manifest's
loss is damage (never taken for a store written before the manifest was kept), and no add of
a new campaign writes the manifest again over the loss; a campaign is dropped for good only
by `dlperf store drop`. Concurrent adds lose no manifest entry (the store's lock)."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.changes import sources
from analysis.changes import store as results_store

from .campaigns import BUNDLED, rerun
from .test_store_damage import _main

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real"
TF2, BERT, MEGATRON = (REAL / n for n in ("dlperf_tf2", "paddle_perf_pytorch_bert",
                                          "megatron_deepspeed_examples"))
ADDED = (TF2, BERT, MEGATRON)  # in this order: BERT is in the middle, MEGATRON the newest


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("manifest_lost") / "results"
    for logs in ADDED:
        assert _main("store", "add", logs, "--store", folder)[0] == 0
    return folder


@pytest.fixture
def store(pristine, tmp_path):
    folder = tmp_path / "results"
    shutil.copytree(pristine, folder)
    return folder


def _key(folder: Path, logs: Path) -> str:
    listed = pd.read_parquet(folder / "campaigns")
    return str(listed.loc[listed["source"] == str(logs), "campaign"].iloc[0])


def _delete(folder: Path, logs: Path) -> str:
    key = _key(folder, logs)
    for table in results_store.TABLES:
        shutil.rmtree(folder / table / f"campaign={key}")
    return key


def _manifest(folder: Path) -> dict:
    return json.loads((folder / results_store.MANIFEST).read_text(encoding="utf-8"))


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _set_manifest(folder: Path, how: str, key: str) -> None:
    path = folder / results_store.MANIFEST
    if how == "deleted":
        path.unlink()
    elif how == "emptied":
        path.write_text('{"campaigns": {}}', encoding="utf-8")
    elif how == "entry removed":
        data = _manifest(folder)
        del data["campaigns"][key]
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        path.write_text("{", encoding="utf-8")


def _assert_names(err: str, key: str, logs: Path) -> None:
    assert f"campaign {key} ({logs.name})" in err and "all its partitions are gone" in err
    assert f"store add {logs}" in err and f"store drop {key}" in err


@pytest.mark.parametrize("how", ["deleted", "emptied", "entry removed", "unreadable"])
def test_a_campaign_deleted_with_its_manifest_record_is_named_and_nothing_new_is_added(
        store, how):
    key = _delete(store, BERT)
    _set_manifest(store, how, key)
    for args in (("store", "list"), ("store", "trend"),
                 ("compare", "dlperf_tf2", "megatron_deepspeed_examples")):
        status, out, err = _main(*args, "--store", store)
        assert status == 2 and out == "", args
        _assert_names(err, key, BERT)
    before = _files(store)
    for logs in (BUNDLED, TF2):  # neither a new campaign nor another stored one repairs it
        status, out, err = _main("store", "add", logs, "--store", store)
        assert status == 2 and out == "" and "is damaged, nothing added" in err
        _assert_names(err, key, BERT)
        assert _files(store) == before
    status, out, _ = _main("store", "add", BERT, "--store", store)
    assert status == 0 and out.startswith(f"repaired (written again) {key}")
    assert _main("store", "list", "--store", store)[0] == 0
    assert set(_manifest(store)["campaigns"]) == {_key(store, logs) for logs in ADDED}


@pytest.mark.parametrize("how, says", [
    ("deleted", "manifest.json is missing (deleted?)"),
    ("emptied", "does not list campaign"),
    ("entry removed", "lists 2 campaign(s), not the 3 its count states"),
    ("unreadable", "is not a readable list"),
])
def test_the_newest_campaign_deleted_with_its_record_leaves_the_manifest_damaged(
        store, how, says):
    # nothing left names the newest campaign; the manifest's state says something was lost
    key = _delete(store, MEGATRON)
    _set_manifest(store, how, key)
    status, out, err = _main("store", "list", "--store", store)
    assert status == 2 and out == "" and says in err
    bert = _key(store, BERT)
    assert f"record every campaign added up to {bert} (paddle_perf_pytorch_bert" in err
    assert "one added after it and deleted leaves nothing the store can name" in err
    before = _files(store)
    status, out, err = _main("store", "add", BUNDLED, "--store", store)
    assert status == 2 and "is damaged, nothing added" in err and says in err
    assert _files(store) == before  # not written again by the add of a new campaign
    status, out, _ = _main("store", "add", TF2, "--store", store)  # the explicit repair
    assert status == 0 and out.startswith("already stored, manifest.json written again")
    assert _main("store", "list", "--store", store)[0] == 0
    assert _main("store", "add", BUNDLED, "--store", store)[0] == 0


def test_a_dropped_campaign_stays_dropped_when_the_manifest_is_lost_later(store):
    key = _delete(store, BERT)
    status, out, _ = _main("store", "drop", key, "--store", store)
    assert status == 0 and out.startswith(f"dropped {key} paddle_perf_pytorch_bert")
    assert _main("store", "list", "--store", store)[0] == 0
    assert _main("store", "add", BUNDLED, "--store", store)[0] == 0
    (store / results_store.MANIFEST).unlink()
    status, _, err = _main("store", "list", "--store", store)
    assert status == 2 and "manifest.json is missing" in err and key not in err
    assert _main("store", "add", TF2, "--store", store)[0] == 0
    assert _main("store", "list", "--store", store)[0] == 0


def test_dropping_an_unknown_key_is_one_line(store):
    status, out, err = _main("store", "drop", "0123456789abcdef", "--store", store)
    assert status == 2 and out == "" and "no campaign '0123456789abcdef'" in err


def test_a_rows_unreadable_copy_of_the_manifest_is_named_and_added_again(store):
    key = _key(store, TF2)
    part = store / "campaigns" / f"campaign={key}" / results_store.PART
    row = pd.read_parquet(part)
    row[results_store.LISTING] = "{"
    row.to_parquet(part, index=False)
    status, _, err = _main("store", "list", "--store", store)
    assert status == 2 and f"{part}: its copy of manifest.json is unreadable" in err
    status, out, _ = _main("store", "add", TF2, "--store", store)
    assert status == 0 and out.startswith(f"repaired (written again) {key}")
    assert _main("store", "list", "--store", store)[0] == 0


def test_a_store_written_before_the_manifest_is_no_damage(store):
    (store / results_store.MANIFEST).unlink()
    for part in (store / "campaigns").rglob("*.parquet"):
        row = pd.read_parquet(part)
        row.drop(columns=[results_store.LISTING]).to_parquet(part, index=False)
    assert _main("store", "list", "--store", store)[0] == 0
    assert _main("store", "add", BUNDLED, "--store", store)[0] == 0
    assert len(_manifest(store)["campaigns"]) == 4
    assert _main("store", "list", "--store", store)[0] == 0


def _add_when_all_are_ready(folder, campaign, ready, done):
    ready.wait()
    try:
        done.put(results_store.add(folder, campaign).key)
    except Exception as exc:  # noqa: BLE001 - the parent asserts on what each child met
        done.put(f"failed: {exc}")


def test_concurrent_adds_lose_no_manifest_entry_and_refuse_none(tmp_path):
    folder = tmp_path / "results"
    logs = [rerun(tmp_path / f"rerun{i}", seed=i) for i in range(4)]
    campaigns = [sources.from_folder(p) for p in logs]
    context = multiprocessing.get_context("fork")
    ready, done = context.Barrier(len(campaigns)), context.Queue()
    children = [context.Process(target=_add_when_all_are_ready, args=(folder, c, ready, done))
                for c in campaigns]
    for child in children:
        child.start()
    got = sorted(done.get(timeout=120) for _ in children)
    for child in children:
        child.join(timeout=60)
    assert got == sorted(c.key for c in campaigns)
    assert set(_manifest(folder)["campaigns"]) == set(got)
    assert len(results_store.campaigns(folder)) == len(campaigns)


def test_an_unreadable_manifest_of_a_store_with_no_row_left_says_how_to_start_again(tmp_path):
    folder = tmp_path / "results"
    assert _main("store", "add", TF2, "--store", folder)[0] == 0
    _delete(folder, TF2)
    _set_manifest(folder, "unreadable", "")
    status, _, err = _main("store", "add", BERT, "--store", folder)
    assert status == 2 and "holds no campaigns row that could tell what it listed" in err
    assert "remove manifest.json and add again the campaigns it held" in err
