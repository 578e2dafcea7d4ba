"""How many base models: the variance components of a paired difference, and the number of
base models that gives its 95% interval a chosen half-width.

A paired difference d[u, m] (method B minus method A, both from the same base model with the
same RL seed: unit u; on evaluation maze m) is modelled as

    d[u, m] = mu + beta_base(u) + rho_u + b_m + e_um

with the base model's effect beta ~ (0, s2_base), the RL randomness of the unit's RL seed on
that base model rho ~ (0, s2_rl), the maze effect b ~ (0, s2_maze) shared by every unit (all
are evaluated on the same mazes) and the unit x maze interaction with the residual
e ~ (0, s2_res). A design of K base models x R RL seeds each on M mazes has

    Var(mean) = s2_base / K + s2_rl / (K R) + s2_maze / M + s2_res / (K R M)

and the 95% half-width t(0.975, K - 1) sqrt(Var): the base model is the unit, K - 1 degrees
of freedom also where a component is estimated at zero. For a fixed budget of n = K R runs,
Var = s2_base R / n + s2_rl / n + s2_maze / M + s2_res / (n M) grows with R wherever
s2_base > 0, and the degrees of freedom n / R - 1 fall: one RL seed per base model (R = 1)
is the best use of runs. Where each base model has one RL seed (every study so far: the seed
sets both), s2_base and s2_rl are not separable; their sum s2_unit is.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from mazerl.analysis.leaderboard import bank_model
from mazerl.analysis.runs import Run
from mazerl.analysis.tables import headline, paired_matrix, sets_of, table_head
from mazerl.eval.metric_names import Metric
from mazerl.train.bank import BANK_DIR, bank_index

TARGET = 0.05  # half-width asked for: 5 points of pass@1
K_MAX = 100_000  # the largest number of base models searched
HEADS = ["group", "against", "units", "mazes", "Δ", "sd unit", "sd base / RL", "sd maze",
         "sd residual", "± now", "± at K", "same runs, 2 RL seeds"]  # fmt: skip


@dataclass
class Components:
    """Variance components (in squared fractions) of a paired difference, estimated as
    `components` says: `unit` = base + RL; `base` and `rl` nan where every base model has a
    single RL seed. `mean` the difference; `bases`, `units` and `mazes` what it was measured
    on. A component estimated below zero is kept here as estimated; the designs use it
    truncated at zero (`design_variance`)."""

    mean: float
    unit: float
    base: float
    rl: float
    maze: float
    residual: float
    bases: int
    units: int
    mazes: int

    @property
    def separable(self) -> bool:
        """Whether base-model and RL variance were estimated apart (some base model has
        several RL seeds, and there are at least two base models)."""
        return math.isfinite(self.rl) and math.isfinite(self.base)


def components(d: np.ndarray, bases: Sequence | None = None) -> Components:
    """The variance components of `d[u, m]` (unit u, maze m; M = 1 where only set-level values
    are known), `bases[u]` naming unit u's base model (None: one base model per unit).

    Method of moments, from the unit means dbar_u, the maze means dbar_m and the grand mean:
    s2_res = MS_res = sum (d - dbar_u - dbar_m + dbar)^2 / ((U - 1)(M - 1)) (0 with M = 1:
    then folded into the unit component); s2_maze = (U var_m(dbar_m) - MS_res) / U;
    s2_unit = var_u(dbar_u) - MS_res / M. With several RL seeds on a base model (R_b units on
    base b): s2_rl = W - MS_res / M, W the pooled variance of the unit means around their base
    model's mean (sum (R_b - 1) degrees of freedom); s2_base = var_b(dbar_b) - mean_b(1 / R_b) W
    over the B base means dbar_b (each the mean of its units: E var_b = s2_base +
    mean_b(1 / R_b) (s2_rl + s2_res / M), exact for unequal R_b); s2_unit = s2_base + s2_rl."""
    d = np.asarray(d, dtype=np.float64)
    n_units, n_mazes = d.shape
    labels = np.arange(n_units) if bases is None else np.unique(bases, return_inverse=True)[1]
    n_bases = int(labels.max()) + 1
    nan = float("nan")
    unit_means = d.mean(1)  # [U]
    maze_means = d.mean(0)  # [M]
    mean = float(d.mean())
    if n_mazes > 1 and n_units > 1:
        resid = d - unit_means[:, None] - maze_means[None, :] + mean  # [U, M]
        ms_res = float(np.square(resid).sum()) / ((n_units - 1) * (n_mazes - 1))
        maze = float(maze_means.var(ddof=1)) - ms_res / n_units
    else:
        ms_res, maze = 0.0, nan if n_mazes > 1 else 0.0
    unit = float(unit_means.var(ddof=1)) - ms_res / n_mazes if n_units > 1 else nan
    base = rl = nan
    per_base = np.bincount(labels)  # [B] units on each base model
    df_within = n_units - n_bases
    if df_within > 0 and n_bases > 1:
        base_means = np.bincount(labels, unit_means) / per_base  # [B]
        within = float(np.square(unit_means - base_means[labels]).sum()) / df_within
        rl = within - ms_res / n_mazes
        base = float(base_means.var(ddof=1)) - float(np.mean(1 / per_base)) * within
        unit = base + rl
    return Components(mean, unit, base, rl, maze, ms_res, n_bases, n_units, n_mazes)


def design_variance(c: Components, k, r: float = 1, mazes: int | None = None):
    """Var(mean) of K base models (`k`: a number or an array) x `r` RL seeds each on `mazes`
    mazes (None: as measured), components truncated at zero (`_kept`). With `r` > 1 the base
    and RL parts must be separable."""
    m = c.mazes if mazes is None else mazes
    if c.separable:
        per_base = _kept(c.base) + _kept(c.rl) / r
    elif r == 1:
        per_base = _kept(c.unit)
    else:
        raise ValueError("several RL seeds per base model: base and RL variance not separable")
    k = np.asarray(k, dtype=np.float64)
    return per_base / k + _kept(c.maze) / m + _kept(c.residual) / (k * r * m)


def _kept(variance: float) -> float:
    """A variance component as a design uses it: truncated at zero, 0 where not estimated."""
    return max(variance, 0.0) if math.isfinite(variance) else 0.0


def half_width(
    c: Components, k, r: float = 1, mazes: int | None = None, level: float = 0.95
) -> np.ndarray | float:
    """The t interval's half-width at K base models (`k`: a number or an array, >= 2) x `r`
    RL seeds x `mazes` mazes, on K - 1 degrees of freedom."""
    k = np.asarray(k, dtype=np.float64)
    out = stats.t.ppf(0.5 + level / 2, k - 1) * np.sqrt(design_variance(c, k, r, mazes))
    return float(out) if out.ndim == 0 else out


def bases_needed(
    c: Components, target: float = TARGET, r: int = 1, mazes: int | None = None
) -> int | None:
    """The smallest K >= 2 whose 95% half-width (`half_width`) is at most `target`, the maze
    count held fixed; None where no K up to K_MAX reaches it (the maze term alone can keep
    the half-width above `target`: 1.96 sqrt(s2_maze / M) is its floor)."""
    ks = np.arange(2, K_MAX + 1)
    ok = np.flatnonzero(half_width(c, ks, r, mazes) <= target)
    return int(ks[ok[0]]) if len(ok) else None


def two_seeds_range(c: Components, runs: int, mazes: int | None = None) -> tuple[float, float]:
    """The half-width with the same number of `runs` (even) spent as runs / 2 base models x 2
    RL seeds: one value twice where base and RL variance are separable; otherwise the range
    from all of s2_unit being RL randomness (the same variance, half the degrees of freedom)
    to all of it being the base model's (twice its part)."""
    k = runs // 2
    if c.separable:
        h = half_width(c, k, 2, mazes)
        return h, h
    unit = _kept(c.unit)
    as_rl, as_base = replace(c, base=0.0, rl=unit), replace(c, base=unit, rl=0.0)
    return half_width(as_rl, k, 2, mazes), half_width(as_base, k, 2, mazes)


