"""Faults: a node failing, a run killed mid-way, a timeout, an interrupted and resumed
campaign, secrets (real processes of the test workload in sleeper.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)
import yaml

from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict

ROOT = Path(__file__).resolve().parent
pytestmark = pytest.mark.slow


def leftovers(marker: str) -> str:
    return subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout


def spec(marker, **kw):
    raw = {"name": "f", "workload": "test_sleeper", "precisions": ["fp32"], "batch_sizes": [1],
           "devices": ["1n1g"], "repeats": 1, "iterations": 10, "retries": 0,
           "options": {"marker": marker, "seconds": 0.3}}
    opts = kw.pop("options", {})
    raw.update(kw)
    raw["options"].update(opts)
    return from_dict(raw)


def test_failing_node_stops_the_others_and_is_recorded(tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    s = spec(marker, devices=["2n1g"], retries=1, options={"seconds": 60, "fail_node": 1})
    t = time.monotonic()
    status = Campaign(s, out_dir=tmp_path).run(progress=False)
    assert time.monotonic() - t < 45  # node 0 (60 s) was stopped when node 1 failed
    row = status.iloc[0]
    assert row.state == "failed" and row.attempts == 2
    assert "exited with status" in row.reason
    done = json.loads((tmp_path / "2n1g" / "resnet50_b1_fp32_1.done").read_text())
    assert done["ok"] is False and done["attempts_total"] == 2
    assert not (tmp_path / "2n1g" / "resnet50_b1_fp32_1.log").exists()
    assert len(list((tmp_path / ".campaign" / "failed").rglob("*.failed"))) >= 4
    assert leftovers(marker) == ""


def _kill_soon(marker: str, which) -> None:
    """SIGKILL, from another thread, the first process of the run that `which(cmdline)`
    selects, as soon as it exists."""
    import threading

    def kill():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for line in leftovers(marker).splitlines():
                pid, cmd = line.split(" ", 1)
                if which(cmd):
                    time.sleep(0.3)
                    os.kill(int(pid), signal.SIGKILL)
                    return
            time.sleep(0.1)

    threading.Thread(target=kill, daemon=True).start()


@pytest.mark.parametrize("victim", ["workload", "agent"])
def test_run_killed_midway_is_failed_with_reason(victim, tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    c = Campaign(spec(marker, options={"seconds": 30}), out_dir=tmp_path)
    if victim == "workload":
        _kill_soon(marker, lambda cmd: "node.py" not in cmd and cmd.endswith(" 0"))
    else:
        _kill_soon(marker, lambda cmd: "node.py" in cmd)
    t = time.monotonic()
    status = c.run(progress=False)
    assert time.monotonic() - t < 25
    row = status.iloc[0]
    assert row.state == "failed" and "status 137 (signal 9)" in row.reason, row.reason
    assert not (tmp_path / "1n1g" / "resnet50_b1_fp32_1.log").exists()
    done = json.loads((tmp_path / "1n1g" / "resnet50_b1_fp32_1.done").read_text())
    assert done["ok"] is False and done["state"] == "failed"
    time.sleep(0.5)
    assert leftovers(marker) == ""


def test_timeout_kills_every_process(tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    c = Campaign(spec(marker, devices=["2n1g"], timeout=2, options={"seconds": 60}),
                 out_dir=tmp_path)
    t = time.monotonic()
    status = c.run(progress=False)
    assert time.monotonic() - t < 30
    assert status.iloc[0].state == "failed" and "timeout after 2 s" in status.iloc[0].reason
    assert leftovers(marker) == ""  # grandchildren in their own sessions too


def test_interrupted_campaign_resumes_without_losing_or_rerunning(tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    raw = {"name": "resume", "workload": "test_sleeper", "precisions": ["fp32"],
           "batch_sizes": [1], "devices": ["1n1g"], "repeats": 3, "iterations": 10,
           "retries": 0, "options": {"marker": marker, "seconds": 2.5}}
    spec_path, out = tmp_path / "spec.yaml", tmp_path / "out"
    spec_path.write_text(yaml.safe_dump(raw))
    driver = [sys.executable, str(ROOT / "_driver.py"), str(spec_path), str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT.parents[1])}
    p = subprocess.Popen(driver, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env)
    first = out / "1n1g" / "resnet50_b1_fp32_1.done"
    second_partial = out / "1n1g" / "resnet50_b1_fp32_2.log.partial"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (first.exists() and second_partial.exists()):
        time.sleep(0.1)
    assert first.exists() and second_partial.exists()
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    text, _ = p.communicate(timeout=60)
    assert p.returncode == 130, text
    assert "INTERRUPTED" in text
    assert leftovers(marker) == ""
    status = {r["run_id"]: r for r in json.loads((out / "status.json").read_text())["runs"]}
    assert status["1n1g/resnet50_b1_fp32_1"]["state"] == "done"
    assert status["1n1g/resnet50_b1_fp32_2"]["state"] == "pending"
    assert "interrupted (SIGTERM)" in status["1n1g/resnet50_b1_fp32_2"]["reason"]
    assert status["1n1g/resnet50_b1_fp32_3"]["state"] == "pending"
    assert not (out / "1n1g" / "resnet50_b1_fp32_2.done").exists()
    assert not (out / "1n1g" / "resnet50_b1_fp32_2.log").exists()
    kept = (out / "1n1g" / "resnet50_b1_fp32_1.log").read_bytes()
    kept_done = first.read_bytes()

    again = subprocess.run(driver, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    status = json.loads((out / "status.json").read_text())
    assert status["counts"] == {"done": 3, "failed": 0, "pending": 0}
    assert (out / "1n1g" / "resnet50_b1_fp32_1.log").read_bytes() == kept  # not re-run
    assert first.read_bytes() == kept_done
    assert list((out / ".campaign" / "failed" / "1n1g").glob("resnet50_b1_fp32_2.a*"))


def test_failed_runs_retried_on_rerun_and_finished_logs_never_overwritten(tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    bad = spec(marker, repeats=2, options={"fail_node": 0})
    st = Campaign(bad, out_dir=tmp_path).run(progress=False)
    assert list(st["state"]) == ["failed", "failed"]
    # a finished log with no marker (e.g. copied in by hand) is kept and reported
    (tmp_path / "1n1g" / "resnet50_b1_fp32_2.done").unlink()
    (tmp_path / "1n1g" / "resnet50_b1_fp32_2.log").write_text("hand-made\n")
    good = spec(marker, repeats=2)
    st = Campaign(good, out_dir=tmp_path).run(progress=False)
    assert st.iloc[0].state == "done" and st.iloc[0].attempts == 2
    assert st.iloc[1].state == "failed" and "without a done marker" in st.iloc[1].reason
    assert (tmp_path / "1n1g" / "resnet50_b1_fp32_2.log").read_text() == "hand-made\n"
    no_retry = spec(marker, repeats=2, retry_failed=False)
    assert Campaign(no_retry, out_dir=tmp_path).status().iloc[0].state == "done"


def test_secrets_never_written(tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    s = spec(marker, env={"HF_TOKEN": secret, "DB_PASSWORD": secret, "PLAIN": "visible"})
    status = Campaign(s, out_dir=tmp_path).run(progress=False)
    assert status.iloc[0].state == "done"
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".env.json") for p in files)
    for p in files:
        assert secret not in p.read_text(errors="replace"), p
    done = json.loads((tmp_path / "1n1g" / "resnet50_b1_fp32_1.done").read_text())
    assert done["env"] == {"OMP_NUM_THREADS": "1", "HF_TOKEN": "***", "DB_PASSWORD": "***",
                           "PLAIN": "visible"}


def test_time_budget_leaves_the_rest_pending_and_a_rerun_finishes(tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    s = spec(marker, repeats=3)
    st = Campaign(s, out_dir=tmp_path).run(progress=False, time_budget=0.01)
    assert list(st["state"]) == ["done", "pending", "pending"]  # none recorded: one starts
    first = (tmp_path / "1n1g" / "resnet50_b1_fp32_1.log").stat().st_mtime_ns
    # the recorded run's duration counts: a budget shorter than it starts nothing
    st = Campaign(s, out_dir=tmp_path).run(progress=False, time_budget=0.01)
    assert list(st["state"]) == ["done", "pending", "pending"]
    st = Campaign(s, out_dir=tmp_path).run(progress=False)
    assert list(st["state"]) == ["done", "done", "done"]
    assert (tmp_path / "1n1g" / "resnet50_b1_fp32_1.log").stat().st_mtime_ns == first


@pytest.mark.parametrize("args, why", [
    (["--cwd", "/nonexistent-dlperf", "--", "true"], "working directory '/nonexistent-dlperf'"),
    (["--", "/nonexistent-dlperf/prog"], "cannot start '/nonexistent-dlperf/prog'"),
])
def test_agent_that_cannot_start_its_workload_exits_127_and_says_why(tmp_path, args, why):
    from analysis.campaign.backends import NODE_AGENT

    result = tmp_path / "result"
    p = subprocess.run([sys.executable, str(NODE_AGENT), "--result", str(result), *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 127 and why in p.stderr, p.stderr
    record = json.loads(result.read_text())
    assert record["rc"] == 127 and why in record["stopped"]
