"""``ssh``: one node agent per host, started concurrently through OpenSSH's own client.

- Every step is an ``ssh`` or ``scp`` run through :mod:`analysis.shell` with BatchMode; the
  spec's options come first, so they win over the ssh config. The config, known_hosts files,
  host certificates and the agent are OpenSSH's own (docs/decisions: the SSH trust model).
  A config that ``ssh -G`` cannot read stops the campaign before it starts.
- Host keys: an unknown key is refused unless ``ssh.host_key_checking: accept-new`` (then
  the run's record names the key ssh added); a changed or revoked key is always refused.
  ssh's many-line warnings become one line naming the host; the run is not retried.
- The agent (``node.py``) and the modules it imports (``AGENT_MODULES``) are copied to
  ``ssh.remote_tmp``, which must be a folder of the login user that no one else can write,
  so hosts need Python but not this package.
- The remote command is one shell line, every word quoted; the spec's environment goes as one
  JSON line on ssh's stdin, never on a command line. ssh's output is the node's log; the
  agent's result, env record and GPU CSV are fetched with ``scp`` afterwards.
- Killing the ssh client does not kill remote processes: on failure, timeout or interruption
  the controller runs ``node.py --kill PIDFILE`` on each host whose agent did not end with
  status 0. Closing ssh's stdin also makes the agent stop itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import shlex
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import analysis
from analysis.campaign.backends import (
    NODE_AGENT,
    Backend,
    Launch,
    NodeLaunch,
    Outcome,
    register,
)
from analysis.errors import DLPerfError
from analysis.redact import redact_text
from analysis.shell import PIPE, STDOUT, CommandError, Process, run_command, start_process

#: The package modules the node agent imports, copied beside it on every host.
PACKAGE_DIR = Path(analysis.__file__).resolve().parent
AGENT_MODULES = ("__init__.py", "errors.py", "shell.py")
#: The agent runs as a child of this shell (``sh -c AGENT_PARENT sh PYTHON NODE_PY PIDFILE
#: AGENT_ARGV…``), not in its place, so that sshd reports an exit status (137) when the agent
#: is killed by a signal, not only an "exit-signal"; and an agent that ended badly has what is
#: left of its session killed there and then (``node.py --kill``): its orphans would hold the
#: session's output open, and ssh ends (with the status) only once that closes.
AGENT_PARENT = ('py=$1 agent=$2 pidfile=$3; shift 3; "$@"; rc=$?; [ "$rc" -eq 0 ] || '
                '"$py" "$agent" --kill "$pidfile" >/dev/null 2>&1; exit "$rc"')
#: Made on the host, then each path printed that is not a folder (a link is not followed) of
#: the login user that no one else can write.
_PRIVATE = ('mkdir -p -m 700 "$@" && '
            'find "$@" -maxdepth 0 \\( ! -type d -o ! -user "$(id -u)" -o -perm /022 \\)')


class SSHError(DLPerfError):
    """A host could not be reached or a remote step failed."""


class SSHHostKeyError(SSHError):
    """A host's key is unknown, changed or revoked: nothing was sent to it."""


class SSHConfigError(DLPerfError):
    """ssh cannot read its config for a host (``ssh -G`` failed): the campaign stops."""


_UNKNOWN = re.compile(r"No \S+ host key is known for (\S+) and you have requested strict")
_CHANGED = re.compile(r"Host key for (\S+) has changed and you have requested strict")
_FINGERPRINT = re.compile(r"^(SHA256:\S+?)\.?$", re.M)
_OFFENDING = re.compile(r"^Offending \S+ key in (.+):(\d+)$", re.M)
_REVOKED = re.compile(r"host key for (\S+) is marked as revoked")
_ADDED = re.compile(r"Permanently added '([^']+)' \((\S+)\) to the list of known hosts")


