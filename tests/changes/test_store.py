"""`dlperf store add/list/trend` and notebooks/40_trends.ipynb (issue 12, Deliver 3 and
"Done when": the store holds two campaigns and the trend notebook executes)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil

import nbformat
import pandas as pd
import papermill as pm
import pytest
from cli._helpers import ROOT, assert_one_clean_line, run_cli

from analysis.changes import sources, trend
from analysis.changes import store as results_store
from analysis.changes.trend import change_points
from analysis.cli import main
from analysis.errors import UsageError

from .campaigns import BUNDLED, rerun, stretched_copy


def as_before_checksums(folder):
    """Campaigns rows as stores wrote them before the method and checksums were kept."""
    for part in (folder / "campaigns").rglob("*.parquet"):
        row = pd.read_parquet(part)
        row.drop(columns=[c for c in row.columns if c.endswith("_sha256") or c == "method"]
                 ).to_parquet(part, index=False)


def _main(*args) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main([str(a) for a in args])
    return status, buf.getvalue()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store with the bundled campaign and its copy whose 1n4g runs are 3 % slower."""
    root = tmp_path_factory.mktemp("store")
    slow = stretched_copy(root / "slow")
    folder = root / "results"
    assert _main("store", "add", BUNDLED, "--store", folder)[0] == 0
    assert _main("store", "add", slow, "--store", folder, "--name", "slow")[0] == 0
    return folder


