"""A store notices what it lost and what was edited with its checksum: a campaign deleted
whole (its three partitions), a lost campaigns/ folder (a damaged store, not "no store"), a
summary that is not what its stored runs give; a damaged store takes no new campaign until
it is repaired; a threshold is read in its documented form only."""

from __future__ import annotations

import hashlib
import io
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.changes import store as results_store
from analysis.changes import verdict

from .test_store_damage import _main

ROOT = Path(__file__).resolve().parents[2]
TF2 = ROOT / "tests" / "data" / "real" / "dlperf_tf2"
BERT = ROOT / "tests" / "data" / "real" / "paddle_perf_pytorch_bert"
MEGATRON = ROOT / "tests" / "data" / "real" / "megatron_deepspeed_examples"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("damage17") / "results"
    assert _main("store", "add", TF2, "--store", folder)[0] == 0
    assert _main("store", "add", BERT, "--store", folder)[0] == 0
    return folder


@pytest.fixture
def store(pristine, tmp_path):
    folder = tmp_path / "results"
    shutil.copytree(pristine, folder)
    return folder


def _key(folder: Path, name: str) -> str:
    listed = pd.read_parquet(folder / "campaigns")
    return str(listed.loc[listed["name"] == name, "campaign"].iloc[0])


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_a_campaign_deleted_whole_is_named_with_its_logs_and_added_again(store):
    key = _key(store, "paddle_perf_pytorch_bert")
    for table in results_store.TABLES:
        shutil.rmtree(store / table / f"campaign={key}")
    for action in ("list", "trend"):
        status, out, err = _main("store", action, "--store", store)
        assert status == 2 and out == ""
        assert f"campaign {key} (paddle_perf_pytorch_bert)" in err
        assert "all its partitions are gone" in err and f"store add {BERT}" in err
    status, out, _ = _main("store", "add", BERT, "--store", store)
    assert status == 0 and out.startswith(f"repaired (written again) {key}")
    assert _main("store", "list", "--store", store)[0] == 0


def test_a_store_that_lost_its_campaigns_folder_is_damaged_and_takes_nothing_new(store):
    shutil.rmtree(store / "campaigns")
    status, _, err = _main("store", "list", "--store", store)
    assert status == 2 and "not a results store" not in err
    assert f"{store / 'campaigns'} is missing" in err
    assert f"store add {TF2}" in err and f"store add {BERT}" in err
    before = _files(store)
    status, out, err = _main("store", "add", MEGATRON, "--store", store)
    assert status == 2 and out == "" and "is damaged, nothing added" in err
    assert _files(store) == before
    for logs in (TF2, BERT):  # each add repairs its own campaign
        status, out, _ = _main("store", "add", logs, "--store", store)
        assert status == 0 and out.startswith("repaired (written again)")
    assert _main("store", "list", "--store", store)[0] == 0


def test_adding_to_a_damaged_store_says_what_is_damaged_and_adds_nothing(store):
    part = store / "summary" / f"campaign={_key(store, 'dlperf_tf2')}" / results_store.PART
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    before = _files(store)
    status, out, err = _main("store", "add", MEGATRON, "--store", store)
    assert status == 2 and out == ""
    assert "is damaged, nothing added" in err and f"{part} has changed since it was added" in err
    assert _files(store) == before
    assert _main("store", "add", TF2, "--store", store)[0] == 0  # the repair itself goes on
    status, out, _ = _main("store", "add", MEGATRON, "--store", store)
    assert status == 0 and out.startswith("added ")


def _rewrite_with_checksum(store: Path, key: str, edit) -> Path:
    part = store / "summary" / f"campaign={key}" / results_store.PART
    summary = pd.read_parquet(part)
    edit(summary)
    summary.to_parquet(part, index=False)
    row_part = store / "campaigns" / f"campaign={key}" / results_store.PART
    row = pd.read_parquet(row_part)
    row["summary_sha256"] = hashlib.sha256(part.read_bytes()).hexdigest()
    row.to_parquet(row_part, index=False)
    return part


