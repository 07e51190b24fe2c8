"""``Include`` in ssh configs is followed as OpenSSH follows it (``ssh -G`` is the reference):
paramiko kept it as a plain ``include`` option, so a host set up in an included file (Debian's
/etc/ssh/ssh_config includes ssh_config.d/*.conf; many users ~/.ssh/config.d/*) was unknown to
the ssh backend and to its host-key check, while ``ssh`` reached it."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)

from analysis.campaign import ssh_config
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict
from analysis.campaign.ssh_config import SSHConfigError, load

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


def ours(cfg: Path, host: str) -> dict:
    got = load(str(cfg)).lookup(host)
    return {k: str(got[k]) for k in KEYS if k in got} | {"port": str(got.get("port", 22)),
                                                         "user": got.get("user", "root")}


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
    assert str(err.value) == (f"ssh config {b} line 2: Include {a}: an Include loop ({a} "
                              f"line 2 -> {b} line 2 -> {a})")
    assert not Path(spec.ssh["remote_tmp"]).exists()


# -- ssh -G agreement -------------------------------------------------------------------------

def test_include_semantics_agree_with_ssh(tmp_path, monkeypatch):
    """Several paths per line, sorted glob matches, a pattern matching nothing, relative paths
    in ~/.ssh and `~` ($HOME, as ssh's glob has it), an Include inside a Host block whose file
    opens its own Host blocks (they apply only where both match), first value wins."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    dot = tmp_path / "home" / ".ssh"
    write(dot / "config.d" / "10.conf", "Host n10\n  Port 1010\nHost *\n  User ten\n")
    write(dot / "config.d" / "2.conf", "Host n10 n2\n  Port 2002\n  User two\n")
    write(dot / "config.d" / ".hidden", "Port 6666\n")
    write(tmp_path / "nested.conf", "User inuser\nHost b c\n  HostName bb\n  Port 3003\n")
    write(tmp_path / "tilde.conf", "Host t\n  HostName tt\n")
    cfg = write(tmp_path / "config", (
        f"Include {tmp_path}/nothing-*.conf config.d/* ~/../tilde.conf\n"
        "Host a b\n"
        f"  Include {tmp_path}/nested.conf\n"
        "  Port 1111\n"
        "Host *\n"
        "  Port 9999\n"
        "  User zed\n"))
    for host in ("a", "b", "c", "n10", "n2", "t", "x"):
        assert ours(cfg, host) == ssh_options(cfg, host, tmp_path / "home"), host


def test_user_config_wins_over_the_system_config(tmp_path, monkeypatch):
    """Without ssh.config_file: ~/.ssh/config then the system config, first value wins; a
    relative Include of the system config is in /etc/ssh, and `~` is refused there, as ssh
    has them."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(ssh_config, "SYSTEM_DIR", str(tmp_path / "etc"))
    write(tmp_path / "etc" / "ssh_config.d" / "site.conf", "Host *\n  Port 2200\n  User site\n")
    system = write(tmp_path / "etc" / "ssh_config", "Include ssh_config.d/*.conf\n")
    write(tmp_path / ".ssh" / "mine.conf", "Host node*\n  User me\n")
    user = write(tmp_path / ".ssh" / "config", "Include mine.conf\n")
    got = load(user=str(user), system=str(system)).lookup("node1")
    assert (got["user"], got["port"]) == ("me", "2200")
    assert load(user=str(user), system=str(system)).lookup("other")["user"] == "site"
    system.write_text("# site\nInclude ~/x.conf\n")
    with pytest.raises(SSHConfigError, match=rf"^ssh config {system} line 2: Include ~/x.conf: "
                                             r"'~' is not allowed in the system config"):
        load(user=str(user), system=str(system))


# -- errors: one line naming the Include ------------------------------------------------------

def test_include_errors_name_the_include_line(tmp_path):
    # a symlink loop: the file exists but cannot be opened (ssh: "Can't open user config file")
    os.symlink(tmp_path / "s2", tmp_path / "s1")
    os.symlink(tmp_path / "s1", tmp_path / "s2")
    cfg = write(tmp_path / "config", f"Host *\n  Include {tmp_path}/s1\n")
    assert ssh_g(cfg, "x").returncode != 0
    with pytest.raises(SSHConfigError, match=rf"^ssh config {cfg} line 2: Include {tmp_path}/s1"
                                             r": cannot read it: Too many levels of symbolic"):
        load(str(cfg))
    # a file others may write (ssh: "Bad owner or permissions")
    write(tmp_path / "open.conf", "Port 7\n", mode=0o666)
    cfg.write_text(f"Include {tmp_path}/open.conf\n")
    assert ssh_g(cfg, "x").returncode != 0
    with pytest.raises(SSHConfigError, match=rf"^ssh config {cfg} line 1: Include "
                                             rf"{tmp_path}/open.conf: bad owner or permissions"):
        load(str(cfg))
    # more than 16 nested includes (ssh's limit), no loop: the 17th is refused
    for i in range(17):
        write(tmp_path / f"d{i}.conf", f"Include {tmp_path}/d{i + 1}.conf\n")
    write(tmp_path / "d17.conf", "Port 17\n")
    assert ssh_g(tmp_path / "d1.conf", "x").returncode == 0  # 16 levels are fine
    assert load(str(tmp_path / "d1.conf")).lookup("x")["port"] == "17"
    assert ssh_g(tmp_path / "d0.conf", "x").returncode != 0
    with pytest.raises(SSHConfigError, match=rf"^ssh config {tmp_path}/d16.conf line 1: Include "
                                             rf"{tmp_path}/d17.conf: more than 16 nested"):
        load(str(tmp_path / "d0.conf"))
    # ssh.config_file itself missing: said once, not "cannot connect" on every run
    with pytest.raises(SSHConfigError, match=rf"^ssh.config_file {tmp_path}/no-config: no such"):
        load(str(tmp_path / "no-config"))
    # a missing file, or a pattern matching nothing, is fine
    cfg.write_text(f"Include {tmp_path}/missing.conf {tmp_path}/none/*\nPort 5\n")
    assert load(str(cfg)).lookup("x")["port"] == "5"
