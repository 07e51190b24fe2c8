"""GPU model and count ("8x V100-SXM2-16GB"): read from a references file's ``hardware`` or
from a run's recorded hardware type, and compared.

A run's hardware type is :func:`analysis.run_settings.hardware_type` of its records
(``'4x NVIDIA H200, <CPU> (64 CPUs), 504 GiB, x86_64'``, the nodes' distinct values joined
with ``'; '``); its first part is the GPU model and count of the machine. Models compare
without vendor words and without regard to case, spaces or hyphens, so nvidia-smi's
``Tesla V100-SXM2-16GB`` is a ``V100-SXM2-16GB``; a 32 GB V100 stays another GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COUNT_MODEL = re.compile(r"^\s*(\d+)\s*[x×]\s*(\S.*?)\s*$", re.I)
_VENDOR_WORDS = {"nvidia", "tesla", "geforce", "quadro"}
#: What a run's GPUs are when no environment record says.
NOT_RECORDED = ""


@dataclass(frozen=True)
class Gpus:
    """`count` GPUs of `model` per machine."""

    count: int
    model: str

    def __str__(self) -> str:
        return f"{self.count}x {self.model}"

    @property
    def key(self) -> tuple[int, str]:
        """What two Gpus must share to be the same hardware."""
        words = [w for w in re.split(r"[\s_-]+", self.model.lower()) if w]
        return self.count, "-".join(w for w in words if w not in _VENDOR_WORDS)


def parse(text: str) -> Gpus | None:
    """'8x V100-SXM2-16GB' -> Gpus(8, 'V100-SXM2-16GB'); None when `text` is not of that form
    or states no GPU (``'0x …'``)."""
    found = _COUNT_MODEL.match(str(text))
    if not found or int(found.group(1)) == 0:
        return None
    return Gpus(int(found.group(1)), found.group(2))


def of_hardware(hardware: str) -> str:
    """The GPU part of a recorded hardware type ('4x NVIDIA H200'); several nodes' distinct
    values are joined with '; ' (a run across different machines); NOT_RECORDED when none."""
    parts = [p.split(",", 1)[0].strip() for p in str(hardware or "").split(";")]
    return "; ".join(dict.fromkeys(p for p in parts if p))


def same(a: Gpus | None, b: Gpus | None) -> bool:
    return a is not None and b is not None and a.key == b.key