def base_label(run: Run, index: dict[str, dict]) -> str:
    """Which base model a run started from: the bank model (`leaderboard.bank_model`, `index`
    the bank's), else `base.seed` from its config (`${seed}` resolved: the run seed), else its
    seed: runs of one base.seed on other machines count as one base model."""
    label, _ = bank_model(run, index)
    if label is not None:
        return label
    seed = run.origin.seed
    return f"base.seed {run.seed if seed is None else seed}"


def power_markdown(paired: list[dict], cols: list[Metric], target: float = TARGET) -> list[str]:
    """The section "How many base models": per paired comparison (`paired_comparisons`) of
    the first evaluation set's exact pass@1 (pass@1 where no exact value was logged), the
    variance components as standard deviations in points, the half-width now and the number
    of base models K for +-`target`; where it can be told, the same runs spent on two RL
    seeds per base model. Nothing without comparisons of two or more units."""
    sets = sets_of(cols)
    col = next((c for c in headline(cols) if sets and c.set == sets[0]), None)
    if col is None or not (col.declared.passk and col.k == 1):
        return []
    rows, index = [], bank_index(BANK_DIR)
    for e in paired:
        if col not in e["diffs"] or len(e["pairs"]) < 2:
            continue
        bases = [base_label(b, index) for _, b in e["pairs"]]
        c = components(paired_matrix(e["pairs"], col), bases)
        rows.append((e, c))
    if not rows:
        return []
    lines = [
        f"## How many base models (to reach ±{100 * target:g} points)",
        "",
        f"Paired {col.set}/{col.short} differences: variance components as standard deviations "
        "in points (method of moments: unit = base model + its RL seed, the base and RL parts "
        "apart only where a base model has several RL seeds; maze; unit x maze residual), the "
        "95% half-width now (t on units - 1 degrees of freedom) and the smallest number of base "
        f"models K (one RL seed each, the mazes as now) whose half-width is at most "
        f"{100 * target:g} points: Var(mean) = s2_base / K + s2_rl / (K R) + s2_maze / M + "
        "s2_res / (K R M). Spending the same K runs on K / 2 base models x 2 RL seeds is never "
        "better (larger s2_base / K term, half the degrees of freedom); the last column gives "
        "its half-width, as a range where base and RL variance cannot be told apart. K is a "
        "point estimate: s2_unit from U units rests on U - 1 degrees of freedom.",
        "",
        *table_head([*HEADS[:10], f"K for ±{100 * target:g}", *HEADS[10:]]),
    ]
    for e, c in rows:
        k = bases_needed(c, target)
        seeds = c.units / c.bases
        now = half_width(c, c.bases, seeds) if c.bases > 1 else float("nan")
        split = f"{_sd(c.base)} / {_sd(c.rl)}" if c.separable else "n/a"
        needed, at_k, two = str(k), "-", "-"
        if k is None:
            floor = 100 * stats.norm.ppf(0.975) * math.sqrt(_kept(c.maze) / c.mazes)
            needed = f"> {K_MAX:,} (maze floor ±{floor:.1f})"
        else:
            at_k = f"{100 * half_width(c, k):.1f}"
        if k is not None and k >= 4:
            lo, hi = (100 * h for h in two_seeds_range(c, 2 * math.ceil(k / 2)))
            two = f"±{lo:.1f}" if abs(hi - lo) < 0.05 else f"±{lo:.1f} to ±{hi:.1f}"
            two += f" ({math.ceil(k / 2)} x 2)"
        units = f"{c.bases}" if c.units == c.bases else f"{c.bases} x {seeds:g}"
        lines.append(
            f"| {e['group']} | {e['reference']} | {units} | {c.mazes} | {100 * c.mean:+.1f} | "
            f"{_sd(c.unit)} | {split} | {_sd(c.maze)} | {_sd(c.residual)} | "
            f"{100 * now:.1f} | {needed} | {at_k} | {two} |"
        )
    return [*lines, ""]


def _sd(variance: float) -> str:
    """A variance component as a standard deviation in points (0.0 where estimated below
    zero, n/a where not estimated)."""
    return f"{100 * math.sqrt(_kept(variance)):.1f}" if math.isfinite(variance) else "n/a"
