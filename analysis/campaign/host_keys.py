"""SSH host keys checked as OpenSSH checks them, for the ssh backend's paramiko clients.

fabric's ``Connection`` accepts any host key (paramiko's ``AutoAddPolicy``, no known_hosts
loaded), so a campaign to an unknown host, or to one whose key changed (a man in the
middle), sent its workload, arguments and environment without a word. Here, per host
(:meth:`HostKeys.check`), from the ssh config fabric read for it (``~/.ssh/config`` and
``/etc/ssh/ssh_config``, or ``ssh.config_file``):

- the files read are its ``UserKnownHostsFile`` (default ``~/.ssh/known_hosts`` and
  ``~/.ssh/known_hosts2``; replaced by the spec's ``ssh.known_hosts``) and its
  ``GlobalKnownHostsFile`` (default ``/etc/ssh/ssh_known_hosts`` and
  ``/etc/ssh/ssh_known_hosts2``), several names per option, ``none`` for none;
  ``UserKnownHostsFile`` takes ``~`` and OpenSSH's ``%`` tokens and ``${VAR}``;
- the name looked up is its ``HostKeyAlias`` as written, else ``host`` or ``[host]:port``
  off port 22 (``host`` after ``HostName``);
- the decision is made here (:meth:`HostCheck.judge`), not by paramiko's lookup, which cannot
  read marker lines and knows one key per type: a key listed ``@revoked`` is refused whatever
  other lines say; a key of a known type that is not listed is a changed key and always
  refused; a key of an unknown type is refused (``ssh.host_key_checking: strict``, the
  default) with the command that adds it, or, with ``accept-new`` (OpenSSH's
  ``StrictHostKeyChecking accept-new``), added to the first user file and reported;
- key types known for the host are asked for first, as OpenSSH orders its host key
  algorithms;
- paramiko cannot check host certificates: a host covered by a ``@cert-authority`` line whose
  plain key is not listed is refused, under ``accept-new`` too (ssh would have checked the
  host's certificate, not trusted it on first use).
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import socket
import sys
from pathlib import Path

from analysis.campaign import known_hosts
from analysis.campaign.commands import shell_join
from analysis.errors import DLPerfError

MODES = ("strict", "accept-new")
USER_FILES = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
SYSTEM_FILES = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
#: known_hosts key type -> paramiko's host key algorithms for it
ALGORITHMS = {"ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256")}


class HostKeyError(DLPerfError):
    """A host's key is unknown, changed or revoked: the connection was refused."""


def key_name(host: str, port: int | None) -> str:
    """The host as known_hosts names it: ``host``, or ``[host]:port`` off port 22."""
    return host if port in (None, 22) else f"[{host}]:{port}"


def describe_key(key) -> str:
    """'ssh-ed25519 SHA256:...' (OpenSSH's fingerprint format)."""
    return f"{key.get_name()} {key.fingerprint}"


def _home(user: str = "") -> str:
    """The home folder of `user` (default: this process's user) as OpenSSH finds it: from
    the password database, not $HOME."""
    try:
        return (pwd.getpwnam(user) if user else pwd.getpwuid(os.getuid())).pw_dir
    except KeyError:
        raise HostKeyError(f"UserKnownHostsFile: no user {user!r} for '~{user}'") from None


def expand(path: str, tokens: dict[str, str]) -> str:
    """`path` with ``~``/``~user`` at its start, ``%x`` tokens and ``${VAR}`` expanded as
    OpenSSH expands UserKnownHostsFile."""
    if path.startswith("~"):
        user, slash, rest = path[1:].partition("/")
        path = _home(user) + (slash + rest if slash else "")

    def one(m: re.Match) -> str:
        if m.group(1) is not None:
            if m.group(1) not in tokens:
                raise HostKeyError(f"UserKnownHostsFile {path}: token %{m.group(1)} is not "
                                   f"supported here (supported: "
                                   f"{' '.join('%' + t for t in tokens)})")
            return tokens[m.group(1)]
        if m.group(2) not in os.environ:
            raise HostKeyError(f"UserKnownHostsFile {path}: environment variable "
                               f"${{{m.group(2)}}} is not set")
        return os.environ[m.group(2)]

    return re.sub(r"%(.)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}", one, path)


