"""Inputs of a ninth attack on copies of runs: copies of a run whose stamps are stretched
(x0.96 to x0.98 from the first) or jittered line by line (±0.3 ms, ±2 ms) counted as
repeats, although each prints the run's 150 training lines value for value. Built in
tmp_path from the bundled ResNet-50 campaign (data/raw_logs/rn50_4gpu/1n4g: runs 1-3 give
a DLPerf median of 11,661.87 img/s) and from the parse-speed benchmark's corpus."""

from __future__ import annotations

import datetime as dt
import importlib.util
import random
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
_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{6})?")


def _retimed(text: str, scale: float = 1.0, jitter_us: float = 0.0, seed: int = 5) -> str:
    """Every stamp t moved to t0 + (t - t0) x `scale` (t0 the first stamp), then by up to
    ±`jitter_us` microseconds at random."""
    rng, first = random.Random(seed), dt.datetime.fromisoformat(_STAMP.search(text)[0])

    def edit(m):
        t = first + (dt.datetime.fromisoformat(m[0]) - first) * scale
        t += dt.timedelta(microseconds=rng.uniform(-1, 1) * jitter_us)
        return f"{t:%Y-%m-%d %H:%M:%S.%f}"

    return _STAMP.sub(edit, text)


def _campaign(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for i in (1, 2, 3):
        shutil.copy(RN50 / f"{STEM}{i}.log", folder)
    return folder


def _duplicates(result) -> list[tuple[str, str]]:
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    return list(zip(dup["source"], dup["reason"], strict=True))


@pytest.mark.parametrize("scale, jitter_us, drop_last", [
    (0.98, 0, 0),  # the attack's case 5a
    (1.0005, 0, 0),  # 5e
    (1.0, 300, 0),  # 5b
    (1.0, 2000, 0),  # 5f
    (0.97, 2000, 10),  # stretched, jittered and its last 10 lines lost
])
@pytest.mark.parametrize("dlperf_only", [False, True])
def test_a_stretched_or_jittered_copy_is_one_run(tmp_path, scale, jitter_us, drop_last,
                                                  dlperf_only):
    """Run 1 copied as run 4 with its stamps stretched or jittered was a fourth repeat
    (median 11,664.64 where runs 1-3 give 11,661.87): no stamp pairs with run 1's, but its
    training lines print run 1's values, rates included, iteration for iteration."""
    folder = _campaign(tmp_path / "1n4g")
    lines = _retimed((folder / f"{STEM}1.log").read_text(), scale, jitter_us).splitlines()
    train = [i for i, line in enumerate(lines) if " Iteration: " in line]
    lost = set(train[len(train) - drop_last:])
    (folder / f"{STEM}4.log").write_text(
        "\n".join(line for i, line in enumerate(lines) if i not in lost) + "\n")
    result = parse_paths([tmp_path], cache=False, dlperf_only=dlperf_only)
    [(source, reason)] = _duplicates(result)
    assert source == str(folder / f"{STEM}4.log") and f"1n4g/{STEM}1.log" in reason
    assert f"training values ({150 - drop_last} of 150 iterations' values alike" in reason
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == MEDIAN


def test_three_stretched_copies_are_one_run(tmp_path):
    """The attack's case 5g: three copies of run 1 stretched x0.96, x0.965, x0.97 moved the
    median to 11,865.24 over 6 repeats."""
    folder = _campaign(tmp_path / "1n4g")
    text = (folder / f"{STEM}1.log").read_text()
    for run, scale in ((4, 0.96), (5, 0.965), (6, 0.97)):
        (folder / f"{STEM}{run}.log").write_text(_retimed(text, scale))
    result = parse_paths([tmp_path], cache=False)
    assert sorted(source for source, _ in _duplicates(result)) == [
        str(folder / f"{STEM}{run}.log") for run in (4, 5, 6)]
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == MEDIAN


def test_repeats_of_a_deterministic_run_stay_repeats(tmp_path):
    """A run made deterministic prints the same losses in every repeat: runs 2 and 3 given
    run 1's losses line for line, their rates their own, and three runs printing only the same
    losses at whole-second stamps: no copy among them."""
    folder = _campaign(tmp_path / "a" / "1n4g")
    losses = re.findall(r"train\.loss : \S+", (folder / f"{STEM}1.log").read_text())
    for i in (2, 3):
        log = folder / f"{STEM}{i}.log"
        given = iter(losses)
        log.write_text(re.sub(r"train\.loss : \S+", lambda _, given=given: next(given),
                              log.read_text()))
    plain = tmp_path / "b" / "1n4g"
    plain.mkdir(parents=True)
    for i in (1, 2, 3):
        rng, t = random.Random(i), dt.datetime(2026, 11, 21, 20, 40 + 5 * i)
        text = [f"DLL {t:%Y-%m-%d %H:%M:%S} - PARAMETER batch_size : 128  world_size : 4"]
        for step in range(1, 151):
            t += dt.timedelta(seconds=0.87 * rng.lognormvariate(0, 0.05))
            text.append(f"DLL {t:%Y-%m-%d %H:%M:%S} - Epoch: 0 Iteration: {step}  "
                        f"train.loss : {7.0 - 2.5 * (1 - 0.98 ** step):.4f}")
        (plain / f"{STEM}{i}.log").write_text("\n".join(text) + "\n")
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 6 and not _duplicates(result)


def test_the_parse_speed_corpus_has_no_copies_but_a_stretched_one(tmp_path):
    """The parse-speed corpus turns one real log's lines in turn (logs of one configuration
    starting at the same line print the same losses), each log's rates scaled by its own
    factor: 60 runs, none a copy. A copy of one of them stretched x0.97 is one."""
    spec = importlib.util.spec_from_file_location("parse_speed",
                                                  ROOT / "benchmarks" / "parse_speed.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    corpus.make_corpus(tmp_path, 60, 60)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 60 and not _duplicates(result)
    source = tmp_path / "1n8g" / "r50_b256_amp_1.log"
    copy = source.with_name("r50_b256_amp_12.log")
    copy.write_text(_retimed(source.read_text(), 0.97))
    [(dup, reason)] = _duplicates(parse_paths([tmp_path], cache=False))
    assert dup == str(copy) and "training values (60 of 60 iterations' values alike" in reason


def test_fixtures_edited_from_one_another_stay_apart():
    """The OneFlow fixtures share their stamps, not their values."""
    result = parse_paths([ROOT / "tests" / "data" / "oneflow_cnn"], cache=False)
    assert not _duplicates(result)
