"""Base model or RL randomness: the variance components of a paired difference (method B minus
method A at one group size) over a study's units and a replicate arm's, where the arm reruns
some of the study's bank models with other RL seeds (`mazerl.analysis.power.components`, the
units labelled by the sha256 of the base model they started from). Prints, per exact pass@1
and pass@256 column, the difference and its components as standard deviations in points, with
a 95% interval for the within-base-model sd (the RL seed's, plus the mazes' residual over M
mazes) from its chi-square; then, for ID pass@1, whether a base-model component is shown (the
F test of the base models' mean square over the within-base-model one), the base model's share
of the unit variance with a bootstrap range over base models, each replicated bank model's
difference under each RL seed, and their correlation across bank models with its Fisher-z
interval.

    python experiments/rl_seeds.py experiments/runs/decisive experiments/runs/decisive_rlseed \
        grpo fgrpo1 --n 32 --step 15000
"""

import argparse
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from pairwise import finished_at
from scipy import stats

from mazerl.analysis.power import components
from mazerl.analysis.tables import paired_matrix
from mazerl.train.bank import bank_index


def units(sweeps: list[Path], a: str, b: str, n: int, step: int) -> list[tuple[str, str, tuple]]:
    """`[(base model sha256, "sweep:seed", (run A, run B))]` for every seed of every sweep at
    which both methods finished with the same base model."""
    out = []
    for sweep in sweeps:
        runs = finished_at(sweep, n, step)
        for (method, seed), (run_a, base) in sorted(runs.items()):
            other = runs.get((b, seed))
            if method == a and other is not None and base and other[1] == base:
                out.append((base, f"{sweep.name}:{seed}", (run_a, other[0])))
    return out


BOOT_DRAWS = 2000


def base_f_test(unit_means: np.ndarray, bases: list[str]) -> tuple[float, int, int, float]:
    """One-way F test of a base-model component from the `[U]` units' mean differences: the
    base models' mean square, sum_b R_b (mean_b - mean)^2 / (B - 1), over the pooled
    within-base-model one (U - B df); under no base-model component both estimate the same
    variance. Returns F, its two df and p."""
    labels = np.unique(bases, return_inverse=True)[1]
    n_bases, n_units = int(labels.max()) + 1, len(unit_means)
    per_base = np.bincount(labels)  # [B]
    base_means = np.bincount(labels, unit_means) / per_base  # [B]
    between = float((per_base * (base_means - unit_means.mean()) ** 2).sum()) / (n_bases - 1)
    within = float(((unit_means - base_means[labels]) ** 2).sum()) / (n_units - n_bases)
    f = between / within
    return f, n_bases - 1, n_units - n_bases, float(stats.f.sf(f, n_bases - 1, n_units - n_bases))


def base_share(d: np.ndarray, bases: list[str]) -> float:
    """The base model's share of the unit variance, base / (base + RL), each component of
    `components` truncated at zero (nan where both are zero or not estimable)."""
    c = components(d, bases)
    base, rl = max(c.base, 0.0), max(c.rl, 0.0)
    return base / (base + rl) if base + rl > 0 else float("nan")


def share_range(d: np.ndarray, bases: list[str], rng: np.random.Generator) -> tuple[float, float]:
    """The 95% percentile range of `base_share` over `BOOT_DRAWS` resamples of the base models
    with replacement, each with all its units (a base model drawn twice counts as two);
    draws in which no base model has two RL seeds are left out."""
    names = sorted(set(bases))
    rows = {b: [i for i, x in enumerate(bases) if x == b] for b in names}
    shares = []
    for _ in range(BOOT_DRAWS):
        drawn = rng.choice(len(names), len(names))
        idx = [i for j in drawn for i in rows[names[j]]]
        labels = [f"{j}:{n}" for n, j in enumerate(drawn) for _ in rows[names[j]]]
        if len(idx) > len(drawn):
            share = base_share(d[idx], labels)
            if math.isfinite(share):
                shares.append(share)
    lo, hi = np.percentile(shares, [2.5, 97.5])
    return float(lo), float(hi)