def _files(value: str | None, default: tuple[str, ...], tokens: dict | None) -> list[Path]:
    """The files an ssh config value names (`tokens`: expanded as UserKnownHostsFile)."""
    if value is None:
        names = list(default)
        tokens = tokens or {}
    else:
        try:
            names = shlex.split(value)
        except ValueError:
            names = value.split()
        if names == ["none"]:
            return []
    return [Path(expand(n, tokens) if tokens is not None else n) for n in names]


class HostKeys:
    """What the spec says: the mode for unknown keys and its known_hosts file (None: the
    ssh config's). One per backend; :meth:`check` gives each host its own check."""

    def __init__(self, mode: str = "strict", known_hosts: str | None = None):
        self.mode = mode
        self.known_hosts = known_hosts
        #: keys added under accept-new and not yet reported in a run record
        self.added: list[dict] = []

    def check(self, host: str, port: int | None, ssh_config: dict | None = None,
              original_host: str | None = None, user: str | None = None) -> HostCheck:
        """The check of `host` (after ``HostName``) on `port`, given the options the ssh
        config sets for it (`ssh_config`: fabric's ``Connection.ssh_config``)."""
        cfg = ssh_config or {}
        alias = cfg.get("hostkeyalias")
        local = socket.gethostname()
        tokens = {"%": "%", "d": _home(), "u": pwd.getpwuid(os.getuid()).pw_name,
                  "i": str(os.getuid()), "h": host, "n": original_host or host,
                  "p": str(port or 22), "r": user or "", "k": alias or original_host or host,
                  "l": local, "L": local.split(".")[0]}
        if self.known_hosts:
            user_files = [Path(os.path.expanduser(self.known_hosts))]
        else:
            user_files = _files(cfg.get("userknownhostsfile"), USER_FILES, tokens)
        system_files = _files(cfg.get("globalknownhostsfile"), SYSTEM_FILES, None)
        return HostCheck(self, alias or key_name(host, port), host, port, user_files,
                         system_files)


