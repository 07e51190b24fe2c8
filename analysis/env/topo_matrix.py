"""Parse `nvidia-smi topo -m` text into a validated :class:`Topology` record.

Handles every variant we know of (docs/formats.md §9): the V100 DGX-1 layout with an ``mlx5_0``
column and a NIC row without affinity; ``NUMA Affinity`` / ``GPU NUMA ID`` columns; ``NICn``
columns explained by a ``NIC Legend:`` block; tab-separated cells, some of them empty; a header
without a row-label cell, with multi-word names and ANSI underline escapes. The text is kept
verbatim (``Topology.text``) so a report can quote it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pandas as pd

from analysis.errors import DLPerfError

__all__ = ["Topology", "TopologyError", "parse_topology", "strip_ansi", "EXTRA_COLUMNS"]


class TopologyError(DLPerfError):
    """`nvidia-smi topo -m` text (or a stored topology record) cannot be read."""


#: The link codes nvidia-smi documents in its ``Legend:`` block, besides NV<n> (NVLink);
#: ``SOC`` is the name older drivers used for ``SYS``.
LINK_CODES = ("X", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC")
_NVLINK = re.compile(r"NV\d+")

#: The multi-word columns nvidia-smi prints after the device columns (in this order).
EXTRA_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\n]*\x07")
_BARE_SGR = re.compile(r"\[[0-9;]*m")  # an SGR escape whose ESC byte was lost in a copy
_EXTRA_RE = re.compile("|".join(re.escape(n) for n in EXTRA_COLUMNS))
_HEADER_TOKEN = re.compile(_EXTRA_RE.pattern + r"|\S+")
_GPU = re.compile(r"GPU\d+")
_CELL_SPLIT = re.compile(r"\t+| {2,}")
_LEGEND_ENTRY = re.compile(r"^\s*(\S+)\s*=\s*(.*?)\s*$")
_NIC_ENTRY = re.compile(r"^\s*(\S+)\s*:\s*(\S.*?)\s*$")
_CPULIST = re.compile(r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*")
_NA = "N/A"
# How each extra column's values must look; others are not checked.
_VALUE_RULES = {"CPU Affinity": _CPULIST, "NUMA Affinity": _CPULIST, "GPU NUMA ID": re.compile(r"\d+")}


def strip_ansi(text: str) -> str:
    """Remove ANSI escapes (nvidia-smi underlines the header even when not on a TTY)."""
    return _ANSI.sub("", text)


@dataclass(frozen=True, eq=False)
class Topology:
    """A parsed `nvidia-smi topo -m`.

    ``text`` is the input, verbatim. ``devices`` are the matrix's rows/columns in printed order
    (``GPU0``…, then NICs as printed: ``mlx5_0`` or ``NIC0``…). ``matrix`` is a DataFrame of link
    codes (index and columns = devices, diagonal ``X``). ``affinity`` has one row per device and
    one column per extra header column (``CPU Affinity``, ``NUMA Affinity``, ``GPU NUMA ID``, as
    present), values as printed (``"0-11,24-35"``, ``"0"``, ``"N/A"``) or ``None`` when the cell
    is empty. ``legend`` maps codes to their meaning (``"NV#"`` -> …) and ``nic_legend`` NIC
    columns to device names (``"NIC0"`` -> ``"mlx5_0"``).
    """

    text: str
    devices: tuple[str, ...]
    matrix: pd.DataFrame
    affinity: pd.DataFrame
    legend: dict[str, str]
    nic_legend: dict[str, str]

    # ---- lookups -------------------------------------------------------------------------
    @property
    def gpus(self) -> tuple[str, ...]:
        return tuple(d for d in self.devices if _GPU.fullmatch(d))

    @property
    def nics(self) -> tuple[str, ...]:
        return tuple(d for d in self.devices if not _GPU.fullmatch(d))

    @property
    def columns(self) -> tuple[str, ...]:
        """The extra (non-device) header columns, in printed order."""
        return tuple(self.affinity.columns)

    # ---- frames --------------------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        """The table as printed: device columns then the extra columns; index named ``device``."""
        out = pd.concat([self.matrix, self.affinity], axis=1)
        out.index.name = "device"
        return out

    @property
    def display_text(self) -> str:
        """The verbatim text without ANSI escapes and carriage returns (for reports)."""
        return strip_ansi(self.text.replace("\r\n", "\n").replace("\r", "\n"))

    # ---- conversions ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-ready dict (the text is the source of truth)."""
        return {
            "text": self.text,
            "devices": list(self.devices),
            "gpus": list(self.gpus),
            "nics": list(self.nics),
            "matrix": {a: {b: self.matrix.at[a, b] for b in self.devices} for a in self.devices},
            "columns": list(self.columns),
            "affinity": {d: {c: self.affinity.at[d, c] for c in self.columns} for d in self.devices},
            "legend": dict(self.legend),
            "nic_legend": dict(self.nic_legend),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_csv(self) -> str:
        """The :meth:`frame` as CSV (empty cells stay empty)."""
        return self.frame().to_csv(lineterminator="\n")

    def to_markdown(self) -> str:
        """A Markdown table of :meth:`frame`, then the NIC legend as one line when there is one."""
        frame = self.frame()
        lines = ["| | " + " | ".join(frame.columns) + " |", "|---" * (frame.shape[1] + 1) + "|"]
        lines += [f"| {d} | " + " | ".join(c or "" for c in cells) + " |"
                  for d, *cells in frame.itertuples()]
        if self.nic_legend:
            lines += ["", "NIC Legend: " + ", ".join(f"{k} = {v}" for k, v in self.nic_legend.items())]
        return "\n".join(lines) + "\n"


# ---- parsing -------------------------------------------------------------------------------
@dataclass
class _Row:
    lineno: int
    label: str
    tokens: list[tuple[int, str]]  # (column in the tab-expanded line, text), label excluded


def _find_header(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        toks = _BARE_SGR.sub("", line).split()
        # A header starts with GPU0…; a row also does, but its second cell is a link code (X).
        if toks and _GPU.fullmatch(toks[0]) and (len(toks) == 1 or toks[1] != "X"):
            return i
    raise TopologyError("no `nvidia-smi topo -m` header found: expected a line starting "
                        "with the device names 'GPU0 …'")


def _read_rows(lines: list[str], start: int) -> tuple[list[_Row], int]:
    rows: list[_Row] = []
    i = start
    while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith("Legend"):
        toks = [(m.start(), m.group()) for m in re.finditer(r"\S+", lines[i].expandtabs(8))]
        rows.append(_Row(i + 1, toks[0][1], toks[1:]))
        i += 1
    if not rows:
        raise TopologyError(f"line {start}: header is not followed by any device row")
    return rows, i


def _read_legends(lines: list[str], start: int) -> tuple[dict[str, str], dict[str, str]]:
    legend: dict[str, str] = {}
    nic: dict[str, str] = {}
    mode = None
    for line in lines[start:]:
        s = line.strip()
        if s.startswith("NIC Legend"):
            mode = "nic"
        elif s.startswith("Legend"):
            mode = "legend"
        elif mode == "legend" and (m := _LEGEND_ENTRY.match(line)):
            legend[m.group(1)] = m.group(2)
        elif mode == "nic" and (m := _NIC_ENTRY.match(line)):
            nic[m.group(1)] = m.group(2)
    return legend, nic


def _header_columns(header: str, labels: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """Split the header into device names and (column, name) of the extra columns.

    Cells are split on the header as printed (tabs intact); columns are measured on the
    tab-expanded header, which is how the rows' cells line up under it.
    """
    known = set(labels)
    devices, end = [], 0
    for m in _HEADER_TOKEN.finditer(header):
        if m.group() not in known:
            break
        devices.append(m.group())
        end = m.end()
    expanded = header.expandtabs(8)
    pos = 0
    for d in devices:
        pos = expanded.index(d, pos) + len(d)
    extras: list[tuple[int, str]] = []
    for name in _split_extras(header[end:]):
        at = expanded.index(name, pos)
        extras.append((at, name))
        pos = at + len(name)
    return devices, extras


def _split_extras(rest: str) -> list[str]:
    out: list[str] = []
    for cell in _CELL_SPLIT.split(rest):
        cell = cell.strip()
        if not cell:
            continue
        found = _EXTRA_RE.findall(cell)
        if found and not _EXTRA_RE.sub("", cell).strip():
            out.extend(found)
        else:
            out.append(cell)
    return out


def _assign_extras(row: _Row, cells: list[tuple[int, str]], extras: list[tuple[int, str]]):
    """Map a row's cells after the links onto the extra columns (empty cells -> None)."""
    values: list[str | None] = [None] * len(extras)
    if len(cells) > len(extras):
        names = ", ".join(n for _, n in extras) or "none"
        raise TopologyError(f"line {row.lineno}: row {row.label} has {len(cells)} cells after its "
                            f"links ({' '.join(t for _, t in cells)}) but the header has "
                            f"{len(extras)} extra column(s) ({names})")
    if len(cells) == len(extras):
        return [t for _, t in cells]
    # Some cells are empty: place each by its column, keeping the printed order.
    nxt = 0
    for i, (col, text) in enumerate(cells):
        guess = max((j for j, (start, _) in enumerate(extras) if start <= col + 1), default=0)
        j = min(max(guess, nxt), len(extras) - (len(cells) - i))
        values[j] = text
        nxt = j + 1
    return values


def is_known_code(code: str) -> bool:
    """True for the codes nvidia-smi documents (X, NV<n>, PIX, PXB, PHB, NODE, SYS, SOC)."""
    return code in LINK_CODES or bool(_NVLINK.fullmatch(code))


def _link_cells(row: _Row, n: int, legend: dict[str, str]) -> list[str]:
    cells = [t for _, t in row.tokens[:n]]
    for i, code in enumerate(cells):
        if code == _NA or _CPULIST.fullmatch(code):  # an affinity value where a link belongs
            raise TopologyError(f"line {row.lineno}: row {row.label} has {i} link cells before "
                                f"{code!r}; the header names {n} devices")
        if not is_known_code(code) and code not in legend:
            raise TopologyError(f"line {row.lineno}: row {row.label}, cell {i + 1}: unknown link "
                                f"code {code!r}; valid: {', '.join(LINK_CODES)}, NV<n> or a "
                                "code defined in the text's Legend")
    return cells


def _validate(topo_devices: list[str], matrix: pd.DataFrame, affinity: pd.DataFrame,
              nic: dict[str, str]) -> None:
    for a in topo_devices:
        for b in topo_devices:
            code = matrix.at[a, b]
            if (a == b) != (code == "X"):
                want = "X on the diagonal" if a == b else "a link code, not X, off the diagonal"
                raise TopologyError(f"cell ({a}, {b}) is {code!r}; expected {want}")
            if matrix.at[b, a] != code:
                raise TopologyError(f"matrix is not symmetric: ({a}, {b}) is {code!r} but "
                                    f"({b}, {a}) is {matrix.at[b, a]!r}")
    _check_no_device_columns(affinity)
    for col, rule in _VALUE_RULES.items():
        if col not in affinity.columns:
            continue
        for d, v in affinity[col].items():
            if v is not None and v != _NA and not rule.fullmatch(v):
                raise TopologyError(f"{col} of {d} is {v!r}; expected e.g. '0-11,24-35', '0' or N/A")
    unknown = [k for k in nic if k not in topo_devices]
    if unknown:
        raise TopologyError(f"NIC Legend names {', '.join(unknown)}, which are not matrix "
                            f"columns ({', '.join(topo_devices)})")


def _check_no_device_columns(affinity: pd.DataFrame) -> None:
    """Raise when a header column past the rows' devices is a device (``GPU3``, or only link
    codes in its cells): its row is missing, e.g. the text was cut short."""
    for col in affinity.columns:
        if col in EXTRA_COLUMNS:
            continue
        cells = [v for v in affinity[col] if v is not None]
        if _GPU.fullmatch(col) or (cells and all(is_known_code(v) for v in cells)):
            raise TopologyError(f"the header names device {col} but no row {col} follows: "
                                "the text is truncated or a row is missing")


#: The most GPUs, and devices (GPUs and NICs), one node's `nvidia-smi topo -m` is read with:
#: its matrix grows with their square (800 GPUs: 3 MB, minutes to read, a report that
#: cannot be laid out), and no node holds more.
MAX_GPUS, MAX_DEVICES = 64, 160
#: The longest topology text read: a matrix of MAX_DEVICES, with room for its legends.
MAX_TEXT = 1 << 20


def parse_topology(text: str | bytes) -> Topology:
    """Parse `nvidia-smi topo -m` output (text before the header, e.g. a prompt, is ignored).

    Raises :class:`TopologyError` naming the line and value when the text is not a valid
    topology matrix, or one of more than MAX_GPUS GPUs or MAX_DEVICES devices.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if len(text) > MAX_TEXT:
        raise TopologyError(f"{len(text):,} characters: more than one node's `nvidia-smi topo "
                            f"-m` holds (at most {MAX_GPUS} GPUs, {MAX_TEXT:,} characters); "
                            "give the topology of each node in its own file")
    lines = strip_ansi(text.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    h = _find_header(lines)
    header = _BARE_SGR.sub("", lines[h])
    rows, end = _read_rows(lines, h + 1)
    gpus = sum(bool(_GPU.fullmatch(r.label)) for r in rows)
    if gpus > MAX_GPUS or len(rows) > MAX_DEVICES:
        raise TopologyError(f"the matrix lists {gpus:,} GPUs and {len(rows) - gpus:,} other "
                            f"devices; one node's `nvidia-smi topo -m` has at most {MAX_GPUS} "
                            f"GPUs and {MAX_DEVICES} devices: give each node's in its own file")
    legend, nic = _read_legends(lines, end)
    labels = [r.label for r in rows]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise TopologyError(f"device row(s) {', '.join(dupes)} appear more than once")
    devices, extras = _header_columns(header, labels)
    if devices != labels:
        raise TopologyError(f"header devices ({' '.join(devices) or 'none'}) do not match the row "
                            f"labels ({' '.join(labels)}) in number or order")
    n = len(devices)
    links, extra_values = [], []
    for row in rows:
        if len(row.tokens) < n:
            raise TopologyError(f"line {row.lineno}: row {row.label} has {len(row.tokens)} link "
                                f"cells; the header names {n} devices")
        links.append(_link_cells(row, n, legend))
        extra_values.append(_assign_extras(row, row.tokens[n:], extras))
    matrix = pd.DataFrame(links, index=devices, columns=devices, dtype=object)
    affinity = pd.DataFrame(extra_values, index=devices, columns=[name for _, name in extras],
                            dtype=object)
    _validate(devices, matrix, affinity, nic)
    return Topology(text, tuple(devices), matrix, affinity, legend, nic)