def fisher_interval(r: float, n: int) -> tuple[float, float]:
    """The 95% interval of a Pearson r over n pairs by Fisher's z: tanh(atanh r -+ 1.96 /
    sqrt(n - 3))."""
    half = stats.norm.ppf(0.975) / math.sqrt(n - 3)
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("study", type=Path)
    ap.add_argument("arm", type=Path, help="the replicate arm: bank models rerun, other RL seeds")
    ap.add_argument("a", help="the reference method (a conf/method/ preset)")
    ap.add_argument("b", help="the compared method")
    ap.add_argument("--n", type=int, required=True, help="group size N")
    ap.add_argument("--step", type=int, required=True, help="evaluation step to read")
    args = ap.parse_args()
    for sweep in (args.study, args.arm):
        if not sweep.is_dir():
            raise SystemExit(f"error: {sweep}: no such folder")
    found = units([args.study, args.arm], args.a, args.b, args.n, args.step)
    bases = [base for base, _, _ in found]
    if len(set(bases)) < 2 or len(found) == len(set(bases)):
        raise SystemExit(
            f"error: {len(found)} units on {len(set(bases))} base models: the components need "
            "two base models and one with two RL seeds"
        )
    pairs = [p for _, _, p in found]
    print(
        f"{args.b} - {args.a}, N = {args.n}, step {args.step:,}: {len(found)} units on "
        f"{len(set(bases))} base models (points; sd: square root of the component, 0 where "
        "estimated below zero)"
    )
    sd = lambda v: 100 * math.sqrt(max(v, 0.0))  # noqa: E731
    df_within = len(found) - len(set(bases))
    for col in sorted(pairs[0][0].metrics["final"]):
        if not col.endswith(("/exact_pass@1", "/exact_pass@256")):
            continue
        d = paired_matrix(pairs, col)  # [U, M]
        c = components(d, bases)
        within = c.rl + c.residual / c.mazes  # the pooled variance of unit means within a base
        lo, hi = (df_within * within / stats.chi2.ppf(q, df_within) for q in (0.975, 0.025))
        print(
            f"  {col}: {100 * c.mean:+.1f}; sd base {sd(c.base):.1f}, sd RL {sd(c.rl):.1f} "
            f"(within a base model {sd(within):.1f} [{sd(lo):.1f}, {sd(hi):.1f}], "
            f"{df_within} df), sd maze {sd(c.maze):.1f}, sd residual {sd(c.residual):.1f}"
        )
    col = next(c for c in pairs[0][0].metrics["final"] if c.endswith("/id/exact_pass@1"))
    d = paired_matrix(pairs, col)
    f, df1, df2, p_f = base_f_test(d.mean(1), bases)
    lo, hi = share_range(d, bases, np.random.default_rng(0))
    print(
        f"  {col}: base-model component F({df1}, {df2}) = {f:.2f}, p = {p_f:.2f}; the base "
        f"model's share of the unit variance {base_share(d, bases):.2f}, bootstrap 95% range "
        f"[{lo:.2f}, {hi:.2f}] over base models ({BOOT_DRAWS:,} draws, seed 0)"
    )
    gains = defaultdict(list)
    for (base, name, _), row in zip(found, paired_matrix(pairs, col).mean(1), strict=True):
        gains[base].append((name, 100 * row))
    by_seed = sorted(gains.items(), key=lambda item: int(item[1][0][0].rsplit(":", 1)[1]))
    twice = {base: g for base, g in by_seed if len(g) > 1}
    names = {e["sha256"]: f"bank model {e['seed']}" for e in bank_index().values()}
    print(f"  {col} per replicated base model (each RL seed's difference):")
    for base, g in twice.items():
        label = names.get(base, f"base model {base[:12]}")
        print(f"    {label}: " + ", ".join(f"{name} {v:+.1f}" for name, v in g))
    if len(twice) > 2:
        first, second = (np.array([g[i][1] for g in twice.values()]) for i in (0, 1))
        r, p = stats.pearsonr(first, second)
        lo, hi = fisher_interval(r, len(twice))
        print(
            f"  the two RL seeds' differences over {len(twice)} base models: r {r:+.2f} (p {p:.2f}"
            f"), 95% interval [{lo:+.2f}, {hi:+.2f}] (Fisher z)"
        )


if __name__ == "__main__":
    main()
