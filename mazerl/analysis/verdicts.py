"""The verdict rule, as pure functions: a claim's p-values adjusted over its family (Holm), a
t over the units' mean differences where the units are few, a rank test beside the t
(Wilcoxon signed-rank over units), the prediction interval for one run with every variance
term, and the words computed from a row's own numbers (docs/concepts/verdicts.md):

- **direction** of a claim that expects a - b `greater` or `less` than 0: `supported` where
  the Holm-adjusted p is below `ALPHA` and the estimate's sign agrees with the expectation,
  `contradicted` where it is below `ALPHA` and the sign disagrees, else `not shown`;
- **magnitude** against a reference value: `below`, `consistent` or `above` it, by the
  prediction interval for one run where the reference is a single run (a published table of
  one run per cell), by the confidence interval where it is a mean; `uninformative` where
  that interval holds both 0 and the reference; empty without a reference;
- **convergence** of a slope against a declared margin: `converged` where the slope's 95%
  interval lies inside [-margin, +margin] (an equivalence test), else `still rising`,
  `still falling` or `undetermined`;
- `TOO_FEW` (`too few units`) in place of a direction or a convergence word where a claim has
  fewer than `MIN_UNITS` units (a study part-way through its runs): no numbers, no verdict,
  and in its family's Holm adjustment the p of 1 (`PENDING_P`).
"""

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

ALPHA = 0.05
REFERENCE_KINDS = ("single run", "mean")
EXPECTS = ("greater", "less")
FEW_UNITS = 5  # below this many units, the t over the units' means also counts (`units_p`)
MIN_UNITS = 2  # below this many units a claim has no numbers and no verdict: `TOO_FEW`
TOO_FEW = "too few units"
PENDING_P = 1.0  # the p a claim with too few units counts as in its family's Holm adjustment


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


def units_p(unit_diffs: Sequence[float]) -> float:
    """The two-sided p of a one-sample t over the `[K]` per-unit mean differences (K - 1
    df), where K < `FEW_UNITS`; nan with 5 or more units or fewer than two. With few units
    the two-way interval's Satterthwaite df can reach the hundreds (the maze term dominates),
    while only K - 1 independent replicates of the training randomness exist."""
    x = np.asarray(unit_diffs, dtype=np.float64)
    k = len(x)
    if k >= FEW_UNITS or k < 2:
        return float("nan")
    return t_p_value(float(x.mean()), float(x.std(ddof=1)) / math.sqrt(k), k - 1)


def rule_p(p: float, p_units: float) -> float:
    """The p the rule adjusts: the larger of the two-way t's `p` and `p_units` where that is
    known (fewer than `FEW_UNITS` units), else `p`."""
    return max(p, p_units) if math.isfinite(p_units) else p


def wilcoxon_p(unit_diffs: Sequence[float]) -> float:
    """The two-sided Wilcoxon signed-rank p over the `[K]` per-unit mean differences (scipy's
    default: exact for small K without ties or zeros); nan with fewer than two non-zero
    differences."""
    x = np.asarray(unit_diffs, dtype=np.float64)
    if np.count_nonzero(x) < 2:
        return float("nan")
    return float(stats.wilcoxon(x).pvalue)


def prediction_interval(
    d: np.ndarray, reference_mazes: int, ci: tuple[float, float], level: float = 0.95
) -> tuple[float, float, float]:
    """Where one run's value of the difference would fall, measured as the reference was:
    one more unit (a new base model and training), evaluated on its own `reference_mazes`
    mazes, minus our estimate. From `d[u, m]` (U units by M mazes, any unit, e.g. points),
    d = mu + a_u + b_m + e_um with the mean squares of `mazerl.analysis.stats.paired_difference`
    (s2_a = (MS_unit - MS_res) / M, s2_b = (MS_maze - MS_res) / U, s2_e = MS_res; R =
    `reference_mazes`):

        var = s2_a (1 + 1/U)  +  s2_b (1/M + 1/R)  +  s2_e (1/(U M) + 1/R)

    the new unit's training term and our mean's unit term; our mean's maze term and the
    reference's own draw of mazes; the interaction in our mean and in the reference's
    (s2_b + s2_e, the per-maze spread of one unit's difference, over R). As a sum of mean
    squares, c_u MS_unit + c_m MS_maze + c_r MS_res with c_u = (U + 1)/(U M),
    c_m = (1/M + 1/R)/U, c_r = (U - 1)/(U R) - 1/M - 1/(U M); Satterthwaite's df for it.
    Returns (lo, hi, df): mean -+ t(df) sqrt(var), widened where needed to contain `ci`, the
    mean's own 95% interval (`PairedDiff.interval`): one run is never known better than the
    mean, and the mean's interval can be the wider where it keeps the units' U - 1 df (a
    unit component estimated below zero). nan with fewer than two units or one maze
    (set-level values: no maze term to estimate)."""
    d = np.asarray(d, dtype=np.float64)
    n_units, n_mazes = d.shape
    if n_units < 2 or n_mazes < 2:
        return float("nan"), float("nan"), float("nan")
    u, m, r = n_units, n_mazes, float(reference_mazes)
    mean = float(d.mean())
    unit_means, maze_means = d.mean(1), d.mean(0)
    ms_unit = m * float(unit_means.var(ddof=1))
    ms_maze = u * float(maze_means.var(ddof=1))
    resid = d - unit_means[:, None] - maze_means[None, :] + mean
    df_res = (u - 1) * (m - 1)
    ms_res = float(np.square(resid).sum()) / df_res
    terms = [
        ((u + 1) / (u * m) * ms_unit, u - 1),
        ((1 / m + 1 / r) / u * ms_maze, m - 1),
        (((u - 1) / (u * r) - 1 / m - 1 / (u * m)) * ms_res, df_res),
    ]
    var = max(sum(x for x, _ in terms), 0.0)
    df = var**2 / sum(x**2 / f for x, f in terms) if var > 0 else float("inf")
    half = float(stats.t.ppf(0.5 + level / 2, df)) * math.sqrt(var)
    return min(mean - half, ci[0]), max(mean + half, ci[1]), df


def direction(p_adjusted: float, estimate: float, expect: str) -> str:
    """`supported` where the adjusted p is below `ALPHA` and the estimate's sign is the one
    `expect` (`greater` or `less`) states, `contradicted` where it is below `ALPHA` and the
    sign is the other, else `not shown` (also for nan)."""
    if not p_adjusted < ALPHA or estimate == 0:
        return "not shown"
    agrees = estimate > 0 if expect == "greater" else estimate < 0
    return "supported" if agrees else "contradicted"


def magnitude(lo: float, hi: float, reference: float | None) -> str:
    """`below` where the interval [lo, hi] lies below the reference, `above` where it lies
    above it; where it holds the reference, `uninformative` if it also holds 0 (it cannot tell
    the reference's effect from none) else `consistent`; empty without a reference or
    without an interval."""
    if reference is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    if hi < reference:
        return "below"
    if lo > reference:
        return "above"
    return "uninformative" if lo <= 0 <= hi else "consistent"


def convergence(lo: float, hi: float, margin: float) -> str:
    """The word for a slope whose 95% interval is [lo, hi] (points per 1,000 steps), against
    the declared `margin`: `converged` where the interval lies inside [-margin, +margin],
    else `still rising` where it lies above 0, `still falling` where it lies below 0, else
    `undetermined` (also without an interval)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "undetermined"
    if -margin < lo and hi < margin:
        return "converged"
    if lo > 0:
        return "still rising"
    if hi < 0:
        return "still falling"
    return "undetermined"
