"""SSH backend against two real sshd on loopback; Slurm backend against a real slurmctld +
slurmd + munged (fixtures in conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)

from analysis.campaign.backends.slurm import SlurmError
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def leftovers(marker: str) -> str:
    return subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout


def ssh_spec(sshd, **kw):
    raw = {"name": "sshc", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [2],
           "devices": ["2n1g"], "repeats": 1, "iterations": 8, "backend": "ssh",
           "hosts": sshd["hosts"], "timeout": 240, "retries": 0,
           "ssh": {"key_file": sshd["key"], "connect_timeout": 5,
                   "known_hosts": sshd["known_hosts"],
                   "remote_tmp": f"/tmp/dlperf-ssh-{uuid.uuid4().hex[:6]}"},
           "env": {"GLOO_SOCKET_IFNAME": "lo", "SOME_TOKEN": "hidden-value"}}
    raw.update(kw)
    return from_dict(raw)


def test_ssh_two_hosts_torchrun_rendezvous(sshd_hosts, tmp_path):
    status = Campaign(ssh_spec(sshd_hosts), out_dir=tmp_path).run(progress=False)
    assert list(status["state"]) == ["done"], status.to_string()
    log0 = tmp_path / "2n1g" / "resnet50_b2_fp32_1.log"
    text = log0.read_text()
    assert "world_size : 2" in text and text.count("Iteration:") == 8
    assert (tmp_path / "2n1g" / "resnet50_b2_fp32_1.node1.log").exists()
    for k in (0, 1):  # fetched back over sftp
        assert (tmp_path / "2n1g" / f"resnet50_b2_fp32_1.node{k}.env.json").exists()
    marker = json.loads((tmp_path / "2n1g" / "resnet50_b2_fp32_1.done").read_text())
    assert [n["rc"] for n in marker["nodes"]] == [0, 0]
    assert marker["env"]["SOME_TOKEN"] == "***"
    assert "hidden-value" not in "".join(p.read_text(errors="replace")
                                         for p in tmp_path.rglob("*") if p.is_file())


def test_ssh_refused_host_is_reported_without_hanging(sshd_hosts, tmp_path):
    hosts = [sshd_hosts["hosts"][0], {"host": "127.0.0.1", "port": free_port(), "user": "root"}]
    t = time.monotonic()
    status = Campaign(ssh_spec(sshd_hosts, hosts=hosts), out_dir=tmp_path).run(progress=False)
    assert time.monotonic() - t < 20
    row = status.iloc[0]
    assert row.state == "failed" and "cannot connect" in row.reason, row.reason
    assert str(hosts[1]["port"]) in row.reason


def test_ssh_timeout_kills_remote_processes(sshd_hosts, tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    spec = ssh_spec(sshd_hosts, workload="test_sleeper", timeout=3,
                    options={"marker": marker, "seconds": 60})
    t = time.monotonic()
    status = Campaign(spec, out_dir=tmp_path).run(progress=False)
    assert time.monotonic() - t < 40
    assert status.iloc[0].state == "failed" and "timeout after 3 s" in status.iloc[0].reason
    time.sleep(0.5)
    assert leftovers(marker) == ""  # killing the ssh client is not enough; the agent did it


def slurm_spec(**kw):
    raw = {"name": "slc", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [2],
           "devices": ["1n2g"], "repeats": 1, "iterations": 8, "backend": "slurm",
           "slurm": {"partition": "debug"}, "timeout": 240, "retries": 0}
    raw.update(kw)
    return from_dict(raw)


def test_slurm_single_node_two_processes(slurm_cluster, tmp_path):
    status = Campaign(slurm_spec(), out_dir=tmp_path).run(progress=False)
    assert list(status["state"]) == ["done"], status.to_string()
    text = (tmp_path / "1n2g" / "resnet50_b2_fp32_1.log").read_text()
    assert "world_size : 2" in text and text.count("Iteration:") == 8
    marker = json.loads((tmp_path / "1n2g" / "resnet50_b2_fp32_1.done").read_text())
    assert marker["job_state"] == "COMPLETED" and marker["nodes"][0]["rc"] == 0
    record = json.loads((tmp_path / "1n2g" / "resnet50_b2_fp32_1.node0.env.json").read_text())
    assert record["env"]["OMP_NUM_THREADS"] == "1"  # the runner's default reached the step
    scripts = list((tmp_path / ".campaign").rglob("job.sbatch"))
    assert scripts and all(p.stat().st_mode & 0o077 == 0 for p in scripts)  # args hold secrets


def test_slurm_timeout_cancels_the_job(slurm_cluster, tmp_path):
    marker = f"dlperf-t-{uuid.uuid4().hex[:8]}"
    spec = slurm_spec(workload="test_sleeper", timeout=3, options={"marker": marker,
                                                                    "seconds": 60})
    status = Campaign(spec, out_dir=tmp_path).run(progress=False)
    row = status.iloc[0]
    assert row.state == "failed" and "timeout after 3 s" in row.reason, row.reason
    job = json.loads((tmp_path / f"{row.run_id}.done").read_text())["job_id"]
    assert subprocess.run(["squeue", "-h", "-j", job], capture_output=True,
                          text=True).stdout.strip() == ""
    time.sleep(0.5)
    assert leftovers(marker) == ""


def test_slurm_output_folder_with_percent_and_space(slurm_cluster, tmp_path):
    """Slurm expands %j, %N, ... in --output file names: a folder named '%j' is not a
    pattern (the job failed with exit code 53, its log nowhere)."""
    out = tmp_path / "run 100% %j"
    spec = slurm_spec(workload="test_sleeper", options={"marker": "pct", "seconds": 1})
    status = Campaign(spec, out_dir=out).run(progress=False)
    assert list(status["state"]) == ["done"], status.to_string()
    assert "Iteration:" in (out / "1n2g" / "resnet50_b2_fp32_1.log").read_text()
    assert (out / ".campaign" / "runs" / "1n2g" / "resnet50_b2_fp32_1" / "job.stdout").exists()


def test_slurm_output_folder_with_backslash_is_refused(tmp_path):
    """Slurm drops backslashes from --output names: refused before anything is submitted."""
    with pytest.raises(SlurmError, match=r"backslash"):
        Campaign(slurm_spec(), out_dir=tmp_path / "a\\b").run(progress=False)
    assert not (tmp_path / "a\\b" / "1n2g").exists()


def test_ssh_refuses_a_remote_tmp_that_another_user_can_write(sshd_hosts, tmp_path):
    """The agent runs as a script from remote_tmp (default /tmp/dlperf-campaign-<name>), so
    its folder comes first on sys.path: another user who made that folder first and put an
    argparse.py in it ran code as the campaign's user."""
    planted = tmp_path / "pwned"
    d = Path(f"/tmp/dlperf-plant-{uuid.uuid4().hex[:8]}")
    d.mkdir(mode=0o777)
    d.chmod(0o777)
    os.chown(d, 65534, 65534)  # nobody
    (d / "argparse.py").write_text(f"open({str(planted)!r}, 'w').write('x')\n")
    try:
        spec = ssh_spec(sshd_hosts, workload="test_sleeper",
                        options={"marker": "plant", "seconds": 1})
        spec.ssh["remote_tmp"] = str(d)
        status = Campaign(spec, out_dir=tmp_path / "out").run(progress=False)
    finally:
        shutil.rmtree(d)
    row = status.iloc[0]
    assert not planted.exists()
    assert row.state == "failed" and str(d) in row.reason and "another user" in row.reason, \
        row.reason


