"""What proves a copy, and what the logs cannot tell, by the eighteenth attack: reruns made
deterministic (the same losses line for line) printing a mean rate only every 25th or 50th
line were proven copies at any stamp resolution, the few rates (which differ) making the
rate-less lines count; a copy of loss-only logs with microsecond stamps jittered by a few
microseconds (and stretched) was no copy at all; a copy at its original's very seconds with a
line appended was "cannot tell". Reruns are built by a small generator on the bundled
ResNet-50 run's argument dump; copies from the bundled runs themselves."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import duplicate_runs
from analysis.cli import main
from analysis.collect import _read_file, parse_paths
from analysis.logtext import max_log_bytes

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g" / "resnet50_b128_fp32_1.log"
STEM = "resnet50_b128_fp32_"
UNTOLD = "the logs cannot tell"
_STAMP = re.compile(r"^DLL (\S+ \S+)", re.M)


def _reruns(folder: Path, res_us: int, base: float, every: int, paces=(1.0, 1.004, 0.997),
            jitter: float = 0.003, seed: int = 100, lines: int = 150, apart: int = 10) -> None:
    """Reruns of one seeded program (the same losses and per-iteration work, +-40 %), each
    at its pace with its own gaussian jitter, stamped to `res_us`; the loss every line and,
    every `every`th line (none where 0), the mean rate over the lines since the last."""
    folder.mkdir(parents=True)
    data = random.Random(11)
    work = [1 + data.uniform(-0.4, 0.4) for _ in range(lines + 1)]
    losses = [7.0 * 0.995 ** i + data.uniform(-0.05, 0.05) for i in range(lines + 1)]
    dump = next(line for line in RN50.read_text().splitlines() if "PARAMETER" in line)
    for run, pace in enumerate(paces, 1):
        own = random.Random(seed + run)
        t = dt.datetime(2026, 11, 21, 20, 41, 31) + dt.timedelta(minutes=apart * run)
        out, ends = [f"DLL {t:%Y-%m-%d %H:%M:%S.%f}{dump[30:]}"], {0: t}
        for i in range(1, lines + 1):
            t += dt.timedelta(seconds=base * work[i] * pace * (1 + own.gauss(0, jitter)))
            ends[i] = t
            shown = t.replace(microsecond=t.microsecond // res_us * res_us)
            rate = f"  train.total_ips : {512 * every / (t - ends[i - every]).total_seconds():.2f}" \
                f" img/s" if every and i % every == 0 else ""
            out.append(f"DLL {shown:%Y-%m-%d %H:%M:%S.%f} - Epoch: 0 Iteration: {i}  "
                       f"train.loss : {losses[i]:.5f}{rate}")
        (folder / f"{STEM}{run}.log").write_text("\n".join(out) + "\n")


def _duplicates(result) -> list[str]:
    return list(result.problems[result.problems["kind"] == "duplicate_run"]["reason"])


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("res_us, base, every", [
    (10 ** 6, 2.0, 50),  # x1: whole seconds, 2 s an iteration
    (10 ** 5, 1.0, 25),  # x3
    (1, 0.05, 50),  # x4: microseconds, 50 ms
    (1000, 0.05, 50),  # x5
], ids=["s_every50", "100ms_every25", "us_every50", "ms_every50"])
def test_reruns_printing_a_rate_every_kth_line_are_not_proven_copies(tmp_path, res_us, base,
                                                                     every):
    """Before: 1 run of 3, the others `... counted once` (the 3 or 6 rate lines, which
    differ, made 147 rate-less lines of the same losses a proof)."""
    _reruns(tmp_path / "1n4g", res_us, base, every)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3
    assert all(UNTOLD in r and r.endswith("both counted") for r in _duplicates(result))


def test_a_copy_told_by_its_rates_every_tenth_line_is_dropped(tmp_path):
    """The 15 rates a copy prints where its original does (every 10th of 150 lines) tell it,
    moved 2 hours at whole seconds; the reruns themselves stay 3 runs (x2)."""
    folder = tmp_path / "1n4g"
    _reruns(folder, 10 ** 6, 2.0, 10)
    assert len(parse_paths([tmp_path], cache=False).runs) == 3
    text = (folder / f"{STEM}1.log").read_text()
    (folder / f"{STEM}4.log").write_text(_STAMP.sub(lambda m: "DLL " + (
        dt.datetime.fromisoformat(m[1]) + dt.timedelta(hours=2)).strftime(
        "%Y-%m-%d %H:%M:%S.%f"), text))
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3
    assert [r for r in _duplicates(result) if r.endswith("counted once")]


def test_compare_measures_reruns_printing_a_rate_every_50th_line(tmp_path):
    """attack18 y2: NEW the same program 5 % slower. Before: `not re-measured`, exit 4."""
    base, new = tmp_path / "base", tmp_path / "new"
    _reruns(base / "1n4g", 1, 0.05, 50)
    _reruns(new / "1n4g", 1, 0.05, 50, paces=(1.05, 1.054, 1.047), seed=200)
    status, out, _ = _cli("compare", base, new, "--method", "window", "--format", "json")
    [row] = pd.DataFrame(json.loads(out)).to_dict("records")
    assert status == 1 and row["verdict"] == "slower" and row["new_repeats"] == 3
    assert row["ratio"] == pytest.approx(1 / 1.05, rel=0.01)


def _loss_only(text: str) -> str:
    return re.sub(r"  train\.total_ips : \S+ img/s", "", text)


def _restamped(text: str, jitter_us: int, stretch: float = 1.0,
               shift: dt.timedelta = dt.timedelta(hours=2), seed: int = 4) -> str:
    """Every stamp `stretch` times as far from the first, moved by `shift`, jittered by up to
    `jitter_us` either way."""
    rng = random.Random(seed)
    start = dt.datetime.fromisoformat(_STAMP.search(text)[1])
    return _STAMP.sub(lambda m: "DLL " + (start + shift + (
        dt.datetime.fromisoformat(m[1]) - start) * stretch + dt.timedelta(
        microseconds=rng.randint(-jitter_us, jitter_us))).strftime("%Y-%m-%d %H:%M:%S.%f"), text)


@pytest.mark.parametrize("jitter_us", [3, 20])
def test_a_copy_of_loss_only_lines_jittered_by_microseconds_is_dropped(tmp_path, jitter_us):
    """attack18 j1, j2: the bundled runs 1-3 without rates and run 1 moved 2 hours, each stamp
    jittered. Before: 4 runs, no problem."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    for run in (1, 2, 3):
        (folder / f"{STEM}{run}.log").write_text(
            _loss_only(RN50.with_name(f"{STEM}{run}.log").read_text()))
    (folder / f"{STEM}4.log").write_text(_restamped((folder / f"{STEM}1.log").read_text(),
                                                    jitter_us))
    result = parse_paths([tmp_path], cache=False)
    assert sorted(result.runs["run_id"]) == [f"1n4g/{STEM}{i}" for i in (1, 2, 3)]
    [reason] = _duplicates(result)
    assert reason.endswith("counted once") and f"{STEM}1.log" in reason


