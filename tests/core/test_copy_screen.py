"""The screen before the copy comparison (`duplicate_runs._may_copy`) turns away only pairs
that `_copy_of` calls no copy: copies of a bundled ResNet-50 run (re-stamped, stretched,
reprinted, lines edited around the 10 % a copy may differ by or all of them, stamps
jittered or cut, lines lost) and other runs of its shape, each pair in both orders, in any place."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np

from analysis import duplicate_runs
from analysis import metrics as M
from analysis.collect import _read_file, parse_paths
from analysis.logtext import max_log_bytes
from analysis.parsers.base import ParsedLog

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g" / "resnet50_b128_fp32_1.log"


def _rows(path: Path) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """A log's training iterations, stamps (s) and values by metric."""
    parsed = _read_file(path, None, False, max_log_bytes()).parsed
    blocks = [b for b in parsed.obs.blocks if b["phase"] == M.TRAIN]
    return (np.array(blocks[0]["step"]), np.array(blocks[0]["timestamp"]),
            {b["metric"]: np.array(b["value"], float) for b in blocks})


def _signature(lines, stamps, values) -> duplicate_runs.Signature:
    parsed = ParsedLog("dle")
    n = len(lines)
    for metric, v in values.items():
        parsed.obs.blocks.append({
            "n": n, "phase": M.TRAIN, "metric": metric, "unit": "", "line": np.arange(n),
            "step": np.asarray(lines), "timestamp": np.asarray(stamps, float), "value": v,
            "rank": np.full(n, -1), "device": np.full(n, -1), "epoch": np.zeros(n, np.int64)})
    return duplicate_runs.signature(parsed)


