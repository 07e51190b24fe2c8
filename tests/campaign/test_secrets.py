"""No secret reaches a file a campaign or `dlperf env` writes (issue 9, item 14).

The variables that leaked before are planted in the environment of a real `dlperf run` (local
backend, the built-in workload on CPU, executed through the launch notebook) together with a
spec whose ``env`` and ``options`` hold credentials; then every file written is searched for
every secret value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DLPERF = [sys.executable, "-m", "analysis"]
pytestmark = pytest.mark.slow

#: name -> secret value; each value holds a marker no other text contains
PLANTED = {
    "DLPERF_DB": "mysql://root:S3CRET-db@h",
    "CUDA_API_CREDENTIAL": "S3CRET-cuda-cred",
    "SLURM_JOB_PASS": "S3CRET-slurm-pass",
    "TORCH_HUB_AUTH": "S3CRET-hub-auth",
    "OMP_PASS": "S3CRET-omp-pass",
    "HTTPS_PROXY": "http://proxyuser:S3CRET-proxy@proxy.example:3128",
    "MY_PASSWD": "S3CRET-my-passwd",
    "NCCL_API_KEY": "S3CRET-nccl-key",
}
SPEC_ENV = {
    "DB_URL": "postgres://admin:S3CRET-spec-db@db/x",
    "API_TOKEN": "S3CRET-spec-token",
    "NCCL_DEBUG_FILE": "/tmp/nccl.%h.log",  # a location, kept
    "GLOO_SOCKET_IFNAME": "lo",
}
MARK = "S3CRET"


def spec_text() -> str:
    return yaml.safe_dump({
        "name": "secrets", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [2],
        "devices": ["1n1g"], "repeats": 1, "iterations": 4, "timeout": 300, "retries": 0,
        "env": SPEC_ENV, "options": {"hub_token": "S3CRET-option-token"},
    })


def leaks(folder: Path) -> dict[str, list[str]]:
    """file -> the lines that contain a secret marker, for every file under `folder`."""
    found = {}
    for p in folder.rglob("*"):
        if p.is_file():
            lines = [x[:200] for x in p.read_text(errors="replace").splitlines() if MARK in x]
            if lines:
                found[str(p.relative_to(folder))] = lines
    return found


def test_campaign_and_env_records_never_hold_a_secret(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text())
    out = tmp_path / "OUT"
    env = {**os.environ, **PLANTED}
    dry = subprocess.run([*DLPERF, "run", str(spec), "-o", str(out), "--dry-run"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert MARK not in dry.stdout + dry.stderr
    assert "DB_URL=postgres://admin:***@db/x" in dry.stdout and "API_TOKEN=***" in dry.stdout

    res = subprocess.run([*DLPERF, "run", str(spec), "-o", str(out), "--no-progress"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=500)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert MARK not in res.stdout + res.stderr
    env_json = out / "dlperf-env.json"
    rec = subprocess.run([*DLPERF, "env", "-o", str(env_json)], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=120)
    assert rec.returncode == 0, rec.stderr[-2000:]

    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    for must in ("1n1g/resnet50_b2_fp32_1.done", "campaign.yaml", "status.json",
                 "00_launch.ipynb", "1n1g/resnet50_b2_fp32_1.node0.env.json", "dlperf-env.json"):
        assert must in written, sorted(written)
    assert leaks(out) == {}

    # what was kept is still useful: the scrubbed URL, the location, the redacted names
    marker = json.loads((out / "1n1g/resnet50_b2_fp32_1.done").read_text())
    assert marker["env"]["DB_URL"] == "postgres://admin:***@db/x"
    assert marker["env"]["API_TOKEN"] == "***"
    assert marker["env"]["NCCL_DEBUG_FILE"] == "/tmp/nccl.%h.log"
    saved = yaml.safe_load((out / "campaign.yaml").read_text())
    assert saved["env"]["DB_URL"] == "postgres://admin:***@db/x"
    assert saved["options"]["hub_token"] == "***"
    for name in ("node0.env.json",):
        recorded = json.loads((out / f"1n1g/resnet50_b2_fp32_1.{name}").read_text())["env"]
        assert recorded["GLOO_SOCKET_IFNAME"] == "lo"
        assert "DB_URL" not in recorded and "DLPERF_DB" not in recorded
        assert recorded["CUDA_API_CREDENTIAL"] == "***"


def test_a_spec_with_a_password_is_a_usage_error(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text() + "backend: ssh\nhosts: ['admin:S3CRET-host@h1']\n")
    res = subprocess.run([*DLPERF, "run", str(spec), "--dry-run"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 2
    assert "use SSH keys or an agent" in res.stderr and MARK not in res.stdout + res.stderr
