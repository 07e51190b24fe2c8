"""The devices a TF2 TimeHistory log states (``Detected N devices.``, all workers) against its
path's. The input is the real 1n8g repeat 3 (tests/data/real/dlperf_tf2) made a 2-node job set
up through TF_CONFIG: its dump keeps ``'worker_hosts': None`` while the run says
``Detected 16 devices.``, ``Global batch size: 2048`` and prints twice the examples/second."""

from __future__ import annotations

import re
from pathlib import Path

from analysis.collect import parse_paths
from analysis.stats import run_throughput

ROOT = Path(__file__).resolve().parents[2]
EIGHT_GPU = ROOT / "tests" / "data" / "real" / "dlperf_tf2" / "1n8g" / "rn50_b128_fp32_3.log"


def _double(m: re.Match) -> str:
    return f"{float(m.group(1)) * 2:.2f} examples/second"


def _two_nodes(tmp_path: Path, case: str, detected: bool = True) -> tuple[Path, list[str]]:
    """The real 8-GPU log as one of 16 devices on two nodes, saved under `case`/."""
    text = EIGHT_GPU.read_text()
    assert "'worker_hosts': None" in text and "Detected 8 devices." in text
    text = text.replace("Detected 8 devices.", "Detected 16 devices.")
    text = text.replace("Global batch size: 1024", "Global batch size: 2048")
    text = re.sub(r"(\d+\.\d+) examples/second", _double, text)
    lines = text.splitlines()
    if not detected:
        lines = [ln for ln in lines if "Detected 16 devices." not in ln]
    out = tmp_path / case / "rn50_b128_fp32_1.log"
    out.parent.mkdir(parents=True)
    out.write_text("\n".join(lines) + "\n")
    return out, lines


def _fields(res) -> list:
    return res.runs[["num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device",
                     "global_batch_size"]].iloc[0].tolist()


def test_a_tf_config_job_of_16_devices_under_2n8g_stays_2n8g(tmp_path):
    _two_nodes(tmp_path, "2n8g")
    res = parse_paths([tmp_path], jobs=1)
    assert res.problems.empty
    assert _fields(res) == [2, 8, 16, 128, 2048]
    assert run_throughput(res, "dlperf")["throughput"].iloc[0] == 2458.74 * 2


def test_16_detected_devices_under_1n8g_are_a_conflict_on_their_line(tmp_path):
    log, lines = _two_nodes(tmp_path, "1n8g")
    res = parse_paths([tmp_path], jobs=1)
    conflict = res.problems[res.problems["kind"] == "metadata_conflict"]
    assert len(conflict) == 1
    assert "Detected 16 devices." in lines[int(conflict["line"].iloc[0]) - 1]
    reason = conflict["reason"].iloc[0]
    assert "the path says num_nodes=1" in reason and "num_nodes=2 (its world_size=16)" in reason
    assert _fields(res) == [2, 8, 16, 128, 2048]  # the log's devices: 307 per GPU, not 615


def test_worker_hosts_none_says_nothing_about_the_nodes(tmp_path):
    # without the run's own count the path's two nodes stand: None is no "one node"
    _two_nodes(tmp_path, "2n8g", detected=False)
    res = parse_paths([tmp_path], jobs=1)
    assert res.problems.empty
    assert _fields(res)[:3] == [2, 8, 16]
