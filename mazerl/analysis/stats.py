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

    def text(self) -> str:
        lo, hi = self.interval()
        if not math.isfinite(lo):
            return f"{self.mean:+.3f} (n/a)"
        return f"{self.mean:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def paired_difference(d: np.ndarray) -> PairedDiff:
    """The paired difference of a metric from `d[s, m]` = metric of B minus metric of A for
    seed s (the runs of A and B with the same seed) on evaluation maze m (M = 1 where only the
    runs' final values are known).

    Mean: d averaged over seeds and mazes. Its variance adds two parts: the seed part
    var_s(mean_m d[s, m]) / S (how much training randomness moves the set-averaged
    difference) and the maze part var_m(mean_s d[s, m]) / M (which mazes were drawn for the
    evaluation), both with ddof = 1; the residual appears in both, so the sum errs on the wide
    side. Degrees of freedom: Welch-Satterthwaite, (v_seed + v_maze)^2 / (v_seed^2 / (S - 1) +
    v_maze^2 / (M - 1)). With one seed the seed part cannot be estimated: se and df are nan."""
    d = np.asarray(d, dtype=np.float64)
    n_seeds, n_mazes = d.shape
    mean = float(d.mean())
    if n_seeds < 2:
        return PairedDiff(mean, float("nan"), float("nan"), n_seeds, n_mazes)
    v_seed = float(d.mean(1).var(ddof=1)) / n_seeds
    v_maze = float(d.mean(0).var(ddof=1)) / n_mazes if n_mazes > 1 else 0.0
    denominator = v_seed**2 / (n_seeds - 1) + (v_maze**2 / (n_mazes - 1) if n_mazes > 1 else 0.0)
    df = (v_seed + v_maze) ** 2 / denominator if denominator > 0 else float("inf")
    return PairedDiff(mean, math.sqrt(v_seed + v_maze), df, n_seeds, n_mazes)
