"""Inputs of a fourteenth attack on copies of runs: copies of run 1 numbered from another
iteration (from 0, from 1000, a DLLogger JSON log's `"step": [0, i - 1]`) were a 4th repeat;
a stretched copy in another campaign folder whose header states another host or seed was a
4th repeat; and genuine deterministic reruns (the same losses) whose work varies line to
line, each with its own jitter, were merged as copies of one another where the stamps are
milliseconds and no rate is printed, or the rate an integer. Built in tmp_path from the
bundled campaign data/raw_logs/rn50_4gpu/1n4g (runs 1-3: DLPerf median 11,661.87 img/s)
or from a small generator of reruns below."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import summarize

sys.path.insert(0, str(Path(__file__).parent))
from test_attack_2026_11_29h import _restamped  # noqa: E402
from test_attack_2026_11_29q import (  # noqa: E402
    MEDIAN,
    RN50,
    STEM,
    _duplicates,
    _field,
    _rn50,
    _stretched,
)

_ITERATION = re.compile(r"Iteration: (\d+) ")
_LINE = re.compile(r"^DLL (\S+ \S+) - Epoch: 0 Iteration: (\d+)  train\.loss : (\S+)"
                   r"  train\.total_ips : (\S+) img/s$")


def _renumbered(by: int):
    """Each training line's iteration moved by `by` (from 0 for -1, resumed at +1000)."""
    return lambda text: _ITERATION.sub(lambda m: f"Iteration: {int(m[1]) + by} ", text)


def _as_json(shift: int):
    """The log rewritten as DLLogger's JSON backend writes it (`DLLL {...}` records), its
    step `[0, iteration + shift]`, the same stamps and values."""
    def rewrite(text: str) -> str:
        out = []
        for line in text.splitlines():
            if (m := _LINE.match(line)) is None:
                continue
            stamp = dt.datetime.fromisoformat(m[1]).replace(tzinfo=dt.timezone.utc)
            out.append("DLLL " + json.dumps({
                "timestamp": f"{stamp.timestamp():.6f}", "datetime": m[1],
                "elapsedtime": "1.0", "type": "LOG", "step": [0, int(m[2]) + shift],
                "data": {"train.loss": float(m[3]), "train.total_ips": float(m[4])}}))
        return "\n".join(out) + "\n"
    return rewrite


def _three_runs(result) -> None:
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == MEDIAN


@pytest.mark.parametrize("copy", [
    _renumbered(-1),  # c1j_from0: byte-identical but for the numbering
    _renumbered(1000),  # c1h_renumber
    lambda t: _renumbered(-1)(_stretched(_field("total_ips", lambda v: f"{v / 0.97:.2f}")(t),
                                         0.97)),  # c1k_from0_stretch
    _as_json(-1),  # j2_json_from0
    lambda t: _as_json(-1)(_stretched(_field("total_ips", lambda v: f"{v / 0.97:.2f}")(t),
                                      0.97)),  # j3_json_from0_stretch
], ids=["from0", "from1000", "from0_stretched", "json_from0", "json_from0_stretched"])
def test_a_copy_numbered_from_another_iteration_is_one_run(tmp_path, copy):
    """Run 1 with its iterations counted from 0 or 1000 (as text or as DLLogger JSON records),
    as it is or stretched x0.97 with its rates /0.97, was a 4th repeat (11,673.21): both copy
    tests paired lines by iteration number and found none, or too few, in common."""
    folder = tmp_path / "1n4g"
    (folder / f"{STEM}4.log").write_text(copy(_rn50(folder)))
    result = parse_paths([tmp_path], cache=False)
    [(source, reason)] = _duplicates(result)
    assert source == str(folder / f"{STEM}4.log") and f"{STEM}1.log" in reason
    _three_runs(result)