def test_adding_the_same_campaign_twice_is_a_no_op(tmp_path, dlperf_exe):
    folder = tmp_path / "results"
    first = run_cli(dlperf_exe, "store", "add", BUNDLED, "--store", folder)
    assert first.returncode == 0 and first.stdout.startswith("added ")
    files = sorted((p, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file())
    copy = tmp_path / "copy"
    shutil.copytree(BUNDLED, copy)  # same logs elsewhere: the same campaign
    again = run_cli(dlperf_exe, "store", "add", copy, "--store", folder)
    assert again.returncode == 0 and again.stdout.startswith("already stored")
    assert sorted((p, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()) == files
    assert len(pd.read_parquet(folder / "campaigns")) == 1


def test_the_store_is_a_partitioned_parquet_dataset_pandas_reads(store):
    campaigns = pd.read_parquet(store / "campaigns")
    assert sorted(campaigns["name"]) == ["rn50_4gpu", "slow"]
    summary = pd.read_parquet(store / "summary")
    assert len(summary) == 16 and summary["campaign"].nunique() == 2
    runs = pd.read_parquet(store / "runs")
    assert len(runs) == 80 and (runs["env_driver"] == "580.159.04").all()
    status, text = _main("store", "list", "--store", store, "--format", "json")
    listed = json.loads(text)
    assert status == 0 and [c["runs"] for c in listed] == [40, 40]
    assert all(c["suite_commit"] for c in listed)


def test_compare_reads_stored_campaigns_by_name(store):
    status, text = _main("compare", "--store", store, "rn50_4gpu", "slow", "--format", "json")
    df = pd.DataFrame(json.loads(text))
    assert status == 1
    assert sorted(df.loc[df["verdict"] == "slower", "case_key"]) == [
        "PyTorch/resnet50/amp/b256/1n4g", "PyTorch/resnet50/fp32/b128/1n4g"]
    assert (df.loc[df["verdict"] != "slower", "verdict"] == "unchanged").all()


def test_stored_nccl_settings_are_compared_and_older_stores_still_load(tmp_path):
    new = tmp_path / "nccl_tree"
    rerun(new)
    for p in new.rglob("*.env.json"):
        record = json.loads(p.read_text())
        record["env"]["NCCL_ALGO"] = "Tree"
        p.write_text(json.dumps(record))
    folder = tmp_path / "results"
    assert _main("store", "add", BUNDLED, "--store", folder)[0] == 0
    assert _main("store", "add", new, "--store", folder, "--name", "tree")[0] == 0
    status, text = _main("compare", "--store", folder, "rn50_4gpu", "tree", "--format", "json")
    assert status == 0
    assert {r["env_changes"] for r in json.loads(text)} == {"NCCL_ALGO unset -> Tree"}
    for part in (folder / "runs").rglob("*.parquet"):  # as written before NCCL settings were kept
        pd.read_parquet(part).drop(columns=["env_nccl_env"]).to_parquet(part)
    as_before_checksums(folder)
    status, text = _main("compare", "--store", folder, "rn50_4gpu", "tree", "--format", "json")
    assert status == 0 and {r["env_changes"] for r in json.loads(text)} == {""}


def test_trend_flags_the_step_of_the_last_campaign_as_unconfirmed(store):
    status, text = _main("store", "trend", "--store", store, "--case", "*/1n4g",
                         "--format", "json")
    df = pd.DataFrame(json.loads(text))
    assert status == 0 and len(df) == 4
    assert df.groupby("case_key")["change"].apply(list).tolist() == [["", "step down?"]] * 2
    assert df["step"].dropna().tolist() == pytest.approx([1 / 1.03 - 1] * 2, rel=0.02)
    assert not df["hardware_changed"].any()


@pytest.mark.parametrize("series, flags", [
    ([100, 100.5, 97, 97.2, 96.9], ["", "", "step down", "", ""]),
    ([100, 97, 100, 100.2], ["", "", "", ""]),  # a blip is not a change
    ([100, 100, 103], ["", "", "step up?"]),
    ([100, 101, 99.5, 100.3], ["", "", "", ""]),  # within 2 %
    ([100, 90, 90, 80, 80], ["", "step down", "", "step down", ""]),
])
def test_change_points_are_steps_beyond_the_threshold_that_persist(series, flags):
    got, steps = change_points(series, 0.02, 2)
    assert got == flags
    assert [math.isnan(s) for s in steps] == [f == "" for f in flags]



@pytest.mark.parametrize("series, flags", [
    ([100, 100, math.nan, 100, 90, 90, 90], ["", "", "", "", "step down", "", ""]),
    ([math.nan, 100, 100, 90, 90], ["", "", "", "step down", ""]),
    ([100, 100, 90, math.nan, 90], ["", "", "step down", "", ""]),
])
def test_a_campaign_without_a_median_does_not_hide_later_steps(series, flags):
    """A campaign whose runs of the case all failed (median NaN) is skipped, not taken into
    the level (it made every later level NaN, so no step was ever flagged again)."""
    got, steps = change_points(series, 0.02, 2)
    assert got == flags
    assert [math.isnan(s) for s in steps] == [f == "" for f in flags]


def test_the_trend_threshold_is_taken_as_the_cli_takes_it(store):
    # 40_trends with `-p threshold 2%` (as `dlperf store trend --threshold 2%`) raised a
    # raw TypeError traceback
    pd.testing.assert_frame_equal(trend.trend(store, "*", "2%"), trend.trend(store, "*", 0.02))
    with pytest.raises(UsageError, match=r"write 2% for two percent"):
        trend.trend(store, "*", 2)
    with pytest.raises(UsageError, match=r"^threshold must be a percentage .* not '2 pct'$"):
        trend.trend(store, "*", "2 pct")


def test_a_case_pattern_that_matches_nothing_is_one_line_not_an_empty_trend(store,
                                                                          dlperf_exe):
    # `--case '*/1n8g'` on a 4-GPU history (or `-p case resnet50`) printed an empty table
    done = run_cli(dlperf_exe, "store", "trend", "--store", store, "--case", "resnet50")
    assert done.returncode == 2 and done.stdout == ""
    assert_one_clean_line(done.stderr, "no stored case matches 'resnet50'",
                          "stored: PyTorch/resnet50/amp/b256/1n1g, ", "(8 in all)")


def test_a_hardware_change_is_marked(tmp_path):
    other = tmp_path / "other"
    rerun(other)
    for p in (other / "1n1g").glob("*.env.json"):
        p.write_text(json.dumps({**json.loads(p.read_text()), "gpu_model": "NVIDIA H100"}))
    folder = tmp_path / "results"
    _main("store", "add", BUNDLED, "--store", folder)
    _main("store", "add", other, "--store", folder, "--name", "h100")
    status, text = _main("store", "trend", "--store", folder, "--format", "json")
    df = pd.DataFrame(json.loads(text))
    marked = df.loc[df["hardware_changed"], ["case_key", "name"]].values.tolist()
    assert sorted(marked) == [["PyTorch/resnet50/amp/b256/1n1g", "h100"],
                              ["PyTorch/resnet50/fp32/b128/1n1g", "h100"]]


def test_a_missing_store_is_one_line_and_exit_2(dlperf_exe, tmp_path):
    done = run_cli(dlperf_exe, "store", "list", "--store", tmp_path / "none")
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "no such store", "none")
    done = run_cli(dlperf_exe, "compare", "--store", tmp_path, BUNDLED, "nothing-by-this-name")
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "nothing-by-this-name")


