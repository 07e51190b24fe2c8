"""Inputs of a fifth attack on cases, campaigns and the store: a copied run that lost a line,
a stated global batch the layout path does not give, an inline nvidia-smi block of more GPUs
than the run's, campaigns differing only in argument dumps, an unreadable done marker and
repeats run under other NCCL settings. Built in tmp_path from the bundled ResNet-50 campaign
(data/raw_logs/rn50_4gpu: three repeats on 1 node of 4 GPUs, batch 128)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.collect import parse_paths

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"


def _kinds(result) -> list[str]:
    return list(result.problems["kind"])


def _logs_only(tmp_path: Path, runs=(1, 2, 3)) -> Path:
    folder = tmp_path / "1n4g"
    folder.mkdir(parents=True)
    for i in runs:
        shutil.copy(RN50 / f"{STEM}{i}.log", folder)
    return folder


# --- 5. a copy of a run that lost one line -------------------------------------------------

@pytest.mark.parametrize("lost", ["last", "PARAMETER"])
def test_a_copy_that_lost_a_line_is_one_run(tmp_path, lost):
    """The copy of run 1 as run 4, less its Summary line or its PARAMETER header, was counted
    as a fourth repeat: its training lines are run 1's, stamp for stamp."""
    folder = _logs_only(tmp_path)
    lines = (folder / f"{STEM}1.log").read_text().splitlines(keepends=True)
    kept = lines[:-1] if lost == "last" else [ln for ln in lines if "PARAMETER" not in ln]
    assert len(kept) == len(lines) - 1
    (folder / f"{STEM}4.log").write_text("".join(kept))
    result = parse_paths([tmp_path], cache=False)
    assert sorted(result.runs["run_id"]) == [f"1n4g/{STEM}{i}" for i in (1, 2, 3)]
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    assert len(dup) == 1
    assert dup["source"].iloc[0].endswith(f"{STEM}4.log")
    assert f"{STEM}1.log" in dup["reason"].iloc[0]


def test_a_rerun_with_other_stamps_is_another_repeat(tmp_path):
    """The same lines an hour later with their own timing (another run of the same job: each
    interval about 1 % longer, by its own factor, its printed rate lower by that factor, its
    losses the same) stay a repeat of their own. (Every interval longer by ONE factor and
    every rate lower by it is a copy stretched: no two runs time alike line for line.)"""
    import datetime as dt
    import random
    import re

    folder = _logs_only(tmp_path, (1,))
    rng, was, now, lines = random.Random(1), None, None, []
    for line in (folder / f"{STEM}1.log").read_text().splitlines():
        m = re.match(r"DLL (\S+ \S+)", line)
        if m:
            t, f = dt.datetime.fromisoformat(m[1]), 1.01 * rng.lognormvariate(0, 0.01)
            now = t + dt.timedelta(hours=1) if was is None else now + (t - was) * f
            was, line = t, f"DLL {now:%Y-%m-%d %H:%M:%S.%f}{line[m.end():]}"
            line = re.sub(r"(_ips : )([0-9.]+)", lambda m, f=f: f"{m[1]}{float(m[2]) / f:.2f}",
                          line)
        lines.append(line)
    (folder / f"{STEM}2.log").write_text("\n".join(lines) + "\n")
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 2
    assert "duplicate_run" not in _kinds(result)


# --- 4. a stated global batch the path's devices x batch do not give -----------------------

def _no_global_batch(tmp_path: Path) -> Path:
    """Run 1 with the global batch left out of its PARAMETER line, as DLE's logs print it:
    only the path (1n4g, _b128_) and the per-device batch give the samples an iteration."""
    folder = _logs_only(tmp_path, (1,))
    log = folder / f"{STEM}1.log"
    text = log.read_text()
    assert "global_batch_size : 512  " in text
    log.write_text(text.replace("global_batch_size : 512  ", ""))
    return folder


