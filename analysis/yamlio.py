"""Read a small YAML file a user writes (campaign spec, references, meta file), safely.

The file is size-capped and read without hanging on a FIFO. The document is composed first
(aliases stay shared, nothing is expanded): more than ``LIMITS['aliases']`` aliases, a key
given twice in one mapping, nesting deeper than ``LIMITS['depth']`` or more than
``LIMITS['nodes']`` values once aliases are expanded (a 600-byte "billion laughs" is 10^9)
are refused before any Python object is built. Every failure is a :class:`YamlError` of one
line, ``<file>[:<line>]: <problem>``, that echoes no value.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from analysis.errors import UsageError

LIMITS = {"bytes": 1 << 20, "nodes": 100_000, "aliases": 1_000, "depth": 64}


class YamlError(UsageError):
    """A YAML file cannot be read; the message names the file, and the line when known."""


def read_text(path: str | Path, source: str | None = None, max_bytes: int = LIMITS["bytes"],
              what: str = "a short YAML file") -> str:
    """The UTF-8 text of `path` (at most `max_bytes`); YamlError for a folder, a device, an
    unreadable, too large or undecodable file. `source` names it in messages."""
    src = str(path) if source is None else source
    try:
        st = Path(path).stat()
        if stat.S_ISDIR(st.st_mode):
            raise YamlError(f"{src}: is a directory; give the YAML file inside it")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise YamlError(f"{src}: not a regular file (a device or socket)")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO without writer: no hang
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise YamlError(f"{src}: cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise YamlError(f"{src}: over {max_bytes // 1024} KiB; expected {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise YamlError(f"{src}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save "
                        "the file as UTF-8") from None


class _Loader(yaml.SafeLoader):
    """SafeLoader that counts aliases while composing."""

    aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > LIMITS["aliases"]:
                raise _Refused(self.peek_event().start_mark, f"more than {LIMITS['aliases']} "
                               "aliases (*name)")
        return super().compose_node(parent, index)


class _Refused(Exception):
    def __init__(self, mark, problem: str):
        super().__init__(problem)
        self.mark, self.problem = mark, problem


def _check_graph(root: yaml.Node) -> None:
    """Refuse duplicate keys, deep nesting, self-reference and alias expansion beyond
    LIMITS, counting expanded sizes on the shared node graph."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(n: yaml.Node, depth: int) -> int:
        if id(n) in sizes:
            return sizes[id(n)]
        if id(n) in open_nodes:
            raise _Refused(n.start_mark, "an alias refers to its own anchor (a recursive "
                           "document)")
        if depth > LIMITS["depth"]:
            raise _Refused(n.start_mark, f"nested more than {LIMITS['depth']} levels deep")
        open_nodes.add(id(n))
        total = 1
        if isinstance(n, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key, _ in n.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    seen = first.setdefault((key.tag, key.value), key.start_mark.line + 1)
                    if seen != key.start_mark.line + 1:
                        raise _Refused(key.start_mark, f"key {key.value[:60]!r} appears twice "
                                       f"in one mapping (first on line {seen}); keep one")
        children = n.value if isinstance(n, yaml.SequenceNode) else \
            [x for kv in n.value for x in kv] if isinstance(n, yaml.MappingNode) else []
        total += sum(size(c, depth + 1) for c in children)
        open_nodes.discard(id(n))
        if total > LIMITS["nodes"]:
            raise _Refused(None, f"more than {LIMITS['nodes']} YAML values once anchors and "
                           "aliases are expanded (an alias bomb?); write it out plainly")
        sizes[id(n)] = total
        return total

    size(root, 0)


def parse(text: str, source: str = "<text>") -> Any:
    """The Python value of the YAML document `text` within LIMITS (None when empty)."""
    if len(text.encode("utf-8", "replace")) > LIMITS["bytes"]:
        raise YamlError(f"{source}: over {LIMITS['bytes'] // 1024} KiB")
    loader = None
    try:
        loader = _Loader(text)  # checks that every character is printable
        node = loader.get_single_node()
        if node is None:
            return None
        _check_graph(node)
        return loader.construct_document(node)
    except _Refused as exc:
        where = f":{exc.mark.line + 1}" if exc.mark else ""
        raise YamlError(f"{source}{where}: {exc.problem}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}: not valid YAML (column {mark.column + 1})" if mark else \
            ": not valid YAML"
        what = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise YamlError(f"{source}{where}: {what[:200]}") from None
    except yaml.reader.ReaderError as exc:
        line = text[:exc.position].count("\n") + 1
        raise YamlError(f"{source}:{line}: not valid YAML: {exc.reason}") from None
    except yaml.YAMLError as exc:
        raise YamlError(f"{source}: not valid YAML: {' '.join(str(exc).split())[:200]}"
                        ) from None
    except RecursionError:
        raise YamlError(f"{source}: nested too deeply") from None
    except ValueError as exc:  # a constructor's own error: an int of thousands of digits
        raise YamlError(f"{source}: a value YAML cannot read: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()


def node_at(text: str, key: str | None) -> tuple[yaml.Node | None, int | None]:
    """The node of `key` (a path such as ``cases[0].batch_size``; '' is the document) in
    `text`, already read by :func:`parse`, and its line; for a missing key, (None, the line
    of the deepest part of it that exists)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None, None
    line = None
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", key or ""):
        if isinstance(node, yaml.SequenceNode) and part.startswith("["):
            i = int(part[1:-1])
            node = node.value[i] if i < len(node.value) else None
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
    return node, line
