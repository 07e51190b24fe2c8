"""``ssh``: one node agent per host, started concurrently over SSH (fabric/paramiko).

- Connections come from fabric (``~/.ssh/config`` then ``/etc/ssh/ssh_config``, or
  ``ssh.config_file``, read once with their ``Include`` lines followed as ssh follows them:
  :mod:`analysis.campaign.ssh_config`; ``ssh.key_file``, ``ssh.user``, ``ssh.port``,
  ``ssh.connect_timeout``). A host that refuses the connection fails the run at once with the
  reason; a config that ssh could not read either stops the campaign before it starts.
- Host keys are checked as OpenSSH does (:mod:`analysis.campaign.host_keys`; fabric alone
  accepts any key): known keys from ``ssh.known_hosts`` (default: the host's
  ``UserKnownHostsFile`` in the ssh config, else ``~/.ssh/known_hosts``) and its
  ``GlobalKnownHostsFile`` (default ``/etc/ssh/ssh_known_hosts``), under its
  ``HostKeyAlias`` if it has one; a changed or ``@revoked`` key is refused, an unknown one
  too unless ``ssh.host_key_checking: accept-new`` (then it is added and named in the run's
  record). ProxyJump hosts are checked the same way.
- The agent (``node.py``) and the three standard-library-only modules it imports
  (``AGENT_MODULES``) are copied to ``ssh.remote_tmp`` on every host (sftp), which must be a
  folder of the login user that no one else can write (it is checked), so hosts need
  Python but not this package; the built-in workloads need only ``workloads/`` in the
  workdir and torch.
- The remote command is one shell line in which every word is ``shlex.quote``-d; the spec's
  environment goes as one JSON line on stdin, never on a command line. The agent runs under
  ``sh -c '"$@"; exit "$?"'`` (:data:`AGENT_PARENT`), so that an agent killed by a signal
  still ends its channel with an exit status.
- Output (stdout+stderr) streams back over the channel into the per-node log here. The env
  record, GPU CSV and agent result are fetched with sftp afterwards.
- Killing the ssh client does not kill remote processes: on failure, timeout or interruption
  the controller runs ``node.py --kill PIDFILE`` on each host whose agent still runs or ended
  with a non-zero status: it stops the agent (which stops torchrun and its workers), then
  kills what is left of the agent's session, also when the agent itself was killed and its
  workload runs on. Closing the channel also makes the agent stop itself (it watches stdin
  for EOF).
"""

from __future__ import annotations

import json
import stat
import sys
import threading
import time
from pathlib import Path

import analysis
from analysis.campaign.backends import register
from analysis.campaign.backends.base import (
    NODE_AGENT,
    POLL_S,
    Backend,
    Interrupted,
    Launch,
    NodeLaunch,
    Outcome,
    first_failure,
)
from analysis.campaign.commands import shell_join
from analysis.campaign.host_keys import HostKeyError, HostKeys
from analysis.campaign.ssh_config import load as load_ssh_config
from analysis.errors import DLPerfError

#: The package modules the node agent imports, copied beside it on every host.
PACKAGE_DIR = Path(analysis.__file__).resolve().parent
AGENT_MODULES = ("__init__.py", "errors.py", "shell.py")
#: The agent runs as a child of this shell, not in its place, so that sshd reports an exit
#: status (137) when the agent is killed by a signal: paramiko ignores sshd's "exit-signal".
AGENT_PARENT = ("sh", "-c", '"$@"; exit "$?"', "sh")


class SSHError(DLPerfError):
    """A host could not be reached or a remote step failed."""


class SSHHostKeyError(SSHError):
    """A host's key is unknown or changed: nothing was sent to it."""


