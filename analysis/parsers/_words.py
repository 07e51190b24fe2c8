"""Byte-word helpers of the vectorised line readers (DLLogger and OneFlow fast paths).

A log is viewed as unaligned little-endian uint64 words (one per byte offset); a field is
compared or measured eight bytes at a time with numpy, instead of one regex match per line.
"""

from __future__ import annotations

import numpy as np

_U = np.uint64
_LOW = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
#: _BYTE_MASK[n] keeps the n low bytes of a word
_BYTE_MASK = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _equal(u64: np.ndarray, pos: np.ndarray, expect: bytes) -> np.ndarray:
    """Rows whose bytes at `pos` equal `expect`."""
    ok = np.ones(len(pos), bool)
    for j in range(0, len(expect), 8):
        part = expect[j:j + 8]
        exp = _U(int.from_bytes(part, "little"))
        ok &= (u64[pos + j] & _BYTE_MASK[len(part)]) == exp
    return ok