def _variant(rng, lines, stamps, values):
    """A copy of the run edited as copies are, or (one in ten) another run of its shape."""
    lines, stamps, values = lines.copy(), stamps.copy(), {k: v.copy() for k, v in values.items()}
    n = len(lines)
    if rng.random() < 0.1:
        own = rng.lognormal(0, 0.01, n)
        return lines, stamps[0] + np.cumsum(np.r_[0, np.diff(stamps)] * own), {
            k: np.round(v / own, 2) if k == M.THROUGHPUT else v for k, v in values.items()}
    if rng.random() < 0.5:
        stamps = stamps + rng.uniform(-1e4, 1e4)
    if rng.random() < 0.3:  # stretched, its rates reprinted
        c = rng.uniform(0.5, 2)
        stamps = stamps[0] + (stamps - stamps[0]) / c
        if M.THROUGHPUT in values:
            values[M.THROUGHPUT] = np.round(values[M.THROUGHPUT] * c, int(rng.integers(1, 4)))
    if rng.random() < 0.6:  # 0-20 % of the lines edited
        at = rng.choice(n, int(round(n * rng.uniform(0, 0.2))), replace=False)
        metric = rng.choice(sorted(values))
        values[metric][at] = np.round(values[metric][at] * rng.uniform(0.9, 1.1, len(at)), 2)
    if rng.random() < 0.2:  # every value printed anew: its stamps alone tell it
        values = {k: np.round(v * rng.uniform(0.9, 1.1, n), 2) for k, v in values.items()}
    if rng.random() < 0.3:
        stamps = np.round(stamps + rng.integers(-1, 2, n) * 1e-6, 6)
    if rng.random() < 0.2:
        stamps = np.floor(stamps * 1e3) / 1e3
    if rng.random() < 0.15:  # lines lost at either end
        a, b = int(rng.integers(0, n // 3)), n - int(rng.integers(0, n // 3))
        lines, stamps, values = lines[a:b], stamps[a:b], {k: v[a:b] for k, v in values.items()}
    if rng.random() < 0.2:  # no printed rate: the stamps' intervals are timed
        values.pop(M.THROUGHPUT, None)
    return lines, stamps, values


def test_the_screen_turns_away_no_pair_the_comparison_calls_a_copy():
    rng = np.random.default_rng(7)
    run = _rows(RN50)
    told = {(True, True): 0, (False, True): 0, (False, False): 0}
    for _ in range(400):
        original = run if rng.random() < 0.7 else _variant(rng, *run)
        one, two = _signature(*original), _signature(*_variant(rng, *original))
        for x, y in ((one, two), (two, one)):
            may = bool(duplicate_runs._may_copy([(x, y)])[0])
            for elsewhere in (False, True):
                for by_values in (False, True):
                    copy = bool(duplicate_runs._copy_of(x, y, elsewhere, by_values))
                    assert may or not copy, (elsewhere, by_values)
                    told[copy, may] += 1
    assert told[True, True] > 1000 and told[False, False] > 50  # both kinds met


def test_the_speed_corpus_runs_are_looked_up_and_none_compared(tmp_path, monkeypatch):
    """300 logs of the parse-speed corpus share first values with others (candidates of the
    lookup: the hashed keys meet where the keys do) but are no copies: the screen turns every
    candidate away, and `_copy_of` agrees on each."""
    spec = importlib.util.spec_from_file_location("parse_speed",
                                                  ROOT / "benchmarks" / "parse_speed.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    corpus.make_corpus(tmp_path, 300, 60)
    sigs = [_read_file(p, None, False, max_log_bytes()).signature
            for p in sorted(tmp_path.rglob("*.log"))]
    index, found = duplicate_runs._Index(sigs), []
    for n in range(len(sigs)):  # each run kept: every pair sharing a key is met
        found += [(m, n) for m in index.candidates(n)]
        index.add(n)
    keys = [[set(map(tuple, k.T.tolist())) for k in duplicate_runs._keys(s)]
            for s in sigs]  # the keys as they are, not hashed
    assert found == [(m, n) for n in range(len(sigs)) for m in range(n)
                     if keys[m][0] & keys[n][1]]
    pairs = [(sigs[m], sigs[n]) for m, n in found]
    assert len(pairs) >= 5
    assert not duplicate_runs._may_copy(pairs).any()
    assert not any(duplicate_runs._copy_of(a, b, False) for a, b in pairs)
    compared = []
    copy_of = duplicate_runs._copy_of
    monkeypatch.setattr(duplicate_runs, "_copy_of", lambda *a: compared.append(1) or copy_of(*a))
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 300 and not compared


def test_keys_of_nearby_buckets_hash_apart():
    """The index's keys are small whole numbers (ratio buckets either side of 0, intervals)
    or 64-bit digests of values: distinct keys hash apart, so the lookup meets no more
    pairs than the keys do."""
    buckets = np.array(list(itertools.product(range(-4, 5), repeat=duplicate_runs.RATIOS)))
    keys = np.concatenate([
        duplicate_runs._columns("throughput", buckets.T),
        duplicate_runs._columns("values", duplicate_runs._mix(np.arange(5000, dtype=np.uint64))
                                .view(np.int64)[None]),
        duplicate_runs._columns("stamp interval", buckets.T),
        duplicate_runs._columns("intervals", buckets.T[:3])], axis=1)
    assert len(np.unique(duplicate_runs._hashed(keys))) == np.unique(keys, axis=1).shape[1]


def test_a_copy_whose_stamps_sit_one_place_over_is_not_turned_away():
    """A copy renumbered by one (its first line lost, a line added at its end) prints the
    same iterations as the original, each with the stamp and values of the original's next:
    `_copy_of` pairs the stamps one place apart, and so must the screen."""
    lines, stamps, values = _rows(RN50)
    over = (lines, np.r_[stamps[1:], stamps[-1] + 0.05], {k: np.r_[v[1:], v[-1]]
                                                          for k, v in values.items()})
    one, two = _signature(lines, stamps, values), _signature(*over)
    for x, y in ((one, two), (two, one)):
        assert duplicate_runs._copy_of(x, y, False)
        assert duplicate_runs._may_copy([(x, y)])[0]


def test_copies_jittered_or_short_that_the_comparison_tells_are_not_turned_away():
    """A copy whose rates carry a jitter under a rerun's (its losses the same), and a short
    log's stretched copy, both told by `_copy_of`: the screen reads them the same way."""
    rng = np.random.default_rng(3)
    lines, stamps, values = _rows(RN50)
    jittered = {k: np.round(v * (1 + rng.normal(0, 5e-4, len(v))), 2) if k == M.THROUGHPUT
                else v for k, v in values.items()}
    n = 16
    short = (lines[:n], stamps[:n], {k: v[:n] for k, v in values.items()})
    stretched = (lines[:n], stamps[0] + (stamps[:n] - stamps[0]) / 0.97,
                 {k: np.round(v[:n] * 0.97, 2) if k == M.THROUGHPUT else v[:n]
                  for k, v in values.items()})
    for original, copy in (((lines, stamps, values), (lines, stamps + 5.0, jittered)),
                           (short, stretched)):
        one, two = _signature(*original), _signature(*copy)
        for x, y in ((one, two), (two, one)):
            assert duplicate_runs._copy_of(x, y, False)
            assert duplicate_runs._may_copy([(x, y)])[0]


def test_rates_far_apart_give_no_key_and_no_error():
    """Two finite rates whose ratio overflows (1.2345678e308 then 1.2345678e-300) in a log's first
    lines: the log is keyed where it can be, and nothing raises."""
    lines, stamps, values = _rows(RN50)
    for first, second in ((1.2345678e308, 1.2345678e-300), (1.2345678e-300, 1.2345678e308)):
        rates = values[M.THROUGHPUT].copy()
        rates[3:5] = first, second
        keys, near = duplicate_runs._keys(_signature(lines, stamps,
                                                     {**values, M.THROUGHPUT: rates}))
        assert keys.size and near.size
