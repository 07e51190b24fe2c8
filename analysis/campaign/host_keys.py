"""SSH host keys checked as OpenSSH checks them, for the ssh backend's paramiko clients.

fabric's ``Connection`` accepts any host key (paramiko's ``AutoAddPolicy``, no known_hosts
loaded), so a campaign to an unknown host, or to one whose key changed (a man in the
middle), sent its workload, arguments and environment without a word. Here:

- the known keys are read from the user's file (``ssh.known_hosts``, default
  ``~/.ssh/known_hosts`` and ``~/.ssh/known_hosts2``) and the system's
  (``/etc/ssh/ssh_known_hosts``, ``/etc/ssh/ssh_known_hosts2``);
- a changed key is always refused (paramiko raises ``BadHostKeyException``; reworded here);
- an unknown key is refused (``ssh.host_key_checking: strict``, the default) with the command
  that adds it, or, with ``accept-new`` (trust on first use, as OpenSSH's
  ``StrictHostKeyChecking accept-new``), appended to the user's file and reported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from analysis.campaign.commands import shell_join
from analysis.errors import DLPerfError

MODES = ("strict", "accept-new")
USER_FILES = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
SYSTEM_FILES = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")


class HostKeyError(DLPerfError):
    """A host's key is unknown or differs from the known one: the connection was refused."""


def key_name(host: str, port: int | None) -> str:
    """The host as known_hosts names it: ``host``, or ``[host]:port`` off port 22."""
    return host if port in (None, 22) else f"[{host}]:{port}"


def describe_key(key) -> str:
    """'ssh-ed25519 SHA256:...' (OpenSSH's fingerprint format)."""
    return f"{key.get_name()} {key.fingerprint}"


class HostKeys:
    """Which known_hosts files a client trusts, and what it does with an unknown key."""

    def __init__(self, mode: str = "strict", known_hosts: str | None = None):
        self.mode = mode
        user = [known_hosts] if known_hosts else list(USER_FILES)
        self.user_files = [Path(os.path.expanduser(p)) for p in user]
        self.files = [*self.user_files, *map(Path, SYSTEM_FILES)]
        #: keys added under accept-new and not yet reported in a run record
        self.added: list[dict] = []

    def install(self, client) -> None:
        """Load the known keys into the paramiko `client` and set the policy for unknown
        keys (replacing fabric's AutoAddPolicy)."""
        for path in self.files:
            if not path.is_file():
                continue
            try:
                client.load_system_host_keys(str(path))
            except Exception as exc:  # unreadable, or a line paramiko cannot parse
                raise HostKeyError(f"cannot read known hosts file {path}: {exc}") from None
        client.set_missing_host_key_policy(_Policy(self))

    def checked(self) -> str:
        return ", ".join(str(p) for p in self.files if p.is_file()) or \
            f"none found (looked for {', '.join(map(str, self.files))})"

    def unknown(self, name: str, host: str, port: int | None, key) -> HostKeyError:
        keyscan = shell_join(["ssh-keyscan", *(["-p", str(port)] if port not in (None, 22)
                                                else []), host])
        target = shell_join([str(self.user_files[0])])
        return HostKeyError(
            f"host key of {name} is not known ({describe_key(key)}; known hosts read: "
            f"{self.checked()}); refused. If this is the right host, check that fingerprint "
            f"and add the key: {keyscan} >> {target} (or set ssh.host_key_checking: "
            "accept-new to trust keys on first use)")

    def changed(self, name: str, exc) -> HostKeyError:
        """The error for paramiko's BadHostKeyException `exc` (a known host, another key)."""
        target = shell_join([str(self.user_files[0])])
        return HostKeyError(
            f"HOST KEY CHANGED for {name}: it offered {describe_key(exc.key)}, the known key "
            f"is {describe_key(exc.expected_key)} (known hosts read: {self.checked()}); "
            "refused: someone may be intercepting the connection, or the host was "
            "reinstalled. If the change is expected, remove the old key: "
            f"{shell_join(['ssh-keygen', '-R', name, '-f'])} {target}")

    def accept(self, name: str, key) -> None:
        """Append `key` of `name` to the user's known_hosts file (created 0600), as
        OpenSSH's accept-new does, and say so on stderr."""
        path = self.user_files[0]
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(f"{name} {key.get_name()} {key.get_base64()}\n")
        except OSError as exc:
            raise HostKeyError(f"host key of {name} ({describe_key(key)}) is new and "
                               f"ssh.host_key_checking is accept-new, but it cannot be added "
                               f"to {path}: {exc.strerror or exc}; refused") from None
        entry = {"host": name, "key": describe_key(key), "known_hosts": str(path)}
        self.added.append(entry)
        print(f"ssh: new host key of {name} ({entry['key']}) accepted and added to {path} "
              "(ssh.host_key_checking: accept-new)", file=sys.stderr, flush=True)


class _Policy:
    """paramiko's missing-host-key policy (duck-typed: paramiko is imported only by the
    ssh backend when it connects)."""

    def __init__(self, keys: HostKeys):
        self.keys = keys

    def missing_host_key(self, client, hostname, key):
        if self.keys.mode != "accept-new":
            host, _, port = hostname.removeprefix("[").partition("]:")
            raise self.keys.unknown(hostname, host, int(port) if port else None, key)
        self.keys.accept(hostname, key)
        client.get_host_keys().add(hostname, key.get_name(), key)
