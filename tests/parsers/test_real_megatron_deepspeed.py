"""Two whole Megatron-DeepSpeed example logs (tests/data/real/megatron_deepspeed_examples/
SOURCE): the per-run figures as the logs print them, and a true reason where a method has
none."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats import run_throughput

FOLDER = Path(__file__).resolve().parents[1] / "data" / "real" / "megatron_deepspeed_examples"
MOE = FOLDER / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4.log.gz"
ORIGIN = FOLDER / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4_origin.log.gz"
#: (log, printed latencies of iterations 10..120 in seconds, last iteration)
PRINTED = [
    (MOE, [0.942, 0.5868, 0.584, 0.5862, 0.5839, 0.5874, 0.582, 0.5836, 0.5817, 0.5821, 0.9069,
           0.5915], 120),
    (ORIGIN, [0.9181, 0.5761, 0.5777, 0.5821, 0.5785, 0.5777, 0.5808, 0.5759, 0.5759, 0.5842,
              0.8968, 0.5803], 160),
]


@pytest.mark.parametrize(("path", "latencies", "last"), PRINTED, ids=["moe", "origin"])
def test_the_printed_iteration_lines(path, latencies, last):
    result = parse_paths([path], jobs=1)
    assert result.runs["family"].tolist() == ["megatron"]
    o = result.observations
    lat = o[(o["phase"] == M.TRAIN) & (o["metric"] == M.LATENCY)].sort_values("step")
    assert lat["value"].tolist()[:12] == pytest.approx(latencies, abs=1e-12)
    assert lat["step"].tolist() == list(range(10, last + 1, 10))
    batch = o[o["metric"] == M.GLOBAL_BATCH]["value"]
    assert set(batch) == {256.0}


#: The latency of iteration 130 of the second log (the window runs on to it).
ORIGIN_130 = 0.5825


@pytest.mark.parametrize(("path", "latencies", "last"), PRINTED, ids=["moe", "origin"])
def test_per_run_figures_from_the_printed_latencies(path, latencies, last):
    """window: global batch / the mean printed latency of iterations 21-120 (intervals 30 to
    120) less the interval 100 -> 110, which holds the validation the logs print after
    iteration 100 (`validation loss at iteration 100`, eval_interval 100: Megatron's timer
    runs across it, 906.9 / 896.8 ms against ~585), the window run on by its 10 iterations as
    far as the log goes (to 130 in the second log, the first ends at 120); dlperf: global
    batch / the median printed latency after the first interval."""
    result = parse_paths([path], jobs=1)
    window = run_throughput(result, "window").iloc[0]
    counted = latencies[2:10] + latencies[11:12] + ([ORIGIN_130] if path == ORIGIN else [])
    assert window["throughput"] == pytest.approx(256 / (sum(counted) / len(counted)), rel=1e-12)
    assert "1 interval(s) inside the window hold evaluation lines" in window["method"]
    assert window["problem_kind"] == ""
    dlperf = run_throughput(result, "dlperf").iloc[0]
    lat = result.observations
    printed = lat[lat["metric"] == M.LATENCY].sort_values("step")["value"].to_numpy()[1:]
    assert dlperf["throughput"] == pytest.approx(256 / float(sorted(printed)[len(printed) // 2])
                                                 if len(printed) % 2 else
                                                 256 / ((sorted(printed)[len(printed) // 2 - 1]
                                                         + sorted(printed)[len(printed) // 2]) / 2),
                                                 rel=1e-12)


def test_reported_gives_a_true_reason():
    """The iteration lines print no samples/s; DeepSpeed's timer lines do, and are not read:
    the reason says both and is not `truncated`."""
    assert b"CurrSamplesPerSec=" in __import__("gzip").decompress(MOE.read_bytes())
    row = run_throughput(parse_paths([MOE], jobs=1), "reported").iloc[0]
    assert row["problem_kind"] == "method_fallback"
    assert row["problem"].startswith("Megatron's iteration lines print no throughput in samples/s")
    assert "SamplesPerSec timer lines" in row["problem"] and "--method window" in row["problem"]


@pytest.mark.parametrize("path", [MOE, ORIGIN], ids=["moe", "origin"])
def test_nodes_and_gpus_from_the_deepspeed_launcher_line(path):
    """`[launch.py:142:main] nnodes=1, num_local_procs=8, node_rank=0`: the run's fields,
    no missing_metadata problem."""
    result = parse_paths([path], jobs=1)
    run = result.runs.iloc[0]
    assert (run["num_nodes"], run["gpus_per_node"], run["num_devices"]) == (1, 8, 8)
    assert run["batch_size_per_device"] == 4 and run["global_batch_size"] == 256
    assert "missing_metadata" not in set(result.problems["kind"])
