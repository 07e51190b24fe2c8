"""Inputs of a tenth attack on copies of runs: copies of run 1 with stamps stretched x0.96 to
x0.97 were repeats when, besides, one field was reprinted (losses cut to 4 places, rates to 1
decimal, rates x1.0003 and stamps jittered), when the rates were rescaled by 1/stretch, when
the logs print no rates, and, in the GPT table of the suite's own logs (no stamps), when
only the loss column was cut to 4 places. Built in tmp_path from the bundled campaigns
(data/raw_logs/rn50_4gpu/1n4g: runs 1-3 give a DLPerf median of 11,661.87 img/s;
data/raw_logs/gpt_4gpu/1n1g: runs 1-3 of l16 h1536 give 66.41 samples/s)."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from analysis import duplicate_runs, parse_cache
from analysis.collect import _read_file, parse_paths
from analysis.logtext import max_log_bytes
from analysis.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"
MEDIAN = 11661.87
GPT = ROOT / "data" / "raw_logs" / "gpt_4gpu" / "1n1g"
GPT_STEM = "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l16_h1536_nh16_"
_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}")


def _stretched(text: str, scale: float, jitter_us: float = 0.0) -> str:
    """Every stamp t moved to t0 + (t - t0) x `scale`, then by up to ±`jitter_us` µs."""
    rng, first = random.Random(5), dt.datetime.fromisoformat(_STAMP.search(text)[0])

    def edit(m):
        t = first + (dt.datetime.fromisoformat(m[0]) - first) * scale
        t += dt.timedelta(microseconds=rng.uniform(-1, 1) * jitter_us)
        return f"{t:%Y-%m-%d %H:%M:%S.%f}"

    return _STAMP.sub(edit, text)


def _field(name: str, form):
    return lambda text: re.sub(rf"(train\.{name} : )([\d.]+)",
                               lambda m: f"{m[1]}{form(float(m[2]))}", text)


def _duplicates(result) -> list[tuple[str, str]]:
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    return list(zip(dup["source"], dup["reason"], strict=True))


def _rn50(folder: Path, edit=lambda text: text) -> str:
    folder.mkdir(parents=True)
    for i in (1, 2, 3):
        (folder / f"{STEM}{i}.log").write_text(edit((RN50 / f"{STEM}{i}.log").read_text()))
    return (folder / f"{STEM}1.log").read_text()


def _one_run_each(tmp_path: Path, folder: Path, copies: list[int], dlperf_only=False) -> None:
    result = parse_paths([tmp_path], cache=False, dlperf_only=dlperf_only)
    found = _duplicates(result)
    assert sorted(source for source, _ in found) == [str(folder / f"{STEM}{i}.log")
                                                     for i in copies]
    assert all(f"1n4g/{STEM}1.log" in reason and "training values (150 of 150 iterations'"
               in reason for _, reason in found)
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == MEDIAN


@pytest.mark.parametrize("scale, jitter_us, reprint", [
    (0.96, 0, _field("loss", lambda v: f"{v:.4f}")),  # the attack's case 13b
    (0.965, 0, _field("total_ips", lambda v: f"{v:.1f}")),  # 13a
    (0.97, 300, _field("total_ips", lambda v: f"{v * 1.0003:.2f}")),  # 13c
    (0.97, 0, _field("total_ips", lambda v: f"{v / 0.97:.2f}")),  # 2a: rates with the stamps
])
@pytest.mark.parametrize("dlperf_only", [False, True])
def test_a_stretched_copy_reprinted_once_is_one_run(tmp_path, scale, jitter_us, reprint,
                                                     dlperf_only):
    """Run 1 stretched, one field reprinted, as run 4 was a fourth repeat (median 11,673.21
    for 11,661.87): its losses are run 1's within the coarser print, its rates run 1's times
    one constant on every line, which no other run's are."""
    folder = tmp_path / "1n4g"
    text = _rn50(folder)
    (folder / f"{STEM}4.log").write_text(reprint(_stretched(text, scale, jitter_us)))
    _one_run_each(tmp_path, folder, [4], dlperf_only)


def test_three_copies_each_reprinted_its_own_way_are_one_run(tmp_path):
    """The attack's case 15: three copies, x0.96 with losses to 4 places, x0.965 with rates
    to 1 decimal, x0.97 with rates x1.0003, made 6 repeats, median 11,865.24."""
    folder = tmp_path / "1n4g"
    text = _rn50(folder)
    for run, scale, reprint in ((4, 0.96, _field("loss", lambda v: f"{v:.4f}")),
                                (5, 0.965, _field("total_ips", lambda v: f"{v:.1f}")),
                                (6, 0.97, _field("total_ips", lambda v: f"{v * 1.0003:.2f}"))):
        (folder / f"{STEM}{run}.log").write_text(reprint(_stretched(text, scale)))
    _one_run_each(tmp_path, folder, [4, 5, 6])


