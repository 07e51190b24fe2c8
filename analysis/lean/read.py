"""What a lean reader gives for one log, and the reading of lines from the top of a log."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: Bytes of the first chunk split into lines (~130 training lines of ~120 bytes and a header).
FIRST_CHUNK = 32 << 10


@dataclass(frozen=True)
class LeanRead:
    """A log read by a lean reader: the family, the run fields the log states (before the
    path's are merged in), the seconds between the rule's two timestamps, the iterations
    between them, and whether the figure is rounded to 2 decimals (the PyTorch script's)."""

    family: str
    framework: str
    stated: dict
    elapsed: float
    iterations: int
    rounded: bool
    world_size: int | None = None  # DLLogger's PARAMETER world_size, checked against the path

    def throughput(self, global_batch: int) -> float:
        """The DLPerf rule's figure for a global batch, computed as the full path does."""
        value = global_batch * self.iterations / self.elapsed
        return round(value, 2) if self.rounded else value


def lines(data: bytes, first_chunk: int = FIRST_CHUNK) -> Iterator[bytes]:
    """The lines of `data` from the top (without their line ends), split a chunk at a time:
    the first about `first_chunk` bytes, each next twice as large (readers stop early)."""
    start, size, n = 0, first_chunk, len(data)
    while start < n:
        end = data.find(b"\n", start + size)
        end = n if end < 0 else end
        yield from data[start:end].split(b"\n")
        start, size = end + 1, size * 2
