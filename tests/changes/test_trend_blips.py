"""Change points of `dlperf store trend`: the promises of docs/cli.md — a step beyond the
threshold that lasts `persist` campaigns is a change point (up or down), one the history is
too short to confirm is flagged with '?', and nothing is flagged for a blip that comes back."""

from __future__ import annotations

import math

import pytest

from analysis.changes.trend import change_points

# the medians of a store of DLE campaigns at 2,560 samples/s with one campaign at 2,048
LEVEL, BLIP = [2558.63], [2047.14]
BACK = [2560.31, 2559.98, 2559.43]


@pytest.mark.parametrize("series", [
    LEVEL + BLIP + BACK[:1],
    LEVEL + BLIP + BACK[:2],
    LEVEL + BLIP + BACK,
    LEVEL + [2559.19] + BLIP + BACK,
    [100, 120, 100, 100],  # a blip up
])
def test_a_blip_that_comes_back_is_no_change_point(series):
    """The blip joined a level of one campaign: the median of the two was their mean, and
    the campaigns back at the old level read as a step up of 11 %."""
    flags, steps = change_points(series, 0.02, 2)
    assert flags == [""] * len(series)
    assert all(math.isnan(s) for s in steps)


@pytest.mark.parametrize("persist", [2, 3])
@pytest.mark.parametrize("new, word", [(90.0, "step down"), (110.0, "step up")])
def test_a_step_that_lasts_persist_campaigns_is_a_change_point(new, word, persist):
    flags, steps = change_points([100.0, 100.0] + [new] * persist, 0.02, persist)
    assert flags == ["", "", word] + [""] * (persist - 1)
    assert steps[2] == pytest.approx(new / 100 - 1)


@pytest.mark.parametrize("new, word", [(90.0, "step down?"), (110.0, "step up?")])
def test_a_step_the_history_is_too_short_to_confirm_is_flagged_unconfirmed(new, word):
    flags, steps = change_points([100.0, 100.0, new], 0.02, 2)
    assert flags == ["", "", word] and steps[2] == pytest.approx(new / 100 - 1)


def test_a_blip_does_not_hide_the_step_that_follows_it():
    """The step is measured from the level before the blip, not from a level it moved."""
    flags, steps = change_points([100.0, 115.0, 90.0, 90.0], 0.02, 2)
    assert flags == ["", "", "step down", ""]
    assert steps[2] == pytest.approx(-0.10)


def test_a_blip_in_the_window_of_a_step_leaves_it_unconfirmed_and_moves_no_level():
    # 97 comes back: no change; the level stays 100, so 100.5 after it is no step up
    flags, _ = change_points([100.0, 97.0, 100.0, 100.5, 100.2], 0.02, 2)
    assert flags == [""] * 5


def test_a_drift_is_flagged_once_it_is_beyond_the_threshold_from_the_level():
    """Each campaign within the threshold joins the level; once the series is more than the
    threshold from the level of its segment, and stays so, the change point is there."""
    flags, steps = change_points([100.0, 101.0, 102.0, 103.0, 104.0, 105.0], 0.02, 2)
    assert flags == ["", "", "", "", "step up", ""]
    assert steps[4] == pytest.approx(104 / 101.5 - 1)
    assert change_points([100.0, 100.5, 101.0, 101.5], 0.02, 2)[0] == [""] * 4


# a store of DLE campaigns at 2,560 samples/s that dip to 2,048 for one campaign on the way to
# a lasting 2,406 (-6 %), and its mirror: a spike to 3,072 on the way to a lasting 2,714 (+6 %)
SETTLE_DOWN = [2558.63, 2559.19, 2047.14, 2406.29, 2405.98, 2405.46]
SETTLE_UP = [2558.63, 2559.19, 3071.62, 2714.33, 2713.87, 2714.71]


