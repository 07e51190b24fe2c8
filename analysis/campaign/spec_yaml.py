"""Read a campaign spec's YAML safely: bounded size, bounded alias expansion, one-line errors.

A key given twice in one mapping is an error, not "the last one wins". A 600-byte YAML file
with nested anchors ("billion laughs") expands to 10^9 nodes; a spec
never needs that. The document is composed first (aliases are shared, nothing is expanded),
its expanded size is counted on the node graph, and only a document within :data:`LIMITS`
is turned into Python objects. Every failure is a :class:`SpecError` of one line that names
the file (and line) and says which limit was hit; no value is echoed.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from analysis.errors import UsageError

#: Bounds of a spec file (bytes, YAML nodes after alias expansion, aliases, nesting depth).
LIMITS = {"bytes": 1 << 20, "nodes": 100_000, "aliases": 1_000, "depth": 64}


class SpecError(UsageError):
    """A campaign spec is invalid; the message names the key and the allowed values.
    ``key`` is the key's path (``slurm.partition``, ``cases[0].batch_size``) when known."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


def key_line(text: str, key: str | None) -> int | None:
    """The line of `key` (a path such as ``cases[0].batch_size``) in the YAML `text`, or of
    the deepest part of it that exists; None when unknown. `text` was read by parse_yaml."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader) if key else None
    except yaml.YAMLError:
        return None
    line = None
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", key or ""):
        if isinstance(node, yaml.SequenceNode) and part.startswith("["):
            items = node.value
            node = items[int(part[1:-1])] if int(part[1:-1]) < len(items) else None
        elif isinstance(node, yaml.MappingNode):
            node, mark = next(((v, k.start_mark) for k, v in node.value
                               if isinstance(k, yaml.ScalarNode) and k.value == part),
                              (None, None))
            line = mark.line + 1 if mark else line
            continue
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def read_spec_bytes(path: str | Path) -> bytes:
    """The bytes of a spec file (at most ``LIMITS['bytes']``); SpecError for a folder, a
    device, an unreadable or a too large file."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise SpecError(f"cannot read spec {path}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise SpecError(f"spec {path} is a directory; give the YAML file inside it")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise SpecError(f"spec {path} is not a regular file (a device or socket)")
    limit = LIMITS["bytes"]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO without writer: no hang
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise SpecError(f"cannot read spec {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise SpecError(f"spec {path} is larger than {limit // 1024} KiB; a campaign spec "
                        "is a short YAML file")
    return data


def decode_spec(data: bytes, source: str) -> str:
    """UTF-8 text of a spec; SpecError naming the line of the first undecodable byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SpecError(f"spec {source} line {line}: not UTF-8 text (byte "
                        f"0x{data[exc.start]:02x}); save the file as UTF-8") from None


def _check_unique_keys(node: yaml.MappingNode, source: str) -> None:
    """SpecError when a mapping names a key twice (YAML would keep the last one silently)."""
    first: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        line = key.start_mark.line + 1
        seen = first.setdefault((key.tag, key.value), line)
        if seen != line:
            raise SpecError(f"spec {source} line {line}: key {key.value[:60]!r} appears twice "
                            f"in one mapping (first on line {seen}); keep one")


def _expanded_size(node: yaml.Node, source: str) -> int:
    """Nodes of the document once every alias is expanded, counted without expanding."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    limit = LIMITS["nodes"]

    def size(n: yaml.Node, depth: int) -> int:
        if id(n) in sizes:
            return sizes[id(n)]
        if id(n) in open_nodes:
            raise SpecError(f"spec {source} line {n.start_mark.line + 1}: an alias refers to "
                            "its own anchor (a recursive document)")
        if depth > LIMITS["depth"]:
            raise SpecError(f"spec {source} line {n.start_mark.line + 1}: nested more than "
                            f"{LIMITS['depth']} levels deep")
        open_nodes.add(id(n))
        total = 1
        if isinstance(n, yaml.SequenceNode):
            total += sum(size(c, depth + 1) for c in n.value)
        elif isinstance(n, yaml.MappingNode):
            _check_unique_keys(n, source)
            total += sum(size(k, depth + 1) + size(v, depth + 1) for k, v in n.value)
        open_nodes.discard(id(n))
        if total > limit:
            raise SpecError(f"spec {source}: more than {limit} YAML values once anchors and "
                            "aliases are expanded (an alias bomb?); write the spec out plainly")
        sizes[id(n)] = total
        return total

    return size(node, 0)


class _CountingLoader(yaml.SafeLoader):
    """SafeLoader that refuses a document with too many aliases while composing it."""

    aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > LIMITS["aliases"]:
                mark = self.peek_event().start_mark
                raise SpecError(f"line {mark.line + 1}: more than {LIMITS['aliases']} "
                                "aliases (*name)")
        return super().compose_node(parent, index)


def parse_yaml(text: str, source: str = "<text>") -> Any:
    """The Python value of a YAML document, within :data:`LIMITS`."""
    if len(text.encode("utf-8", "replace")) > LIMITS["bytes"]:
        raise SpecError(f"spec {source} is larger than {LIMITS['bytes'] // 1024} KiB")
    loader = None
    try:
        loader = _CountingLoader(text)  # checks that every character is printable
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, source)
        return loader.construct_document(node)
    except SpecError as exc:
        msg = str(exc)
        raise SpecError(msg if msg.startswith("spec ") else f"spec {source} {msg}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise SpecError(f"spec {source}{where}: not valid YAML: {what[:200]}") from None
    except yaml.reader.ReaderError as exc:
        line = text[:exc.position].count("\n") + 1
        raise SpecError(f"spec {source} line {line}: not valid YAML: {exc.reason}") from None
    except yaml.YAMLError as exc:
        what = " ".join(str(exc).split())
        raise SpecError(f"spec {source}: not valid YAML: {what[:200]}") from None
    except RecursionError:
        raise SpecError(f"spec {source}: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_spec_text(path: str | Path) -> str:
    """The UTF-8 text of a spec file within :data:`LIMITS`."""
    return decode_spec(read_spec_bytes(path), str(path))
