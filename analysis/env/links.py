"""What a cell of `nvidia-smi topo -m` means: link kinds, NVLink counts and colours.

The codes are the ones nvidia-smi prints in its ``Legend:`` block; ``SOC`` is the name older
drivers used for ``SYS``. ``tier`` orders the kinds from the closest connection (the device
itself) to the farthest one, so a plot can map it to a colour ramp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analysis.errors import DLPerfError


class TopologyError(DLPerfError):
    """`nvidia-smi topo -m` text (or a stored topology record) cannot be read."""


@dataclass(frozen=True)
class LinkKind:
    kind: str
    tier: int
    label: str
    color: str  # default colour for matrix plots (colour-blind safe, darker = closer)


#: Every kind of link, closest first. ``nvlink`` covers NV1 … NV18 (any bond width).
LINK_KINDS: dict[str, LinkKind] = {k.kind: k for k in (
    LinkKind("self", 0, "same device", "#ffffff"),
    LinkKind("nvlink", 1, "NVLink", "#1b7837"),
    LinkKind("pcie_switch", 2, "PCIe, at most one bridge (PIX)", "#5aae61"),
    LinkKind("pcie_multi_switch", 3, "PCIe, several bridges (PXB)", "#a6dba0"),
    LinkKind("pcie_host_bridge", 4, "PCIe through the host bridge (PHB)", "#fee08b"),
    LinkKind("numa_node", 5, "PCIe host bridges within a NUMA node (NODE)", "#fdae61"),
    LinkKind("cross_numa", 6, "PCIe and the inter-socket link (SYS)", "#d73027"),
    LinkKind("other", 7, "other (see the legend)", "#bababa"),
)}

_FIXED = {"X": "self", "PIX": "pcie_switch", "PXB": "pcie_multi_switch",
          "PHB": "pcie_host_bridge", "NODE": "numa_node", "SYS": "cross_numa", "SOC": "cross_numa"}
_NVLINK = re.compile(r"NV(\d+)")

#: Codes accepted in a matrix without a legend entry of their own (plus NV<n>).
KNOWN_CODES = tuple(_FIXED) + ("NV<n>",)


@dataclass(frozen=True)
class LinkClass:
    """One matrix cell classified: ``code`` as printed, ``kind`` (a key of LINK_KINDS),
    ``nvlinks`` (bonded NVLinks, 0 when not NVLink), ``tier`` (0 = self … 7), ``label``
    (readable, e.g. ``"NVLink x18"``) and ``color``."""

    code: str
    kind: str
    nvlinks: int
    tier: int
    label: str
    color: str

    @property
    def is_nvlink(self) -> bool:
        return self.kind == "nvlink"

    @property
    def is_pcie(self) -> bool:
        return self.kind in ("pcie_switch", "pcie_multi_switch", "pcie_host_bridge",
                             "numa_node", "cross_numa")


def is_known_code(code: str) -> bool:
    """True for the codes nvidia-smi documents (X, NV<n>, PIX, PXB, PHB, NODE, SYS, SOC)."""
    code = code.strip()
    return code in _FIXED or bool(_NVLINK.fullmatch(code))


def classify_link(code: str, legend: dict[str, str] | None = None) -> LinkClass:
    """Classify a `topo -m` cell such as ``"NV12"``, ``"PIX"`` or ``"X"`` (the device itself).

    A code that nvidia-smi does not document is accepted only when ``legend`` (the record's own
    ``Legend:`` block) defines it; it is then of kind ``other``. Anything else raises
    :class:`TopologyError`.
    """
    text = code.strip() if isinstance(code, str) else code
    if not isinstance(text, str) or not text:
        raise TopologyError(f"empty or non-text link cell {code!r}; valid: {', '.join(KNOWN_CODES)}")
    m = _NVLINK.fullmatch(text)
    if m:
        n = int(m.group(1))
        k = LINK_KINDS["nvlink"]
        return LinkClass(text, k.kind, n, k.tier, f"NVLink x{n}", k.color)
    if text in _FIXED:
        k = LINK_KINDS[_FIXED[text]]
        return LinkClass(text, k.kind, 0, k.tier, k.label, k.color)
    if legend and text in legend:
        k = LINK_KINDS["other"]
        return LinkClass(text, k.kind, 0, k.tier, legend[text], k.color)
    raise TopologyError(f"unknown link code {text!r}; valid: {', '.join(KNOWN_CODES)} "
                        "or a code defined in the text's Legend")
