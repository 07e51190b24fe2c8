"""A results store that notices damage (a partition edited, deleted, duplicated, or a second
part file) and the method each campaign was measured with: every read checks the files
against the campaigns rows and names each fault with how to repair it; adding the campaign
again repairs it; campaigns of another method are kept apart or refused, never mixed."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil

import pandas as pd
import pytest

from analysis.changes import store as results_store
from analysis.cli import main

from .campaigns import BUNDLED, stretched_copy


def _main(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A store of the bundled campaign and its copy whose 1n4g runs are 10 % slower."""
    root = tmp_path_factory.mktemp("damage")
    slow = stretched_copy(root / "slow", factor=1.10)
    folder = root / "results"
    assert _main("store", "add", BUNDLED, "--store", folder)[0] == 0
    assert _main("store", "add", slow, "--store", folder, "--name", "slow")[0] == 0
    return folder, slow


@pytest.fixture
def store(pristine, tmp_path):
    folder = tmp_path / "results"
    shutil.copytree(pristine[0], folder)
    return folder, pristine[1]


def _key(folder, name):
    listed = pd.read_parquet(folder / "campaigns")
    return str(listed.loc[listed["name"] == name, "campaign"].iloc[0])


def test_an_intact_store_compares_and_says_slower(store):
    folder, _ = store
    status, out, err = _main("compare", "--store", folder, "rn50_4gpu", "slow", "--format", "json")
    assert status == 1 and "slower" in {r["verdict"] for r in json.loads(out)}


def test_an_edited_partition_is_named_not_compared(store):
    # the slow campaign's runs made 10 % faster again: compared as "unchanged" before
    folder, _ = store
    part = folder / "runs" / f"campaign={_key(folder, 'slow')}" / results_store.PART
    runs = pd.read_parquet(part)
    runs["throughput"] = runs["throughput"] * 1.10
    runs.to_parquet(part, index=False)
    status, out, err = _main("compare", "--store", folder, "rn50_4gpu", "slow")
    assert status == 2 and out == ""
    assert f"{part} has changed since it was added" in err and "store add" in err


@pytest.mark.parametrize("copy", ["part file", "partition"])
def test_a_duplicated_part_file_or_partition_is_named_not_counted_twice(store, copy):
    folder, _ = store
    key = _key(folder, "rn50_4gpu")
    part = folder / "summary" / f"campaign={key}" / results_store.PART
    if copy == "part file":
        dup = part.with_name("part-0 (copy).parquet")
        shutil.copy(part, dup)
    else:
        dup = folder / "summary" / "campaign=0123456789abcdef"
        shutil.copytree(part.parent, dup)
    status, out, err = _main("store", "trend", "--store", folder, "--format", "json")
    assert status == 2 and str(dup) in err and "remove it" in err
    dup.unlink() if dup.is_file() else shutil.rmtree(dup)
    status, out, err = _main("store", "trend", "--store", folder, "--format", "json")
    assert status == 0 and len(json.loads(out)) == 16  # 8 cases x 2 campaigns, each once


def test_a_deleted_partition_is_named_and_adding_again_repairs_it(store):
    folder, slow = store
    key = _key(folder, "slow")
    shutil.rmtree(folder / "summary" / f"campaign={key}")
    status, out, err = _main("store", "trend", "--store", folder)
    assert status == 2 and "is missing (deleted?)" in err and f"store add {slow}" in err
    status, out, err = _main("store", "add", slow, "--store", folder, "--name", "slow")
    assert status == 0 and out.startswith(f"repaired (written again) {key} slow")
    status, out, err = _main("store", "trend", "--store", folder, "--format", "json")
    assert status == 0 and {r["name"] for r in json.loads(out)} == {"rn50_4gpu", "slow"}
    status, out, err = _main("store", "add", slow, "--store", folder)
    assert out.startswith("already stored")