@pytest.mark.parametrize("persist", [2, 3])
@pytest.mark.parametrize("series, word", [(SETTLE_DOWN, "step down"), (SETTLE_UP, "step up")])
def test_a_step_that_overshoots_on_the_way_is_one_change_point_to_where_it_settles(
        series, word, persist):
    """The step's first campaign alone was the new level, and the campaigns settling past it
    read as a confirmed step back of 18 % (down) or 12 % (up): a speed-up that never was."""
    flags, steps = change_points(series, 0.02, persist)
    assert flags == ["", "", "", word, "", ""]
    assert steps[3] == pytest.approx(series[3] / 2558.91 - 1)
    assert abs(steps[3]) == pytest.approx(0.06, abs=0.003)


def test_the_level_after_a_step_is_its_window_s_median():
    """Its first campaign alone (97) was the level, and the campaigns at 94 after it read as
    a second step down."""
    flags, steps = change_points([100.0, 100.0, 97.0, 94.0, 94.0, 94.5], 0.02, 3)
    assert flags == ["", "", "step down", "", "", ""]
    assert steps[2] == pytest.approx(-0.03)


# a store of DLE campaigns at 2,560 samples/s that steps -3 % for one campaign on the way to a
# lasting 2,048 (-20 %), and its mirror: +3 % on the way to a lasting 3,072 (+20 %)
STAIR_DOWN = [2558.63, 2559.19, 2560.02, 2483.41, 2047.14, 2048.27, 2047.88]
STAIR_UP = [2558.63, 2559.19, 2560.02, 2636.77, 3071.62, 3072.48, 3071.95]


@pytest.mark.parametrize("series, word", [(STAIR_DOWN, "step down"), (STAIR_UP, "step up")])
def test_a_step_that_falls_short_on_the_way_is_one_change_point_to_where_it_settles(
        series, word):
    """The window's median (the mean of -3 % and -20 %) was the new level, so the campaigns
    settled at -20 % read as a second step of 10 % where nothing changed, and the -20 % step
    was never named."""
    flags, steps = change_points(series, 0.02, 2)
    assert flags == ["", "", "", "", word, "", ""]
    assert steps[4] == pytest.approx(series[4] / 2559.19 - 1)
    assert abs(steps[4]) == pytest.approx(0.20, abs=0.003)


# a store of DLE campaigns at 2,560 samples/s: -3 % for one campaign on the way to a lasting
# 2,048 (-20 %), long enough to confirm at any persist up to 4, and its mirror up
LONG_STAIR_DOWN = STAIR_DOWN + [2048.51, 2047.62]
LONG_STAIR_UP = STAIR_UP + [3072.19, 3071.44]


@pytest.mark.parametrize("persist", [2, 3, 4])
@pytest.mark.parametrize("series, word", [(LONG_STAIR_DOWN, "step down"),
                                          (LONG_STAIR_UP, "step up")])
def test_a_step_short_on_the_way_is_read_where_it_settles_at_every_persist(
        series, word, persist):
    """With persist 3 the window's median was already where it settles, so the -3 % campaign
    was read as the step, the -20 % window became the level, and the drop was never named."""
    flags, steps = change_points(series, 0.02, persist)
    assert flags == ["", "", "", "", word, "", "", "", ""]
    assert abs(steps[4]) == pytest.approx(0.20, abs=0.003)


# a lasting -3 % step with a one-campaign dip to 2,048 right after it, and its mirror up
STEP_THEN_DIP = [2558.63, 2559.19, 2560.02, 2483.41, 2047.14, 2483.77, 2482.95, 2483.12,
                 2483.60]
STEP_THEN_SPIKE = [2558.63, 2559.19, 2560.02, 2636.77, 3071.62, 2637.14, 2636.20, 2636.91,
                   2637.35]


@pytest.mark.parametrize("persist", [2, 3, 4])
@pytest.mark.parametrize("series, word", [(STEP_THEN_DIP, "step down"),
                                          (STEP_THEN_SPIKE, "step up")])
def test_a_dip_right_after_a_step_leaves_the_step_where_it_is(series, word, persist):
    """The dip was taken for where the step settles and the step read at the campaign after
    the dip; nor may the dip move the new level (a mean of -3 % and -20 % at persist 2)."""
    flags, steps = change_points(series, 0.02, persist)
    assert flags == ["", "", "", word] + [""] * 5
    assert abs(steps[3]) == pytest.approx(0.03, abs=0.001)
