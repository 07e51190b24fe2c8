"""Work a `summarize` on a filled cache does not do for each of its thousands of runs: scan
a log without GPU samples for them, or walk the parse's objects with the cyclic collector."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from analysis import gpu_samples
from analysis.parsers.base import ParsedLog


def _training_log() -> ParsedLog:
    parsed = ParsedLog("dll_pytorch")
    parsed.obs.add(line=np.arange(1, 5), metric="throughput", value=np.full(4, 800.0),
                   phase="train", step=np.arange(1, 5),
                   timestamp=1.7e9 + np.arange(4, dtype=float))
    return parsed


def test_a_log_without_gpu_samples_is_not_scanned_for_them(monkeypatch):
    def scanned(block):
        raise AssertionError(f"a block of phase {block['phase']} scanned for GPU samples")

    monkeypatch.setattr(gpu_samples, "_memory", scanned)
    parsed, problems = _training_log(), []
    log = Path("r50_b256_amp_1.log")
    assert gpu_samples.in_run_time(log, parsed, parsed, log, "r", problems) is parsed
    assert problems == []


def test_summarize_keeps_the_collector_off_to_its_end(monkeypatch, capsys):
    """Resumed after the parse, Python's cyclic collector would walk every object the parse
    made (its first passes after a pause see them all as young): `summarize` keeps it off
    through the figures and the summary, and on again after."""
    import gc

    from analysis.cli import main
    from analysis.stats import summary

    seen, real = [], summary.summary_records
    monkeypatch.setattr(summary, "summary_records",
                        lambda *a, **kw: seen.append(gc.isenabled()) or real(*a, **kw))
    folder = Path(__file__).parents[1] / "data/real/paddle_perf_pytorch_resnet"
    assert gc.isenabled()
    assert main(["summarize", str(folder), "--no-cache", "--format", "csv"]) == 0
    assert seen == [False]
    assert gc.isenabled()
    assert "throughput_median" in capsys.readouterr().out