def host_key_problem(stderr: str, resolved: dict) -> str:
    """One line for ssh's refusal of a host key in `stderr` ('' when it is not one);
    `resolved` is what ``ssh -G`` says of the host (hostname, port, hostkeyalias,
    userknownhostsfile), for the line that adds an unknown key."""
    stderr = stderr.replace("\r", "")
    if m := _UNKNOWN.search(stderr):
        name, port = m.group(1), resolved.get("port", "22")
        known = resolved.get("userknownhostsfile", "~/.ssh/known_hosts").split()[0]
        scan = "ssh-keyscan " + ("" if port == "22" else f"-p {port} ") + \
            resolved.get("hostname", name)
        alias = resolved.get("hostkeyalias")
        if alias:
            scan += f" | awk -v n={alias} '{{$1=n}}1'"
        return (f"host key of {name} is not known (StrictHostKeyChecking=yes): check its "
                f"fingerprint, then add it with `{scan} >> {known}`, or set "
                "ssh.host_key_checking: accept-new")
    if m := _CHANGED.search(stderr):
        fp = _FINGERPRINT.search(stderr)
        off = _OFFENDING.search(stderr)
        where = f" (listed in {off.group(1)} line {off.group(2)})" if off else ""
        remove = f"ssh-keygen -R {m.group(1)}" + (f" -f {off.group(1)}" if off else "")
        return (f"HOST KEY CHANGED for {m.group(1)}: it sent "
                f"{fp.group(1) if fp else 'another key'}, not the key known{where}; refused "
                f"(a man in the middle, or a reinstalled host: if you know it is the latter, "
                f"`{remove}` and connect again)")
    if m := _REVOKED.search(stderr):
        files = [*resolved.get("userknownhostsfile", "").split(),
                 *resolved.get("globalknownhostsfile", "").split()]
        where = next(((f, n, line) for f, n, mark, line in known_lines(m.group(1), files)
                      if mark == "REVOKED"), None)
        if where:
            return (f"host key of {m.group(1)} ({_fingerprint(where[2])}) is REVOKED: listed "
                    f"@revoked in {where[0]} line {where[1]}; refused")
        return f"host key of {m.group(1)} is REVOKED (listed @revoked); refused"
    if "Host key verification failed" in stderr:
        return f"host key verification failed: {_last_line(stderr)}"
    return ""


def _settings(text: str) -> dict[str, str]:
    """``ssh -G`` output as {lower-case option: value}."""
    return dict(x.split(" ", 1) for x in text.splitlines() if " " in x)


def _last_line(text: str) -> str:
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    lines = [x for x in lines if not x.startswith("Warning: Permanently added")] or lines
    return lines[-1] if lines else "no message"


def known_lines(name: str, files: list[str]) -> list[tuple[str, int, str, str]]:
    """``(file, line number, marker, line)`` of each known_hosts line for host `name` in
    `files`, as ``ssh-keygen -F`` finds them (hashed names too); marker is "" or e.g.
    "REVOKED", "CA"."""
    found = []
    for f in files:
        if f == "none" or not Path(f).is_file():
            continue
        out = run_command(["ssh-keygen", "-F", name, "-f", f], timeout=30, check=False).stdout
        head = None
        for line in out.splitlines():
            if m := re.match(r"# Host .* found: line (\d+) ?(\S*)", line):
                head = (int(m.group(1)), m.group(2))
            elif head and line.strip():
                found.append((f, head[0], head[1], line))
                head = None
    return found


def _fingerprint(line: str) -> str:
    """``type SHA256:…`` of a known_hosts line ``[@marker] names type base64 …``."""
    words = line.split()
    _, kind, blob = words[1:4] if words[0].startswith("@") else words[:3]
    digest = hashlib.sha256(base64.b64decode(blob)).digest()
    return f"{kind} SHA256:{base64.b64encode(digest).decode().rstrip('=')}"


