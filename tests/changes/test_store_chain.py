"""The record each campaigns row keeps of the manifest grows linearly: the row's place in the
order of adding, and the entries of its campaign and of the one added just before it (a
chain; before, each row kept the whole manifest, so a store gaining a campaign a day read
~100 MB of JSON per read at ~1,000 campaigns). A campaign deleted with its manifest record
is still named where the next row's record names it; several deleted in a row are named as
far as the chain tells and counted otherwise."""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.changes import sources
from analysis.changes import store as results_store

from .test_store_damage import _main

ROOT = Path(__file__).resolve().parents[2]
DUMP = next(line for line in (ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"
                              / "resnet50_b128_fp32_1.log").read_text().splitlines()
            if "PARAMETER" in line)
NAMES = ("a", "b", "c", "d", "e")


def _campaign(folder: Path, seed: int) -> Path:
    """A one-run ResNet-50 campaign of its own: each of its 130 intervals its own jitter."""
    draw = random.Random(seed)
    t = dt.datetime(2026, 1, 1) + dt.timedelta(hours=seed)
    lines = [f"DLL {t:%Y-%m-%d %H:%M:%S.%f}{DUMP[30:]}"]
    for i in range(1, 131):
        took = 0.05 * (1 + draw.uniform(-0.01, 0.01))
        t += dt.timedelta(seconds=took)
        lines.append(f"DLL {t:%Y-%m-%d %H:%M:%S.%f} - Epoch: 0 Iteration: {i}  train.loss : "
                     f"{7 * 0.99 ** i + draw.uniform(-0.05, 0.05):.5f}  train.total_ips : "
                     f"{128 / took:.2f} img/s")
    (folder / "1n1g").mkdir(parents=True)
    (folder / "1n1g" / "resnet50_b128_fp32_1.log").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A store of the campaigns NAMES, added in that order; their keys by name."""
    tmp = tmp_path_factory.mktemp("chain")
    keys = {}
    for seed, name in enumerate(NAMES):
        logs = _campaign(tmp / name, seed)
        keys[name] = results_store.add(tmp / "results", sources.from_folder(logs)).key
    return tmp / "results", keys


@pytest.fixture
def store(pristine, tmp_path):
    shutil.copytree(pristine[0], tmp_path / "results")
    return tmp_path / "results", pristine[1]


def _records(folder: Path) -> dict:
    rows = pd.read_parquet(folder / "campaigns")
    return {k: json.loads(t) for k, t in zip(rows["campaign"], rows[results_store.LISTING],
                                             strict=True)}


def _delete(folder: Path, key: str) -> None:
    for table in results_store.TABLES:
        shutil.rmtree(folder / table / f"campaign={key}")


def test_each_row_records_its_place_and_the_campaign_added_before_it(store):
    folder, keys = store
    records = _records(folder)
    for place, name in enumerate(NAMES, 1):
        record = records[keys[name]]
        assert record["count"] == place  # before: the whole manifest, `place` entries
        expected = {keys[name]} | ({keys[NAMES[place - 2]]} if place > 1 else set())
        assert set(record["campaigns"]) == expected
        assert record["campaigns"][keys[name]]["seq"] == place


@pytest.mark.parametrize("manifest", ["deleted", "emptied"])
def test_two_deleted_in_a_row_with_the_manifest_are_named_as_far_as_the_chain_tells(
        store, manifest):
    folder, keys = store
    _delete(folder, keys["b"])
    _delete(folder, keys["c"])
    path = folder / results_store.MANIFEST
    path.unlink() if manifest == "deleted" else path.write_text('{"campaigns": {}}')
    status, out, err = _main("store", "list", "--store", folder)
    assert status == 2 and out == ""
    assert f"campaign {keys['c']} (c)" in err and "all its partitions are gone" in err
    assert (f"1 campaign(s) added between {keys['a']} (a) and {keys['c']} (c) are gone, named "
            "by no record left") in err
    new = _campaign(folder.parent / "new", 20)
    status, _, err = _main("store", "add", new, "--store", folder)
    assert status == 2 and "is damaged, nothing added" in err
    # adding c again is the explicit repair: b, which nothing names, is taken as dropped
    status, out, _ = _main("store", "add", _campaign(folder.parent / "c", 2), "--store", folder)
    assert status == 0 and out.startswith(f"repaired (written again) {keys['c']}")
    assert _main("store", "list", "--store", folder)[0] == 0
    listed = json.loads(path.read_text())["campaigns"]
    assert listed[f"{results_store.UNNAMED}2"] == {"name": "", "source": "", "method": "",
                                                   "seq": 2, "dropped": True}
    assert len(listed) == 5 and keys["b"] not in listed


def test_the_places_recorded_count_one_deleted_after_the_newest_row(store):
    folder, keys = store
    _delete(folder, keys["e"])
    path = folder / results_store.MANIFEST
    data = json.loads(path.read_text())
    del data["campaigns"][keys["e"]]
    path.write_text(json.dumps(data))  # its count still 5
    status, _, err = _main("store", "list", "--store", folder)
    assert status == 2 and "lists 4 campaign(s), not the 5 its count states" in err
    assert (f"1 campaign(s) added after {keys['d']} (d) are gone, named by no record "
            "left") in err


def test_a_store_whose_records_keep_no_places_reads_as_before(store):
    """Rows and manifest written before the places were kept (each row the whole manifest
    then): no damage, and the next add takes the next place."""
    folder, keys = store
    path = folder / results_store.MANIFEST
    data = json.loads(path.read_text())
    whole = {k: {c: v for c, v in e.items() if c != "seq"} for k, e in data["campaigns"].items()}
    path.write_text(json.dumps({"campaigns": whole, "count": len(whole)}))
    for part in (folder / "campaigns").rglob("*.parquet"):
        row = pd.read_parquet(part)
        row[results_store.LISTING] = json.dumps({"campaigns": whole, "count": len(whole)})
        row.to_parquet(part, index=False)
    assert _main("store", "list", "--store", folder)[0] == 0
    new = results_store.add(folder, sources.from_folder(_campaign(folder.parent / "f", 9)))
    assert new.new and _records(folder)[new.key]["count"] == 6
    assert _main("store", "list", "--store", folder)[0] == 0