def test_a_folder_that_is_not_a_store_is_one_line_not_an_empty_history(dlperf_exe, tmp_path):
    # `--store data/raw_logs/x` (a log folder) printed an empty table and exit 0
    for command in (["store", "list"], ["store", "trend"]):
        done = run_cli(dlperf_exe, *command, "--store", BUNDLED)
        assert done.returncode == 2 and done.stdout == ""
        assert_one_clean_line(done.stderr, "is not a results store", "no campaigns/ folder",
                              "dlperf store add LOG_DIR --store")
    done = run_cli(dlperf_exe, "compare", "--store", BUNDLED, BUNDLED, "nightly")
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "'nightly'", "is not a results store")


def test_trends_notebook_is_thin_and_executes_on_two_campaigns(store, tmp_path):
    src = ROOT / "notebooks" / "40_trends.ipynb"
    nb = nbformat.read(src, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", [])] == [1]
    for c in code:
        assert not c.outputs and c.execution_count is None
        assert "def " not in c.source and len(c.source.splitlines()) <= 15
    out = tmp_path / "out.ipynb"
    pm.execute_notebook(str(src), str(out), cwd=str(tmp_path), progress_bar=False,
                        parameters={"store_dir": str(store), "trend_csv": str(tmp_path / "t.csv")})
    history = pd.read_csv(tmp_path / "t.csv")
    assert len(history) == 16 and history["name"].nunique() == 2
    assert (history["change"] == "step down?").sum() == 2
    ran = nbformat.read(out, as_version=4)
    assert any("image/png" in o.get("data", {}) for c in ran.cells if c.cell_type == "code"
               for o in c.outputs)


def test_a_damaged_store_or_export_is_one_clean_line(tmp_path, dlperf_exe):
    """A store partition that is no Parquet file, and an export missing a column: exit 2
    and one line naming the file (was `internal error: ArrowInvalid` / `KeyError`)."""
    folder = tmp_path / "st"
    assert run_cli(dlperf_exe, "store", "add", BUNDLED, "--store", folder).returncode == 0
    part = next((folder / "summary").glob("campaign=*/part-0.parquet"))
    part.write_text("x\n")
    done = run_cli(dlperf_exe, "store", "trend", "--store", folder)
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "has changed since it was added", "add it again")
    export = tmp_path / "x.parquet"
    assert run_cli(dlperf_exe, "parse", BUNDLED, "-o", export).returncode == 0
    pd.read_parquet(export).drop(columns=["timestamp"]).to_parquet(export)
    done = run_cli(dlperf_exe, "compare", export, BUNDLED)
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "x.parquet: not a file of a dlperf parse export",
                          "timestamp")


@pytest.mark.parametrize("table", ["runs", "summary"])
def test_a_damaged_partition_of_a_compared_campaign_is_one_clean_line(tmp_path, dlperf_exe,
                                                                      table):
    """`compare --store` read the campaign's partitions unguarded: `internal error:
    ArrowInvalid`, exit 1 (the exit status of a slower case)."""
    folder = tmp_path / "st"
    assert run_cli(dlperf_exe, "store", "add", BUNDLED, "--store", folder).returncode == 0
    next((folder / table).glob("campaign=*/part-0.parquet")).write_text("x\n")
    done = run_cli(dlperf_exe, "compare", "--store", folder, "rn50_4gpu", BUNDLED)
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "has changed since it was added", table, "add it again")


def test_a_campaign_without_a_start_time_takes_its_place_by_when_it_was_added():
    from analysis.changes.store import in_time_order

    listed = pd.DataFrame({
        "campaign": ["a", "b", "c"],
        "started": ["2026-11-01T10:00:00+00:00", "", "2026-11-03T10:00:00+00:00"],
        "added": ["2026-11-01T11:00:00+00:00", "2026-11-05T09:00:00+00:00",
                  "2026-11-03T11:00:00+00:00"]})
    assert list(in_time_order(listed)["campaign"]) == ["a", "c", "b"]  # not first: added last


def test_a_store_under_home_is_found_as_a_shell_would_find_it(store, monkeypatch):
    monkeypatch.setenv("HOME", str(store.parent))
    assert len(results_store.campaigns(f"~/{store.name}")) == 2
    assert len(trend.trend(f"~/{store.name}", "*/1n1g")) == 4



