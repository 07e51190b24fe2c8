"""`dlperf run` as a process: one run per output folder, Ctrl-C and kill -9 of the controller,
progress output when redirected, the dry run's GPU warning (issue 9, items 8, 9, 18, 21, 23)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)
import yaml

from analysis.campaign.node import alive, descendants
from analysis.campaign.records import CampaignBusy, campaign_lock
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict

ROOT = Path(__file__).resolve().parents[2]
DLPERF = [sys.executable, "-m", "analysis"]
pytestmark = pytest.mark.slow


def long_spec(tmp_path: Path, devices: str) -> Path:
    """A built-in CPU run that lasts until it is stopped."""
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump({
        "name": "long", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [2],
        "devices": [devices], "repeats": 1, "iterations": 100000, "retries": 0,
        "timeout": 600}))
    return path


def start_run(spec: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([*DLPERF, "run", str(spec), "-o", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_iterations(log: Path, proc: subprocess.Popen, n: int = 3, timeout: float = 240):
    """Until the run's partial log shows `n` training iterations (its workers are running)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text(errors="replace").count(" Iteration: ") >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"dlperf run ended early: {proc.communicate()}")
        time.sleep(0.3)
    pytest.fail(f"no {n} iterations in {log} after {timeout} s")


def test_second_run_is_refused_while_the_first_runs_and_ctrl_c_leaves_it_pending(tmp_path):
    out = tmp_path / "OUT"
    spec = long_spec(tmp_path, "1n1g")
    partial = out / "1n1g" / "resnet50_b2_fp32_1.log.partial"
    first = start_run(spec, out)
    try:
        wait_for_iterations(partial, first)
        t0 = time.monotonic()
        second = subprocess.run([*DLPERF, "run", str(spec), "-o", str(out), "--no-progress"],
                                cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert second.returncode == 1, second.stdout + second.stderr
        assert time.monotonic() - t0 < 60  # refused at once, not after waiting
        err = second.stderr.strip().splitlines()
        assert len(err) == 1 and "in use by another `dlperf run`" in err[0], second.stderr
        assert f"pid {first.pid} on host {socket.gethostname()}" in err[0]
        assert "Traceback" not in second.stderr
        # the first run's live files are untouched and it goes on
        assert partial.exists() and not (out / ".campaign" / "failed").exists()
        assert not (out / "1n1g" / "resnet50_b2_fp32_1.done").exists()
        assert first.poll() is None
        before = partial.read_text().count(" Iteration: ")
        time.sleep(2)
        assert partial.read_text().count(" Iteration: ") > before

        # Ctrl-C reaches the runner directly: nodes stopped, run pending, record written
        tree = descendants(first.pid)
        first.send_signal(signal.SIGINT)
        text, errs = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, text + errs
    assert "0 done, 0 failed, 1 pending" in text
    status = json.loads((out / "status.json").read_text())["runs"][0]
    assert status["state"] == "pending" and "interrupted (SIGINT)" in status["reason"]
    assert not [p for p in tree if alive(p)]
    nb = json.loads((out / "00_launch.ipynb").read_text())
    assert "pending" in json.dumps(nb["cells"])
    with campaign_lock(out):  # released by the first run
        pass


def test_kill_9_of_dlperf_run_leaves_no_agent_or_workload(tmp_path):
    out = tmp_path / "OUT"
    run = start_run(long_spec(tmp_path, "1n2g"), out)
    try:
        wait_for_iterations(out / "1n2g" / "resnet50_b2_fp32_1.log.partial", run)
        tree = descendants(run.pid)
        cmds = " ".join(Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")
                        for p in tree if alive(p))
        assert "node.py" in cmds and "workloads.resnet" in cmds  # agent, torchrun, workers
        run.kill()
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate(timeout=30)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(alive(p) for p in tree):
        time.sleep(0.2)
    left = [p for p in tree if alive(p)]
    assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]
    with campaign_lock(out):  # the kernel released the dead controller's lock
        pass


def test_lock_refuses_a_second_holder_and_names_it(tmp_path):
    with campaign_lock(tmp_path):
        with pytest.raises(CampaignBusy, match=rf"pid {os.getpid()} on host "):
            with campaign_lock(tmp_path):
                pass
    with campaign_lock(tmp_path):  # free again
        pass


def sleeper_spec(repeats: int):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    return from_dict({"name": "quiet", "workload": "test_sleeper", "precisions": ["fp32"],
                      "batch_sizes": [1], "devices": ["1n1g"], "repeats": repeats,
                      "iterations": 10, "retries": 0,
                      "options": {"marker": marker, "seconds": 0.2}})


def test_redirected_progress_is_one_plain_line_per_run_and_a_rerun_says_what_it_skips(
        tmp_path, capfd):
    spec = sleeper_spec(2)
    Campaign(spec, out_dir=tmp_path).run(progress=True)
    err = capfd.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("quiet: [1/2] 1n1g/resnet50_b1_fp32_1 done in ")
    assert lines[1].startswith("quiet: [2/2] 1n1g/resnet50_b1_fp32_2 done in ")

    for f in (tmp_path / "1n1g").glob("resnet50_b1_fp32_2.*"):  # run 2 is to do again
        f.unlink()
    Campaign(spec, out_dir=tmp_path).run(progress=True)
    lines = capfd.readouterr().err.strip().splitlines()
    assert lines[0] == "quiet: skipping 1 run(s) already done; 1 to run"
    assert lines[1].startswith("quiet: [2/2] 1n1g/resnet50_b1_fp32_2 done in ")
    assert len(lines) == 2


def test_dry_run_warns_once_when_the_spec_asks_for_gpus_and_none_is_visible(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # no GPU visible, whatever the machine
    # a new folder: the default one, the bundled campaign's, was run from another machine's
    # environment, and its refusal is the dry run's too
    gpu = subprocess.run([*DLPERF, "run", "examples/campaigns/rn50_4gpu.yaml", "--dry-run",
                          "-o", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert gpu.returncode == 0, gpu.stderr
    assert gpu.stderr.splitlines() == [
        "warning: campaign rn50_4gpu asks for GPUs (device cuda) but no NVIDIA GPU is visible "
        "on this machine"]
    assert "--device cuda" in gpu.stdout
    cpu = subprocess.run([*DLPERF, "run", "examples/campaigns/smoke.yaml", "--dry-run"],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert cpu.returncode == 0 and "warning" not in cpu.stderr, cpu.stderr
    assert "--device cpu" in cpu.stdout


def test_agent_watching_stdin_returns_the_workload_status_not_an_abort(tmp_path):
    """The agent of an ssh run (--watch-stdin) whose workload ends while the connection is
    still open: its stdin watcher held the buffered stdin's lock at the interpreter's exit,
    which aborted every time ("could not acquire lock for <stdin>", status -6) and failed
    the run (seen as a flaky two-host rendezvous test). It must return the status."""
    for status in (0, 3):
        agent = subprocess.Popen(
            [sys.executable, "-m", "analysis.campaign.node", "--env-stdin", "--watch-stdin",
             "--result", str(tmp_path / f"result{status}.json"), "--",
             sys.executable, "-c", f"raise SystemExit({status})"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        agent.stdin.write(b'{"DLPERF_TEST": "1"}\n')
        agent.stdin.flush()  # and left open, as the ssh channel is
        try:
            assert agent.wait(timeout=60) == status, agent.stderr.read().decode()[-500:]
            assert b"Fatal Python error" not in agent.stderr.read()
        finally:
            agent.stdin.close()
            agent.stdout.close()
            agent.stderr.close()
