"""Local backend end to end with the built-in workload on CPU (torchrun + gloo)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict

ROOT = Path(__file__).resolve().parents[2]
DLPERF = [sys.executable, "-m", "analysis"]
pytestmark = pytest.mark.slow


def dll_lines(path: Path) -> list[str]:
    return [x for x in path.read_text().splitlines() if x.startswith("DLL ") and "Iteration" in x]


def test_smoke_spec_through_cli_then_summarize_then_nothing_to_do(tmp_path):
    out = tmp_path / "OUT"
    r = subprocess.run([*DLPERF, "run", str(ROOT / "examples/campaigns/smoke.yaml"), "-o", str(out),
                        "--no-progress"], capture_output=True, text=True, cwd=ROOT, timeout=400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "4 done, 0 failed, 0 pending" in r.stdout
    for config in ("1n1g", "1n2g"):
        for rep in (1, 2):
            stem = out / config / f"resnet50_b4_fp32_{rep}"
            assert len(dll_lines(stem.with_suffix(".log"))) == 30
            marker = json.loads(stem.with_suffix(".done").read_text())
            assert marker["ok"] and marker["device"] == "cpu"
            assert "reduced size" in marker["device_note"]
            assert marker["nodes"][0]["rc"] == 0
            assert Path(f"{stem}.node0.env.json").exists()
    assert not list(out.rglob("*.partial"))
    assert (out / "00_launch.ipynb").exists() and (out / "campaign.yaml").exists()
    status = json.loads((out / "status.json").read_text())
    assert status["counts"] == {"done": 4, "failed": 0, "pending": 0}

    s = subprocess.run([*DLPERF, "summarize", str(out)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert s.returncode == 0, s.stderr
    rows = [x for x in s.stdout.splitlines() if "resnet50" in x]
    assert len(rows) == 2 and "fp32" in rows[0]  # both cases: 1n1g and 1n2g

    mtimes = {p: p.stat().st_mtime_ns for p in out.rglob("*.log")}
    again = subprocess.run([*DLPERF, "run", str(ROOT / "examples/campaigns/smoke.yaml"), "-o",
                            str(out), "--no-progress"], capture_output=True, text=True, cwd=ROOT,
                           timeout=200)
    assert again.returncode == 0 and "4 done" in again.stdout
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.log")} == mtimes  # nothing re-run


def test_two_nodes_on_this_host_through_torchrun_rendezvous(tmp_path):
    spec = from_dict({"name": "two", "workload": "builtin", "precisions": ["fp32"],
                      "batch_sizes": [2], "devices": ["2n1g"], "repeats": 1, "iterations": 8,
                      "timeout": 240})
    status = Campaign(spec, out_dir=tmp_path).run(progress=False)
    assert list(status["state"]) == ["done"], status.to_string()
    log0 = tmp_path / "2n1g" / "resnet50_b2_fp32_1.log"
    log1 = tmp_path / "2n1g" / "resnet50_b2_fp32_1.node1.log"
    assert len(dll_lines(log0)) == 8 and log1.exists()
    assert "world_size : 2" in log0.read_text() and "num_nodes : 2" in log0.read_text()
    marker = json.loads((tmp_path / "2n1g" / "resnet50_b2_fp32_1.done").read_text())
    assert [n["rc"] for n in marker["nodes"]] == [0, 0]
    ranks = [n["command"][n["command"].index("--node_rank") + 1] for n in marker["nodes"]]
    assert ranks == ["0", "1"]
    for k in (0, 1):
        assert (tmp_path / "2n1g" / f"resnet50_b2_fp32_1.node{k}.env.json").exists()
