"""OpenSSH client configs read as ``ssh`` reads them, ``Include`` followed, for fabric.

paramiko's ``SSHConfig`` (which fabric reads configs with) does not know ``Include``: it
kept it as a plain ``include`` option, so what an included file set for a host (``HostName``,
``Port``, ``User``, ``HostKeyAlias``, ``UserKnownHostsFile``...) was invisible to the ssh
backend and its host-key check. :func:`load` reads the configs ``ssh`` reads (``ssh.config_file``
as ``ssh -F`` does, else ``~/.ssh/config`` then ``/etc/ssh/ssh_config``: the first value wins)
and follows ``Include`` as ``man ssh_config`` says:

- several paths per line, each a glob (matches sorted; one that matches nothing is fine),
  ``~`` expanded (user configs only, as ssh allows); a relative path is taken in ``~/.ssh``
  for a user config and in ``/etc/ssh`` for the system one;
- an included file that cannot be read, or that someone else may write (ssh's "Bad owner or
  permissions"), is an error naming the ``Include`` line, as is a loop, or more than
  :data:`MAX_DEPTH` nested includes;
- an ``Include`` in a ``Host``/``Match`` block applies to that block: the included text is
  inlined there, and a ``Host``/``Match`` block inside it applies only where the enclosing
  block does (it becomes a ``Match`` of both conditions; paramiko ANDs a ``Match`` line's
  criteria, while a ``Host`` line's patterns are ORed and cannot express "both"). After the
  included text, the enclosing block's header is stated again, so that the lines after the
  ``Include`` belong to it, as they do for ssh.

The result is one paramiko ``SSHConfig`` (fabric's ``Config(ssh_config=...)``), so fabric and
:mod:`analysis.campaign.host_keys` look hosts up in the same config.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import stat
from io import StringIO
from pathlib import Path

from analysis.errors import DLPerfError

USER_CONFIG = "~/.ssh/config"
SYSTEM_CONFIG = "/etc/ssh/ssh_config"
#: where a relative Include of the system config points (a user config's: ``~/.ssh``)
SYSTEM_DIR = "/etc/ssh"
#: ssh's READCONF_MAX_DEPTH: includes nested deeper are an error
MAX_DEPTH = 16
#: how paramiko splits a line into keyword and value
SETTING = re.compile(r"(\w+)(?:\s*=\s*|\s+)(.+)")


class SSHConfigError(DLPerfError):
    """An ssh config (or a file it includes) cannot be read as ssh reads it."""


def load(config_file: str | None = None, user: str = USER_CONFIG,
         system: str = SYSTEM_CONFIG):
    """The paramiko ``SSHConfig`` of `config_file` (a user config, as ``ssh -F``), else of
    `user` then `system` (each skipped when missing), with every ``Include`` followed."""
    from paramiko import SSHConfig
    from paramiko.ssh_exception import ConfigParseError

    if config_file:
        files = [(os.path.expanduser(config_file), True)]
        if not os.path.isfile(files[0][0]):
            raise SSHConfigError(f"ssh.config_file {config_file}: no such file")
    else:
        files = [(os.path.expanduser(user), True), (system, False)]
    config = SSHConfig()
    for path, is_user in files:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue  # ssh skips a missing default config
        except OSError as exc:
            if config_file:
                raise SSHConfigError(f"cannot read ssh config {path}: "
                                     f"{exc.strerror or exc}") from None
            continue
        lines = _Reader(is_user).lines(path, text, [], [])
        try:  # one parse per file: each starts in paramiko's implicit "Host *", as in ssh
            config.parse(StringIO("".join(f"{x}\n" for x in lines)))
        except ConfigParseError as exc:
            raise SSHConfigError(f"ssh config {path} (or a file it includes): {exc}") from None
    return config


def _header(condition: list[str]) -> str:
    """The block line that applies where every criterion of `condition` holds."""
    return f"Match {shlex.join(condition)}" if condition else "Host *"


def _criteria(keyword: str, value: str) -> list[str]:
    """A ``Host``/``Match`` line's condition as ``Match`` criteria ([] for 'always')."""
    try:
        words = shlex.split(value, comments=True)
    except ValueError:
        words = value.split()
    if keyword == "host":
        return [] if words == ["*"] else ["originalhost", ",".join(words)]
    return [w for w in words if w != "all"]  # 'all' is the identity of a conjunction