def test_stretched_copies_of_logs_printing_no_rates_are_one_run(tmp_path):
    """The attack's case 8a: logs printing losses only, run 1 stretched x0.96/0.965/0.97 as
    runs 4-6 made 6 repeats (median 11,858.03 by the window method): each copy's intervals
    are run 1's times one constant to the microsecond, the real runs' are not."""
    folder = tmp_path / "1n4g"
    text = _rn50(folder, lambda t: re.sub(r"  train\.total_ips : [\d.]+ img/s", "", t))
    for run, scale in ((4, 0.96), (5, 0.965), (6, 0.97)):
        (folder / f"{STEM}{run}.log").write_text(_stretched(text, scale))
    _one_run_each(tmp_path, folder, [4, 5, 6])


def test_a_gpt_run_with_its_losses_reprinted_is_one_run(tmp_path):
    """The attack's case 19: the suite's GPT table (no stamps), run 1 with only its loss column
    cut to 4 places (its done marker renamed) as run 4: 4 repeats, median 66.04 for 66.41.
    Runs 1-3 print nearly the same losses (a seeded run) with their own timing: 3 runs."""
    folder = tmp_path / "1n1g"
    folder.mkdir()
    for i in (1, 2, 3):
        for ext in (".log", ".done"):
            shutil.copy(GPT / f"{GPT_STEM}{i}{ext}", folder)
    text = (GPT / f"{GPT_STEM}1.log").read_text()

    def cut(line: str) -> str:
        cells = line.split("|")
        if len(cells) > 6 and cells[1].strip().isdigit():
            cells[6] = f" {float(cells[6]):<10.4f} "
        return "|".join(cells)

    (folder / f"{GPT_STEM}4.log").write_text("\n".join(map(cut, text.split("\n"))))
    marker = json.loads((GPT / f"{GPT_STEM}1.done").read_text())
    marker["run_id"] = marker["run_id"][:-1] + "4"
    (folder / f"{GPT_STEM}4.done").write_text(json.dumps(marker))
    result = parse_paths([tmp_path], cache=False)
    [(source, reason)] = _duplicates(result)
    assert source == str(folder / f"{GPT_STEM}4.log") and f"{GPT_STEM}1.log" in reason
    assert "training values (20 of 20 iterations' values alike" in reason
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == 66.41


def test_a_warm_run_keeps_each_logs_signature_and_only_compares(tmp_path, monkeypatch):
    """Each log's copy signature is kept in its cache entry: a warm run finds the same copy
    making no signature, and every kept signature is the one its log gives (the GPT table
    without stamps and the stretched copy reprinted included)."""
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "logs" / "1n4g"
    text = _rn50(folder)
    (folder / f"{STEM}4.log").write_text(_field("loss", lambda v: f"{v:.4f}")(
        _stretched(text, 0.96)))
    gpt = tmp_path / "logs" / "1n1g"
    gpt.mkdir()
    shutil.copy(GPT / f"{GPT_STEM}1.log", gpt)
    for log in (tmp_path / "logs").rglob("*.log"):
        os.utime(log, (1e9, 1e9))  # settled: cached
    cold = parse_paths([tmp_path / "logs"], cache=True)
    made, real = [], duplicate_runs.signature
    monkeypatch.setattr(duplicate_runs, "signature",
                        lambda parsed: made.append(parsed) or None)
    warm = parse_paths([tmp_path / "logs"], cache=True)
    assert not made and _duplicates(warm) == _duplicates(cold)
    assert [source for source, _ in _duplicates(warm)] == [str(folder / f"{STEM}4.log")]
    monkeypatch.setattr(duplicate_runs, "signature", real)
    for log in (tmp_path / "logs").rglob("*.log"):
        store = parse_cache.FolderCache(str(log.parent.resolve()), {
            "family": None, "max_bytes": max_log_bytes(), "dlperf_only": False})
        kept = store.get(log, False)[3]
        fresh = _read_file(log, None, False, max_log_bytes()).signature
        assert kept.names == fresh.names
        for a, b in zip(kept, fresh, strict=True):
            assert np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b
