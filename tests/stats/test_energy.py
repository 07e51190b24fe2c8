"""Energy per run and per case on the real H200 campaign tests/data/energy_h200, recomputed
here from the CSV and the log text without the package's readers."""

from __future__ import annotations

import csv
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import ParseResult, parse_paths
from analysis.stats import run_throughput, summarize
from analysis.stats.energy import run_energy

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "tests" / "data" / "energy_h200"
ALL_GPUS = ROOT / "tests" / "data" / "energy_h200_all_gpus.csv"
_DLL = re.compile(r"^DLL (\S+ \S+) - Epoch: \d+ Iteration: \d+ ", re.M)


def _utc(text: str) -> float:
    return datetime.fromisoformat(text.replace("/", "-")).replace(tzinfo=timezone.utc).timestamp()


def _window(log: Path) -> tuple[float, float]:
    stamps = [_utc(m.group(1)) for m in _DLL.finditer(log.read_text())]
    return min(stamps), max(stamps)


def _by_hand(log: Path, sidecar: Path, gpus: set[int]) -> tuple[float, float]:
    """(energy J, power W) of the run: per GPU the trapezoid over its samples inside the
    window, summed; power: each GPU's energy over the span of its samples, summed."""
    t0, t1 = _window(log)
    samples: dict[int, list[tuple[float, float]]] = {}
    with sidecar.open() as f:
        for row in csv.DictReader(f, skipinitialspace=True):
            t, gpu = _utc(row["timestamp"]), int(row["index"])
            if gpu in gpus and t0 <= t <= t1:
                samples.setdefault(gpu, []).append((t, float(row["power.draw [W]"].split()[0])))
    energy = power = 0.0
    for points in samples.values():
        points.sort()
        joules = sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in zip(points, points[1:]))
        energy += joules
        power += joules / (points[-1][0] - points[0][0])
    assert sorted(samples) == sorted(gpus)
    return energy, power


RUNS = {"1n1g/resnet50_b256_amp_1": {0}, "1n1g/resnet50_b256_amp_2": {0},
        "1n2g/resnet50_b256_amp_1": {0, 1}, "1n2g/resnet50_b256_amp_2": {0, 1}}


def test_run_energy_is_the_trapezoid_over_the_training_window():
    result = parse_paths([CAMPAIGN])
    energy = run_energy(result).set_index("run_id")
    for rid, gpus in RUNS.items():
        joules, watts = _by_hand(CAMPAIGN / f"{rid}.log", CAMPAIGN / f"{rid}.gpu.csv", gpus)
        row = energy.loc[rid]
        assert row["energy_j"] == pytest.approx(joules, rel=1e-9)
        assert row["power_w"] == pytest.approx(watts, rel=1e-9)
        assert row["gpus"] == len(gpus) and row["note"] == ""
        t0, t1 = _window(CAMPAIGN / f"{rid}.log")
        assert row["window_s"] == pytest.approx(t1 - t0)
        # an H200 board draws at most 700 W; training holds it well above idle (~80 W)
        assert 300 * len(gpus) < watts < 700 * len(gpus)
    # the same from the observations frame (a result made from frames, as an export gives),
    # and in the per-run frame
    frames = ParseResult(result.observations, result.runs, result.problems)
    again = run_energy(frames).set_index("run_id")
    assert np.allclose(again.loc[list(RUNS), "energy_j"], energy.loc[list(RUNS), "energy_j"])
    per_run = run_throughput(frames).set_index("run_id")
    assert np.allclose(per_run.loc[list(RUNS), "energy_j"], energy.loc[list(RUNS), "energy_j"])
    assert np.allclose(per_run.loc[list(RUNS), "energy_window_s"], energy.loc[list(RUNS), "window_s"])
    assert (per_run["energy_note"] == "").all()


def test_summary_energy_per_sample_and_samples_per_watt():
    result = parse_paths([CAMPAIGN])
    per_run = run_throughput(result).set_index("run_id")
    summary = summarize(result).set_index("num_devices")
    for devices in (1, 2):
        rids = [r for r, g in RUNS.items() if len(g) == devices]
        power = [_by_hand(CAMPAIGN / f"{r}.log", CAMPAIGN / f"{r}.gpu.csv", RUNS[r])[1] for r in rids]
        thr = [per_run.loc[r, "throughput"] for r in rids]
        row = summary.loc[devices]
        assert row["power_w"] == pytest.approx(np.median(power))
        assert row["energy_per_sample_j"] == pytest.approx(np.median(np.divide(power, thr)))
        assert row["samples_per_s_per_w"] == pytest.approx(np.median(np.divide(thr, power)))
        windows = [np.subtract(*_window(CAMPAIGN / f"{r}.log")[::-1]) for r in rids]
        assert row["energy_window_s"] == pytest.approx(np.median(windows))


