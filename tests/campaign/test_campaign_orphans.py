"""A node agent killed with SIGKILL leaves no process behind: its workload and the workload's
children (in sessions of their own) are killed by whoever started the agent — the local
backend, or ``node.py --kill PIDFILE`` run by the ssh backend on the agent's host.

The agent is killed by its own workload (agent_killer.py) the moment that workload has started
its children, the earliest moment at which there is anything to leave behind.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import agent_killer
import pytest

from analysis.campaign.backends import NODE_AGENT
from analysis.campaign.node import alive, kill_from_pidfile
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict
from analysis.shell import run_command, start_process

pytestmark = pytest.mark.slow


def leftovers(marker: str) -> str:
    return subprocess.run(["pgrep", "-af", f"sleep {marker}"], capture_output=True,
                          text=True).stdout


def wait_for_lines(path: Path, count: int, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(lines := path.read_text().split()) >= count:
            return [int(x) for x in lines]
        time.sleep(0.02)
    raise AssertionError(f"{path} has not {count} pids after {timeout} s")


def start_ticks(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2:].split()[19])


def killer_spec(marker: str, pids: Path, **kw):
    agent_killer.register()
    raw = {"name": "orphans", "workload": "test_agent_killer", "precisions": ["fp32"],
           "batch_sizes": [1], "devices": ["1n1g"], "repeats": 1, "iterations": 10,
           "retries": 0, "timeout": 60, "options": {"marker": marker, "pids": str(pids)}}
    raw.update(kw)
    return from_dict(raw)


def assert_nothing_left(marker: str, pids: Path) -> None:
    workers = wait_for_lines(pids, 2, timeout=1)
    assert [p for p in workers if alive(p)] == []
    assert leftovers(marker) == ""


def test_local_agent_killed_as_its_workload_starts_leaves_nothing(tmp_path):
    marker, pids = agent_killer.new_marker(), tmp_path / "pids"
    try:
        status = Campaign(killer_spec(marker, pids), out_dir=tmp_path / "out").run(
            progress=False)
        row = status.iloc[0]
        assert row.state == "failed" and "status 137 (signal 9)" in row.reason, row.reason
        assert_nothing_left(marker, pids)
    finally:
        subprocess.run(["pkill", "-KILL", "-f", f"sleep {marker}"])


def test_kill_from_pidfile_after_the_agent_was_killed(tmp_path):
    """What ``ssh`` runs on a host whose agent died: the agent's parent (there sshd's shell) has
    reaped it, so only its session still names what runs on."""
    marker, pids, pidfile = agent_killer.new_marker(), tmp_path / "pids", tmp_path / "agent.pid"
    agent = [sys.executable, str(NODE_AGENT), "--pidfile", str(pidfile), "--", "sh", "-c",
             agent_killer.SCRIPT, "sh", marker, str(pids)]
    shell = start_process(["sh", "-c", '"$@"; exit 0', "sh", *agent], new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert shell.wait(30) == 0  # the agent was killed and reaped by the shell
        assert [p for p in wait_for_lines(pids, 2) if alive(p)]  # the sleeps run on
        run_command([sys.executable, str(NODE_AGENT), "--kill", str(pidfile)], timeout=60)
        assert_nothing_left(marker, pids)
    finally:
        subprocess.run(["pkill", "-KILL", "-f", f"sleep {marker}"])


def test_kill_from_pidfile_leaves_a_process_that_reuses_the_pid_alone(tmp_path):
    other = start_process(["sleep", "60"], new_session=True)
    try:
        pidfile = tmp_path / "agent.pid"
        started = start_ticks(other.pid)
        pidfile.write_text(f"{other.pid} {started - 1}\n")  # the agent that had this pid
        assert kill_from_pidfile(str(pidfile), grace=0.5) == 0
        time.sleep(0.2)
        assert alive(other.pid)
        pidfile.write_text(f"{other.pid} {started}\n")
        kill_from_pidfile(str(pidfile), grace=0.5)
        assert not alive(other.pid)
    finally:
        other.kill()
        other.wait()


def test_ssh_agent_killed_as_its_workload_starts_leaves_nothing(sshd_hosts, tmp_path):
    """The agent's exit status comes back at once (its shell reports it and kills what the
    agent left, which would hold ssh's session open) and its session is killed on its host."""
    marker, pids = agent_killer.new_marker(), tmp_path / "pids"
    spec = killer_spec(marker, pids, backend="ssh", hosts=sshd_hosts["hosts"][:1],
                       ssh={"key_file": sshd_hosts["key"], "connect_timeout": 5,
                            "known_hosts": sshd_hosts["known_hosts"],
                            "remote_tmp": str(tmp_path / "remote")})
    try:
        t = time.monotonic()
        status = Campaign(spec, out_dir=tmp_path / "out").run(progress=False)
        assert time.monotonic() - t < 30  # not the timeout (60 s)
        row = status.iloc[0]
        assert row.state == "failed" and "status 137 (signal 9)" in row.reason, row.reason
        assert_nothing_left(marker, pids)
    finally:
        subprocess.run(["pkill", "-KILL", "-f", f"sleep {marker}"])


def test_kill_session_reaches_children_that_left_the_session(tmp_path):
    """Members forked while the walk runs, children in new sessions, grandchildren of those."""
    from analysis.campaign.node import kill_session

    pids = tmp_path / "pids"
    marker = agent_killer.new_marker()
    script = (f'for i in 1 2 3; do setsid sh -c \'sleep {marker} & echo $! >> "$1"; wait\' sh '
              f'"{pids}" & done; while :; do sleep {marker} & echo $! >> "{pids}"; sleep 0.01; '
              'done')
    leader = start_process(["sh", "-c", script], new_session=True)
    try:
        wait_for_lines(pids, 6)
        killed = kill_session(leader.pid)
        assert leader.pid in killed
        left = [p for p in map(int, pids.read_text().split()) if alive(p)]
        assert left == [] and leftovers(marker) == ""
    finally:
        leader.kill()
        leader.wait()
        subprocess.run(["pkill", "-KILL", "-f", f"sleep {marker}"])


def test_slurm_agent_killed_as_its_workload_starts_leaves_nothing(slurm_cluster, tmp_path):
    """The step's ``node.py --supervise`` kills the agent's session once the agent is dead."""
    marker, pids = agent_killer.new_marker(), tmp_path / "pids"
    spec = killer_spec(marker, pids, backend="slurm", slurm={"partition": "debug"})
    try:
        t = time.monotonic()
        status = Campaign(spec, out_dir=tmp_path / "out").run(progress=False)
        elapsed = time.monotonic() - t
        row = status.iloc[0]
        assert row.state == "failed", row.reason
        assert_nothing_left(marker, pids)
        assert elapsed < 40, (elapsed, row.reason)
    finally:
        subprocess.run(["pkill", "-KILL", "-f", f"sleep {marker}"])
