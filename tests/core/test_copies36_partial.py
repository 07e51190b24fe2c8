"""Partial copies the index never paired: the second half of a log, a copy that lost its first
66 to 75 of 150 lines (stretched or not), one that lost its first 10 and was counted afresh
from 1, and a copy printing no rates, its stamps re-stamped to the millisecond or jittered,
of a log that prints them. Built in tmp_path from the bundled campaign
data/raw_logs/rn50_4gpu/1n4g (runs 1-3: DLPerf median 11,661.87 img/s) with run 1 copied."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from analysis import duplicate_runs
from analysis.collect import _read_file, parse_paths
from analysis.logtext import max_log_bytes
from analysis.stats import summarize

sys.path.insert(0, str(Path(__file__).parent))
from test_attack_2026_11_29h import _restamped  # noqa: E402
from test_attack_2026_11_29q import STEM, _duplicates, _field, _rn50, _stretched  # noqa: E402

_LINE = re.compile(r"^DLL .* Iteration: (\d+) .*\n", re.M)


def _lost(first: int, renumber: bool = False):
    """The training lines of the first `first` iterations left out; the rest counted from 1
    where `renumber`."""
    def edit(text: str) -> str:
        def line(m):
            i = int(m[1])
            if i <= first:
                return ""
            return m[0].replace(f"Iteration: {i} ", f"Iteration: {i - first} ") if renumber \
                else m[0]
        return _LINE.sub(line, text)
    return edit


def _stretch(text: str) -> str:
    return _stretched(_field("total_ips", lambda v: f"{v / 0.97:.2f}")(text), 0.97)


def _no_rates(text: str) -> str:
    return re.sub(r"  train\.total_ips : [\d.]+ img/s(?=\n)", "", text)


COPIES = {
    "second_half": _lost(75),  # c1d_second_half
    "second_half_stretched": lambda t: _lost(75)(_stretch(t)),  # c1f
    "lost_70": _lost(70),  # c4a_drop70
    "lost_70_stretched": lambda t: _lost(70)(_stretch(t)),  # c4b
    "lost_66_stretched": lambda t: _lost(66)(_stretch(t)),  # c4d
    "lost_10_renumbered": _lost(10, True),  # k7b_drop10_renumber_nostretch
    "lost_10_renumbered_stretched": lambda t: _lost(10, True)(_stretch(t)),  # k7
    "no_rates_ms": lambda t: _no_rates(_restamped(t, 0.0, 1000)),  # k4b_norate_ms_jit0
}


@pytest.mark.parametrize("number", [4, 0], ids=["after", "before"])
@pytest.mark.parametrize("name", list(COPIES))
def test_a_partial_renumbered_or_rateless_copy_is_one_run(tmp_path, name, number):
    """Run 1's copy, numbered after the runs or before them (kept first, the original then
    looked up), is a `duplicate_run` of run 1 and the case has 3 repeats; a copy without
    rates re-stamped to the millisecond is one the logs cannot tell from a rerun made
    deterministic (its stamps would stray 0.26 ms, within the millisecond): flagged, kept."""
    folder = tmp_path / "1n4g"
    text = _rn50(folder)
    (folder / f"{STEM}{number}.log").write_text(COPIES[name](text))
    result = parse_paths([tmp_path], cache=False)
    [(source, reason)] = _duplicates(result)
    pair = {Path(source).name, Path(reason.split(" as ")[1].split(" (run")[0]).name}
    assert pair == {f"{STEM}1.log", f"{STEM}{number}.log"}
    untold = name == "no_rates_ms"
    assert ("the logs cannot tell" in reason and "both counted" in reason) == untold
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 + untold


def _signature(text: str, path: Path):
    path.write_text(text)
    return _read_file(path, None, False, max_log_bytes()).signature


@pytest.mark.parametrize("name", list(COPIES))
def test_the_index_pairs_each_such_copy_with_its_log_both_ways(tmp_path, name):
    """Whichever of the two is kept first, the other's lookup finds it: a key of one is a
    near key of the other, both ways."""
    text = (Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
            / f"{STEM}1.log").read_text()
    one = _signature(text, tmp_path / "one.log")
    two = _signature(COPIES[name](text), tmp_path / "two.log")
    for first, then in ((one, two), (two, one)):
        index = duplicate_runs._Index([first, then])
        index.add(0)
        assert index.candidates(1) == [0]