@register
class SSHBackend(Backend):
    """Run node k on ``hosts[k]`` over SSH."""

    name = "ssh"

    def __init__(self, spec):
        super().__init__(spec)
        self._conns: dict[str, object] = {}
        self._ready: set[str] = set()
        opts = spec.ssh
        self.remote_tmp = str(opts.get("remote_tmp", f"/tmp/dlperf-campaign-{spec.name}"))
        self.connect_timeout = opts.get("connect_timeout", 10.0)
        self.host_keys = HostKeys(opts.get("host_key_checking", "strict"),
                                  opts.get("known_hosts"))
        #: the ssh config fabric and the host-key check look hosts up in (Includes followed)
        self.ssh_config = load_ssh_config(opts.get("config_file"))

    # -- connections --------------------------------------------------------------------
    def _key(self, h: dict) -> str:
        return f"{h.get('user', '')}@{h['host']}:{h.get('port', '')}"

    def _connect(self, h: dict):
        key = self._key(h)
        if key in self._conns:
            return self._conns[key]
        from fabric import Config, Connection

        opts = self.spec.ssh
        cfg = Config(ssh_config=self.ssh_config)  # an explicit config: fabric reads no file
        kwargs: dict = {}
        if opts.get("key_file"):
            kwargs.update(key_filename=str(opts["key_file"]), look_for_keys=False,
                          allow_agent=False)
        conn = Connection(h["host"], user=h.get("user", opts.get("user")),
                          port=h.get("port", opts.get("port")), config=cfg,
                          connect_timeout=self.connect_timeout, connect_kwargs=kwargs)
        try:
            self._check_host_keys(conn)
            conn.open()
        except HostKeyError as exc:
            conn.close()
            raise SSHHostKeyError(f"ssh {key}: {exc}") from None
        except Exception as exc:  # paramiko/socket errors of every kind
            conn.close()
            raise SSHError(f"ssh {key}: cannot connect: {exc}") from None
        self._conns[key] = conn
        return conn

    def _check_host_keys(self, conn) -> None:
        """Make the host-key check the policy of `conn` and of every jump host it goes
        through: fabric opens a ProxyJump host as a Connection of its own, which would
        accept any key (a ProxyCommand's host is the command's business, as in ssh)."""
        from fabric import Connection

        hop = conn
        while isinstance(hop, Connection):
            check = self.host_keys.check(hop.host, hop.port, hop.ssh_config,
                                         hop.original_host, hop.user)
            hop.connect_kwargs.update(check.install(hop.client))
            hop = hop.gateway

    def _run(self, h: dict, argv: list[str], timeout: float = 60):
        conn = self._connect(h)
        try:
            return conn.run(shell_join(argv), hide=True, warn=True, timeout=timeout,
                            in_stream=False)
        except Exception as exc:
            raise SSHError(f"ssh {self._key(h)}: {shell_join(argv)}: {exc}") from None

    def _python(self) -> str:
        return self.spec.python or sys.executable

    def _agent_path(self) -> str:
        return f"{self.remote_tmp}/node.py"

    def _ensure_agent(self, h: dict) -> None:
        key = self._key(h)
        if key in self._ready:
            return
        r = self._run(h, ["mkdir", "-p", "-m", "700", self.remote_tmp,
                          f"{self.remote_tmp}/analysis"])
        if r.exited != 0:
            raise SSHError(f"ssh {key}: mkdir {self.remote_tmp} failed: {r.stderr.strip()}")
        self._check_private(h)
        try:
            conn = self._connect(h)
            conn.put(str(NODE_AGENT), self._agent_path())
            for name in AGENT_MODULES:  # what node.py imports, for hosts without the package
                conn.put(str(PACKAGE_DIR / name), f"{self.remote_tmp}/analysis/{name}")
        except Exception as exc:  # sftp missing, disk full, ...
            raise SSHError(f"ssh {key}: cannot copy the node agent (sftp): {exc}") from None
        self._ready.add(key)

    def _check_private(self, h: dict) -> None:
        """SSHError unless remote_tmp and its ``analysis/`` are real folders of the login user
        that no one else can write: the agent runs from there, and its folder comes first on
        its ``sys.path``."""
        r = self._run(h, ["id", "-u"])
        try:
            uid, sftp = int(r.stdout.strip()), self._connect(h).sftp()
            for path in (self.remote_tmp, f"{self.remote_tmp}/analysis"):
                st = sftp.lstat(path)
                if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022:
                    raise SSHError(f"ssh {self._key(h)}: {path} is not a private folder of "
                                   f"uid {uid} (owner uid {st.st_uid}, mode "
                                   f"{stat.filemode(st.st_mode)}): another user could put code "
                                   "there that the agent would run; remove it or set "
                                   "ssh.remote_tmp")
        except (ValueError, OSError) as exc:
            raise SSHError(f"ssh {self._key(h)}: cannot check {self.remote_tmp}: {exc}") from None

    # -- Backend ------------------------------------------------------------------------
    def probe_gpus(self) -> int:
        if not self.spec.hosts:
            return 0
        try:
            r = self._run(self.spec.hosts[0],
                          ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], 30)
        except SSHHostKeyError:
            raise  # not "no GPUs": the campaign stops before anything is sent
        except SSHError:
            return 0
        return sum(1 for x in r.stdout.splitlines() if x.strip().isdigit()) if r.ok else 0

    def node_hosts(self, num_nodes: int) -> list[str]:
        return [h["host"] for h in self.spec.hosts[:num_nodes]]

    def close(self) -> None:
        for conn in self._conns.values():
            try:
                conn.close()
            except Exception:
                pass
        self._conns.clear()
        self._ready.clear()

    def _remote(self, launch: Launch, node: NodeLaunch) -> dict[str, str]:
        flat = launch.run_id.replace("/", "__")
        base = f"{self.remote_tmp}/{flat}.node{node.index}"
        return {"result": f"{base}.result", "pidfile": f"{base}.pid",
                "env_json": f"{base}.env", "gpu_csv": f"{base}.gpu"}

    def remote_command(self, launch: Launch, node: NodeLaunch) -> str:
        """The shell line run on the node's host (every word quoted)."""
        argv = self.agent_argv(launch, node, python=self._python(), agent=self._agent_path(),
                               paths=self._remote(launch, node),
                               flags=("--env-stdin", "--watch-stdin"))
        return shell_join([*AGENT_PARENT, *argv])

    def describe(self, launch: Launch) -> list[str]:
        lines = super().describe(launch)
        for n in launch.active():
            h = self.spec.hosts[n.index]
            lines.append(f"  ssh {self._key(h)} (node {n.index}): "
                         + self.shown(self.remote_command(launch, n)))
        return lines

    def execute(self, launch: Launch) -> Outcome:
        t0, started = time.monotonic(), time.time()
        active = launch.active()
        chans: dict[int, object] = {}
        readers: list[threading.Thread] = []
        rcs: dict[int, int | None] = {}
        reason = ""
        try:
            try:
                for n in active:  # connect everywhere first: a dead host fails fast
                    self._ensure_agent(self.spec.hosts[n.index])
            except SSHError as exc:
                refused = isinstance(exc, SSHHostKeyError)  # the same key is refused again
                return Outcome(False, str(exc), [], wall_s=time.monotonic() - t0,
                               extra=self._accepted_keys(),
                               no_retry="a refused host key is refused again" if refused else "")
            for n in active:
                chans[n.index] = self._start(launch, n, readers)
            while True:
                for i, ch in chans.items():
                    if rcs.get(i) is None and ch.exit_status_ready():
                        rcs[i] = ch.recv_exit_status()
                if any(rc not in (None, 0) for rc in rcs.values()):
                    break
                if len(rcs) == len(chans) and all(rc == 0 for rc in rcs.values()):
                    break
                if time.monotonic() - t0 > launch.timeout:
                    reason = f"timeout after {launch.timeout:g} s"
                    break
                time.sleep(POLL_S)
        except KeyboardInterrupt as exc:
            self._stop(launch, active, chans, rcs)
            raise Interrupted(str(exc) or "SIGINT") from None
        self._stop(launch, active, chans, rcs)
        for t in readers:
            t.join(timeout=10)
        nodes = []
        for n in active:
            self._fetch(launch, n)
            nodes.append(self.node_outcome(n, rcs.get(n.index), started))
        reason = reason or first_failure(nodes)
        return Outcome(ok=not reason, reason=reason, nodes=nodes, wall_s=time.monotonic() - t0,
                       extra=self._accepted_keys())

    def _accepted_keys(self) -> dict:
        """``{"host_keys_accepted": [...]}``: keys trusted on first use (accept-new) since the
        last run, for this run's record; {} when none."""
        added, self.host_keys.added = self.host_keys.added, []
        return {"host_keys_accepted": added} if added else {}

    def _start(self, launch: Launch, n: NodeLaunch, readers: list) -> object:
        conn = self._connect(self.spec.hosts[n.index])
        chan = conn.client.get_transport().open_session()
        chan.set_combine_stderr(True)
        chan.exec_command(self.remote_command(launch, n))
        chan.sendall((json.dumps(n.env) + "\n").encode())
        log = open(n.log, "wb")

        def pump():
            with log:
                while True:
                    data = chan.recv(65536)
                    if not data:
                        break
                    log.write(data)
                    log.flush()

        t = threading.Thread(target=pump, daemon=True, name=f"ssh-log-{n.index}")
        t.start()
        readers.append(t)
        return chan

    def _stop(self, launch: Launch, active, chans: dict, rcs: dict) -> None:
        """On their hosts, stop the agents still running and what is left of every agent that
        did not end with status 0 (a killed agent's workload runs on); close the channels."""
        for i, ch in chans.items():
            if rcs.get(i) is None and ch.exit_status_ready():
                rcs[i] = ch.recv_exit_status()
        threads = []
        for n in [n for n in active if n.index in chans and rcs.get(n.index) != 0]:
            argv = [self._python(), self._agent_path(), "--kill",
                    self._remote(launch, n)["pidfile"]]
            t = threading.Thread(target=self._kill_quietly,
                                 args=(self.spec.hosts[n.index], argv), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join(timeout=30)
        deadline = time.monotonic() + 10
        for i, ch in chans.items():
            while rcs.get(i) is None and not ch.exit_status_ready() and \
                    time.monotonic() < deadline:
                time.sleep(POLL_S)
            if rcs.get(i) is None and ch.exit_status_ready():
                rcs[i] = ch.recv_exit_status()
            ch.close()

    def _kill_quietly(self, h: dict, argv: list[str]) -> None:
        try:
            self._run(h, argv, timeout=25)
        except SSHError:
            pass

    def _fetch(self, launch: Launch, n: NodeLaunch) -> None:
        """Copy the agent's result, env record and GPU CSV back; remove them remotely."""
        h = self.spec.hosts[n.index]
        remote = self._remote(launch, n)
        try:
            sftp = self._connect(h).sftp()
        except Exception:
            return
        for key, local in (("result", n.result), ("env_json", n.env_json),
                           ("gpu_csv", n.gpu_csv)):
            try:
                sftp.get(remote[key], str(local))
                sftp.remove(remote[key])
            except OSError:  # sftp.get creates the local file before it reads the remote one
                Path(local).unlink(missing_ok=True)
        try:
            sftp.remove(remote["pidfile"])
        except OSError:
            pass
