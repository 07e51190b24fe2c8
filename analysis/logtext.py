"""Read a log file into clean bytes that parsers can match with whole-file regexes.

Cleaning keeps the line count unchanged, so offsets map to the file's own line numbers:
gzip is opened transparently, CR before LF is dropped (a lone CR ends a line), ANSI escapes
are removed, and launcher rank prefixes (Open MPI ``[1,0]<stdout>:``, horovodrun
``[0]<stdout>:``, torchrun ``[default3]:``, ``srun -l`` ``3: ``) are stripped while the rank
is kept per line (a parser that finds another tag before its own lines takes it off the
same way: :meth:`LogText.without_tag`). Output of two streams glued on one line (a
progress bar on stderr ends without a line end, the next stdout line follows it) is cut
where the second starts: the
text before a launcher tag that is not at the line start, and before the end of a tqdm bar
(``78/1147 [00:14<03:20, 5.33it/s]``) that more text follows, is dropped — so a DLL line
printed after a bar starts its line like any other, and the line count stays the file's.
Undecodable bytes are left in place (parsers work on bytes) and reported once.

Reading is capped so that one file cannot exhaust memory (a small gzip can hold gigabytes of
newlines): at most :func:`max_log_bytes` decompressed bytes (``DLPERF_MAX_LOG_BYTES``, default
256 MiB) and one line per :data:`BYTES_PER_LINE` bytes of that limit are read; the rest of the
file is never decompressed, the part read is kept whole lines only, and a ``too_large``
problem says so.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.errors import UsageError
from analysis.problems import Problem

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np

#: Environment variable that sets the cap on the decompressed bytes read from one log.
MAX_BYTES_ENV = "DLPERF_MAX_LOG_BYTES"
#: Default cap: above any realistic benchmark log (90 epochs of ResNet-50 printed every
#: iteration: ~70 MB), and what keeps a parse in a few GB: the whole parse of a log holds
#: about 11 times its size at its peak (a 250 MB DLLogger log of 2.2 M training lines,
#: ``summarize --method window``: 2.75 GB resident; ``--method dlperf`` 0.6 GB), so a log of
#: 2.5 GB needed tens of GB. A larger log is read up to the cap and flagged ``too_large``.
DEFAULT_MAX_LOG_BYTES = 256 << 20
#: A log may hold at most one line (LF or CR) per this many bytes of the cap (its line index
#: costs 8 bytes a line; the 256 MiB default allows 8 Mi lines).
BYTES_PER_LINE = 32
_CHUNK = 8 << 20
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.I)

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\n]*\x07")
_ASCTIME = rb"(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})?"
# group 1: Open MPI job id or horovod-gloo rank; group 2: Open MPI rank; 3: torchrun; 4: srun -l;
# 5: torchrun's per-rank tag (``[rank0]:``, and ``[rank0]: `` as Megatron logs carry it)
_RANK_PREFIX = re.compile(
    rb"^" + _ASCTIME + rb"\[(\d+)(?:,(\d+))?\]<std(?:out|err)>:"
    rb"|^\[default(\d+)\]:"
    rb"|^ {0,3}(\d{1,5}): (?=\S)"
    rb"|^\[rank(\d+)\]: ?",
    re.M,
)
#: A prefix at a line start, searched in "\n" + text: a pattern that starts with a literal is
#: searched for fast, where ``^`` with re.M is tried at every byte.
_PREFIX_HINT = re.compile(rb"\n(?:" + _ASCTIME + rb"\[\d+(?:,\d+)?\]<std|\[default\d+\]:| {0,3}\d{1,5}: \S"
                          rb"|\[rank\d+\]:)")


#: Text before a launcher tag later on its line (greedy: up to the last tag), in "\n" + text.
_GLUED_TAG = re.compile(rb"\n[^\n]+(?=\[\d+(?:,\d+)?\]<std(?:out|err)>:|\[default\d+\]:)")
#: The end of a tqdm progress bar, ``[elapsed<remaining, rate]``, that more text follows.
_BAR_END = rb"\[(?:\d+:)?\d\d:\d\d<(?:(?:\d+:)?\d\d:\d\d|\?)[^\]\n]*\](?=[^\n])"
_GLUED_BAR_END = re.compile(_BAR_END)
#: A line's text up to the end of the last such bar on it, in "\n" + text.
_GLUED_BAR = re.compile(rb"\n[^\n]*" + _BAR_END)


def has_glued_bar(text: bytes) -> bool:
    """Whether a progress bar ends with more text after it on one line of `text` (cleaning
    drops the bar and what came before it on that line)."""
    return b"<" in text and _GLUED_BAR_END.search(text) is not None


def _unglue_bars(text: bytes) -> bytes:
    """`text` without a progress bar that more text follows on its line, nor what is before it."""
    if not has_glued_bar(text):
        return text
    return _GLUED_BAR.sub(_keep_newline, b"\n" + text)[1:]


def _keep_newline(m: re.Match) -> bytes:
    return b"\n"


#: Occurrences of a needle's first byte checked one by one before a substring search.
_FIRST_BYTE_TRIES = 32


def contains(data: bytes, needle: bytes, start: int = 0) -> bool:
    """``needle in data[start:]``, quicker: single bytes are looked for with memchr (tens of
    GB/s), a substring search runs at about 1 GB/s. False at once when a byte of `needle` is
    absent; else no occurrence starts before where each of its bytes next occurs less its
    place in `needle`, so the search starts at the farthest of those (a byte the log's
    lines do not print, found only at its end, skips all of them); there the first few
    places of its first byte are checked before a substring search (put a rare byte first:
    ``[default``)."""
    lo = start  # no occurrence starts before it
    for i in range(len(needle)):
        at = data.find(needle[i:i + 1], lo + i)
        if at < 0:
            return False
        lo = max(lo, at - i)
    pos = data.find(needle[:1], lo)
    for _ in range(_FIRST_BYTE_TRIES):
        if pos < 0 or data.startswith(needle, pos):
            return pos >= 0
        pos = data.find(needle[:1], pos + 1)
    return pos >= 0 and data.find(needle, pos) >= 0


#: Bytes at the top of a log where a launcher's rank prefix is looked for.
PREFIX_HEAD = 1 << 12


def has_launcher_tags(raw: bytes) -> bool:
    """Open MPI / horovodrun or torchrun tags anywhere (a substring search)."""
    return contains(raw, b"]<std") or contains(raw, b"[default")


def has_prefix_at_line_start(text: bytes) -> bool:
    """A rank prefix at the start of a line of `text` (a log's first PREFIX_HEAD bytes)."""
    return _PREFIX_HINT.search(b"\n" + text) is not None


def _has_rank_prefixes(raw: bytes) -> bool:
    """Cheap test: launcher tags anywhere, or a prefix near the top."""
    return has_launcher_tags(raw) or has_prefix_at_line_start(raw[:PREFIX_HEAD])


def max_log_bytes(value: int | str | None = None) -> int:
    """The cap on decompressed bytes per log: `value`, else ``$DLPERF_MAX_LOG_BYTES``, else
    256 MiB. Sizes are bytes or a number with K/M/G/T (binary units: ``512M``, ``8GiB``)."""
    where = "max_bytes"
    if value is None:
        value, where = os.environ.get(MAX_BYTES_ENV), MAX_BYTES_ENV
        if value is None or not value.strip():
            return DEFAULT_MAX_LOG_BYTES
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        m = _SIZE.match(str(value))
        if not m:
            raise UsageError(f"{where}={value!r} is not a size (bytes, or e.g. 512M, 8G)")
        size = int(m.group(1)) * _UNITS[m.group(2).lower()]
    if size < 1:
        raise UsageError(f"{where}={value!r}: the size limit must be at least 1 byte")
    return size


def _gunzip(fh) -> Iterator[bytes]:
    """The decompressed bytes of the gzip file `fh`, at most _CHUNK at a time however much
    one compressed block expands; members one after another (as gzip writes appends).
    Raises, after yielding what came before it, EOFError where the stream is cut short,
    gzip.BadGzipFile where bytes that are no gzip member follow, zlib.error on damage."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    raw = b""
    while True:
        if not raw:
            raw = fh.read(1 << 16)
            if not raw:
                if d.eof:
                    return
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        out = d.decompress(raw, _CHUNK)
        raw = d.unconsumed_tail
        if out:
            yield out
        if d.eof:
            rest = d.unused_data + raw
            raw = rest or fh.read(1 << 16)
            if not raw:
                return
            if raw.lstrip(b"\0") == b"" and not fh.read(1):
                return  # zero padding after the last member
            if not raw.startswith(b"\x1f\x8b"):
                raise gzip.BadGzipFile(f"Not a gzipped file ({raw[:2]!r})")
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)


#: Bytes of one line, at most, that a streamed read holds (no log prints such a line).
LONGEST_LINE = 64 << 20


def _line_ends(chunk: bytes) -> int:
    """Lines ended in `chunk`: LF, CRLF and a lone CR (which cleaning turns into LF)."""
    n = chunk.count(b"\n")
    if b"\r" in chunk:
        n += chunk.count(b"\r") - chunk.count(b"\r\n")
    return n


def _read_capped(path: Path, max_bytes: int) -> tuple[bytes, str, str]:
    """The file's bytes (gunzipped when it starts with the gzip magic), streamed in chunks
    and never read past the cap, nor past a line longer than LONGEST_LINE (a stream of no
    line ends, e.g. a gzip bomb of zeros, is not held up to the cap to be dropped); returns
    (whole lines read, why it stopped early or '', why a gzip stream broke off or ''): a
    cut or damaged gzip file gives the lines before the damage (gzip's own errors are
    raised only when nothing could be read)."""
    max_lines = max(1, max_bytes // BYTES_PER_LINE)
    chunks: list[bytes] = []
    total = lines = since = 0  # since: bytes after the last line end read
    with open(path, "rb") as fh:
        magic = fh.read(2)
        fh.seek(0)
        size = os.fstat(fh.fileno()).st_size
        if magic != b"\x1f\x8b" and size <= min(max_bytes, max_lines):
            data = fh.read(size + 1)  # within both caps (a line end is a byte)
            if len(data) <= min(max_bytes, max_lines):  # unless it grew meanwhile
                return data, "", ""
            fh.seek(0)
        stream = _gunzip(fh) if magic == b"\x1f\x8b" else iter(lambda: fh.read(_CHUNK), b"")
        while True:
            try:
                chunk = next(stream, b"")[:max_bytes + 1 - total]
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                if not chunks:
                    raise
                data = b"".join(chunks)
                return data[:data.rfind(b"\n") + 1], "", str(exc)
            if not chunk:
                return b"".join(chunks), "", ""
            total += len(chunk)
            lines += _line_ends(chunk)
            chunks.append(chunk)
            end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
            since = since + len(chunk) if end < 0 else len(chunk) - end - 1
            if total > max_bytes or lines > max_lines or since > LONGEST_LINE:
                break
    data = b"".join(chunks)
    del chunks
    cut, why = len(data), ""
    if since > LONGEST_LINE:
        cut, why = total - since, f"a line of more than {LONGEST_LINE:,} bytes"
    if total > max_bytes:
        cut, why = data.rfind(b"\n", 0, max_bytes) + 1, f"more than {max_bytes:,} bytes"
    if lines > max_lines:
        last = total - len(chunk)
        at = _after_line_end(data, last, max_lines - (lines - _line_ends(chunk)))
        if at <= cut:
            cut, why = at, f"more than {max_lines:,} lines"
    return data[:cut], why, ""


def _after_line_end(data: bytes, start: int, k: int) -> int:
    """Offset just after the `k`-th (1-based) line end at or after `start`, looked up block
    by block so that the temporary arrays stay small."""
    import numpy as np  # not at import: discovery runs without numpy

    block = 1 << 20
    while k > 0:
        part = data[start:start + block]
        n = _line_ends(part)
        if n >= k or len(part) < block:
            arr = np.frombuffer(part, np.uint8)
            lf, cr = arr == 10, arr == 13
            cr[:-1] &= ~lf[1:]  # the CR of a CRLF is no line end of its own
            ends = np.flatnonzero(lf | cr)
            return start + int(ends[min(k, len(ends)) - 1]) + 1 if len(ends) else start
        k -= n
        start += block
    return start


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
        raw = _unglue_bars(raw)
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
    def read(cls, path: str | Path, source: str | None = None,
             max_bytes: int | None = None) -> LogText:
        """Read and clean `path` (plain or gzip), at most `max_bytes` decompressed bytes
        (default :func:`max_log_bytes`). Raises OSError/EOFError/zlib.error if unreadable."""
        path = Path(path)
        source = source or str(path)
        limit = max_log_bytes() if max_bytes is None else max_bytes
        data, cut, broken = _read_capped(path, limit)
        text = cls.from_bytes(data, source)
        if broken:
            whole = data.count(b"\n")
            text.problems.insert(0, Problem(
                source, None, "unreadable_file",
                f"the gzip stream breaks off after {len(data):,} bytes ({broken}); the "
                f"{whole:,} whole lines before it were read"))
        if cut:
            n_lines = data.count(b"\n")
            text.problems.insert(0, Problem(
                source, None, "too_large",
                f"the file holds {cut} (the limit is {limit:,} bytes and one line per "
                f"{BYTES_PER_LINE} bytes, {MAX_BYTES_ENV}; a line at most {LONGEST_LINE:,} "
                f"bytes); only its first {len(data):,} bytes ({n_lines:,} lines) were read"))
        return text

    def _strip_rank_prefixes(self) -> None:
        data = self.data
        at_starts = sum(m.group(4) is None for m in _RANK_PREFIX.finditer(data))
        if data.count(b"]<std") + data.count(b"[default") > at_starts:  # some glued to text
            self.data, self._newlines = _GLUED_TAG.sub(_keep_newline, b"\n" + data)[1:], None
        self._strip(_RANK_PREFIX)

    def _strip(self, tag: re.Pattern) -> None:
        """Drop `tag`'s matches (at line starts), keeping its last group that matched as
        the line's rank."""
        import numpy as np  # not at import: discovery runs without numpy

        matches = list(tag.finditer(self.data))
        if not matches:
            return
        starts = np.fromiter((m.start() for m in matches), dtype=np.int64, count=len(matches))
        for ln, m in zip(self.lines_at(starts).tolist(), matches):
            rank = next((g for g in reversed(m.groups()) if g is not None), None)
            if rank is not None:
                self.line_ranks[ln] = int(rank)
        self.data = tag.sub(b"", self.data)
        self._newlines = None

    def without_tag(self, tag: re.Pattern) -> LogText:
        """A copy without `tag` at its lines' starts: a launcher's tag that a parser finds
        before its own lines (a host name, pdsh's ``host: ``), cleaned like those above."""
        copy = LogText(self.source, self.data, dict(self.line_ranks), self.problems)
        copy._strip(tag)
        return copy

    # --- offsets and lines -------------------------------------------------------------
    @property
    def newlines(self) -> np.ndarray:
        import numpy as np  # not at import: discovery runs without numpy

        if self._newlines is None:
            buf = np.frombuffer(self.data, dtype=np.uint8)
            self._newlines = np.flatnonzero(buf == 10)
        return self._newlines

    def lines_at(self, offsets: np.ndarray) -> np.ndarray:
        """1-based line numbers of byte offsets into `data`."""
        import numpy as np  # not at import: discovery runs without numpy

        return np.searchsorted(self.newlines, np.asarray(offsets, dtype=np.int64), side="left") + 1

    def line_text(self, line: int) -> str:
        """The text of 1-based `line`, decoded with replacement."""
        nl = self.newlines
        start = 0 if line <= 1 else int(nl[line - 2]) + 1
        end = int(nl[line - 1]) if line - 1 < len(nl) else len(self.data)
        return self.data[start:end].decode("utf-8", "replace")

    def ranks_at(self, lines: np.ndarray) -> np.ndarray:
        """Rank per line from the stripped prefixes; -1 where none was printed, but 0 where
        the prefixes number no rank 0: a launcher that tags the ranks it tees leaves its own
        (rank 0's) lines untagged, and they are one process, not the tagged ones'."""
        import numpy as np  # not at import: discovery runs without numpy

        if not self.line_ranks:
            return np.full(len(lines), -1, dtype=np.int64)
        get, untagged = self.line_ranks.get, 0 if min(self.line_ranks.values()) > 0 else -1
        return np.fromiter((get(int(n), untagged) for n in lines), dtype=np.int64,
                           count=len(lines))

    def head(self, n: int = 1 << 16) -> bytes:
        return self.data[:n]

    def decode(self) -> str:
        return self.data.decode("utf-8", "replace")