@pytest.mark.parametrize("edit", [
    lambda s: s.__setitem__("throughput_median", s["throughput_median"] * 0.9),
    lambda s: s.__setitem__("interval_high", s["throughput_median"] * 0.99),
    lambda s: s.__setitem__("repeats", s["repeats"] + 1),
], ids=["median x0.9", "median above its interval", "a repeat more"])
def test_a_summary_edited_with_its_checksum_is_not_what_its_runs_give(store, edit):
    key = _key(store, "dlperf_tf2")
    part = _rewrite_with_checksum(store, key, edit)
    status, out, err = _main("store", "trend", "--store", store)
    assert status == 2 and out == ""
    assert f"{part} is not what the stored runs give" in err and f"store add {TF2}" in err
    status, out, _ = _main("store", "add", TF2, "--store", store)
    assert status == 0 and out.startswith("repaired (written again)")
    assert _main("store", "trend", "--store", store)[0] == 0


def test_an_unreadable_manifest_is_named(store):
    (store / results_store.MANIFEST).write_text("{", encoding="utf-8")
    status, _, err = _main("store", "list", "--store", store)
    assert status == 2 and f"{store / results_store.MANIFEST} is not a readable list" in err
    assert _main("store", "add", TF2, "--store", store)[0] == 0  # writes it again
    assert _main("store", "list", "--store", store)[0] == 0


@pytest.mark.parametrize("text", ["2_0%", "２%", "1e1%", "nan%", "inf%", "-2%", "2 %%"])
def test_a_threshold_is_read_in_its_documented_form_only(text, pristine):
    with pytest.raises(ValueError):
        verdict.parse_threshold(text)
    with pytest.raises(SystemExit) as exited:
        _main("store", "trend", "--store", pristine, "--threshold", text)
    assert exited.value.code == 2


@pytest.mark.parametrize("text, value", [("2%", 0.02), ("0.5 %", 0.005), (".5%", 0.005),
                                         ("20%", 0.2)])
def test_the_documented_threshold_forms_are_read(text, value):
    assert verdict.parse_threshold(text) == pytest.approx(value)


MLPERF = ROOT / "tests" / "data" / "real" / "mlperf_v1_0_google_tf_resnet"


def _references(tmp_path: Path, key: str, value: float) -> Path:
    path = tmp_path / "ref.yaml"
    path.write_text(f'source: "MLPerf v1.0 Google tpu-v4-128 resnet"\nhardware: 128x TPU-v4\n'
                    f'references:\n  - {{key: "{key}", value: {value}, tolerance: 2%, '
                    'unit: min}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("value, status, word", [(4.30, 0, "within"), (4.0, 1, "slower"),
                                                 (4.6, 0, "faster")])
def test_check_takes_the_mlperf_case_key_summarize_prints_with_a_time_to_train(
        tmp_path, value, status, word):
    # the real round's 5 runs score 4.3011 min; the key's "?" are its unknown fields
    refs = _references(tmp_path, "MLPerf/resnet/?/b?/?n?g", value)
    got, out, err = _main("check", MLPERF, "--references", refs, "--format", "csv")
    assert got == status
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    assert row["case_key"] == "MLPerf/resnet/?/b?/?n?g" and row["verdict"] == word
    assert row["median"] == pytest.approx(4.301094, abs=1e-6) and row["unit"] == "min"


@pytest.mark.parametrize("key", ["MLPerf/resnet/*/b?/?n?g", "MLPerf/resnet/fp?/b?/?n?g",
                                 "MLPerf/res?et/?/b?/?n?g"])
def test_a_wildcard_in_a_reference_key_is_still_refused(tmp_path, key):
    got, out, err = _main("check", MLPERF, "--references", _references(tmp_path, key, 4.3))
    assert got == 2 and "is not a case key" in err and "no wildcards" in err


def test_a_log_folder_with_a_runs_folder_of_its_own_is_no_store(tmp_path):
    (tmp_path / "runs" / "tensorboard").mkdir(parents=True)  # not a partition: never "remove it"
    status, _, err = _main("store", "list", "--store", tmp_path)
    assert status == 2 and "is not a results store" in err and "remove" not in err