def test_two_runs_each_copied_under_another_numbering_are_two_runs(tmp_path):
    """The attacker's build (c1m): runs 1 and 2, and a copy of each stretched x0.955 with its
    rates /0.955, one numbered from 0, one from 2, were 4 repeats at 11,947.67 (spread 4.8 %,
    under the flag) for the runs' own 11,673.21."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    for run, source, by in ((1, 1, 0), (2, 2, 0), (3, 1, -1), (4, 2, 1)):
        text = (RN50 / f"{STEM}{source}.log").read_text()
        if by:
            text = _renumbered(by)(_stretched(
                _field("total_ips", lambda v: f"{v / 0.955:.2f}")(text), 0.955))
        (folder / f"{STEM}{run}.log").write_text(text)
    result = parse_paths([tmp_path], cache=False)
    found = sorted(_duplicates(result))
    assert [source for source, _ in found] == [str(folder / f"{STEM}{i}.log") for i in (3, 4)]
    assert f"{STEM}1.log" in found[0][1] and f"{STEM}2.log" in found[1][1]
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 2 and round(row["throughput_median"], 2) == 11673.21


def _other_folder(tmp_path: Path, edit) -> object:
    """Runs 1-3 in campA/1n4g, run 1 stretched x0.97 (rates /0.97) with `edit` applied to it
    as run 4 in campB/1n4g."""
    _rn50(tmp_path / "campA" / "1n4g")
    folder = tmp_path / "campB" / "1n4g"
    folder.mkdir(parents=True)
    text = _stretched(_field("total_ips", lambda v: f"{v / 0.97:.2f}")(
        (RN50 / f"{STEM}1.log").read_text()), 0.97)
    (folder / f"{STEM}4.log").write_text(edit(text))
    return parse_paths([tmp_path], cache=False)


@pytest.mark.parametrize("edit, key", [
    (lambda t: t.replace("hostname : vm ", "hostname : vm2 "), "hostname"),  # c2d
    (lambda t: t.replace("seed : 1 ", "seed : 7 "), "seed"),  # c2e
    (lambda t: t, ""),  # c2c: it was told before
], ids=["hostname", "seed", "header_kept"])
def test_a_stretched_copy_in_another_folder_stating_another_host_or_seed_is_one_run(
        tmp_path, edit, key):
    """A stretched copy of run 1 in another campaign folder whose header states another host
    or seed (what each repeat states its own) was a 4th repeat (high 12,045.91): any key
    its header stated otherwise vetoed the values test across folders."""
    result = _other_folder(tmp_path, edit)
    [(source, reason)] = _duplicates(result)
    assert source.endswith(f"campB/1n4g/{STEM}4.log") and f"campA/1n4g/{STEM}1.log" in reason
    assert (f"its header states another {key}" in reason) == bool(key)
    _three_runs(result)


def test_a_stretched_log_in_another_folder_stating_another_configuration_is_its_own(
        tmp_path):
    """Logs in other places whose dumps state another configuration (fixtures edited from one
    another) share their lines by construction: a configuration key still vetoes the values
    test across folders, where their stamps do not tell."""
    result = _other_folder(tmp_path, lambda t: t.replace("lr : 0.256 ", "lr : 0.512 "))
    assert _duplicates(result) == []


def _reruns(folder: Path, res_us: int = 1000, base: float = 0.05, spread: float = 0.4,
            jitter: float = 0.003, every: int = 1, lines: int = 150, rate: bool = False,
            copy: float = 0.0, decimals: int = 0, average: bool = False) -> list[float]:
    """Three seeded reruns (the same losses, the same data order: each iteration's work
    1 ± `spread`, `base` seconds a batch of 512), each at its own pace with its own
    `jitter`, a DLLogger line every `every` iterations (its rate over the line's iterations
    to `decimals` where `rate`, or the mean rate since the first iteration where `average`),
    stamps cut to `res_us`; where `copy`, a 4th log copies run 1's lines, its
    stamps stretched by `copy` from run 1's printed ones and cut alike (its rates divided
    by it). Gives
    each rerun's throughput over iterations 20-120 by its own clock."""
    folder.mkdir(parents=True)
    data = random.Random(11)
    work = [1 + data.uniform(-spread, spread) for _ in range(lines + 1)]
    losses = [7.0 * 0.995 ** i + data.uniform(-0.05, 0.05) for i in range(lines + 1)]
    dump = next(line for line in (RN50 / f"{STEM}1.log").read_text().splitlines()
                if "PARAMETER" in line)
    truth = []
    for run, pace in ((1, 1.0), (2, 1.004), (3, 0.997)):
        own = random.Random(100 + run)
        t = dt.datetime(2026, 11, 21, 20, 41, 31) + dt.timedelta(minutes=10 * run)
        out, ends = [f"DLL {t:%Y-%m-%d %H:%M:%S.%f}{dump[30:]}"], {}
        for i in range(1, lines + 1):
            t += dt.timedelta(seconds=base * work[i] * pace * (1 + own.gauss(0, jitter))
                              * (4 if i == 1 else 1))
            ends[i] = t
            if i % every == 0:
                us = int(t.timestamp() * 1e6) // res_us * res_us
                shown = f"{dt.datetime.fromtimestamp(us / 1e6):%Y-%m-%d %H:%M:%S.%f}"
                took = (t - ends.get(i - every, t)).total_seconds()
                if average:
                    took = (t - ends[1]).total_seconds() / (i - 1) * every if i > 1 else 0.0
                ips = f"  train.total_ips : {512 * every / took:.{decimals}f} img/s" \
                    if (rate or average) and took > 0 else ""
                out.append(f"DLL {shown} - Epoch: 0 Iteration: {i}  train.loss : "
                           f"{losses[i]:.5f}{ips}")
        (folder / f"{STEM}{run}.log").write_text("\n".join(out) + "\n")
        truth.append(512 * 100 / (ends[120] - ends[20]).total_seconds())
    if copy:
        text = _restamped(_stretched((folder / f"{STEM}1.log").read_text(), copy), 0, res_us)
        (folder / f"{STEM}4.log").write_text(_field("total_ips", lambda v: f"{v / copy:.0f}")(
            text) if rate else text)
    return truth