@pytest.mark.parametrize("where", ["--meta", "dlperf-meta.yaml"])
def test_a_stated_global_batch_twice_the_layout_is_a_note_naming_the_accumulation(tmp_path, where):
    """1n4g x b128 runs 512 samples an iteration; a statement of 1,024 made the figure twice
    as large with nothing on the row saying it rests on 1,024."""
    folder = _no_global_batch(tmp_path)
    meta = {"global_batch_size": 1024} if where == "--meta" else None
    if meta is None:
        (folder / where).write_text("global_batch_size: 1024\n")
    result = parse_paths([tmp_path], meta=meta, cache=False)
    notes = result.problems[result.problems["kind"] == "accumulation_implied"]
    assert len(notes) == 1
    assert "= 2 x (4 device(s) x batch 128)" in notes["reason"].iloc[0]
    assert where in notes["reason"].iloc[0]
    assert result.runs["problems"].iloc[0] == "accumulation_implied"
    from analysis.problems import strict_failures
    assert not strict_failures(result.problem_list())  # a note: the statement may be true


@pytest.mark.parametrize("stated", [1000, 256])
def test_a_stated_global_batch_no_whole_multiple_of_the_layout_is_a_conflict(tmp_path, stated):
    _no_global_batch(tmp_path)
    result = parse_paths([tmp_path], meta={"global_batch_size": stated}, cache=False)
    conflict = result.problems[result.problems["kind"] == "metadata_conflict"]
    assert len(conflict) == 1
    assert f"global_batch_size={stated:,}, not a whole multiple" in conflict["reason"].iloc[0]


def test_a_stated_global_batch_the_layout_runs_is_not_flagged(tmp_path):
    _no_global_batch(tmp_path)
    result = parse_paths([tmp_path], meta={"global_batch_size": 512}, cache=False)
    assert result.problems.empty


# --- 13. an inline nvidia-smi block of more GPUs than the run's ----------------------------

ONEFLOW = ROOT / "tests" / "data" / "oneflow_models" / "graph_dated" / "1n2g" / "resnet50_b192_amp_1.log"
_SMI_HEAD = ("timestamp, name, driver_version, utilization.gpu [%], utilization.memory [%], "
             "memory.total [MiB], memory.free [MiB], memory.used [MiB]")
_SMI_ROW = ("2021/11/23 10:41:02.311, NVIDIA A100-SXM4-40GB, 470.57.02, 100 %, 61 %, "
            "40536 MiB, 9790 MiB, 30746 MiB")


def _inline_smi(tmp_path: Path, indexed: bool) -> Path:
    """The 2-GPU OneFlow log with another job's two GPUs (40,000 MiB each) listed first in its
    inline nvidia-smi block, with or without nvidia-smi's index column."""
    text = ONEFLOW.read_text()
    assert _SMI_HEAD in text and _SMI_ROW in text
    other = "2021/11/23 10:41:02.310, NVIDIA A100-SXM4-40GB, 470.57.02, 100 %, 90 %, " \
            "40536 MiB, 536 MiB, 40000 MiB"
    rows = [other, other] + [ln for ln in text.splitlines() if "470.57.02" in ln]
    block = [_SMI_HEAD] + rows
    if indexed:
        block = ["index, " + block[0]] + [f"{i}, {r}" for i, r in zip((2, 3, 0, 1), rows,
                                                                        strict=True)]
    old = "\n".join([_SMI_HEAD] + rows[2:])
    assert old in text
    out = tmp_path / "1n2g" / ONEFLOW.name
    out.parent.mkdir(parents=True)
    out.write_text(text.replace(old, "\n".join(block)))
    return out


def _peak_and_notes(tmp_path: Path):
    from analysis.stats import run_throughput

    result = parse_paths([tmp_path], cache=False)
    peak = run_throughput(result, "window").iloc[0]["memory_sampled_mib"]
    notes = result.problems[result.problems["kind"] == "foreign_gpu_sample"]["reason"]
    return peak, list(notes)


