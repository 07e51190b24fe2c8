"""What a lean reader gives for one log."""

from __future__ import annotations

from dataclasses import dataclass

#: Digits to 0: a line's shape (the lean readers check one shape per distinct line, not
#: each line).
ZERO_DIGITS = bytes.maketrans(b"123456789", b"000000000")


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
    #: digest of the argument dump's configuration (case_stats.configuration_digest): runs of
    #: one case that differ in it are not repeats, and the lane leaves them to the full path
    configuration: str = ""

    def throughput(self, global_batch: int) -> float:
        """The DLPerf rule's figure for a global batch, computed as the full path does."""
        value = global_batch * self.iterations / self.elapsed
        return round(value, 2) if self.rounded else value
