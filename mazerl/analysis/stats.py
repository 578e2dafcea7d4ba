"""Statistics of a sweep: means over seeds and paired differences with their intervals."""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


def mean_se(values: list[float]) -> tuple[float, float]:
    """Mean and standard error (ddof = 1) of the finite values; se 0 for one value."""
    arr = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(arr) == 0:
        return float("nan"), float("nan")
    se = arr.std(ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0.0
    return float(arr.mean()), float(se)


@dataclass
class PairedDiff:
    """Paired difference (B - A) of one metric: mean, its standard error and degrees of
    freedom (nan with one seed), and what it is paired over."""

    mean: float
    se: float
    df: float
    seeds: int
    mazes: int

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The two-sided t interval; (nan, nan) with one seed."""
        if not math.isfinite(self.se):
            return float("nan"), float("nan")
        half = stats.t.ppf(0.5 + level / 2, self.df) * self.se if self.se > 0 else 0.0
        return self.mean - half, self.mean + half

    def text(self, scale: float = 1.0, digits: int = 3) -> str:
        """ "+0.123 [+0.045, +0.201]": the mean and its 95% interval times `scale` (100: in
        points), to `digits` decimals; "(n/a)" for the interval with one seed."""
        lo, hi = (scale * x for x in self.interval())
        if not math.isfinite(lo):
            return f"{scale * self.mean:+.{digits}f} (n/a)"
        return f"{scale * self.mean:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def paired_difference(d: np.ndarray, units: np.ndarray | None = None) -> PairedDiff:
    """The paired difference of a metric from `d[r, m]` = metric of B minus metric of A for
    row r (the runs of A and B with the same seed) on evaluation maze m (M = 1 where only
    the runs' final values are known). `units[r]` names the independent unit each row
    belongs to, where rows share one (the N = 8 and N = 32 rows of one seed share its base
    model and training stream): the rows of a unit are averaged first, and the interval is
    over the units; by default each row is its own unit.

    A two-way random-effects decomposition over the U units, d[u, m] = mu + a_u + b_m + e_um
    (training randomness a, the evaluation mazes drawn b, their interaction e), from the
    mean squares MS_unit = M var_u(dbar_u), MS_maze = U var_m(dbar_m) and
    MS_res = sum (d - dbar_u - dbar_m + dbar)^2 / ((U - 1)(M - 1)):
    var(mean) = s2_a / U + s2_b / M + s2_e / (U M) with s2_a = (MS_unit - MS_res) / M,
    s2_b = (MS_maze - MS_res) / U, s2_e = MS_res, i.e. (MS_unit + MS_maze - MS_res) / (U M):
    the interaction counted once. A component estimated below zero is set to zero (its mean
    square then drops out). Degrees of freedom: Satterthwaite's for that sum of mean squares,
    except that a unit component set to zero keeps the units' U - 1: a unit variance that a
    few units estimate below zero is not known to be zero, and the maze's or the residual's
    degrees of freedom (about M or U M) would call a 3-seed interval as sure as a normal one.
    With fewer than two units the unit part cannot be estimated: se and df nan."""
    d = np.asarray(d, dtype=np.float64)
    if units is not None:
        labels, index = np.unique(np.asarray(units), return_inverse=True)
        d = np.stack([d[index == u].mean(0) for u in range(len(labels))])  # [U, M]
    n_units, n_mazes = d.shape
    df_unit = n_units - 1
    mean = float(d.mean())
    if df_unit < 1:
        return PairedDiff(mean, float("nan"), float("nan"), n_units, n_mazes)
    unit_means = d.mean(1)  # [U]
    ms_unit = n_mazes * float(unit_means.var(ddof=1))
    terms = [(ms_unit, df_unit)]  # (mean square, its degrees of freedom), coefficient +1
    unit_kept = True
    if n_mazes > 1:
        maze_means = d.mean(0)  # [M]
        ms_maze = n_units * float(maze_means.var(ddof=1))
        resid = d - unit_means[:, None] - maze_means[None, :] + mean  # [U, M]
        df_res = df_unit * (n_mazes - 1)
        ms_res = float(np.square(resid).sum()) / df_res
        unit_kept, maze_kept = ms_unit > ms_res, ms_maze > ms_res
        terms = [(ms_unit, df_unit)] * int(unit_kept) + [(ms_maze, n_mazes - 1)] * int(maze_kept)
        terms += [(-ms_res, df_res)] * int(unit_kept and maze_kept)
        if not (unit_kept or maze_kept):
            terms = [(ms_res, df_res)]
    total = sum(ms for ms, _ in terms)
    df = total**2 / sum(ms**2 / f for ms, f in terms) if total > 0 else float("inf")
    df = df if unit_kept else float(df_unit)
    return PairedDiff(mean, math.sqrt(total / (n_units * n_mazes)), df, n_units, n_mazes)


def bootstrap_means(d: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """`[draws]` means of `d[u, m]` resampled hierarchically: units (seeds) with replacement,
    then evaluation mazes with replacement, one draw of mazes shared by the drawn units
    (every seed is evaluated on the same mazes: drawing them per seed would hide the
    mazes' common part)."""
    n_units, n_mazes = d.shape
    unit_counts = rng.multinomial(n_units, np.full(n_units, 1 / n_units), draws)  # [B, U]
    maze_counts = rng.multinomial(n_mazes, np.full(n_mazes, 1 / n_mazes), draws)  # [B, M]
    return np.einsum("bu,um,bm->b", unit_counts, d, maze_counts) / (n_units * n_mazes)


@dataclass
class Slope:
    """A trend in points (percent) per 1,000 steps with its 95% interval, from `points`
    evaluations; `moving` when the interval excludes zero and the slope exceeds
    `MOVING_SLOPE` in size."""

    value: float
    lo: float
    hi: float
    points: int

    @property
    def moving(self) -> bool:
        return bool((self.lo > 0 or self.hi < 0) and abs(self.value) > MOVING_SLOPE)

    def text(self) -> str:
        if not math.isfinite(self.lo):
            return f"{self.value:+.1f} (n/a)"
        return f"{self.value:+.1f} [{self.lo:+.1f}, {self.hi:+.1f}]" + " *" * self.moving


MOVING_SLOPE = 0.5  # points per 1,000 steps: below this a trend is called flat


def slope(steps: np.ndarray, values: np.ndarray) -> Slope:
    """The slope of `values[u, t]` (fractions; one row per unit: a seed, or a bank model
    with its RL seed) over `steps[t]`, in points per 1,000 steps: each unit's own
    least-squares slope (its own level), their mean, and a t interval over the units,
    mean +- t(U - 1) sd_u / sqrt(U). The evaluations of one run are correlated in time, so
    the units, not the evaluations, are the replicates. With one unit the interval is nan
    (the spread between runs is not known)."""
    steps = np.asarray(steps, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)  # [U, T]
    n_units, n_steps = y.shape
    x = steps - steps.mean()  # [T]
    scale = 100 * 1000  # fraction per step -> points per 1,000 steps
    per_unit = scale * (y - y.mean(1, keepdims=True)) @ x / float(np.square(x).sum())  # [U]
    value = float(per_unit.mean())
    if n_units < 2:
        return Slope(value, float("nan"), float("nan"), n_steps)
    half = stats.t.ppf(0.975, n_units - 1) * float(per_unit.std(ddof=1)) / math.sqrt(n_units)
    return Slope(value, value - half, value + half, n_steps)


def last_third(steps: list[int]) -> list[int]:
    """The last third of the evaluation steps (at least 3, all when fewer)."""
    return sorted(steps)[-max(3, math.ceil(len(steps) / 3)) :]


def reading(
    lo: float,
    hi: float,
    reference: float | None = None,
    digits: int = 1,
    whose: str = "the reference's",
) -> str:
    """What a 95% interval `[lo, hi]` of a gain (points) says: a gain or a loss where it
    excludes zero, else the bound it sets ("< +X"); then, against a `reference` gain (named
    `whose`), whether it lies below, above or inside. Bounds with `digits` decimals."""
    if lo > 0:
        text = f"gain {lo:+.{digits}f} to {hi:+.{digits}f}"
    elif hi < 0:
        text = f"loss {lo:+.{digits}f} to {hi:+.{digits}f}"
    else:
        text = f"no gain shown: < {hi:+.{digits}f}"
    if reference is None:
        return text
    if hi < reference:
        return f"{text}; below {whose} {reference:+.1f}"
    if lo > reference:
        return f"{text}; above {whose} {reference:+.1f}"
    return f"{text}; {whose} {reference:+.1f} inside"
