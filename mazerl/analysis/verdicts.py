"""The verdict rule, as pure functions: a claim's p-values adjusted over its family (Holm), a
rank test beside the t (Wilcoxon signed-rank over units), the prediction interval for one run,
and the two verdicts computed from a row's own numbers (docs/concepts/verdicts.md):

- **direction**: `shown` where the Holm-adjusted p is below `ALPHA`, else `not shown` (the
  sign of the estimate says which way);
- **magnitude** against a reference value: `below`, `consistent` or `above` it, by the
  prediction interval for one run where the reference is a single run (a published table of
  one run per cell), by the confidence interval where it is a mean; empty without a reference.
"""

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

ALPHA = 0.05
REFERENCE_KINDS = ("single run", "mean")


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of the `[m]` p-values of one family, in their order: the
    i-th smallest (i = 1 ... m) times m - i + 1, made monotone (never below a smaller p's
    adjusted value) and capped at 1. Never below the raw p. NaN entries stay NaN and do
    not count in m."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full_like(p, np.nan)
    known = np.flatnonzero(np.isfinite(p))
    order = known[np.argsort(p[known], kind="stable")]
    m = len(order)
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        out[idx] = running
    return out


def t_p_value(mean: float, se: float, df: float) -> float:
    """The two-sided p of a t statistic mean / se on `df` degrees of freedom (nan where the
    se is unknown; 0 where it is 0 and the mean is not)."""
    if not (math.isfinite(se) and math.isfinite(mean)):
        return float("nan")
    if se == 0:
        return 0.0 if mean != 0 else 1.0
    return float(2 * stats.t.sf(abs(mean / se), df))


def wilcoxon_p(unit_diffs: Sequence[float]) -> float:
    """The two-sided Wilcoxon signed-rank p over the `[K]` per-unit mean differences (scipy's
    default: exact for small K without ties or zeros); nan with fewer than two non-zero
    differences."""
    x = np.asarray(unit_diffs, dtype=np.float64)
    if np.count_nonzero(x) < 2:
        return float("nan")
    return float(stats.wilcoxon(x).pvalue)


def prediction_interval(unit_diffs: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Where one more unit's difference (one run from one more base model) would fall: from the
    `[K]` per-unit differences, mean +- t(K - 1) s sqrt(1 + 1 / K), s their sd (ddof 1);
    (nan, nan) with fewer than two units."""
    x = np.asarray(unit_diffs, dtype=np.float64)
    k = len(x)
    if k < 2:
        return float("nan"), float("nan")
    half = stats.t.ppf(0.5 + level / 2, k - 1) * float(x.std(ddof=1)) * math.sqrt(1 + 1 / k)
    return float(x.mean() - half), float(x.mean() + half)


def direction(p_adjusted: float) -> str:
    """`shown` where the adjusted p is below `ALPHA`, else `not shown` (also for nan)."""
    return "shown" if p_adjusted < ALPHA else "not shown"


def magnitude(lo: float, hi: float, reference: float | None) -> str:
    """`below` where the interval [lo, hi] lies below the reference, `above` where it lies
    above it, else `consistent`; empty without a reference or without an interval."""
    if reference is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    if hi < reference:
        return "below"
    if lo > reference:
        return "above"
    return "consistent"
