"""The ssh backend checks host keys as OpenSSH does, against the real sshd on loopback
(``sshd_hosts`` in conftest.py): the backend runs OpenSSH's ``ssh`` with BatchMode and
StrictHostKeyChecking, so a campaign to an unknown host, or to a man in the middle, sends
nothing, and the run fails with one line naming the host."""

from __future__ import annotations

import json
import os
import pwd
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


def test_refused_host_key_is_not_retried(sshd_hosts, tmp_path):
    """retries are for what may pass next time; the same key is refused again."""
    known = tmp_path / "known_hosts"
    known.write_text("")
    spec = key_spec(sshd_hosts, known)
    spec.retries = 2
    row = Campaign(spec, out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "failed" and row.attempts == 1, row.reason
    assert "not retried: a refused host key is refused again" in row.reason, row.reason


def test_accept_new_adds_the_key_and_records_it(sshd_hosts, tmp_path, capsys):
    known = tmp_path / "ssh" / "known_hosts"  # neither file nor folder exists yet
    empty = tmp_path / "ssh_config"  # not Debian's /etc/ssh/ssh_config: HashKnownHosts yes
    empty.write_text("")
    row = Campaign(key_spec(sshd_hosts, known, host_key_checking="accept-new",
                            config_file=str(empty)),
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
    with pytest.raises(SpecError, match=r"'ssh.host_key_checking'.*'strict' or 'accept-new'"):
        from_dict({"name": "x", "workload": "builtin", "precisions": ["fp32"],
                   "batch_sizes": [1], "devices": ["1n1g"], "backend": "ssh",
                   "hosts": ["h"], "ssh": {"host_key_checking": "no"}})


# -- the ssh config's UserKnownHostsFile, GlobalKnownHostsFile and HostKeyAlias ------------

def ssh_config(tmp_path, *lines) -> Path:
    """An ssh config (given to ssh as -F through ssh.config_file) for the loopback hosts."""
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host 127.0.0.1\n" + "".join(f"    {x}\n" for x in lines))
    return cfg


def ssh_says(sshd, cfg) -> bool:
    """Whether OpenSSH's own client accepts the host key with config `cfg` (strict): the
    answer the backend must give."""
    port = sshd["hosts"][0]["port"]
    r = subprocess.run(["ssh", "-F", str(cfg), "-o", "BatchMode=yes", "-o",
                        "StrictHostKeyChecking=yes", "-i", sshd["key"], "-p", str(port),
                        "root@127.0.0.1", "true"], capture_output=True, text=True, timeout=30)
    return r.returncode == 0


def config_spec(sshd, cfg, known_hosts=None, **ssh):
    spec = key_spec(sshd, known_hosts or "unused", config_file=str(cfg), **ssh)
    if known_hosts is None:
        del spec.ssh["known_hosts"]
    return spec


def host_line(sshd, name=None) -> str:
    return f"{name or name_of(sshd)} {sshd['host_pub']}\n"


def other_key(tmp_path) -> str:
    path = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True)
    return " ".join(Path(f"{path}.pub").read_text().split()[:2])


@pytest.mark.parametrize("option", ["UserKnownHostsFile", "GlobalKnownHostsFile"])
def test_known_hosts_files_of_the_ssh_config_are_read(sshd_hosts, tmp_path, monkeypatch,
                                                      option):
    """ssh reads the files the host's UserKnownHostsFile / GlobalKnownHostsFile name (several,
    `~` and %-tokens in the user one); the backend read ~/.ssh/known_hosts and refused."""
    monkeypatch.setenv("HOME", str(tmp_path))  # where the old code looked: empty
    port = sshd_hosts["hosts"][0]["port"]
    (tmp_path / f"kh.127.0.0.1-{port}").write_text(host_line(sshd_hosts))
    if option == "UserKnownHostsFile":  # ~ is the passwd home, as OpenSSH has it
        rel = os.path.relpath(tmp_path, pwd.getpwuid(os.getuid()).pw_dir)
        files = f"{tmp_path}/missing ~/{rel}/kh.%h-%p"
        cfg = ssh_config(tmp_path, f"UserKnownHostsFile {files}",
                         f"GlobalKnownHostsFile {tmp_path}/none")
    else:
        cfg = ssh_config(tmp_path, f"UserKnownHostsFile {tmp_path}/empty",
                         f"GlobalKnownHostsFile {tmp_path}/missing "
                         f"{tmp_path}/kh.127.0.0.1-{port}")
    assert ssh_says(sshd_hosts, cfg)
    row = Campaign(config_spec(sshd_hosts, cfg), out_dir=tmp_path / "out").run(
        progress=False).iloc[0]
    assert row.state == "done", row.reason


def test_host_key_alias_is_the_name_looked_up(sshd_hosts, tmp_path, monkeypatch):
    """With HostKeyAlias, ssh looks the key up under the alias as written (no [alias]:port):
    the backend looked up [127.0.0.1]:port, so it accepted a key that ssh refuses as changed,
    and refused one that ssh accepts. (The spec's ssh.known_hosts is the file ssh reads.)"""
    monkeypatch.setenv("HOME", str(tmp_path))
    known = tmp_path / "known_hosts"
    cfg = ssh_config(tmp_path, "HostKeyAlias login.cluster", f"UserKnownHostsFile {known}",
                     f"GlobalKnownHostsFile {tmp_path}/none")
    # the host's own name lists its key, the alias another one: ssh refuses
    known.write_text(host_line(sshd_hosts) + f"login.cluster {other_key(tmp_path)}\n")
    assert not ssh_says(sshd_hosts, cfg)
    row = Campaign(config_spec(sshd_hosts, cfg, known_hosts=known),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "failed" and "HOST KEY CHANGED for login.cluster" in row.reason, \
        row.reason
    assert f"ssh-keygen -R login.cluster -f {known}" in row.reason, row.reason
    # the alias lists the key (and only the alias): ssh connects
    known.write_text(host_line(sshd_hosts, "login.cluster"))
    assert ssh_says(sshd_hosts, cfg)
    row = Campaign(config_spec(sshd_hosts, cfg, known_hosts=known),
                   out_dir=tmp_path / "out2").run(progress=False).iloc[0]
    assert row.state == "done", row.reason


def test_accept_new_writes_the_alias_to_the_first_user_file(sshd_hosts, tmp_path,
                                                            monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    first, second = tmp_path / "a" / "known_hosts", tmp_path / "b" / "known_hosts"
    cfg = ssh_config(tmp_path, "HostKeyAlias login.cluster",
                     f"UserKnownHostsFile {first} {second}",
                     f"GlobalKnownHostsFile {tmp_path}/none")
    row = Campaign(config_spec(sshd_hosts, cfg, host_key_checking="accept-new"),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "done", row.reason
    assert first.read_text() == host_line(sshd_hosts, "login.cluster")
    assert not second.exists() and not (tmp_path / ".ssh").exists()
    assert ssh_says(sshd_hosts, cfg)  # what was written is what ssh looks up


def test_unknown_key_under_an_alias_names_the_line_to_add(sshd_hosts, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text(host_line(sshd_hosts))  # under the host's name, not the alias
    cfg = ssh_config(tmp_path, "HostKeyAlias login.cluster", f"UserKnownHostsFile {known}",
                     f"GlobalKnownHostsFile {tmp_path}/none")
    row = Campaign(config_spec(sshd_hosts, cfg), out_dir=tmp_path / "out").run(
        progress=False).iloc[0]
    port = sshd_hosts["hosts"][0]["port"]
    assert row.state == "failed" and "host key of login.cluster is not known" in row.reason
    assert (f"ssh-keyscan -p {port} 127.0.0.1 | awk -v n=login.cluster '{{$1=n}}1' >> "
            f"{known}") in row.reason, row.reason


def test_spec_known_hosts_wins_over_the_ssh_config(sshd_hosts, tmp_path):
    wrong = tmp_path / "wrong"
    wrong.write_text(f"{name_of(sshd_hosts)} {other_key(tmp_path)}\n")
    cfg = ssh_config(tmp_path, f"UserKnownHostsFile {wrong}")
    row = Campaign(config_spec(sshd_hosts, cfg, known_hosts=sshd_hosts["known_hosts"]),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "done", row.reason


# -- @revoked and @cert-authority lines ----------------------------------------------------

@pytest.mark.parametrize("mode", ["strict", "accept-new"])
def test_revoked_host_key_is_refused_whatever_other_lines_say(sshd_hosts, tmp_path, mode):
    """A key listed @revoked is refused, as ssh refuses it, even where a plain line lists it
    for the host (the backend read only the plain line and connected)."""
    known = tmp_path / "known_hosts"
    known.write_text(f"# keys\n{host_line(sshd_hosts)}@revoked * {sshd_hosts['host_pub']}\n")
    cfg = ssh_config(tmp_path, f"UserKnownHostsFile {known}",
                     f"GlobalKnownHostsFile {tmp_path}/none")
    assert not ssh_says(sshd_hosts, cfg)
    spec = key_spec(sshd_hosts, known, host_key_checking=mode)
    row = Campaign(spec, out_dir=tmp_path / "out").run(progress=False).iloc[0]
    port = sshd_hosts["hosts"][0]["port"]
    assert row.state == "failed", row.reason
    assert (f"ssh root@127.0.0.1:{port}: host key of {name_of(sshd_hosts)} (ssh-ed25519 "
            f"SHA256:") in row.reason, row.reason
    assert f"is REVOKED: listed @revoked in {known} line 3; refused" in row.reason, row.reason
    assert "\n" not in row.reason
    assert not Path(spec.ssh["remote_tmp"]).exists()  # nothing was sent
    assert len(known.read_text().splitlines()) == 3  # accept-new added nothing


def test_revoked_line_for_another_host_does_not_matter(sshd_hosts, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text(f"{host_line(sshd_hosts)}@revoked elsewhere.example "
                     f"{sshd_hosts['host_pub']}\n")
    row = Campaign(key_spec(sshd_hosts, known), out_dir=tmp_path / "out").run(
        progress=False).iloc[0]
    assert row.state == "done", row.reason


def test_host_certificate_is_checked_against_a_cert_authority_line(sshd_hosts, tmp_path,
                                                                   port_tools):
    """OpenSSH checks host certificates (the former Python SSH stack could not): a host
    whose key is signed by a CA that a @cert-authority line names connects with no key of its
    own listed; signed by another CA, it is refused."""
    free_port, wait_port, _kill_pidfile = (port_tools.free_port, port_tools.wait_port,
                                           port_tools.kill_pidfile)
    d, port = sshd_hosts["dir"], free_port()
    for name in ("ca", "other_ca", "host"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                        str(tmp_path / name)], check=True)
    subprocess.run(["ssh-keygen", "-q", "-s", str(tmp_path / "ca"), "-I", "loopback", "-h",
                    "-n", "127.0.0.1", str(tmp_path / "host.pub")], check=True)
    cfg = tmp_path / "sshd_config"
    cfg.write_text((d / "sshd_config.0").read_text()
                   .replace(f"Port {sshd_hosts['hosts'][0]['port']}", f"Port {port}")
                   .replace(f"HostKey {d / 'host_ed25519'}",
                            f"HostKey {tmp_path / 'host'}\n"
                            f"HostCertificate {tmp_path / 'host-cert.pub'}")
                   .replace(f"PidFile {d / 'sshd.0.pid'}", f"PidFile {tmp_path / 'pid'}"))
    subprocess.run(["/usr/sbin/sshd", "-f", str(cfg), "-E", str(tmp_path / "log")],
                   check=True, timeout=30)
    try:
        assert wait_port(port), (tmp_path / "log").read_text()
        known = tmp_path / "known_hosts"
        for ca, state in (("ca", "done"), ("other_ca", "failed")):
            ca_key = " ".join((tmp_path / f"{ca}.pub").read_text().split()[:2])
            known.write_text(f"@cert-authority [127.0.0.1]:* {ca_key}\n")
            spec = key_spec(sshd_hosts, known)
            spec.hosts = [{"host": "127.0.0.1", "port": port, "user": "root"}]
            row = Campaign(spec, out_dir=tmp_path / f"out_{ca}").run(progress=False).iloc[0]
            assert row.state == state, row.reason
            assert known.read_text().count("\n") == 1
        assert f"[127.0.0.1]:{port}" in row.reason and "\n" not in row.reason, row.reason
    finally:
        _kill_pidfile(tmp_path / "pid")


def test_jump_host_keys_are_checked_too(sshd_hosts, tmp_path, monkeypatch):
    """ssh refuses an unknown jump host (its own ssh has no terminal to ask on); so does the
    backend, naming it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    target, jump = (h["port"] for h in sshd_hosts["hosts"])
    known = tmp_path / "known_hosts"
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host target\n    HostName 127.0.0.1\n    Port {target}\n"
                   f"    ProxyJump jump\n"
                   f"Host jump\n    HostName 127.0.0.1\n    Port {jump}\n    User root\n"
                   f"    IdentityFile {sshd_hosts['key']}\n    HostKeyAlias jumphost\n"
                   f"Host *\n    UserKnownHostsFile {known}\n"
                   f"    GlobalKnownHostsFile {tmp_path}/none\n")

    def run(name):
        spec = key_spec(sshd_hosts, known, config_file=str(cfg))
        spec.hosts = [{"host": "target", "user": "root"}]
        return Campaign(spec, out_dir=tmp_path / name).run(progress=False).iloc[0]

    def ssh_accepts() -> bool:
        r = subprocess.run(["ssh", "-F", str(cfg), "-o", "BatchMode=yes", "-o",
                            "StrictHostKeyChecking=yes", "-i", sshd_hosts["key"],
                            "root@target", "true"], capture_output=True, text=True, timeout=30)
        return r.returncode == 0

    known.write_text(f"[127.0.0.1]:{target} {sshd_hosts['host_pub']}\n")  # not the jump host
    assert not ssh_accepts()
    row = run("unknown_jump")
    assert row.state == "failed" and "jumphost" in row.reason and "is not known" in row.reason, \
        row.reason
    known.write_text(known.read_text() + f"jumphost {sshd_hosts['host_pub']}\n")
    assert ssh_accepts()
    row = run("known_jump")
    assert row.state == "done", row.reason