def test_reruns_made_deterministic_at_microseconds_stay_runs(tmp_path):
    """The steadiest reruns (attack16 d1: 0.15 % jitter, 44 ms an iteration, loss only) stray
    from one another about as far as `RERUN_DRIFT` says, 12 times what a copy's stamps may."""
    _reruns(tmp_path / "1n4g", 1, 0.044, 0, jitter=0.0015)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3 and not _duplicates(result)


def test_compare_calls_a_stretched_jittered_copy_not_re_measured(tmp_path):
    """attack18 jb: NEW = BASE's loss-only logs stretched x0.97, moved 2 days, +-3 us.
    Before: `faster +3.09 %`, exit 0, no problem."""
    base, new = tmp_path / "base" / "1n4g", tmp_path / "new" / "1n4g"
    base.mkdir(parents=True)
    new.mkdir(parents=True)
    for run in (1, 2, 3):
        text = _loss_only(RN50.with_name(f"{STEM}{run}.log").read_text())
        (base / f"{STEM}{run}.log").write_text(text)
        (new / f"{STEM}{run}.log").write_text(
            _restamped(text, 3, 0.97, dt.timedelta(days=2), seed=run))
    status, _, err = _cli("compare", base.parent, new.parent, "--method", "window")
    assert status == 4 and "not re-measured" in err


def test_reruns_launched_together_at_whole_seconds_are_counted(tmp_path):
    """attack19 p2: reruns of one seeded program started at the same moment (side by side,
    or a job array) share their whole-second stamps unmoved: the logs cannot tell them from
    a copy, so all three are counted and each pair said (an unmoved copy alike)."""
    _reruns(tmp_path / "1n4g", 10 ** 6, 2.0, 0, paces=(1.0, 1.001, 0.999), apart=0)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3
    said = _duplicates(result)
    assert said and all(UNTOLD in r for r in said)


def _signature(text: str, tmp_path: Path, name: str) -> duplicate_runs.Signature:
    path = tmp_path / name
    path.write_text(text)
    return duplicate_runs.signature(_read_file(path, None, False, max_log_bytes()).parsed)


def test_the_screen_passes_every_jittered_copy_the_test_tells(tmp_path):
    """`_may_copy` turns away no pair `_copy_of` calls a copy: loss-only copies of the bundled
    runs jittered up to +-40 us, stretched or not, in either order and any place."""
    rng = np.random.default_rng(7)
    told = 0
    for run in (1, 2, 3):
        text = _loss_only(RN50.with_name(f"{STEM}{run}.log").read_text())
        one = _signature(text, tmp_path, f"{run}.log")
        for k in range(8):
            copy = _restamped(text, int(rng.integers(1, 40)),
                              float(rng.choice([1.0, 0.97, 1.1])), seed=k)
            two = _signature(copy, tmp_path, f"{run}_{k}.log")
            for a, b in ((one, two), (two, one)):
                for elsewhere in (False, True):
                    if duplicate_runs._copy_of(a, b, elsewhere):
                        told += 1
                        assert duplicate_runs._may_copy([(a, b)])[0]
    assert told >= 80  # nearly all of the 96 pairs are told