class HostCheck:
    """The check of one host: the name its keys are known under and the files read."""

    def __init__(self, keys: HostKeys, name: str, host: str, port: int | None,
                 user_files: list[Path], system_files: list[Path]):
        self.keys, self.name, self.host, self.port = keys, name, host, port
        self.user_files, self.system_files = user_files, system_files
        self.files = [*user_files, *system_files]
        self.entries: list[known_hosts.Entry] = []

    def load(self) -> None:
        """Read the lines of every file that cover this host's name."""
        self.entries = []
        for path in self.files:
            try:
                lines = known_hosts.read(path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                raise HostKeyError(f"cannot read known hosts file {path}: "
                                   f"{exc.strerror or exc}") from None
            self.entries += [e for e in lines if known_hosts.matches(e.hosts, self.name)]

    def install(self, client) -> dict:
        """Read the files, make this check the paramiko `client`'s policy for every key
        (no key is loaded into paramiko, so it decides nothing), and return the connect
        arguments that ask for the known key types first."""
        self.load()
        client.set_missing_host_key_policy(_Policy(self))
        return {"transport_factory": self._transport}

    def _transport(self, *args, **kwargs):
        from paramiko import Transport

        transport = Transport(*args, **kwargs)
        known = {a for e in self.entries if not e.marker
                 for a in ALGORITHMS.get(e.key_type, (e.key_type,))}
        opts = transport.get_security_options()
        opts.key_types = sorted(opts.key_types, key=lambda a: a not in known)
        return transport

    def checked(self) -> str:
        return ", ".join(str(p) for p in self.files if p.is_file()) or \
            f"none found (looked for {', '.join(map(str, self.files)) or 'no file'})"

    def judge(self, key) -> None:
        """Return when `key` (paramiko's) is this host's known key or is accepted new;
        HostKeyError otherwise."""
        blob = key.asbytes()
        for e in self.entries:
            if e.marker == "@revoked" and e.blob == blob:
                raise HostKeyError(
                    f"host key of {self.name} ({describe_key(key)}) is REVOKED: listed "
                    f"@revoked in {e.path} line {e.line}; refused, whatever other lines say")
        plain = [e for e in self.entries if not e.marker]
        if any(e.blob == blob for e in plain):
            return
        same_type = [e for e in plain if e.key_type == known_hosts.blob_type(blob)]
        if same_type:
            raise self.changed(key, same_type[0])
        authority = next((e for e in self.entries if e.marker == "@cert-authority"), None)
        if authority is not None:
            raise self.unknown(
                key, f"{authority.path} line {authority.line} names a certificate authority "
                "(@cert-authority) for it, but the ssh backend (paramiko) cannot check host "
                "certificates, so the host's own key must be listed (accept-new does not "
                "apply)")
        if self.keys.mode != "accept-new":
            raise self.unknown(key, "or set ssh.host_key_checking: accept-new to trust keys "
                                    "on first use")
        self.accept(key)

    def _add_command(self) -> str:
        keyscan = shell_join(["ssh-keyscan", *(["-p", str(self.port)]
                                               if self.port not in (None, 22) else []),
                              self.host])
        if self.name != key_name(self.host, self.port):  # HostKeyAlias: the line's name
            keyscan += " | " + shell_join(["awk", "-v", f"n={self.name}", "{$1=n}1"])
        target = self.user_files[0] if self.user_files else "~/.ssh/known_hosts"
        return f"{keyscan} >> {shell_join([str(target)])}"

    def unknown(self, key, note: str) -> HostKeyError:
        return HostKeyError(
            f"host key of {self.name} is not known ({describe_key(key)}; known hosts read: "
            f"{self.checked()}); refused ({note}). If this is the right host, check that "
            f"fingerprint and add the key: {self._add_command()}")

    def changed(self, key, known: known_hosts.Entry) -> HostKeyError:
        """The error for `key`, offered in place of the `known` key of that type."""
        return HostKeyError(
            f"HOST KEY CHANGED for {self.name}: it offered {describe_key(key)}, the known key "
            f"is {known.describe()} ({known.path} line {known.line}; known hosts read: "
            f"{self.checked()}); refused: someone may be intercepting the connection, or the "
            "host was reinstalled. If the change is expected, remove the old key: "
            f"{shell_join(['ssh-keygen', '-R', self.name, '-f', str(known.path)])}")

    def accept(self, key) -> None:
        """Append `key` under this host's name to the first user known_hosts file (created
        0600), as OpenSSH's accept-new does, and say so on stderr."""
        if not self.user_files:
            raise HostKeyError(f"host key of {self.name} ({describe_key(key)}) is new and "
                               "ssh.host_key_checking is accept-new, but UserKnownHostsFile "
                               "is none: there is no file to add it to; refused")
        path = self.user_files[0]
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(f"{self.name} {key.get_name()} {key.get_base64()}\n")
        except OSError as exc:
            raise HostKeyError(f"host key of {self.name} ({describe_key(key)}) is new and "
                               f"ssh.host_key_checking is accept-new, but it cannot be added "
                               f"to {path}: {exc.strerror or exc}; refused") from None
        entry = {"host": self.name, "key": describe_key(key), "known_hosts": str(path)}
        self.keys.added.append(entry)
        print(f"ssh: new host key of {self.name} ({entry['key']}) accepted and added to "
              f"{path} (ssh.host_key_checking: accept-new)", file=sys.stderr, flush=True)


class _Policy:
    """paramiko's missing-host-key policy (duck-typed: paramiko is imported only by the
    ssh backend when it connects). No key is loaded into the client, so paramiko asks it
    about every key."""

    def __init__(self, check: HostCheck):
        self.check = check

    def missing_host_key(self, client, hostname, key):
        self.check.judge(key)
