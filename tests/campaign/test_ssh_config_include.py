"""``Include`` in ssh configs is followed as OpenSSH follows it: a host set up in an included
file (Debian's /etc/ssh/ssh_config includes ssh_config.d/*.conf; many users ~/.ssh/config.d/*)
is reached by the ssh backend as by ``ssh`` (the backend runs ``ssh`` itself), and a config
that ssh cannot read stops the campaign with one line."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)

from analysis.campaign.backends.ssh import SSHConfigError
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict

KEYS = ("hostname", "port", "user", "hostkeyalias")


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def ssh_g(cfg: Path, host: str, home: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, **({"HOME": str(home)} if home else {}))
    return subprocess.run(["ssh", "-F", str(cfg), "-G", host], capture_output=True, text=True,
                          timeout=30, env=env)


def ssh_options(cfg: Path, host: str, home: Path | None = None) -> dict:
    """What ``ssh -G`` resolves for `host` (the reference), for KEYS."""
    r = ssh_g(cfg, host, home)
    assert r.returncode == 0, r.stderr
    pairs = (line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    return {k: v for k, v in pairs if k in KEYS}


def include_spec(sshd, cfg: Path, host: str, **ssh):
    return from_dict({
        "name": "include", "workload": "test_sleeper", "precisions": ["fp32"],
        "batch_sizes": [2], "devices": ["1n1g"], "repeats": 1, "iterations": 8,
        "backend": "ssh", "hosts": [host], "timeout": 60, "retries": 0, "device": "cpu",
        "options": {"marker": "include", "seconds": 0.2},
        "ssh": {"key_file": sshd["key"], "connect_timeout": 5, "config_file": str(cfg),
                "remote_tmp": f"/tmp/dlperf-inc-{uuid.uuid4().hex[:8]}", **ssh}})


def ssh_connects(sshd, cfg: Path, host: str) -> bool:
    r = subprocess.run(["ssh", "-F", str(cfg), "-o", "BatchMode=yes", "-o",
                        "StrictHostKeyChecking=yes", "-i", sshd["key"], host, "true"],
                       capture_output=True, text=True, timeout=30)
    return r.returncode == 0


# -- against the real sshd ------------------------------------------------------------------

@pytest.mark.slow
def test_host_set_up_in_an_included_file_is_reached(sshd_hosts, tmp_path, monkeypatch):
    """HostName, Port, User, HostKeyAlias and UserKnownHostsFile of the host live in a file
    the config includes by a glob: ssh reaches it; the backend looked 'dlperf-inc' up in DNS."""
    monkeypatch.setenv("HOME", str(tmp_path))
    port = sshd_hosts["hosts"][0]["port"]
    known = write(tmp_path / "known_hosts", f"login.cluster {sshd_hosts['host_pub']}\n")
    write(tmp_path / "conf.d" / "10-node.conf",
          f"Host dlperf-inc\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
          f"  HostKeyAlias login.cluster\n  UserKnownHostsFile {known}\n"
          f"  GlobalKnownHostsFile {tmp_path}/none\n")
    cfg = write(tmp_path / "config", f"Include {tmp_path}/conf.d/*.conf\n")
    assert ssh_options(cfg, "dlperf-inc") == {"hostname": "127.0.0.1", "port": str(port),
                                              "user": "root", "hostkeyalias": "login.cluster"}
    assert ssh_connects(sshd_hosts, cfg, "dlperf-inc")
    row = Campaign(include_spec(sshd_hosts, cfg, "dlperf-inc"),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "done", row.reason


@pytest.mark.slow
def test_lines_after_an_include_in_a_host_block_stay_in_that_block(sshd_hosts, tmp_path,
                                                                    monkeypatch):
    """An Include inside `Host 127.0.0.1` applies to that block (the host-key check reads the
    included HostKeyAlias and UserKnownHostsFile), and the `Port` after it still belongs to
    `Host 127.0.0.1`, not to the `Host elsewhere` block the included file opened."""
    monkeypatch.setenv("HOME", str(tmp_path))  # ~/.ssh/known_hosts: empty, as before
    port = sshd_hosts["hosts"][0]["port"]
    known = write(tmp_path / "kh", f"login.cluster {sshd_hosts['host_pub']}\n")
    write(tmp_path / "keys.conf", f"HostKeyAlias login.cluster\nUserKnownHostsFile {known}\n"
                                  f"GlobalKnownHostsFile {tmp_path}/none\n"
                                  "Host elsewhere\n  Port 1\n")
    cfg = write(tmp_path / "config", f"Host 127.0.0.1\n  Include {tmp_path}/keys.conf\n"
                                     f"  Port {port}\n  User root\n")
    assert ssh_options(cfg, "127.0.0.1")["port"] == str(port)
    assert ssh_connects(sshd_hosts, cfg, "127.0.0.1")
    row = Campaign(include_spec(sshd_hosts, cfg, "127.0.0.1"),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "done", row.reason
    # the included alias is the name looked up: a key listed for it only elsewhere is refused
    known.write_text(f"[127.0.0.1]:{port} {sshd_hosts['host_pub']}\n")
    assert not ssh_connects(sshd_hosts, cfg, "127.0.0.1")
    row = Campaign(include_spec(sshd_hosts, cfg, "127.0.0.1"),
                   out_dir=tmp_path / "out2").run(progress=False).iloc[0]
    assert row.state == "failed" and "host key of login.cluster is not known" in row.reason, \
        row.reason


@pytest.mark.slow
def test_include_loop_stops_the_campaign_with_one_line(sshd_hosts, tmp_path):
    a, b = tmp_path / "a.conf", tmp_path / "b.conf"
    write(a, f"Host 127.0.0.1\n  Include {b}\n")
    write(b, f"# b\nInclude {a}\n")
    assert ssh_g(a, "127.0.0.1").returncode != 0  # ssh: "Too many recursive ... includes"
    spec = include_spec(sshd_hosts, a, "127.0.0.1")
    with pytest.raises(SSHConfigError) as err:
        Campaign(spec, out_dir=tmp_path / "out").run(progress=False)
    assert "\n" not in str(err.value) and "ssh cannot read its config" in str(err.value)
    assert str(b) in str(err.value) or str(a) in str(err.value), str(err.value)
    assert not Path(spec.ssh["remote_tmp"]).exists()


@pytest.mark.slow
def test_missing_config_file_stops_the_campaign_once(sshd_hosts, tmp_path):
    """ssh.config_file itself missing: said once, not "cannot connect" on every run."""
    spec = include_spec(sshd_hosts, tmp_path / "no-config", "127.0.0.1")
    with pytest.raises(SSHConfigError, match=rf"{tmp_path}/no-config: No such file"):
        Campaign(spec, out_dir=tmp_path / "out").run(progress=False)
