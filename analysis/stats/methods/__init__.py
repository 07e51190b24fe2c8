"""Per-run throughput methods, one module each, in the one `Registry`: `dlperf`, `window`,
`reported`.

- ``dlperf``: exactly the DLPerf extract-script rule of the run's log family
  (each family module's ``dlperf``; docs/formats.md).
- ``window``: skip `warmup` iterations, then measure over the next `measure` iterations:
  global batch x iterations / elapsed time between the two lines' timestamps. Families
  without timestamps (OneFlow GPT, Megatron) use the printed per-iteration latencies of the
  same window instead.
- ``reported``: median of the throughput values the program printed after `warmup`.

A window whose lines (with one more line on either side) go back in time or in steps gives
no figure: the estimate is NaN with kind ``timestamps_backwards`` / ``steps_backwards``
(``RunData.window_fault``). Methods that read printed values (latencies, throughputs) check
only the steps; timestamps do not enter their figure.
"""

from __future__ import annotations

from collections.abc import Callable

from analysis.errors import UsageError
from analysis.estimate import Estimate, RunData
from analysis.registry import Registry
from analysis.stats.methods.base import DEFAULT_MEASURE, DEFAULT_WARMUP, ThroughputMethod

__all__ = ["DEFAULT_MEASURE", "DEFAULT_WARMUP", "Method", "check_window_options",
           "describe_method", "get", "names", "register"]

Method = Callable[[RunData, int, int], Estimate]
_registry: Registry[ThroughputMethod] = Registry("throughput method", __name__, __path__)
register = _registry.register


def get(name: str) -> Method:
    """The estimate function of method `name` (UnknownNameError lists the names)."""
    return _registry.get(name).estimate


def names() -> list[str]:
    """The methods' names in their order of presentation (`dlperf` first)."""
    return [c.name for c in sorted(_registry.classes(), key=lambda c: (c.rank, c.name))]


def describe_method(name: str, warmup: int | None = None, measure: int | None = None) -> str:
    """One sentence saying what `name` computes with these settings."""
    w = DEFAULT_WARMUP if warmup is None else warmup
    m = DEFAULT_MEASURE if measure is None else measure
    return _registry.get(name).description.format(warmup=w, measure=m)


def check_window_options(name: str, warmup=None, measure=None) -> None:
    """UsageError when `warmup` or `measure` is given to method `name` and it does not read
    it (``--warmup 50 --method dlperf``: DLPerf's rule has its own fixed lines)."""
    method = _registry.get(name)
    given = [opt for opt, value in (("warmup", warmup), ("measure", measure))
             if value is not None and opt not in method.window_options]
    if given:
        reads = " and ".join(method.window_options) or "neither option"
        raise UsageError(f"{' and '.join(given)} has no effect with the {name} method, which "
                         f"reads {reads}; leave it out, or choose the window method (warmup "
                         "and measure) or reported (warmup)")