def test_slurm_job_that_never_starts_is_cancelled_after_start_timeout(slurm_cluster, tmp_path):
    """A job that cannot start (here --begin an hour later) was waited for forever: now it is
    cancelled after slurm.start_timeout, the run fails naming the job, its state and Slurm's
    reason, and the campaign goes on to the next run."""
    spec = slurm_spec(workload="test_sleeper", repeats=2, options={"seconds": 1},
                      slurm={"partition": "debug", "start_timeout": 2,
                             "extra_args": ["--begin=now+1hour"]})
    t = time.monotonic()
    status = Campaign(spec, out_dir=tmp_path).run(progress=False)
    assert time.monotonic() - t < 40
    assert list(status["state"]) == ["failed", "failed"], status.to_string()
    for row in status.itertuples():
        marker = json.loads((tmp_path / f"{row.run_id}.done").read_text())
        job = marker["job_id"]
        assert f"slurm job {job} did not start within 2 s" in row.reason, row.reason
        assert "PENDING (BeginTime)" in row.reason, row.reason
        assert marker["pending_reason"] == "BeginTime"
        assert "{{" not in json.dumps(marker)  # no placeholder: the job ran on no host
        assert marker["nodes"][0]["host"] == f"<DLPERF_MASTER_ADDR of slurm job {job}: not known>"
        assert subprocess.run(["squeue", "-h", "-j", job], capture_output=True,
                              text=True).stdout.strip() == ""


