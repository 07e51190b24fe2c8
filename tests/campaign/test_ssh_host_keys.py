"""The ssh backend checks host keys as OpenSSH does, against the real sshd on loopback
(``sshd_hosts`` in conftest.py): fabric alone accepted any key, so a campaign to an unknown
host, or to a man in the middle, sent its workload and environment without a word."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)

from analysis.campaign.backends.ssh import SSHHostKeyError
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import SpecError, from_dict

pytestmark = pytest.mark.slow


def key_spec(sshd, known_hosts, **ssh):
    raw = {"name": "hostkeys", "workload": "test_sleeper", "precisions": ["fp32"],
           "batch_sizes": [2], "devices": ["1n1g"], "repeats": 1, "iterations": 8,
           "backend": "ssh", "hosts": sshd["hosts"][:1], "timeout": 60, "retries": 0,
           "device": "cpu", "options": {"marker": "hostkeys", "seconds": 0.2},
           "ssh": {"key_file": sshd["key"], "connect_timeout": 5, "known_hosts": str(known_hosts),
                   "remote_tmp": f"/tmp/dlperf-hk-{uuid.uuid4().hex[:8]}", **ssh}}
    return from_dict(raw)


def name_of(sshd) -> str:
    return f"[127.0.0.1]:{sshd['hosts'][0]['port']}"


def test_unknown_host_key_is_refused_and_nothing_is_sent(sshd_hosts, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    spec = key_spec(sshd_hosts, known)
    row = Campaign(spec, out_dir=tmp_path / "out").run(progress=False).iloc[0]
    port = sshd_hosts["hosts"][0]["port"]
    assert row.state == "failed", row.reason
    assert f"127.0.0.1:{port}" in row.reason and "is not known" in row.reason, row.reason
    assert f"ssh-keyscan -p {port} 127.0.0.1 >> {known}" in row.reason, row.reason
    assert "\n" not in row.reason
    assert not Path(spec.ssh["remote_tmp"]).exists()  # the agent was never copied
    assert known.read_text() == ""  # strict: nothing added


def test_unknown_host_key_stops_the_gpu_probe(sshd_hosts, tmp_path):
    """device auto asks host 0 for its GPUs first: a refused key is an error there, not
    '0 GPUs, run on CPU'."""
    spec = key_spec(sshd_hosts, tmp_path / "none")
    spec.device = "auto"
    with pytest.raises(SSHHostKeyError, match=r"is not known.*ssh-keyscan"):
        Campaign(spec, out_dir=tmp_path / "out").run(progress=False)


def test_known_host_key_connects(sshd_hosts, tmp_path):
    before = Path(sshd_hosts["known_hosts"]).read_text()
    row = Campaign(key_spec(sshd_hosts, sshd_hosts["known_hosts"]),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "done", row.reason
    assert Path(sshd_hosts["known_hosts"]).read_text() == before


@pytest.mark.parametrize("mode", ["strict", "accept-new"])
def test_changed_host_key_is_always_refused(sshd_hosts, tmp_path, mode):
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)],
                   check=True)
    known = tmp_path / "known_hosts"
    known.write_text(f"{name_of(sshd_hosts)} "
                     + " ".join(Path(f"{other}.pub").read_text().split()[:2]) + "\n")
    spec = key_spec(sshd_hosts, known, host_key_checking=mode)
    row = Campaign(spec, out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "failed" and "HOST KEY CHANGED" in row.reason, row.reason
    assert name_of(sshd_hosts) in row.reason and "ssh-keygen -R" in row.reason, row.reason
    assert not Path(spec.ssh["remote_tmp"]).exists()


def test_accept_new_adds_the_key_and_records_it(sshd_hosts, tmp_path, capsys):
    known = tmp_path / "ssh" / "known_hosts"  # neither file nor folder exists yet
    row = Campaign(key_spec(sshd_hosts, known, host_key_checking="accept-new"),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "done", row.reason
    assert known.read_text() == f"{name_of(sshd_hosts)} {sshd_hosts['host_pub']}\n"
    assert known.stat().st_mode & 0o077 == 0
    assert f"new host key of {name_of(sshd_hosts)}" in capsys.readouterr().err
    marker = json.loads((tmp_path / "out" / f"{row.run_id}.done").read_text())
    [added] = marker["host_keys_accepted"]
    assert added["host"] == name_of(sshd_hosts) and added["key"].startswith("ssh-ed25519 SHA256:")
    # the key is known now: a strict campaign connects, and nothing is added twice
    row = Campaign(key_spec(sshd_hosts, known), out_dir=tmp_path / "out2").run(
        progress=False).iloc[0]
    assert row.state == "done", row.reason
    assert len(known.read_text().splitlines()) == 1


def test_host_key_checking_takes_only_known_modes():
    with pytest.raises(SpecError, match=r"'ssh.host_key_checking'.*strict, accept-new"):
        from_dict({"name": "x", "workload": "builtin", "precisions": ["fp32"],
                   "batch_sizes": [1], "devices": ["1n1g"], "backend": "ssh",
                   "hosts": ["h"], "ssh": {"host_key_checking": "no"}})
