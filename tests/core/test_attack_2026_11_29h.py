"""Inputs of an eighth attack on copies of runs: a copy of a run re-stamped by a constant AND
with its stamps cut to milliseconds, and one with its stamps cut to 0.1 ms, each counted as
another repeat. Built in tmp_path from the bundled ResNet-50 campaign
(data/raw_logs/rn50_4gpu/1n4g: runs 1-3 give a DLPerf median of 11,661.87 img/s) and from
the parse-speed benchmark's corpus."""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from analysis import duplicate_runs
from analysis.collect import parse_paths
from analysis.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"
MEDIAN = 11661.87
_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}")


def _restamped(text: str, shift_s: float, cut_us: int) -> str:
    """Every stamp moved by `shift_s` and cut to a multiple of `cut_us` microseconds."""
    def edit(m):
        t = dt.datetime.fromisoformat(m[0]) + dt.timedelta(seconds=shift_s)
        return f"{t.replace(microsecond=t.microsecond // cut_us * cut_us):%Y-%m-%d %H:%M:%S.%f}"

    return _STAMP.sub(edit, text)


def _runs(folder: Path, runs=(1, 2, 3)) -> Path:
    folder.mkdir(parents=True)
    for i in runs:
        shutil.copy(RN50 / f"{STEM}{i}.log", folder)
    return folder


@pytest.mark.parametrize("shift_s, cut_us, to_the", [
    (3600, 1000, r"the millisecond, moved by \+3599\.99\d+ s:"),  # the attack's case 2
    (0, 100, r"0\.1 ms:"),  # the attack's case 3
    (0, 10, r"0\.01 ms:"),
    (-7200, 10_000, r"10 ms, moved by -7200\.00\d+ s:"),
])
@pytest.mark.parametrize("dlperf_only", [False, True])
def test_a_copy_with_coarser_stamps_moved_or_not_is_one_run(tmp_path, shift_s, cut_us, to_the,
                                                            dlperf_only):
    """Run 1 copied as run 4 with its stamps cut to `cut_us` (and moved by `shift_s`) was a
    fourth repeat: median 11,673.02 (+1 h, ms) or 11,673.21 (0.1 ms) where runs 1-3 give
    11,661.87. Its stamps pair with run 1's within the copy's resolution, its values are run
    1's."""
    folder = _runs(tmp_path / "1n4g")
    text = (folder / f"{STEM}1.log").read_text()
    (folder / f"{STEM}4.log").write_text(_restamped(text, shift_s, cut_us))
    result = parse_paths([tmp_path], cache=False, dlperf_only=dlperf_only)
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    assert len(dup) == 1 and dup["source"].iloc[0] == str(folder / f"{STEM}4.log")
    assert f"1n4g/{STEM}1.log" in dup["reason"].iloc[0]
    assert re.search(r"training stamps and values \(150 of 150 stamps the same to " + to_the,
                     dup["reason"].iloc[0])
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == MEDIAN


def test_repeats_with_coarse_stamps_moved_stay_repeats(tmp_path):
    """Real repeats cut to milliseconds, one moved onto another's start: their stamps pair
    within a millisecond no more than by chance, their values not at all."""
    folder = _runs(tmp_path / "1n4g")
    starts = {i: _STAMP.search((folder / f"{STEM}{i}.log").read_text())[0] for i in (1, 2, 3)}
    for i in (1, 2, 3):
        log = folder / f"{STEM}{i}.log"
        shift = (dt.datetime.fromisoformat(starts[1])
                 - dt.datetime.fromisoformat(starts[i])).total_seconds()
        log.write_text(_restamped(log.read_text(), shift, 1000))
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3 and "duplicate_run" not in set(result.problems["kind"])


def test_coarse_stamped_runs_are_looked_up_not_compared_in_pairs(tmp_path, monkeypatch):
    """300 logs of the parse-speed corpus (6 folders of 50) with stamps cut to milliseconds:
    no copy among them, and the few runs compared are those sharing a first line's values,
    not the 7,350 pairs of each folder's runs."""
    spec = importlib.util.spec_from_file_location("parse_speed",
                                                  ROOT / "benchmarks" / "parse_speed.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    corpus.make_corpus(tmp_path, 300, 58)
    for log in tmp_path.rglob("*.log"):
        log.write_text(re.sub(r"(:\d\d\.\d{3})\d{3}", r"\g<1>000", log.read_text()))
    compared = []
    copy_of = duplicate_runs._copy_of
    monkeypatch.setattr(duplicate_runs, "_copy_of",
                        lambda *a: compared.append(1) or copy_of(*a))
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 300
    assert "duplicate_run" not in set(result.problems["kind"])
    assert len(compared) < 300