class _Reader:
    """Inlines the Includes of one top-level config (a user one or the system one)."""

    def __init__(self, is_user: bool):
        self.is_user = is_user

    def lines(self, path: str, text: str, condition: list[str],
              stack: list[tuple[str, int]]) -> list[str]:
        """The lines of `path` (its `text`), included where `condition` holds (from the
        Include lines in `stack`), with its own Includes inlined."""
        out: list[str] = []
        block = condition
        for number, raw in enumerate(text.split("\n"), 1):
            m = SETTING.match(raw.strip())
            keyword = m.group(1).lower() if m else ""
            if keyword in ("host", "match"):
                if not condition:  # a top-level block of a top-level file: as written
                    out.append(raw)
                    block = _criteria(keyword, m.group(2))
                else:
                    block = condition + _criteria(keyword, m.group(2))
                    out.append(_header(block))
            elif keyword == "include":
                out += self.include(path, number, m.group(2), block, stack)
                out.append(_header(block))  # the enclosing block goes on after it
            else:
                out.append(raw)
        return out

    def include(self, path: str, number: int, value: str, block: list[str],
                stack: list[tuple[str, int]]) -> list[str]:
        """The inlined lines of the files that line `number` of `path` includes."""
        where = f"ssh config {path} line {number}"
        stack = [*stack, (path, number)]
        try:
            args = shlex.split(value, comments=True)
        except ValueError as exc:
            raise SSHConfigError(f"{where}: Include {value}: {exc}") from None
        out: list[str] = []
        for arg in args:
            if arg.startswith("~") and not self.is_user:
                raise SSHConfigError(f"{where}: Include {arg}: '~' is not allowed in the "
                                     "system config (ssh: bad include path)")
            if not arg.startswith(("/", "~")):
                arg = os.path.join("~/.ssh" if self.is_user else SYSTEM_DIR, arg)
            for name in sorted(glob.glob(os.path.expanduser(arg))):
                text = self.read(name, where)
                if text is None:
                    continue
                if any(os.path.realpath(p) == os.path.realpath(name) for p, _ in stack):
                    chain = " -> ".join([*(f"{p} line {n}" for p, n in stack), name])
                    raise SSHConfigError(f"{where}: Include {name}: an Include loop ({chain})")
                if len(stack) > MAX_DEPTH:
                    raise SSHConfigError(f"{where}: Include {name}: more than {MAX_DEPTH} "
                                         "nested Includes (ssh's limit)")
                out += self.lines(name, text, block, stack)
        return out

    @staticmethod
    def read(name: str, where: str) -> str | None:
        """The text of included file `name` (None: gone, or a folder, which ssh skips too);
        SSHConfigError when it cannot be read or others may write it, as ssh refuses."""
        try:
            with open(name, "rb") as fh:
                st = os.fstat(fh.fileno())
                if stat.S_ISDIR(st.st_mode):
                    return None
                if (st.st_uid not in (0, os.getuid())) or st.st_mode & 0o022:
                    raise SSHConfigError(
                        f"{where}: Include {name}: bad owner or permissions (owner uid "
                        f"{st.st_uid}, mode {stat.filemode(st.st_mode)}): ssh refuses a "
                        "config that another user may write")
                return fh.read().decode("utf-8", errors="replace")
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as exc:
            raise SSHConfigError(f"{where}: Include {name}: cannot read it: "
                                 f"{exc.strerror or exc}") from None
