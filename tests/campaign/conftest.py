"""Real daemons for the campaign backends' tests, started by hand (no systemd), torn down.

- ``sshd_hosts``: two private sshd on 127.0.0.1 (two "hosts" = two ports), key-only root login,
  and a known_hosts file with their host key (the ssh backend refuses unknown host keys).
- ``slurm_cluster``: a private munged (own socket) + slurmctld + slurmd, single node, with its
  own ``SLURM_CONF`` and ports, so nothing else on the machine is touched.

A fixture that cannot start its daemons (not root, binaries missing) FAILS with the reason
and the fix: a skip would hide a broken install (CI runs as root after `make setup`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from analysis.campaign.node import alive

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def _kill_pidfile(path: Path, sig=signal.SIGTERM, wait: float = 5) -> None:
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)


def _need_root(*binaries: str) -> None:
    if os.geteuid() != 0:
        pytest.fail("the campaign backend tests start sshd/Slurm daemons and need root "
                    "(run the tests as root, as CI does)", pytrace=False)
    missing = [b for b in binaries if not shutil.which(b) and not Path(b).exists()]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run `make setup` as root (it installs "
                    "slurm-wlm munge openssh-server)", pytrace=False)


@pytest.fixture
def port_tools():
    """free_port, wait_port and kill_pidfile for a test that starts its own daemon (a test
    module cannot import them: several test folders have a conftest module)."""
    import types

    return types.SimpleNamespace(free_port=free_port, wait_port=wait_port,
                                 kill_pidfile=_kill_pidfile)


@pytest.fixture(scope="session")
def sshd_hosts():
    """Two sshd on 127.0.0.1; yields {'hosts': [...], 'key': path, 'known_hosts': path,
    'host_pub': the host key's public line, 'dir': path}."""
    _need_root("/usr/sbin/sshd", "ssh-keygen")
    d = Path(tempfile.mkdtemp(prefix="dlperf-sshd-"))
    Path("/run/sshd").mkdir(exist_ok=True, mode=0o755)
    for name in ("host_ed25519", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)],
                       check=True)
    shutil.copy(d / "client_key.pub", d / "authorized_keys")
    os.chmod(d / "authorized_keys", 0o600)
    ports, pidfiles = [free_port(), free_port()], []
    host_pub = (d / "host_ed25519.pub").read_text().split()[:2]
    (d / "known_hosts").write_text("".join(f"[127.0.0.1]:{p} {' '.join(host_pub)}\n"
                                           for p in ports))
    try:
        for i, port in enumerate(ports):
            cfg = d / f"sshd_config.{i}"
            pidfiles.append(d / f"sshd.{i}.pid")
            cfg.write_text("\n".join([
                "ListenAddress 127.0.0.1", f"Port {port}", f"HostKey {d / 'host_ed25519'}",
                f"PidFile {pidfiles[-1]}", f"AuthorizedKeysFile {d / 'authorized_keys'}",
                "PermitRootLogin prohibit-password", "PasswordAuthentication no",
                "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
                "MaxStartups 50", "MaxSessions 50",
                "Subsystem sftp /usr/lib/openssh/sftp-server", ""]))
            subprocess.run(["/usr/sbin/sshd", "-f", str(cfg), "-E", str(d / f"sshd.{i}.log")],
                           check=True, timeout=30)
            if not wait_port(port):
                pytest.fail(f"sshd on port {port} did not start: "
                            f"{(d / f'sshd.{i}.log').read_text()[-500:]}")
        yield {"hosts": [{"host": "127.0.0.1", "port": p, "user": "root"} for p in ports],
               "key": str(d / "client_key"), "known_hosts": str(d / "known_hosts"),
               "host_pub": " ".join(host_pub), "dir": d}
    finally:
        for pf in pidfiles:
            _kill_pidfile(pf)
        shutil.rmtree(d, ignore_errors=True)


SLURM_CONF = """ClusterName=dlperftest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
StateSaveLocation={d}/ctld
SlurmdSpoolDir={d}/slurmd
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="session")
def slurm_cluster():
    """munged + slurmctld + slurmd on this host; yields {'conf': path, 'env': dict}."""
    _need_root("munged", "slurmctld", "slurmd", "sbatch", "runuser")
    d = Path(tempfile.mkdtemp(prefix="dlperf-slurm-"))
    os.chmod(d, 0o755)  # munged runs as user munge
    for sub in ("ctld", "slurmd", "munge"):
        (d / sub).mkdir()
    shutil.chown(d / "munge", "munge", "munge")
    os.chmod(d / "munge", 0o755)
    sock, munge_pid = d / "munge" / "munge.socket", d / "munge" / "munged.pid"
    host = socket.gethostname().split(".")[0]
    conf = d / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=host, ctld_port=free_port(), d_port=free_port(),
                                      munge_socket=sock, d=d, cpus=os.cpu_count() or 2))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started = []
    try:
        subprocess.run(["runuser", "-u", "munge", "--", "munged", f"--socket={sock}",
                        f"--pid-file={munge_pid}", f"--log-file={d / 'munge' / 'munged.log'}",
                        f"--seed-file={d / 'munge' / 'seed'}"], check=True, timeout=30)
        started.append("munged")
        subprocess.run(["slurmctld", "-f", str(conf)], check=True, env=env, timeout=30)
        subprocess.run(["slurmd", "-f", str(conf), "-N", host], check=True, env=env, timeout=30)
        deadline = time.monotonic() + 30
        state = ""
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                                   env=env).stdout.strip()
            if state in ("idle", "mixed", "allocated"):
                break
            time.sleep(0.3)
        else:
            pytest.fail(f"slurm node not idle (sinfo: {state!r}); "
                        f"{(d / 'slurmctld.log').read_text()[-800:]}")
        old = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = str(conf)
        yield {"conf": str(conf), "env": env, "dir": d}
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old
    finally:
        subprocess.run(["scontrol", "shutdown"], env=env, capture_output=True, timeout=30)
        for pf in (d / "slurmctld.pid", d / "slurmd.pid"):
            _kill_pidfile(pf, wait=10)
        if started:
            _kill_pidfile(munge_pid)
        shutil.rmtree(d, ignore_errors=True)