def test_adding_to_a_store_under_home_never_makes_a_folder_named_tilde(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    added = results_store.add("~/results", sources.load(str(BUNDLED)))
    assert added.new and not (tmp_path / "~").exists()
    assert len(results_store.campaigns(tmp_path / "home" / "results")) == 1


def test_a_campaign_name_with_escape_sequences_never_reaches_the_terminal(tmp_path, dlperf_exe):
    """A log folder from elsewhere names its campaign; `\\e]0;…\\a` retitles a terminal and
    `\\e[2J` clears it when printed as is."""
    logs = tmp_path / "logs"
    shutil.copytree(BUNDLED, logs)
    spec = logs / "campaign.yaml"
    spec.write_text(spec.read_text().replace("name: rn50_4gpu",
                                             'name: "evil\\e]0;pwned\\a\\e[2J\\n中文"', 1))
    out = [run_cli(dlperf_exe, "store", "add", logs, "--store", tmp_path / "s"),
           run_cli(dlperf_exe, "store", "list", "--store", tmp_path / "s"),
           run_cli(dlperf_exe, "store", "add", BUNDLED, "--store", tmp_path / "t",
                   "--name", "x\x1b[2Jy")]
    for done in out:
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\x0a中文" in out[0].stdout
    assert "x\\x1b[2Jy" in out[2].stdout


def test_a_campaign_part_is_named_as_part_of_its_campaign(tmp_path):
    """`store add CAMPAIGN/1n1g` (a part of a campaign, no campaign.yaml of its own): named
    after the campaign that holds it, `rn50_4gpu/1n1g`, not `1n1g`; a folder of logs in no
    campaign keeps its own name."""
    assert sources.load(str(BUNDLED / "1n1g")).name == "rn50_4gpu/1n1g"
    loose = tmp_path / "loose"
    shutil.copytree(BUNDLED / "1n1g", loose / "1n1g")
    assert sources.load(str(loose / "1n1g")).name == "1n1g"


def test_a_campaign_that_measured_nothing_is_not_stored(tmp_path):
    """Every log cut to its first three lines: each run is `truncated`, no figure; stored, it
    was listed with 0 runs (`added`, rc 0) where `compare` says `failed in new` (rc 4)."""
    cut = tmp_path / "cut"
    shutil.copytree(BUNDLED, cut)
    for log in cut.rglob("*.log"):
        log.write_text("".join(log.read_text().splitlines(keepends=True)[:3]))
    status, out = _main("store", "add", cut, "--store", tmp_path / "s")
    assert status == 4, out
    assert "nothing added:" in out and "has no run to store (no run has a figure: " in out
    assert not (tmp_path / "s").exists()
    with pytest.raises(UsageError, match="no run has a figure"):
        results_store.add(tmp_path / "s", sources.load(str(cut)))


def test_copies_beside_runs_without_a_figure_are_no_campaign_to_store(tmp_path):
    """A copy of the bundled campaign whose 1n1g logs are its own (copies of the stored
    runs) and every other log cut to three lines (no figure): `store add` and `compare`
    stopped on an internal TypeError (a run without a figure counted as None); nothing in
    it is measured that the store lacks."""
    mixed = tmp_path / "mixed"
    shutil.copytree(BUNDLED, mixed)
    for log in mixed.rglob("*.log"):
        if log.parent.name != "1n1g":
            log.write_text("".join(log.read_text().splitlines(keepends=True)[:3]))
    assert _main("store", "add", BUNDLED, "--store", tmp_path / "s")[0] == 0
    status, out = _main("store", "add", mixed, "--store", tmp_path / "s")
    assert status == 4 and out.startswith("copies of stored runs, nothing added:"), out
    assert len(results_store.campaigns(tmp_path / "s")) == 1
    status, out = _main("compare", BUNDLED, mixed)
    assert status == 4, out


def test_a_log_its_campaign_does_not_count_is_named_when_stored(tmp_path, capsys):
    """A done marker edited to name another run: its finished log is a stray, left out of the
    stored campaign; `store add` said nothing of it (9 runs stored, rc 0, stderr empty)."""
    edited = tmp_path / "edited"
    shutil.copytree(BUNDLED, edited)
    marker = edited / "1n1g" / "resnet50_b128_fp32_1.done"
    record = json.loads(marker.read_text())
    record["run_id"] = "1n1g/resnet50_b128_fp32_2"
    marker.write_text(json.dumps(record))
    capsys.readouterr()
    status, out = _main("store", "add", edited, "--store", tmp_path / "s")
    said = capsys.readouterr().err
    assert status == 0 and "added" in out
    assert "1 log(s) its campaign records do not count, left out (stray_log)" in said
    assert "resnet50_b128_fp32_1.log" in said
