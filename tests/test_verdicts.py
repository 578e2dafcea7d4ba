"""The verdict rule's pure functions (mazerl.analysis.verdicts) against hand computations and
scipy called directly."""

import math

import numpy as np
import pytest
from scipy import stats

from mazerl.analysis.verdicts import (
    direction,
    holm,
    magnitude,
    prediction_interval,
    t_p_value,
    wilcoxon_p,
)


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> the last
    # raised to 0.06 (monotone); back in the given order
    out = holm([0.01, 0.04, 0.03, 0.005])
    assert out == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # Holm (1979)'s own kind of case: p 0.01, 0.02, 0.03 with m = 3 -> 0.03, 0.04, 0.04
    assert holm([0.03, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    # capped at 1; one p alone is not adjusted; nan stays nan and does not count in m
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])
    assert holm([0.2]) == pytest.approx([0.2])
    out = holm([0.01, float("nan"), 0.02])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.02)


def test_holm_is_monotone_and_never_below_the_raw_p():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.random(9) ** 3
        adj = holm(p)
        assert np.all(adj >= p - 1e-15) and np.all(adj <= 1)
        order = np.argsort(p)
        assert np.all(np.diff(adj[order]) >= 0)  # a smaller p never gets a larger adjusted p


def test_t_p_value_matches_scipys_one_sample_t_test():
    x = np.array([1.2, -0.3, 2.5, 0.8, 1.9, 0.4])
    expected = stats.ttest_1samp(x, 0.0).pvalue
    se = x.std(ddof=1) / math.sqrt(len(x))
    assert t_p_value(x.mean(), se, len(x) - 1) == pytest.approx(expected)
    assert t_p_value(2.0, 1.0, 10) == pytest.approx(2 * stats.t.sf(2.0, 10))
    assert math.isnan(t_p_value(1.0, float("nan"), float("nan")))


def test_wilcoxon_against_scipy_and_by_hand():
    # five positive differences: the exact two-sided p is 2 / 2^5 = 0.0625
    assert wilcoxon_p([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(0.0625)
    x = [3.1, -0.4, 2.2, 5.0, 1.7, -1.1, 4.4, 0.9]
    assert wilcoxon_p(x) == pytest.approx(stats.wilcoxon(x).pvalue)
    assert math.isnan(wilcoxon_p([0.0, 0.0, 1.0]))


def test_prediction_interval_by_hand():
    # [1, 2, 3]: mean 2, sd 1, t(0.975, 2) = 4.3027, sqrt(1 + 1/3) = 1.1547 -> half 4.9683
    lo, hi = prediction_interval([1.0, 2.0, 3.0])
    assert (lo, hi) == pytest.approx((2 - 4.9683, 2 + 4.9683), abs=1e-4)
    # wider than the mean's interval by sqrt(K + 1)
    x = np.array([2.0, 5.0, -1.0, 4.0, 3.0])
    half_ci = stats.t.ppf(0.975, 4) * x.std(ddof=1) / math.sqrt(5)
    lo, hi = prediction_interval(x)
    assert (hi - lo) / 2 == pytest.approx(half_ci * math.sqrt(6))
    assert all(math.isnan(v) for v in prediction_interval([1.0]))


def test_the_two_verdicts():
    assert direction(0.049) == "shown" and direction(0.05) == "not shown"
    assert direction(float("nan")) == "not shown"
    assert magnitude(1.0, 5.5, 10.6) == "below"
    assert magnitude(10.7, 18.8, 10.4) == "above"
    assert magnitude(-5.0, 11.6, 10.6) == "consistent"
    assert magnitude(0.3, 10.6, 10.6) == "consistent"  # the bound itself is inside
    assert magnitude(1.0, 2.0, None) == ""
    assert magnitude(float("nan"), float("nan"), 3.0) == ""
