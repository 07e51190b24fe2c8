"""Reruns made deterministic (the same seeded losses line for line, each at its own pace with
its own 0.3 % jitter an iteration) logged at coarse stamps: at whole seconds, or one at the
microsecond and the others at 100 ms, nothing in the logs tells them from copies re-stamped
to that resolution. They were dropped as copies (`summarize`: 1 or 2 runs of 3), `compare`
called a NEW side really 5 % slower "not re-measured" (exit 4) and `store add` added
nothing; now each such pair is a flagged `duplicate_run` and both runs are counted, while
a copy the logs prove (its rates, printed alike, or stamps fine enough) is still dropped.
Built by a small generator below on the bundled ResNet-50 run's argument dump."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import random
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.errors import LogProblemError
from analysis.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g" / "resnet50_b128_fp32_1.log"
STEM = "resnet50_b128_fp32_"
CASE = "PyTorch/resnet50/fp32/b128/1n4g"
UNTOLD = "the logs cannot tell"


def _reruns(folder: Path, res_us: tuple[int, ...], base: float = 2.0,
            paces: tuple[float, ...] = (1.0, 1.004, 0.997), seed: int = 100,
            rate: bool = False, lines: int = 150) -> list[float]:
    """Reruns of one seeded program (the same losses and per-iteration work, ±40 %), run k
    at `paces[k]` with its own 0.3 % gaussian jitter, stamped to `res_us[k]`, `base` seconds
    an iteration; a line each iteration with the loss (and its rate, 2 decimals, where
    `rate`). Gives each run's throughput over iterations 20-120 by its own clock."""
    folder.mkdir(parents=True)
    data = random.Random(11)
    work = [1 + data.uniform(-0.4, 0.4) for _ in range(lines + 1)]
    losses = [7.0 * 0.995 ** i + data.uniform(-0.05, 0.05) for i in range(lines + 1)]
    dump = next(line for line in RN50.read_text().splitlines() if "PARAMETER" in line)
    truth = []
    for run, (pace, cut) in enumerate(zip(paces, res_us, strict=True), 1):
        own = random.Random(seed + run)
        t = dt.datetime(2026, 11, 21, 20, 41, 31) + dt.timedelta(minutes=10 * run)
        out, ends = [f"DLL {t:%Y-%m-%d %H:%M:%S.%f}{dump[30:]}"], {0: t}
        for i in range(1, lines + 1):
            took = base * work[i] * pace * (1 + own.gauss(0, 0.003)) * (4 if i == 1 else 1)
            t += dt.timedelta(seconds=took)
            ends[i] = t
            shown = t.replace(microsecond=t.microsecond // cut * cut)
            ips = f"  train.total_ips : {512 / took:.2f} img/s" if rate else ""
            out.append(f"DLL {shown:%Y-%m-%d %H:%M:%S.%f} - Epoch: 0 Iteration: {i}  "
                       f"train.loss : {losses[i]:.5f}{ips}")
        (folder / f"{STEM}{run}.log").write_text("\n".join(out) + "\n")
        truth.append(512 * 100 / (ends[120] - ends[20]).total_seconds())
    return truth


def _duplicates(result) -> list[str]:
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    return list(dup["reason"])


@pytest.mark.parametrize("res_us, base", [
    ((10 ** 6,) * 3, 2.0),  # attack16 d8: all at whole seconds, 2 s an iteration
    ((1000, 10 ** 6, 10 ** 6), 2.0),  # d7c: ms, then whole seconds
    ((1, 10 ** 5, 10 ** 5), 1.0),  # d7: us, then 100 ms, 1 s an iteration
    ((1, 10 ** 5, 10 ** 5), 0.5),  # d7b
], ids=["s_s_s", "ms_s_s", "us_100ms_100ms", "us_100ms_100ms_fast"])
def test_reruns_at_coarse_stamps_are_counted_and_flagged(tmp_path, res_us, base):
    """Before: 1 or 2 runs of 3 (`duplicate_run: ... counted once`); a rerun at these
    stamps strays from another by 5-12 ms over 150 lines, inside one rounding."""
    truth = _reruns(tmp_path / "1n4g", res_us, base)
    result = parse_paths([tmp_path], cache=False)
    reasons = _duplicates(result)
    assert reasons and all(UNTOLD in r and r.endswith("both counted") for r in reasons)
    [row] = summarize(result, method="window").to_dict("records")
    assert row["repeats"] == 3
    assert row["throughput_median"] == pytest.approx(sorted(truth)[1], rel=0.01)
    with pytest.raises(LogProblemError, match="duplicate_run"):  # --strict fails on it
        parse_paths([tmp_path], cache=False, strict=True)


def test_a_copy_whose_rates_tell_is_still_dropped_at_whole_seconds(tmp_path):
    """The same whole-second logs printing each iteration's rate: a rerun prints its own
    rates, so a 4th log with run 1's lines moved 10 minutes is a copy the logs prove."""
    folder = tmp_path / "1n4g"
    _reruns(folder, (10 ** 6,) * 3, rate=True)
    text = (folder / f"{STEM}1.log").read_text()
    (folder / f"{STEM}4.log").write_text(re.sub(
        r"20:(\d\d):", lambda m: f"21:{m[1]}:", text))  # an hour later
    result = parse_paths([tmp_path], cache=False)
    [reason] = _duplicates(result)
    assert UNTOLD not in reason and reason.endswith("counted once")
    [row] = summarize(result, method="window").to_dict("records")
    assert row["repeats"] == 3


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def _sides(tmp_path: Path) -> tuple[Path, list[float], Path, list[float]]:
    """BASE at microsecond stamps; NEW, the same program 5 % slower with its own jitter, at
    100 ms stamps (attack16 c2: a new logger format)."""
    base, new = tmp_path / "base", tmp_path / "new"
    slow = _reruns(new / "1n4g", (10 ** 5,) * 3, 1.0, (1.05, 1.054, 1.047), seed=200)
    return base, _reruns(base / "1n4g", (1,) * 3, 1.0), new, slow


def test_compare_judges_reruns_at_coarser_stamps_by_their_runs(tmp_path):
    """Before: `not re-measured`, exit 4, NEW's three runs left out as copies of BASE's."""
    base, fast, new, slow = _sides(tmp_path)
    status, out, err = _cli("compare", base, new, "--method", "window", "--format", "json")
    [row] = pd.DataFrame(json.loads(out)).to_dict("records")
    assert status == 1 and row["verdict"] == "slower" and row["new_repeats"] == 3
    truth = sorted(slow)[1] / sorted(fast)[1]
    assert row["ratio"] == pytest.approx(truth, rel=3e-3)
    assert row["flags"] == ("new: 3 of 3 run(s) alike to base runs' logs (copies stating "
                            "another setting, or the logs cannot tell them from reruns made "
                            "deterministic), counted")
    assert err.count(": duplicate_run: ") == 3 and err.count(f"{UNTOLD}) as ") == 3


def test_store_add_stores_reruns_at_coarser_stamps(tmp_path):
    """Before: `copies of stored runs, nothing added`, exit 4; the trend saw no step."""
    base, _, new, _ = _sides(tmp_path)
    store = tmp_path / "store"
    assert _cli("store", "add", base, "--store", store, "--method", "window")[0] == 0
    status, out, err = _cli("store", "add", new, "--store", store, "--method", "window")
    assert status == 0 and out.startswith("added ") and err.count(f"{UNTOLD}) as ") == 3
    status, out, _ = _cli("store", "trend", "--store", store, "--method", "window",
                          "--format", "json")
    assert [r["repeats"] for r in json.loads(out)] == [3, 3]


_STAMP = re.compile(r"^DLL (\S+ \S+)", re.M)


def _stretched(text: str, start: dt.datetime) -> str:
    """Every stamp 0.97 times as far from `start`, and 3 days later."""
    return _STAMP.sub(lambda m: "DLL " + (start + dt.timedelta(days=3) + (
        dt.datetime.fromisoformat(m[1]) - start) * 0.97).strftime("%Y-%m-%d %H:%M:%S.%f"), text)


def test_compare_names_a_copy_whose_dump_restates_a_key(tmp_path):
    """attack16 q2: NEW = the bundled runs 1-3 stretched x0.97, rates / 0.97, moved 3 days,
    `device_name : NVIDIA H200` restated `NVIDIA H200 141GB`. Before: `faster +3.09 %`,
    exit 0, and nothing said the logs are BASE's; now each is a `duplicate_run` naming the
    key, counted (another stated setting is another campaign), the case flagged."""
    base, new = tmp_path / "base" / "1n4g", tmp_path / "new" / "1n4g"
    base.mkdir(parents=True)
    new.mkdir(parents=True)
    for run in (1, 2, 3):
        log = RN50.with_name(f"{STEM}{run}.log")
        shutil.copy(log, base)
        text = log.read_text()
        text = _stretched(text, dt.datetime.fromisoformat(_STAMP.search(text)[1]))
        text = re.sub(r"(?<=total_ips : )([\d.]+)", lambda m: f"{float(m[1]) / 0.97:.2f}", text)
        (new / log.name).write_text(text.replace("device_name : NVIDIA H200 ",
                                                 "device_name : NVIDIA H200 141GB "))
    status, out, err = _cli("compare", base.parent, new.parent, "--method", "window",
                            "--format", "json")
    [row] = pd.DataFrame(json.loads(out)).to_dict("records")
    assert status == 0 and row["new_repeats"] == 3 and row["flags"].startswith("new: 3 of 3")
    assert err.count("though it states another device_name: counted as another "
                     "campaign's run") == 3
