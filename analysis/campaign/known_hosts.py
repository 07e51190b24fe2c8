"""known_hosts files read as OpenSSH reads them (``sshd(8)``, SSH_KNOWN_HOSTS FILE FORMAT).

paramiko's reader drops marker lines (``@revoked``, ``@cert-authority``) and matches host
names only literally. Here every line is an :class:`Entry` that keeps its marker, file and
line number, and :func:`matches` follows OpenSSH's ``match_hostname``: comma-separated
patterns with ``*`` and ``?``, a ``!`` pattern that matches excludes the line, case does not
matter, and hashed names (``|1|salt|hash``, HMAC-SHA1 of the name) are checked. Lines
OpenSSH would skip (comments, too few fields, an unknown marker, a key that is not base64)
are skipped.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import struct
from dataclasses import dataclass
from pathlib import Path

MARKERS = ("@revoked", "@cert-authority")


@dataclass(frozen=True)
class Entry:
    """One key line: ``marker`` is '' for a plain host key."""

    path: Path
    line: int
    marker: str
    hosts: str
    blob: bytes

    @property
    def key_type(self) -> str:
        return blob_type(self.blob)

    def describe(self) -> str:
        """'ssh-ed25519 SHA256:...' (OpenSSH's fingerprint format)."""
        return f"{self.key_type} {fingerprint(self.blob)}"


def blob_type(blob: bytes) -> str:
    """The key type a public key blob starts with ('' when it does not)."""
    if len(blob) < 4:
        return ""
    (n,) = struct.unpack(">I", blob[:4])
    return blob[4:4 + n].decode("ascii", "replace")


def fingerprint(blob: bytes) -> str:
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def read(path: Path) -> list[Entry]:
    """Every key line of the file at `path` (OSError when it cannot be read)."""
    entries = []
    text = Path(path).read_bytes().decode("utf-8", "replace")
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        marker = words.pop(0) if words[0].startswith("@") else ""
        if (marker and marker not in MARKERS) or len(words) < 3:
            continue
        try:
            blob = base64.b64decode(words[2], validate=True)
        except (binascii.Error, ValueError):
            continue
        entries.append(Entry(Path(path), number, marker, words[0], blob))
    return entries


def _pattern(glob: str) -> re.Pattern:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def _hashed(field: str, name: str) -> bool:
    try:
        _, _, salt, digest = field.split("|")
        salt_b, digest_b = base64.b64decode(salt), base64.b64decode(digest)
    except (ValueError, binascii.Error):
        return False
    mac = hmac.new(salt_b, name.encode(), hashlib.sha1).digest()
    return hmac.compare_digest(mac, digest_b)


def matches(hosts: str, name: str) -> bool:
    """Whether the host field `hosts` of a line covers `name` (``host`` or ``[host]:port``)."""
    if hosts.startswith("|1|"):
        return _hashed(hosts, name)
    hit = False
    for pattern in hosts.split(","):
        negated = pattern.startswith("!")
        if _pattern(pattern[1:] if negated else pattern).fullmatch(name):
            if negated:
                return False
            hit = True
    return hit