def test_the_method_is_stored_and_trend_and_compare_honour_it(store):
    folder, slow = store
    status, out, _ = _main("store", "add", slow, "--store", folder, "--name", "slow",
                           "--method", "reported")
    assert status == 0 and out.startswith("added ")  # another measurement: another campaign
    listed = json.loads(_main("store", "list", "--store", folder, "--format", "json")[1])
    assert sorted((c["name"], c["method"]) for c in listed) == [
        ("rn50_4gpu", "dlperf"), ("slow", "dlperf"), ("slow", "reported")]
    trend = json.loads(_main("store", "trend", "--store", folder, "--format", "json")[1])
    assert len(trend) == 16 and {r["method"] for r in trend} == {"dlperf"}
    trend = json.loads(_main("store", "trend", "--store", folder, "--method", "reported",
                             "--format", "json")[1])
    assert len(trend) == 8 and {r["name"] for r in trend} == {"slow"}
    reported_key = next(c["campaign"] for c in listed if c["method"] == "reported")
    status, _, err = _main("compare", "--store", folder, "rn50_4gpu", reported_key)
    assert status == 2 and "was measured with --method reported, not dlperf" in err
    status, out, err = _main("compare", "--store", folder, BUNDLED, "slow", "--method",
                             "reported")
    # the stored slow campaign of that method, by its name: its logs print the speed they
    # printed before they were stretched, so the reported method sees no change
    assert status == 0 and f"new: slow ({reported_key})" in out, err


@pytest.mark.parametrize("over", ["new key", "another campaign"])
def test_a_campaign_copied_whole_under_another_key_is_named(store, over):
    """runs, summary and campaigns partitions of 'slow' copied together under a new key (or
    over the bundled campaign's, a botched repair): listed twice (or 'rn50_4gpu' gone) with
    exit 0 before; now damage naming both keys."""
    folder, _ = store
    key = _key(folder, "slow")
    target = "0000000000000000" if over == "new key" else _key(folder, "rn50_4gpu")
    for table in results_store.TABLES:
        dest = folder / table / f"campaign={target}"
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(folder / table / f"campaign={key}", dest)
    status, out, err = _main("store", "list", "--store", folder)
    assert status == 2 and out == ""
    assert f"campaign={target} holds the campaign stored as {key}" in err
    assert "hold the same runs partition" in err and key in err and target in err


def test_store_add_never_writes_through_a_linked_table_folder(tmp_path):
    """runs/ a link to a folder of someone else's files: store add wrote its partition into
    it, then every read told the user to remove the link target's own file."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("not the store's")
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "runs").symlink_to(victim)
    status, out, err = _main("store", "add", BUNDLED, "--store", folder)
    assert status == 2 and "nothing added" in err
    assert f"{folder / 'runs'} is a link (to {victim})" in err
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert not (folder / "campaigns").exists()
    (folder / "campaigns").mkdir()
    status, _, err = _main("store", "list", "--store", folder)
    assert status == 2 and "is a link" in err and "keep.txt" not in err


def test_a_campaign_whose_logs_state_other_settings_is_stored_apart(tmp_path):
    """The same lines under another stated global_batch_size (a user fixing the stated batch
    and adding again) had the same key: 'already stored', the first (flagged) figure kept."""
    base = tmp_path / "logs"
    shutil.copytree(BUNDLED / "1n1g", base / "1n1g")
    fixed = tmp_path / "fixed"
    shutil.copytree(base, fixed)
    for log in (base / "1n1g").glob("*.log"):
        text = log.read_text()
        stated = re.search(r"global_batch_size : (\d+) ", text).group(0)
        log.write_text(text.replace(stated, "global_batch_size : 1024 ", 1))
    folder = tmp_path / "results"
    assert _main("store", "add", base, "--store", folder, "--name", "stated")[0] == 0
    status, out, _ = _main("store", "add", fixed, "--store", folder, "--name", "fixed")
    assert status == 0 and out.startswith("added ")
    assert sorted(pd.read_parquet(folder / "campaigns")["name"]) == ["fixed", "stated"]


def test_a_folder_and_its_parquet_export_are_one_stored_campaign(tmp_path):
    """The key's stated part is the run fields, which an export keeps (it drops the
    argument dumps): adding the export after its folder adds nothing. (Logs alone: an
    export carries no environment records, which the key holds too.)"""
    logs = tmp_path / "logs"
    (logs / "1n1g").mkdir(parents=True)
    for log in (BUNDLED / "1n1g").glob("*.log"):
        shutil.copy(log, logs / "1n1g")
    export = tmp_path / "exp.parquet"
    assert _main("parse", logs, "-o", export)[0] == 0
    folder = tmp_path / "results"
    assert _main("store", "add", logs, "--store", folder)[0] == 0
    status, out, _ = _main("store", "add", export, "--store", folder)
    assert status == 0 and out.startswith("already stored, nothing added")