def test_a_second_sampler_of_all_gpus_agrees_and_its_other_gpu_is_left_out(tmp_path):
    """During the campaign a second nvidia-smi sampled both GPUs all along; put in place of a
    1-GPU run's own sidecar, its GPU 1 and its samples of other runs are not the run's, and
    the energy it gives agrees with the run's own sampler within 3 %."""
    rid = "1n1g/resnet50_b256_amp_1"
    dest = tmp_path / "1n1g"
    dest.mkdir()
    for f in CAMPAIGN.glob(rid + ".*"):
        shutil.copy(f, dest / f.name)
    shutil.copy(ALL_GPUS, dest / "resnet50_b256_amp_1.gpu.csv")
    result = parse_paths([tmp_path])
    reasons = result.problems.loc[result.problems["kind"] == "foreign_gpu_sample", "reason"]
    assert any("of GPU 1, which the run did not use" in r for r in reasons)
    assert any("taken outside the run's time" in r for r in reasons)
    mine = run_energy(result).set_index("run_id").loc[rid]
    own = run_energy(parse_paths([CAMPAIGN])).set_index("run_id").loc[rid]
    assert mine["gpus"] == 1
    assert mine["energy_j"] == pytest.approx(own["energy_j"], rel=0.03)


def test_power_not_measured_is_no_energy_never_zero(tmp_path):
    rid = "1n2g/resnet50_b256_amp_1"
    dest = tmp_path / "1n2g"
    dest.mkdir()
    for f in CAMPAIGN.glob(rid + ".*"):
        shutil.copy(f, dest / f.name)
    csv_path = dest / "resnet50_b256_amp_1.gpu.csv"
    lines = csv_path.read_text().splitlines()
    # GPU 1 printed [N/A] for power: its energy is unknown, so the run's is too
    csv_path.write_text("\n".join(lines[:1] + [re.sub(r"[\d.]+ W$", "[N/A]", ln)
                                               if ", 1, " in ln else ln for ln in lines[1:]]) + "\n")
    result = parse_paths([tmp_path])
    row = run_energy(result).set_index("run_id").loc[rid]
    assert np.isnan(row["energy_j"]) and np.isnan(row["power_w"])
    assert row["note"] == "power samples of 1 GPU(s), the run used 2"
    assert run_throughput(result).loc[0, "energy_note"] == row["note"]
    summary = summarize(result)
    assert summary["energy_per_sample_j"].isna().all()
    # and with no power column at all (files sampled before power was): no energy, said
    csv_path.write_text("\n".join(",".join(ln.split(",")[:5]) for ln in lines) + "\n")
    row = run_energy(parse_paths([tmp_path])).set_index("run_id").loc[rid]
    assert np.isnan(row["energy_j"]) and row["note"].startswith("no power samples")


def test_the_dlperf_rules_short_read_gives_the_same_energy(tmp_path):
    """`dlperf summarize` reads only the lines a family's rule needs; a log without the
    closing line that makes it read on would stop near iteration 125: a run with GPU samples
    is read whole, so its window and its own samples are the same either way."""
    rid = "1n1g/resnet50_b256_amp_1"
    dest = tmp_path / "1n1g"
    dest.mkdir()
    for f in CAMPAIGN.glob(rid + ".*"):
        shutil.copy(f, dest / f.name)
    log = dest / "resnet50_b256_amp_1.log"
    log.write_text("".join(ln for ln in log.read_text().splitlines(True) if "Summary" not in ln))
    whole, short = (parse_paths([tmp_path], dlperf_only=only) for only in (False, True))
    assert short.problems.empty
    a, b = (summarize(r).iloc[0] for r in (whole, short))
    assert a["energy_window_s"] == b["energy_window_s"] > 30
    assert a["energy_per_sample_j"] == b["energy_per_sample_j"]


def test_samples_covering_part_of_the_window_give_power_but_no_energy(tmp_path):
    """The real 1-GPU run's sidecar cut where 60 % of its window has passed (the sampler
    died): the trapezoid gave ~60 % of the run's energy as the energy of its whole window."""
    rid = "1n1g/resnet50_b256_amp_1"
    dest = tmp_path / "1n1g"
    dest.mkdir()
    for f in CAMPAIGN.glob(rid + ".*"):
        shutil.copy(f, dest / f.name)
    t0, t1 = _window(dest / "resnet50_b256_amp_1.log")
    csv_path = dest / "resnet50_b256_amp_1.gpu.csv"
    lines = csv_path.read_text().splitlines()
    cut = t0 + 0.6 * (t1 - t0)
    csv_path.write_text("\n".join(lines[:1] + [ln for ln in lines[1:]
                                               if _utc(ln.split(",")[0]) <= cut]) + "\n")
    row = run_energy(parse_paths([tmp_path])).set_index("run_id").loc[rid]
    own = run_energy(parse_paths([CAMPAIGN])).set_index("run_id").loc[rid]
    assert np.isnan(row["energy_j"])
    assert row["power_w"] == pytest.approx(own["power_w"], rel=0.05)
    assert f"of the {t1 - t0:.1f} s window (the rest not sampled): power_w is their mean, " \
           "no energy for the window" in row["note"]
    assert row["note"].startswith("GPU 0 of ")
