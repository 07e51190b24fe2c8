"""Did a case get slower? The ratio NEW/BASE of throughputs with a confidence interval, and a
verdict against a threshold.

Method: Welch's t interval on log throughput. Run-to-run noise of a training benchmark is
multiplicative (a slow node, a clock step costs a fraction of the rate), so logs turn the
ratio into a difference of means; the estimate is the ratio of geometric means
``exp(mean(log new) - mean(log base))`` and its interval is ``exp(d ± t·se)`` with Welch's
standard error and Welch–Satterthwaite degrees of freedom (the two sides may have different
spread, e.g. after a driver change).

Why not a rank test or a bootstrap: with 3 repeats a side (DLPerf campaigns have 3–5) the
exact Mann–Whitney test cannot go below p = 0.1, and a bootstrap of a median of 3 values takes
only a handful of values and covers far less than it claims. The t interval uses the spread
the repeats show, so 3 + 3 repeats decide when the shift is large against the spread (3 %
against 0.1 %), and its calibration is checked by a seeded property test
(tests/changes/test_verdict_calibration.py).

Verdicts, for a threshold τ (0.02 = 2 %) and a two-sided interval [lo, hi] at `confidence`:

- ``slower``: hi < 1 (the change is real) and the estimate ≤ 1 − τ (and big enough to matter);
- ``faster``: lo > 1 and the estimate ≥ 1 + τ;
- ``unchanged``: the whole interval lies within [1 − τ, 1 + τ] (no change that matters);
- ``too few repeats``: fewer than 2 repeats on a side (no interval);
- ``interval too wide``: 2 or more a side, but the interval is none of the above.
  Both are undecided (`UNDECIDED`), and undecided is not unchanged: one whose estimate is at
  most 1 − τ (`looks_slower`) is possibly slower, and ``dlperf compare`` fails the gate on it
  with a status of its own.

No spread measured: when every repeat of each side gave the same figure (a quantised printed
value, copied logs), the sample variances are 0 and the t interval would have zero width,
claiming certainty the repeats cannot give. The interval is then not estimable (NaN,
``RatioEstimate.no_spread``) and the verdict falls back to the threshold alone: ``slower``
when the ratio is at most 1 − τ, ``faster`` when at least 1 + τ, else ``unchanged``. A
gate still fails on a drop all repeats agree on; the output says the verdict rests on the
threshold, not on an interval.

A case whose true ratio is 1 is called slower with probability at most (1 − confidence) / 2
(2.5 % at the default 95 %): that needs hi < 1, which the interval's coverage bounds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from analysis.changes.student_t import t_quantile
from analysis.errors import UsageError

SLOWER, FASTER, UNCHANGED, TOO_FEW = "slower", "faster", "unchanged", "too few repeats"
TOO_WIDE = "interval too wide"
#: The verdicts that decide nothing: more repeats, or less noisy ones, are needed.
UNDECIDED = (TOO_FEW, TOO_WIDE)
DEFAULT_THRESHOLD = 0.02
DEFAULT_CONFIDENCE = 0.95
#: Campaigns a step must last to be a change point in a trend.
DEFAULT_PERSIST = 2
MIN_REPEATS = 2


@dataclass(frozen=True)
class RatioEstimate:
    """NEW/BASE as the ratio of geometric means with its interval (NaN when not computable)."""

    ratio: float
    low: float
    high: float
    base_repeats: int
    new_repeats: int
    no_spread: bool = False  # both sides' repeats identical: no interval, threshold rule


def _clean(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def ratio_interval(base, new, confidence: float = DEFAULT_CONFIDENCE) -> RatioEstimate:
    """Welch t interval of NEW/BASE on log throughput (see the module docstring)."""
    raw_b, raw_n = _clean(base), _clean(new)
    b, n = np.log(raw_b), np.log(raw_n)
    if b.size < MIN_REPEATS or n.size < MIN_REPEATS:
        ratio = float(np.exp(n.mean() - b.mean())) if b.size and n.size else float("nan")
        return RatioEstimate(ratio, float("nan"), float("nan"), int(b.size), int(n.size))
    if np.ptp(raw_b) == 0.0 and np.ptp(raw_n) == 0.0:  # exactly equal, not a variance near 0
        return RatioEstimate(float(raw_n[0] / raw_b[0]), float("nan"), float("nan"),
                             int(b.size), int(n.size), no_spread=True)
    d = n.mean() - b.mean()
    vb, vn = b.var(ddof=1) / b.size, n.var(ddof=1) / n.size
    se = np.sqrt(vb + vn)
    df = (vb + vn) ** 2 / (vb**2 / (b.size - 1) + vn**2 / (n.size - 1))
    half = t_quantile(0.5 + confidence / 2.0, df) * se
    return RatioEstimate(float(np.exp(d)), float(np.exp(d - half)), float(np.exp(d + half)),
                         int(b.size), int(n.size))


def past(change, threshold):
    """How far the relative change `change` (signed: positive in the direction asked) lies
    past `threshold` (scalars or Series), at the precision of ratios of float figures: 12
    decimals. A change of exactly the threshold is then 0 past it, which float division
    would not give (0.98 / 1 - 1 is -0.0200000000000000018)."""
    return np.round(change - threshold, 12)


def looks_slower(ratio, threshold):
    """Whether NEW/BASE `ratio` is a drop of at least `threshold` (scalars or Series): what
    ``slower`` asks of the estimate, and what makes an undecided case possibly slower."""
    return past(1.0 - ratio, threshold) >= 0


def decide(est: RatioEstimate, threshold: float = DEFAULT_THRESHOLD) -> str:
    """The verdict of an estimate against `threshold` (a fraction: 0.02 = 2 %); without a
    measured spread, by the threshold alone (see the module docstring)."""
    if est.no_spread:
        if looks_slower(est.ratio, threshold):
            return SLOWER
        return FASTER if past(est.ratio - 1.0, threshold) >= 0 else UNCHANGED
    if not np.isfinite(est.low) or not np.isfinite(est.high):
        return TOO_FEW
    if est.high < 1.0 and looks_slower(est.ratio, threshold):
        return SLOWER
    if est.low > 1.0 and past(est.ratio - 1.0, threshold) >= 0:
        return FASTER
    if past(1.0 - est.low, threshold) <= 0 and past(est.high - 1.0, threshold) <= 0:
        return UNCHANGED
    return TOO_WIDE


_PERCENT = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<sign>%?)", re.ASCII)


def parse_threshold(text: str) -> float:
    """'2%' or '0.5 %' -> 0.02, 0.005: a percentage with its sign, the one form of every
    threshold and tolerance. A bare number is refused (ValueError): is 0.5 half a percent or
    fifty? The message says how to write it; a value outside (0 %, 100 %) is refused too."""
    s = str(text).strip()
    # digits and one point only: Python's float() also reads "2_0" as 20 and "２" as 2
    found = _PERCENT.fullmatch(s)
    if not found:
        raise ValueError(f"could not read {text!r} as a percentage")
    if not found["sign"]:
        raise ValueError(f"{text!r} has no % sign: write 2% for two percent, 0.5% for half "
                         "a percent")
    value = float(found["number"]) / 100.0
    if not 0.0 < value < 1.0:
        raise ValueError(f"threshold must be between 0 and 100 %, not {text!r}")
    return value


#: What a threshold may be, as the errors of the CLI and of notebook parameters say it.
THRESHOLD_FORM = ("a percentage with its sign between 0% and 100%, such as 2% or 0.5% "
                  "(write 2% for two percent)")


def threshold_value(value) -> float | None:
    """A threshold given as a notebook parameter: '2%' as the CLI takes it (None stays
    None); a UsageError for anything else, a bare number included."""
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return parse_threshold(value)
    except ValueError:
        raise UsageError(f"threshold must be {THRESHOLD_FORM}, not {value!r}") from None
