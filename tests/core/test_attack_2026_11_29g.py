"""Inputs of a seventh attack on copies of runs: a copy of a run re-stamped by a constant, one
lacking its last training line, one with its loss printed to 3 decimals, and a backup copy
with one value edited in another folder of the tree, each counted as another repeat. Built in
tmp_path from the bundled ResNet-50 campaign (data/raw_logs/rn50_4gpu/1n4g: runs 1-3 give a
DLPerf median of 11,661.87 img/s) and from the parse-speed benchmark's corpus."""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"
MEDIAN = 11661.87


def _runs(folder: Path, runs=(1, 2, 3)) -> Path:
    folder.mkdir(parents=True)
    for i in runs:
        shutil.copy(RN50 / f"{STEM}{i}.log", folder)
    return folder


def _an_hour_later(text: str) -> str:
    def later(m):
        return f"DLL {dt.datetime.fromisoformat(m[1]) + dt.timedelta(hours=1)}"

    return re.sub(r"^DLL (\S+ \S+)", later, text, flags=re.M)


def _last_training_line_lost(text: str) -> str:
    return re.sub(r"^.* Iteration: 150 .*\n", "", text, flags=re.M)


def _first_training_line_lost(text: str) -> str:
    return re.sub(r"^.* Iteration: 1 .*\n", "", text, flags=re.M)


def _a_middle_line_lost(text: str) -> str:
    return re.sub(r"^.* Iteration: 70 .*\n", "", text, flags=re.M)


def _loss_to_3_decimals(text: str) -> str:
    return re.sub(r"(train\.loss : )([0-9.]+)", lambda m: f"{m[1]}{float(m[2]):.3f}", text)


def _one_loss_digit(text: str) -> str:
    return text.replace("train.loss : 6.46912", "train.loss : 6.46913", 1)


def _counted_once(root: Path, copy: Path, dlperf_only: bool = False) -> None:
    result = parse_paths([root], cache=False, dlperf_only=dlperf_only)
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    assert len(dup) == 1 and dup["source"].iloc[0] == str(copy)
    assert f"1n4g/{STEM}1.log" in dup["reason"].iloc[0]
    assert "stamps the same to the microsecond" in dup["reason"].iloc[0]
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == MEDIAN


@pytest.mark.parametrize("edit", [_an_hour_later, _last_training_line_lost,
                                  _first_training_line_lost, _a_middle_line_lost,
                                  _loss_to_3_decimals])
@pytest.mark.parametrize("dlperf_only", [False, True])
def test_a_copy_re_stamped_cut_or_reformatted_is_one_run(tmp_path, edit, dlperf_only):
    """Run 1 copied as run 4 with every stamp an hour later (a time-zone-converted copy), its
    last, first or a middle training line lost, or its loss printed to 3 decimals was a
    fourth repeat: median 11,673.21 where runs 1-3 give 11,661.87. Its intervals are run 1's
    to the microsecond (with `dlperf_only` found on the first lines the DLPerf rule reads,
    confirmed whole)."""
    folder = _runs(tmp_path / "1n4g")
    text = (folder / f"{STEM}1.log").read_text()
    edited = edit(text)
    assert edited != text
    (folder / f"{STEM}4.log").write_text(edited)
    _counted_once(tmp_path, folder / f"{STEM}4.log", dlperf_only)


def test_a_backup_copy_with_one_value_edited_elsewhere_is_one_run(tmp_path):
    """Run 1 copied into old/1n4g/ with one loss digit edited was a fourth repeat of the case
    (the same copy unedited was found by its text)."""
    _runs(tmp_path / "1n4g")
    backup = _runs(tmp_path / "old" / "1n4g", (1,)) / f"{STEM}1.log"
    text = backup.read_text()
    assert _one_loss_digit(text) != text
    backup.write_text(_one_loss_digit(text))
    _counted_once(tmp_path, backup)


def test_real_repeats_and_fixtures_are_no_copies():
    """Real repeats (bundled campaigns, published logs) and fixtures edited from one another
    in other folders (stamps kept, values changed) stay runs of their own."""
    result = parse_paths([ROOT / "data" / "raw_logs", ROOT / "tests" / "data"], cache=False)
    assert "duplicate_run" not in set(result.problems["kind"])


def test_runs_made_from_one_real_log_are_no_copies(tmp_path):
    """The parse-speed corpus: each log the real log's intervals, rotated and scaled by a few
    %, over 58 iterations (every interval distinct, so each is compared): no log a copy."""
    spec = importlib.util.spec_from_file_location("parse_speed",
                                                  ROOT / "benchmarks" / "parse_speed.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    corpus.make_corpus(tmp_path, 90, 58)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 90
    assert "duplicate_run" not in set(result.problems["kind"])
