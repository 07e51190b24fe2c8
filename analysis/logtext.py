"""Read a log file into clean bytes that parsers can match with whole-file regexes.

Cleaning keeps the line count unchanged, so offsets map to the file's own line numbers:
gzip is opened transparently, CR before LF is dropped, ANSI escapes are removed, and
launcher rank prefixes (Open MPI ``[1,0]<stdout>:``, horovodrun ``[0]<stdout>:``, torchrun
``[default3]:``, ``srun -l`` ``3: ``) are stripped while the rank is kept per line.
Undecodable bytes are left in place (parsers work on bytes) and reported once.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.problems import Problem

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\n]*\x07")
_ASCTIME = rb"(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})?"
# group 1: Open MPI job id or horovod-gloo rank; group 2: Open MPI rank; 3: torchrun; 4: srun -l
_RANK_PREFIX = re.compile(
    rb"^" + _ASCTIME + rb"\[(\d+)(?:,(\d+))?\]<std(?:out|err)>:"
    rb"|^\[default(\d+)\]:"
    rb"|^ {0,3}(\d{1,5}): (?=\S)",
    re.M,
)
_PREFIX_HINT = re.compile(rb"^(?:" + _ASCTIME + rb"\[\d+(?:,\d+)?\]<std|\[default\d+\]:| {0,3}\d{1,5}: \S)", re.M)


def _has_rank_prefixes(raw: bytes) -> bool:
    """Cheap test: launcher tags anywhere (substring search), or a prefix near the top."""
    return (b"]<std" in raw or b"[default" in raw
            or _PREFIX_HINT.search(raw, 0, 1 << 12) is not None)


def _open_bytes(path: Path) -> bytes:
    with open(path, "rb") as fh:
        head = fh.read(2)
        fh.seek(0)
        if head == b"\x1f\x8b":
            with gzip.open(fh) as gz:
                return gz.read()
        return fh.read()


@dataclass
class LogText:
    """A cleaned log: `data` has the same lines as the file, minus prefixes and escapes."""

    source: str
    data: bytes
    line_ranks: dict[int, int] = field(default_factory=dict)  # line -> rank from a prefix
    problems: list[Problem] = field(default_factory=list)
    _newlines: np.ndarray | None = None

    @classmethod
    def from_bytes(cls, raw: bytes, source: str) -> LogText:
        problems: list[Problem] = []
        if b"\r" in raw:
            raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\x1b" in raw:
            raw = _ANSI.sub(b"", raw)
        text = cls(source=source, data=raw, problems=problems)
        if not raw.isascii():
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = raw.count(b"\n", 0, exc.start) + 1
                problems.append(
                    Problem(source, line, "undecodable_bytes",
                            f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not UTF-8; "
                            "read with replacement characters", text.line_text(line))
                )
        if _has_rank_prefixes(raw):
            text._strip_rank_prefixes()
        return text

    @classmethod
    def read(cls, path: str | Path, source: str | None = None) -> LogText:
        """Read and clean `path` (plain or gzip). Raises OSError/EOFError if unreadable."""
        path = Path(path)
        return cls.from_bytes(_open_bytes(path), source or str(path))

    def _strip_rank_prefixes(self) -> None:
        data = self.data
        matches = list(_RANK_PREFIX.finditer(data))
        if not matches:
            return
        starts = np.fromiter((m.start() for m in matches), dtype=np.int64, count=len(matches))
        lines = self.lines_at(starts)
        for ln, m in zip(lines.tolist(), matches):
            g1, g2, g3, g4 = m.groups()
            rank = g2 if g2 is not None else (g1 if g1 is not None else (g3 if g3 is not None else g4))
            self.line_ranks[ln] = int(rank)
        self.data = _RANK_PREFIX.sub(b"", data)
        self._newlines = None

    # --- offsets and lines -------------------------------------------------------------
    @property
    def newlines(self) -> np.ndarray:
        if self._newlines is None:
            buf = np.frombuffer(self.data, dtype=np.uint8)
            self._newlines = np.flatnonzero(buf == 10)
        return self._newlines

    def lines_at(self, offsets: np.ndarray) -> np.ndarray:
        """1-based line numbers of byte offsets into `data`."""
        return np.searchsorted(self.newlines, np.asarray(offsets, dtype=np.int64), side="left") + 1

    def line_text(self, line: int) -> str:
        """The text of 1-based `line`, decoded with replacement."""
        nl = self.newlines
        start = 0 if line <= 1 else int(nl[line - 2]) + 1
        end = int(nl[line - 1]) if line - 1 < len(nl) else len(self.data)
        return self.data[start:end].decode("utf-8", "replace")

    def ranks_at(self, lines: np.ndarray) -> np.ndarray:
        """Rank per line from the stripped prefixes; -1 where none was printed."""
        if not self.line_ranks:
            return np.full(len(lines), -1, dtype=np.int64)
        get = self.line_ranks.get
        return np.fromiter((get(int(n), -1) for n in lines), dtype=np.int64, count=len(lines))

    def head(self, n: int = 1 << 16) -> bytes:
        return self.data[:n]

    def decode(self) -> str:
        return self.data.decode("utf-8", "replace")
