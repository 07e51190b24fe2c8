"""LiBai stdout logs (CommonMetricPrinter lines, stamped to the second) on the fixture's own
header, for the checks of a figure against whole-second stamps."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

LIBAI = Path(__file__).resolve().parents[1] / "data" / "libai" / "gpt2_stdout" / "1n8g" / \
    "gpt2_b4_amp_1.log"


def head(batch: int = 32) -> list[str]:
    """The fixture's lines before its first iteration line, stating global batch `batch`."""
    text = LIBAI.read_text().replace("train.global_batch_size=32",
                                     f"train.global_batch_size={batch}").split("\n")
    return text[:next(i for i, ln in enumerate(text) if "iteration: " in ln)]


def event(clock: dt.datetime, it: int, iterations: int, batch: int, loss: float,
          mean: float | None, eta: str = "0:00:10") -> str:
    """The iteration line of 0-based iteration `it`, printing `mean` s an iteration and
    the rate of `batch` samples at it (neither where `mean` is None)."""
    timed = (f"time: {mean:.4f} s/iter  data_time: 0.0016 s/iter "
             f"total_throughput: {batch / mean:.2f} samples/s " if mean is not None else "")
    return (f"[{clock:%m/%d %H:%M:%S} lb.utils.events]:  eta: {eta}  iteration: {it}/"
            f"{iterations}  consumed_samples: {batch * (it + 1)}  total_loss: {loss:.4f}  "
            f"{timed}lr: 1.50e-04")


def write(folder: Path, lines: list[str]) -> Path:
    """`lines` as the run's log under `folder` (1n8g, the fixture's name)."""
    (folder / "1n8g").mkdir(parents=True)
    path = folder / "1n8g" / LIBAI.name
    path.write_text("\n".join(lines) + "\n")
    return path
