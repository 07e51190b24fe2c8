"""Seeded property test of the verdicts (issue 12, Deliver 5): synthetic campaigns with known
shifts and known multiplicative noise; the verdict must be right in >= 95 % of trials, and a
0 % shift may be called slower no more often than (1 - confidence) / 2."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.changes import verdict

TRIALS = 400
#: (run-to-run spread, repeats a side): DLPerf campaigns have 3-5 repeats.
NOISE = [(0.001, 3), (0.001, 5), (0.003, 5)]
#: shift -> the right verdict at the default 2 % threshold.
SHIFTS = {0.0: verdict.UNCHANGED, -0.01: verdict.UNCHANGED, +0.01: verdict.UNCHANGED,
          -0.03: verdict.SLOWER, -0.10: verdict.SLOWER, +0.03: verdict.FASTER,
          +0.10: verdict.FASTER}


def _campaigns(rng, shift, spread, repeats, trials):
    base = 3000.0 * np.exp(rng.normal(0.0, spread, (trials, repeats)))
    new = 3000.0 * (1.0 + shift) * np.exp(rng.normal(0.0, spread, (trials, repeats)))
    return base, new


@pytest.mark.parametrize("spread, repeats", NOISE)
@pytest.mark.parametrize("shift", sorted(SHIFTS))
def test_verdicts_are_right_in_95_percent_of_seeded_trials(shift, spread, repeats):
    rng = np.random.default_rng(12_000 + int(shift * 1000) + repeats)
    base, new = _campaigns(rng, shift, spread, repeats, TRIALS)
    got = [verdict.decide(verdict.ratio_interval(b, n)) for b, n in zip(base, new)]
    right = np.mean([g == SHIFTS[shift] for g in got])
    assert right >= 0.95, (shift, spread, repeats, right)


@pytest.mark.parametrize("spread, repeats", [(0.001, 3), (0.02, 3), (0.02, 5)])
def test_no_change_is_called_slower_at_most_at_the_stated_rate(spread, repeats):
    """With a threshold too small to matter, "slower" needs only the interval to lie below 1:
    its rate on a 0 % shift is then the interval's one-sided error, (1 - 0.95) / 2 = 2.5 %.
    Allowed: the stated rate plus three binomial standard errors of the trials."""
    trials, stated = 4000, (1.0 - verdict.DEFAULT_CONFIDENCE) / 2.0
    rng = np.random.default_rng(7 + repeats)
    base, new = _campaigns(rng, 0.0, spread, repeats, trials)
    slower = np.mean([verdict.decide(verdict.ratio_interval(b, n), 1e-9) == verdict.SLOWER
                      for b, n in zip(base, new)])
    assert slower <= stated + 3.0 * np.sqrt(stated * (1 - stated) / trials), slower
    assert slower >= 0.005, "an interval this wide would never find anything"
    default = np.mean([verdict.decide(verdict.ratio_interval(b, n)) == verdict.SLOWER
                       for b, n in zip(base, new)])
    assert default <= slower
