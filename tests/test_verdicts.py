"""The verdict rule's pure functions (mazerl.analysis.verdicts) against hand computations, scipy
called directly, and a simulation of the two-way model for the prediction interval."""

import math

import numpy as np
import pytest
from scipy import stats

from mazerl.analysis.stats import paired_difference
from mazerl.analysis.verdicts import (
    convergence,
    direction,
    holm,
    magnitude,
    prediction_interval,
    rule_p,
    t_p_value,
    units_p,
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


def test_units_p_is_a_one_sample_t_over_few_units():
    # [1, 2, 3]: mean 2, sd 1, t = 2 / (1 / sqrt 3) = 3.4641 on 2 df: p = 0.07418
    assert units_p([1.0, 2.0, 3.0]) == pytest.approx(0.07418, abs=1e-5)
    x = [0.5, 1.9, -0.2, 1.1]
    assert units_p(x) == pytest.approx(stats.ttest_1samp(x, 0.0).pvalue)
    assert math.isnan(units_p([1.0, 2.0, 3.0, 4.0, 5.0]))  # 5 units: not used
    assert math.isnan(units_p([1.0]))
    # the rule takes the larger where p_units is known
    assert rule_p(0.001, 0.07) == 0.07 and rule_p(0.2, 0.07) == 0.2
    assert rule_p(0.001, float("nan")) == 0.001


def two_way_by_hand(d: np.ndarray) -> tuple[float, float, float]:
    """s2_a, s2_b, s2_e of d[u, m] from the sums of squares written out (unit, maze, residual)."""
    u, m = d.shape
    grand = d.sum() / (u * m)
    row = [sum(d[i]) / m for i in range(u)]
    col = [sum(d[:, j]) / u for j in range(m)]
    ss_unit = m * sum((r - grand) ** 2 for r in row)
    ss_maze = u * sum((c - grand) ** 2 for c in col)
    ss_res = sum((d[i, j] - row[i] - col[j] + grand) ** 2 for i in range(u) for j in range(m))
    ms_unit, ms_maze, ms_res = ss_unit / (u - 1), ss_maze / (m - 1), ss_res / ((u - 1) * (m - 1))
    return (ms_unit - ms_res) / m, (ms_maze - ms_res) / u, ms_res


def test_prediction_interval_by_hand():
    # 3 units x 2 mazes. Grand mean 3; unit means 2, 4, 3; maze means 2, 4; residuals
    # d - row - col + grand = [[0, 0], [0, 0], [0, 0]] except unit 3 ([2, 4] -> [2, 4]: 0).
    d = np.array([[1.0, 3.0], [3.0, 5.0], [2.0, 4.0]])
    # MS_unit = 2 * var(2, 4, 3) = 2; MS_maze = 3 * var(2, 4) = 6; MS_res = 0
    # var = (U+1)/(U M) MS_unit + (1/M + 1/R)/U MS_maze + 0, R = 4:
    #     = 4/6 * 2 + (1/2 + 1/4)/3 * 6 = 4/3 + 3/2 = 17/6
    # Satterthwaite: (17/6)^2 / ((4/3)^2 / 2 + (3/2)^2 / 1) = 8.0278 / 3.1389 = 2.5575
    lo, hi, df = prediction_interval(d, 4, (3.0, 3.0))
    assert df == pytest.approx((17 / 6) ** 2 / ((4 / 3) ** 2 / 2 + 1.5**2), rel=1e-9)
    half = stats.t.ppf(0.975, df) * math.sqrt(17 / 6)
    assert (lo, hi) == pytest.approx((3 - half, 3 + half), rel=1e-9)
    # the variance components' sum, written out from s2_a, s2_b, s2_e
    rng = np.random.default_rng(1)
    d = rng.normal(size=(4, 30)) + rng.normal(size=(4, 1)) + 2 * rng.normal(size=(1, 30))
    a, b, e = two_way_by_hand(d)
    var = a * (1 + 1 / 4) + b * (1 / 30 + 1 / 256) + e * (1 / 120 + 1 / 256)
    lo, hi, df = prediction_interval(d, 256, (d.mean(), d.mean()))
    assert (hi - lo) / 2 == pytest.approx(stats.t.ppf(0.975, df) * math.sqrt(var), rel=1e-9)
    assert all(math.isnan(v) for v in prediction_interval(np.ones((1, 5)), 256, (1.0, 1.0)))
    assert all(math.isnan(v) for v in prediction_interval(np.ones((5, 1)), 256, (1.0, 1.0)))


def test_prediction_interval_covers_one_new_run_on_its_own_mazes():
    """Simulate d = a_u + b_m + e_um (sd 1, 2, 3): U = 4 units on M = 40 mazes, and one new
    unit on its own R = 30 mazes. The new run's mean falls inside the interval about 95% of
    the time, and the interval contains the estimate's own confidence interval."""
    rng = np.random.default_rng(0)
    u, m, r, reps = 4, 40, 30, 2000
    inside = contains = 0
    for _ in range(reps):
        d = rng.normal(0, 1, (u, 1)) + rng.normal(0, 2, (1, m)) + rng.normal(0, 3, (u, m))
        new = rng.normal(0, 1) + rng.normal(0, 2, r).mean() + rng.normal(0, 3, r).mean()
        ci = paired_difference(d).interval()
        lo, hi, _ = prediction_interval(d, r, ci)
        inside += lo <= new <= hi
        contains += lo <= ci[0] and ci[1] <= hi
    assert 0.93 <= inside / reps <= 0.97
    assert contains == reps
    # where the mean's interval is the wider (here: a wide CI given), the PI is widened to it
    d = np.array([[1.0, 3.0], [3.0, 5.0], [2.0, 4.0]])
    assert prediction_interval(d, 4, (-50.0, 60.0))[:2] == (-50.0, 60.0)


def test_the_words():
    assert direction(0.049, 3.0, "greater") == "supported"
    assert direction(0.049, -3.0, "greater") == "contradicted"
    assert direction(0.049, -3.0, "less") == "supported"
    assert direction(0.049, 3.0, "less") == "contradicted"
    assert direction(0.05, 3.0, "greater") == "not shown"
    assert direction(float("nan"), 3.0, "greater") == "not shown"
    assert magnitude(1.0, 5.5, 10.6) == "below"
    assert magnitude(10.7, 18.8, 10.4) == "above"
    assert magnitude(1.0, 11.6, 10.6) == "consistent"
    assert magnitude(0.3, 10.6, 10.6) == "consistent"  # the bound itself is inside
    assert magnitude(-5.0, 11.6, 10.6) == "uninformative"  # holds 0 and the reference
    assert magnitude(-56.1, 55.6, 11.2) == "uninformative"
    assert magnitude(-3.0, -1.0, 4.1) == "below"  # below: not uninformative, 0 not inside
    assert magnitude(1.0, 2.0, None) == ""
    assert magnitude(float("nan"), float("nan"), 3.0) == ""
    assert convergence(-0.3, 0.4, 0.5) == "converged"
    assert convergence(0.1, 0.4, 0.5) == "converged"  # rising, but inside the margin
    assert convergence(0.1, 1.2, 0.5) == "still rising"
    assert convergence(-1.2, -0.1, 0.5) == "still falling"
    assert convergence(-0.2, 1.4, 0.5) == "undetermined"
    assert convergence(-0.5, 0.4, 0.5) == "undetermined"  # on the margin: not inside
    assert convergence(float("nan"), float("nan"), 0.5) == "undetermined"