def test_slurm_job_that_never_starts_is_not_retried(slurm_cluster, tmp_path):
    """With retries, a held job was cancelled after slurm.start_timeout, submitted again and
    waited for again (retries + 1 times): a job that cannot start is not a transient failure,
    so it is submitted once and its reason says why it was not retried."""
    name = f"held{uuid.uuid4().hex[:8]}"
    spec = slurm_spec(name=name, workload="test_sleeper", retries=2, options={"seconds": 1},
                      slurm={"partition": "debug", "start_timeout": 2,
                             "extra_args": ["--hold"]})
    row = Campaign(spec, out_dir=tmp_path).run(progress=False).iloc[0]
    assert row.state == "failed" and row.attempts == 1, row.reason
    assert "did not start within 2 s (slurm.start_timeout): PENDING (JobHeldUser); " \
           "cancelled; not retried: a job that did not start within slurm.start_timeout is " \
           "not a transient failure: another would wait 2 s again" in row.reason, row.reason
    marker = json.loads((tmp_path / f"{row.run_id}.done").read_text())
    assert marker["attempts_total"] == 1 and marker["pending_reason"] == "JobHeldUser"
    jobs = subprocess.run(["scontrol", "-o", "show", "jobs"], capture_output=True,
                          text=True).stdout  # ended jobs stay listed for MinJobAge (300 s)
    assert jobs.count(f"JobName=dlperf-{name} ") == 1, jobs


def test_slurm_job_pending_past_the_time_budget_leaves_the_run_pending(slurm_cluster,
                                                                      tmp_path):
    """Under --time-budget, a job still queued when it could no longer end in time is
    cancelled and its run stays pending (nothing ran); the start timeout is not waited for."""
    spec = slurm_spec(workload="test_sleeper", repeats=2, options={"seconds": 1},
                      slurm={"partition": "debug", "extra_args": ["--hold"]})
    t = time.monotonic()
    status = Campaign(spec, out_dir=tmp_path).run(progress=False, time_budget=3)
    assert time.monotonic() - t < 30
    assert list(status["state"]) == ["pending", "pending"], status.to_string()
    row = status.iloc[0]
    assert "time budget reached while slurm job" in row.reason, row.reason
    assert "PENDING (JobHeldUser)" in row.reason, row.reason
    assert not (tmp_path / f"{row.run_id}.done").exists()
    job = row.reason.split("slurm job ")[1].split()[0]
    assert subprocess.run(["squeue", "-h", "-j", job], capture_output=True,
                          text=True).stdout.strip() == ""


def test_slurm_failure_reason_and_marker_name_the_host_not_the_placeholder(slurm_cluster,
                                                                          tmp_path):
    """The host placeholder {{DLPERF_MASTER_ADDR}} (expanded only inside the batch script) was
    what the failure reason and the done marker named: 'node 0 ({{DLPERF_MASTER_ADDR}})
    exited with status 3', and the recorded command held the placeholder too."""
    spec = slurm_spec(workload="test_sleeper", options={"fail_node": 0, "seconds": 1},
                      workload_args=["--peer={{DLPERF_MASTER_ADDR}}"])
    row = Campaign(spec, out_dir=tmp_path).run(progress=False).iloc[0]
    host = socket.gethostname().split(".")[0]  # the fixture's NodeName
    assert row.state == "failed" and f"node 0 ({host}) exited with status 3" in row.reason, \
        row.reason
    marker = json.loads((tmp_path / f"{row.run_id}.done").read_text())
    assert "{{DLPERF" not in json.dumps(marker)
    assert marker["nodes"][0]["host"] == host and marker["job_hosts"] == [host]
    assert marker["nodes"][0]["command"][-1] == f"--peer={host}"
    # the batch script still expands it, and the workload got what the marker says
    script = next((tmp_path / ".campaign").rglob("job.sbatch")).read_text()
    assert '--peer="${DLPERF_MASTER_ADDR}"' in script
    [log] = (tmp_path / ".campaign" / "failed").rglob("*.a1.log.failed")
    assert f"args : --peer={host}" in log.read_text()

