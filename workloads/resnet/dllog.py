"""DLLogger stdout lines, shaped like NVIDIA DeepLearningExamples' PyTorch ResNet50 prints them.

``DLL 2026-11-21 10:00:00.123456 - Epoch: 0 Iteration: 1  train.loss : 6.93504  train.total_ips : 1200.10 img/s``

Each metric prints as ``<name> : <value> <unit>`` and metrics are joined by one space, so a metric
without a unit is followed by two spaces (and a last one leaves a trailing space), as DLLogger's
stdout backend does. The timestamp is local wall time and always carries microseconds.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable
from datetime import datetime
from typing import TextIO

_SPACES = re.compile(r"\s+")


def timestamp(t: float) -> str:
    """Local time of unix time `t`, ``YYYY-MM-DD HH:MM:SS.ffffff`` (fraction always present)."""
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S.%f")


def value_text(value: object) -> str:
    """A parameter value as one token-ish string: no runs of spaces, never empty."""
    if value is None:
        return "None"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    text = _SPACES.sub(" ", str(value)).strip()
    return text if text else "None"


def metrics_text(items: Iterable[tuple[str, str, str]]) -> str:
    """``name : value unit`` items joined DLLogger-style (two spaces after a unit-less value)."""
    return " ".join(f"{name} : {value} {unit}" for name, value, unit in items)


def line(t: float, step: str, items: Iterable[tuple[str, str, str]]) -> str:
    return f"DLL {timestamp(t)} - {step} {metrics_text(items)}"


def parameter_line(t: float, params: dict[str, object]) -> str:
    return line(t, "PARAMETER", ((k, value_text(v), "") for k, v in params.items()))


def iteration_line(t: float, epoch: int, iteration: int, loss: float, ips: float) -> str:
    return line(t, f"Epoch: {epoch} Iteration: {iteration} ",
                [("train.loss", f"{loss:.5f}", ""), ("train.total_ips", f"{ips:.2f}", "img/s")])


def summary_line(t: float, loss: float, ips: float, memory_mib: float | None) -> str:
    items = [("train.loss", f"{loss:.5f}", ""), ("train.total_ips", f"{ips:.2f}", "img/s")]
    if memory_mib is not None:
        items.append(("train.memory_max_allocated", f"{memory_mib:.2f}", "MiB"))
    return line(t, "Summary:", items)


def emit(text: str, stream: TextIO | None = None) -> None:
    """Write one line and flush, so a tee'd log shows it at once."""
    out = stream or sys.stdout
    out.write(text + "\n")
    out.flush()
