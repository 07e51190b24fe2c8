"""MXNet Speedometer lines printed by several nodes (``Node[k]`` of the logger's prefix):
each line's k is its rank, so a run's series is its lowest node's, as rank tags give it in
the other families, and another node's copies are not read as the log appended twice."""

from __future__ import annotations

import datetime as dt
import gzip
import re
from pathlib import Path

import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats import run_throughput

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "mlperf_v1_0_nvidia_mxnet_resnet"
_SPEED = re.compile(rb"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) Node\[0\] (.*\tSpeed: .*)$", re.M)


def _with_node1_copies(data: bytes) -> bytes:
    """Each Node[0] Speed line followed by Node[1]'s, same rate, 5 ms later."""
    def copy(m: re.Match) -> bytes:
        t = dt.datetime.strptime(m.group(1).decode(), "%Y-%m-%d %H:%M:%S,%f")
        t += dt.timedelta(milliseconds=5)
        stamp = t.strftime("%Y-%m-%d %H:%M:%S,").encode() + b"%03d" % (t.microsecond // 1000)
        return m.group(0) + b"\n" + stamp + b" Node[1] " + m.group(2)
    return _SPEED.sub(copy, data)


def _figures(folder: Path) -> dict[str, list[float]]:
    result = parse_paths([folder], jobs=1)
    assert "steps_backwards" not in set(result.problems["kind"])
    return {method: run_throughput(result, method).sort_values("source")["throughput"].tolist()
            for method in ("window", "reported")}


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, Path]:
    plain, doubled = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("doubled")
    for name in ("result_0", "result_2"):
        data = gzip.decompress((REAL / f"{name}.txt.gz").read_bytes())
        (plain / f"{name}.txt").write_bytes(data)
        (doubled / f"{name}.txt").write_bytes(_with_node1_copies(data))
    return plain, doubled


def test_node1_copies_leave_node0s_figures(logs):
    plain, doubled = logs
    assert (doubled / "result_0.txt").read_bytes().count(b"Node[1] Epoch[") == 665
    want = _figures(plain)
    assert want["reported"] == pytest.approx([26761.565, 26686.925], abs=1e-9)
    assert _figures(doubled) == want


def test_each_speed_line_carries_its_nodes_rank(logs):
    result = parse_paths([logs[1] / "result_0.txt"], jobs=1)
    o = result.observations
    speed = o[(o["phase"] == M.TRAIN) & (o["metric"] == M.THROUGHPUT)].sort_values("line")
    assert speed["rank"].fillna(-1).astype(int).tolist() == [0, 1] * 665
    assert (speed["value"].iloc[::2].to_numpy() == speed["value"].iloc[1::2].to_numpy()).all()