@pytest.mark.parametrize("kind", [
    dict(),  # d1: ms stamps, work ±40 %, 0.3 % jitter
    dict(jitter=0.02),  # d10
    dict(spread=0.25, jitter=0.01),  # d9
    dict(every=5, lines=750),  # d2
    dict(base=0.3, res_us=10_000),  # d5: 10 ms stamps
    dict(res_us=1, base=3.0, rate=True),  # d12: µs stamps, an integer rate of a slow run
    dict(res_us=1, average=True, decimals=2),  # attack16 a1: the mean rate since the start
    dict(res_us=1, average=True, decimals=2, jitter=0.01),  # a2
    dict(res_us=1, every=5, rate=True, decimals=2),  # f2: a line and its rate every 5th
], ids=["ms", "ms_jitter2", "ms_work25_jitter1", "ms_every5", "10ms", "us_integer_rate",
        "us_mean_rate", "us_mean_rate_jitter1", "us_rate_every5"])
def test_deterministic_reruns_of_varying_work_are_three_runs(tmp_path, kind):
    """Genuine reruns printing the same losses, their intervals one multiple of the other's
    within ±2 stamp resolutions on 149 of 150 lines, were merged as copies (1 run, two
    duplicate_run): a copy is rounded once, so its timed values lie about one multiple as
    closely as one rounding allows on average; two runs each round their own way and
    jitter besides."""
    truth = _reruns(tmp_path / "1n4g", **kind)
    result = parse_paths([tmp_path], cache=False)
    assert _duplicates(result) == []
    [row] = summarize(result, method="window").to_dict("records")
    assert row["repeats"] == 3
    assert row["throughput_median"] == pytest.approx(sorted(truth)[1], rel=2e-3)


@pytest.mark.parametrize("kind", [dict(), dict(base=0.3, res_us=10_000),
                                  dict(res_us=1, base=3.0, rate=True)],
                         ids=["ms", "10ms", "us_integer_rate"])
def test_a_stretched_copy_of_such_a_rerun_is_still_one_run(tmp_path, kind):
    """Run 1 of those reruns stretched x0.97 (its integer rates /0.97 where printed) as a 4th
    log is told: its intervals or rates are run 1's times one constant within one
    rounding."""
    _reruns(tmp_path / "1n4g", copy=0.97, **kind)
    result = parse_paths([tmp_path], cache=False)
    [(source, reason)] = _duplicates(result)
    assert source.endswith(f"{STEM}4.log") and f"{STEM}1.log" in reason
    [row] = summarize(result, method="window").to_dict("records")
    assert row["repeats"] == 3