def test_unindexed_inline_rows_of_more_gpus_than_the_runs_are_all_left_out(tmp_path):
    """The first two rows were taken as the run's: its peak was the other job's 40,000 MiB,
    and the note named GPUs 2 and 3 as the others though nothing numbers the rows."""
    _inline_smi(tmp_path, indexed=False)
    peak, notes = _peak_and_notes(tmp_path)
    assert peak != peak  # no peak: nothing states which rows were the run's
    assert len(notes) == 1
    assert "4 inline nvidia-smi row(s) in block(s) of 4 GPUs with no index column" in notes[0]
    assert "nothing states which rows were its" in notes[0]


def test_indexed_inline_rows_count_the_runs_gpus_by_their_index(tmp_path):
    _inline_smi(tmp_path, indexed=True)
    peak, notes = _peak_and_notes(tmp_path)
    assert peak == 30746.0
    assert len(notes) == 1 and "row(s) of GPU 2, 3 by their index column" in notes[0]


# --- 14. campaigns differing only in argument dumps ----------------------------------------

def _stored_names(store: Path) -> list[str]:
    import pandas as pd

    return sorted(pd.read_parquet(store / "campaigns")["name"])


@pytest.mark.parametrize("edit", [("channels_last : True", "channels_last : False"),
                                  ("compile : False", "compile : True")])
def test_a_campaign_differing_only_in_an_argument_dump_is_stored_apart(tmp_path, edit):
    """Run 3 stating another channels_last or compile (summarize flags the case
    mixed_configuration) was 'already stored, nothing added' as the unedited campaign."""
    from analysis.changes import sources, store

    plain = _logs_only(tmp_path / "plain")
    edited = _logs_only(tmp_path / "edited")
    log = edited / f"{STEM}3.log"
    text = log.read_text()
    assert text.count(edit[0]) == 1
    log.write_text(text.replace(*edit))
    results = tmp_path / "store"
    assert store.add(results, sources.from_folder(plain.parent), "plain").new
    assert store.add(results, sources.from_folder(edited.parent), "edited").new
    assert _stored_names(results) == ["edited", "plain"]
    assert not store.add(results, sources.from_folder(plain.parent), "again").new


def test_an_export_keeps_the_argument_dumps_its_key_covers(tmp_path):
    """The export of a folder is the folder's campaign (the key covers the dumps, which the
    export now keeps, secrets hidden); an export with a damaged dump is refused by name."""
    import pandas as pd

    from analysis.changes import sources
    from analysis.errors import UsageError

    folder = _logs_only(tmp_path / "logs")
    log = folder / f"{STEM}1.log"
    secret = "hf_token : hf_abcdefghijklmnopqrstuvwxyz0123"
    log.write_text(log.read_text().replace("seed : 1", f"seed : 1  {secret}", 1))
    export = tmp_path / "exp.parquet"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["parse", str(folder.parent), "-o", str(export)]) == 0
    runs_file = export.with_name("exp.runs.parquet")
    dumps = pd.read_parquet(runs_file)["parameters"]
    assert all('"channels_last": "True"' in d for d in dumps)
    assert "hf_abcdefghij" not in " ".join(dumps)
    assert sources.from_export(export).key == sources.from_folder(folder.parent).key
    runs = pd.read_parquet(runs_file)
    runs.loc[0, "parameters"] = "{not json"
    runs.to_parquet(runs_file)
    with pytest.raises(UsageError, match="row 1: column parameters"):
        sources.from_export(export)


# --- 7. a done marker that is not valid JSON -----------------------------------------------

def _campaign(tmp_path: Path, runs=(1, 2, 3)) -> Path:
    """Runs of the bundled campaign with their done markers, environment records and GPU
    samples (no status.json)."""
    folder = tmp_path / "1n4g"
    folder.mkdir(parents=True)
    for i in runs:
        for f in RN50.glob(f"{STEM}{i}.*"):
            shutil.copy(f, folder)
    return folder