@register
class SSHBackend(Backend):
    """Run node k on ``hosts[k]`` over SSH."""

    name = "ssh"

    def __init__(self, spec):
        super().__init__(spec)
        self._ready: set[str] = set()
        self._resolved: dict[str, dict] = {}
        self.added: list[dict] = []  # keys accepted (accept-new) since the last run
        opts = spec.ssh
        self.remote_tmp = str(opts.get("remote_tmp", f"/tmp/dlperf-campaign-{spec.name}"))
        self.agent = f"{self.remote_tmp}/node.py"
        self.connect_timeout = opts.get("connect_timeout", 10.0)
        self.accept_new = opts.get("host_key_checking", "strict") == "accept-new"
        for h in spec.hosts:  # a config ssh cannot read stops the campaign here
            self._resolve(h)

    # -- ssh command lines --------------------------------------------------------------
    def _key(self, h: dict) -> str:
        return f"{h.get('user', '')}@{h['host']}:{h.get('port', '')}"

    def _batch(self, prog: str, accept_new: bool) -> list[str]:
        """``prog`` (ssh or scp) non-interactive, with the spec's config file and timeout."""
        argv = [prog, "-o", "BatchMode=yes", "-o",
                f"StrictHostKeyChecking={'accept-new' if accept_new else 'yes'}",
                "-o", f"ConnectTimeout={max(1, math.ceil(self.connect_timeout))}"]
        cfg = self.spec.ssh.get("config_file")
        return argv + (["-F", str(cfg)] if cfg else [])

    def _options(self, prog: str, h: dict) -> list[str]:
        """``prog`` (ssh or scp) with the spec's options for host `h`; the first value of an
        option wins in ssh, so these win over the ssh config."""
        opts = self.spec.ssh
        argv = self._batch(prog, self.accept_new)
        if opts.get("known_hosts"):
            argv += ["-o", f"UserKnownHostsFile={opts['known_hosts']}"]
        if opts.get("key_file"):
            argv += ["-i", str(opts["key_file"]), "-o", "IdentitiesOnly=yes"]
        user, port = h.get("user", opts.get("user")), h.get("port", opts.get("port"))
        if user:
            argv += ["-o", f"User={user}"]
        if port:
            argv += ["-o", f"Port={port}"]
        return argv

    def _ssh(self, h: dict, command: str) -> list[str]:
        """``ssh … -- HOST COMMAND``: `command` is one shell line, its words quoted."""
        return [*self._options("ssh", h), "-T", "--", h["host"], command]

    def _scp_host(self, h: dict) -> str:
        return f"[{h['host']}]" if ":" in h["host"] else h["host"]

    def _resolve(self, h: dict) -> dict:
        """What ``ssh -G`` says of host `h` (lower-case option -> value); SSHConfigError when
        ssh cannot read its config."""
        key = self._key(h)
        if key not in self._resolved:
            argv = [*self._options("ssh", h), "-G", "--", h["host"]]
            try:
                out = run_command(argv, timeout=30, check=False)
            except CommandError as exc:
                raise SSHConfigError(f"ssh {key}: {exc.reason}") from None
            if not out.ok:
                cfg = self.spec.ssh.get("config_file", "~/.ssh/config or /etc/ssh/ssh_config")
                raise SSHConfigError(f"ssh {key}: ssh cannot read its config {cfg} "
                                     f"(`ssh -G`): {_last_line(out.stderr)}")
            self._resolved[key] = _settings(out.stdout)
        return self._resolved[key]

    def _prepare_known_hosts(self, h: dict) -> None:
        """accept-new: make the folder (0700) and file (0600) ssh adds a new key to, as ssh
        makes ~/.ssh only."""
        if not self.accept_new:
            return
        files = self._resolve(h).get("userknownhostsfile", "").split()
        if files and files[0] != "none":
            path = Path(files[0])
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not path.exists():
                path.touch(mode=0o600)

    def _call(self, h: dict, argv: list[str], timeout: float):
        """Run a local ssh/scp command line for host `h`; SSHHostKeyError when ssh refused
        the host's key, SSHError when it could not connect (exit status 255)."""
        self._prepare_known_hosts(h)
        try:
            r = run_command(argv, timeout=timeout, check=False)
        except CommandError as exc:
            raise SSHError(f"ssh {self._key(h)}: {exc.reason}") from None
        self._note_added(h, r.stderr)
        problem = host_key_problem(r.stderr, self._resolve(h)) if r.returncode else ""
        if problem.startswith("host key verification failed"):
            problem = self._jump_problem(h) or problem
        if problem:
            raise SSHHostKeyError(f"ssh {self._key(h)}: {problem}")
        if argv[0] == "scp" and not r.ok:
            raise SSHError(f"ssh {self._key(h)}: scp failed: {_last_line(r.stderr)}")
        if r.returncode == 255:
            raise SSHError(f"ssh {self._key(h)}: cannot connect: {_last_line(r.stderr)}")
        return r

    def _jump_problem(self, h: dict) -> str:
        """Which ProxyJump host's key ssh refused: its ssh (run by ssh, with the config
        only) said nothing but "Host key verification failed"; '' when there is none or
        its key passes a strict check."""
        hop = self._resolve(h).get("proxyjump", "none").split(",")[0]
        if hop == "none":
            return ""
        dest = f"ssh://{hop}" if hop.count(":") == 1 and "[" not in hop else hop
        argv = self._batch("ssh", accept_new=False)
        try:
            r = run_command([*argv, "-T", "--", dest, "true"], timeout=60, check=False)
            resolved = run_command([*argv, "-G", "--", dest], timeout=30, check=False).stdout
        except CommandError:
            return ""
        problem = host_key_problem(r.stderr, _settings(resolved))
        return f"ProxyJump host {hop}: {problem}" if problem else ""

    def _run(self, h: dict, argv: list[str], timeout: float = 60):
        return self._call(h, self._ssh(h, shlex.join(argv)), timeout)

    def _note_added(self, h: dict, stderr: str) -> None:
        """Record (and say) the keys ssh added under accept-new."""
        for name, _ in _ADDED.findall(stderr):
            files = self._resolve(h).get("userknownhostsfile", "").split()[:1]
            lines = [x for *_, mark, x in known_lines(name, files) if not mark]
            key = _fingerprint(lines[-1]) if lines else "?"
            self.added.append({"host": name, "key": key, "file": files[0] if files else ""})
            print(f"ssh: accepted the new host key of {name} ({key}) on first use "
                  "(ssh.host_key_checking: accept-new)", file=sys.stderr)

    def _ensure_agent(self, h: dict) -> None:
        key = self._key(h)
        if key in self._ready:
            return
        self._check_private(h)
        host = self._scp_host(h)
        scp = [*self._options("scp", h), "-q", "--"]
        self._call(h, [*scp, str(NODE_AGENT), f"{host}:{self.agent}"], 120)
        # what node.py imports, for hosts without the package
        self._call(h, [*scp, *(str(PACKAGE_DIR / m) for m in AGENT_MODULES),
                       f"{host}:{self.remote_tmp}/analysis/"], 120)
        self._ready.add(key)

    def _check_private(self, h: dict) -> None:
        """Make remote_tmp and its ``analysis/``; SSHError unless they are real folders of the
        login user that no one else can write: the agent runs from there, and its folder
        comes first on its ``sys.path``."""
        r = self._run(h, ["sh", "-c", _PRIVATE, "sh", self.remote_tmp,
                          f"{self.remote_tmp}/analysis"])
        if not r.ok:
            raise SSHError(f"ssh {self._key(h)}: cannot make or check {self.remote_tmp}: "
                           f"{_last_line(r.stderr)}")
        if r.stdout.strip():
            raise SSHError(f"ssh {self._key(h)}: {r.stdout.splitlines()[0]} is not a private "
                           "folder of the login user: another user could put code there that "
                           "the agent would run; remove it or set ssh.remote_tmp")

    # -- Backend ------------------------------------------------------------------------
    def probe_gpus(self) -> int:
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
        self._ready.clear()

    def _remote(self, launch: Launch, node: NodeLaunch) -> dict[str, str]:
        flat = launch.run_id.replace("/", "__")
        base = f"{self.remote_tmp}/{flat}.node{node.index}"
        return {"result": f"{base}.result", "pidfile": f"{base}.pid",
                "env_json": f"{base}.env", "gpu_csv": f"{base}.gpu"}

    def remote_command(self, launch: Launch, node: NodeLaunch) -> str:
        """The shell line run on the node's host (every word quoted)."""
        paths = self._remote(launch, node)
        argv = self.agent_argv(launch, node, python=launch.python, agent=self.agent,
                               paths=paths, flags=("--env-stdin", "--watch-stdin"))
        return shlex.join(map(str, ["sh", "-c", AGENT_PARENT, "sh", launch.python,
                                    self.agent, paths["pidfile"], *argv]))

    def describe(self, launch: Launch) -> list[str]:
        lines = super().describe(launch)
        for n in launch.active():
            h = self.spec.hosts[n.index]
            lines.append(f"  ssh {self._key(h)} (node {n.index}): "
                         + redact_text(self.remote_command(launch, n), self.spec.secrets()))
        return lines

    def execute(self, launch: Launch) -> Outcome:
        t0, started = time.monotonic(), time.time()
        active = launch.active()
        procs: dict[int, Process] = {}
        rcs: dict[int, int | None] = {}
        try:
            try:
                for n in active:  # connect everywhere first: a dead host fails fast
                    self._ensure_agent(self.spec.hosts[n.index])
            except SSHError as exc:
                refused = isinstance(exc, SSHHostKeyError)  # the same key is refused again
                return self.outcome([], str(exc), t0, extra=self._accepted_keys(),
                                    no_retry="a refused host key is refused again" if refused
                                    else "")
            for n in active:
                procs[n.index] = self._start(launch, n)
            reason = self.wait_nodes(
                lambda: rcs.update({i: p.poll() for i, p in procs.items()}) or rcs,
                t0, launch.timeout)
        finally:
            self._stop(launch, active, procs, rcs)
        nodes = []
        for n in active:
            self._fetch(launch, n)
            nodes.append(self.node_outcome(n, rcs.get(n.index), started))
        return self.outcome(nodes, reason, t0, extra=self._accepted_keys())

    def _accepted_keys(self) -> dict:
        """``{"host_keys_accepted": [...]}``: keys trusted on first use (accept-new) since the
        last run, for this run's record; {} when none."""
        added, self.added = self.added, []
        return {"host_keys_accepted": added} if added else {}

    def _start(self, launch: Launch, n: NodeLaunch) -> Process:
        """The node's ssh session, in a session of its own (a terminal's Ctrl-C reaches the
        controller only, which then stops the node in order); the env goes on stdin, which
        stays open: the agent stops when it closes."""
        h = self.spec.hosts[n.index]
        with open(n.log, "wb") as log:
            proc = start_process(self._ssh(h, self.remote_command(launch, n)),
                                 stdin=PIPE, stdout=log, stderr=STDOUT, new_session=True)
        try:
            proc.send((json.dumps(n.env) + "\n").encode())
        except OSError:  # ssh already ended: its status says why
            pass
        return proc

    def _stop(self, launch: Launch, active, procs: dict, rcs: dict) -> None:
        """On their hosts, stop the agents still running and what is left of every agent that
        did not end with status 0 (a killed agent's workload runs on); end the ssh clients."""
        for i, p in procs.items():
            rcs[i] = p.poll()
        # every host at once; a host that cannot be reached leaves its SSHError in the future
        with ThreadPoolExecutor(max_workers=max(1, len(procs))) as pool:
            for n in active:
                if n.index in procs and rcs.get(n.index) != 0:
                    pool.submit(self._run, self.spec.hosts[n.index], [
                        launch.python, self.agent, "--kill",
                        self._remote(launch, n)["pidfile"]], 25)
        deadline = time.monotonic() + 10
        for i, p in procs.items():
            p.close_stdin()
            rcs[i] = p.wait(max(0.0, deadline - time.monotonic()))
            if rcs[i] is None:
                p.kill()
                p.wait(5)

    def _fetch(self, launch: Launch, n: NodeLaunch) -> None:
        """Copy the agent's result, env record and GPU CSV back (one scp; a file the agent
        did not write is left out); remove them remotely."""
        h = self.spec.hosts[n.index]
        remote = self._remote(launch, n)
        wanted = {"result": n.result, "env_json": n.env_json, "gpu_csv": n.gpu_csv}
        Path(n.result).parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=Path(n.result).parent) as tmp:
            host = self._scp_host(h)
            try:
                self._call(h, [*self._options("scp", h), "-q", "--",
                               *(f"{host}:{remote[k]}" for k in wanted), tmp], 120)
            except SSHError:
                pass  # some were not written (the agent failed early): those left out
            for k, local in wanted.items():
                got = Path(tmp) / Path(remote[k]).name
                if got.exists():
                    got.replace(local)
                else:
                    Path(local).unlink(missing_ok=True)
        try:
            self._run(h, ["rm", "-f", *remote.values()], timeout=30)
        except SSHError:
            pass