def _damage(marker: Path) -> None:
    text = marker.read_text()
    assert text.count('"ok": true,') == 1
    marker.write_text(text.replace('"ok": true,', '"ok": true,,'))


def test_a_run_alone_with_a_damaged_done_marker_names_the_marker(tmp_path):
    """Alone in its folder the run was a stray and the message 'no log of a known format':
    its log is a healthy one; what is wrong is the marker."""
    folder = _campaign(tmp_path, (1,))
    _damage(folder / f"{STEM}1.done")
    result = parse_paths([tmp_path], cache=False)
    assert list(result.runs["run_id"]) == [f"1n4g/{STEM}1"]
    bad = result.problems[result.problems["kind"] == "bad_done_marker"]
    assert len(bad) == 1
    assert bad["source"].iloc[0].endswith(f"{STEM}1.done") and bad["line"].iloc[0] == 3
    assert "not valid JSON: Expecting property name" in bad["reason"].iloc[0]
    assert result.runs["problems"].iloc[0] == "bad_done_marker"


def test_a_case_with_a_damaged_done_marker_does_not_say_problems_0(tmp_path):
    """In a campaign the run was dropped as a stray and the case row said problems 0 with
    repeats 2 where 3 ran."""
    from analysis.stats import summarize

    folder = _campaign(tmp_path)
    _damage(folder / f"{STEM}2.done")
    result = parse_paths([tmp_path], cache=False)
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and row["problems"] == 1
    assert "stray_log" not in _kinds(result)


def test_a_damaged_marker_of_a_run_status_json_says_failed_is_a_stray_naming_the_error(tmp_path):
    folder = _campaign(tmp_path)
    _damage(folder / f"{STEM}2.done")
    runs = [{"run_id": f"1n4g/{STEM}{i}", "state": "failed" if i == 2 else "done"}
            for i in (1, 2, 3)]
    (tmp_path / "status.json").write_text(json.dumps({"runs": runs}))
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 2
    stray = result.problems[result.problems["kind"] == "stray_log"]["reason"]
    assert len(stray) == 1 and "its done marker cannot be read (not valid JSON" in stray.iloc[0]
    assert "status.json lists it as failed" in stray.iloc[0]


# --- 11. repeats recorded under other NCCL settings -----------------------------------------

def _nccl_edited(folder: Path, run: int, value: str) -> None:
    """Run `run`'s environment record and done marker stating NCCL_NVLS_ENABLE=`value`."""
    for name in (f"{STEM}{run}.node0.env.json", f"{STEM}{run}.done"):
        record = json.loads((folder / name).read_text())
        assert record["env"]["NCCL_NVLS_ENABLE"] == "0"
        record["env"]["NCCL_NVLS_ENABLE"] = value
        (folder / name).write_text(json.dumps(record))


def test_repeats_recorded_under_other_nccl_settings_are_a_mixed_configuration(tmp_path):
    """Run 3 recorded NCCL_NVLS_ENABLE=1, runs 1-2 0: averaged as repeats, 0 problems."""
    from analysis.stats import summarize

    folder = _campaign(tmp_path)
    _nccl_edited(folder, 3, "1")
    result = parse_paths([tmp_path], cache=False)
    [row] = summarize(result).to_dict("records")
    assert row["flags"] == "configuration differs in NCCL_NVLS_ENABLE"
    assert row["problems"] == 3
    [mixed] = [p for p in result.problem_list() if p.kind == "mixed_configuration"]
    assert f"NCCL_NVLS_ENABLE: 0 (1n4g/{STEM}1), 0 (1n4g/{STEM}2), 1 (1n4g/{STEM}3)" \
        in mixed.reason


def test_repeats_recorded_under_one_nccl_setting_are_not_flagged(tmp_path):
    from analysis.stats import summarize

    _campaign(tmp_path)
    result = parse_paths([tmp_path], cache=False)
    [row] = summarize(result).to_dict("records")
    assert row["flags"] == "" and row["problems"] == 0
