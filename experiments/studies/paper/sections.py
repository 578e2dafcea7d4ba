"""The sweep beside the F-GRPO paper's Maze results (arXiv 2602.06717, Table 4: 17x17-grid
mazes, a 3M-parameter transformer, 256 mazes per step, 20,000 RL steps, one run per cell;
percent on 256 held-out mazes): exact ID pass@1 and pass@256 per group size N and focal gamma
(percent), each gamma's paired gain over GRPO with its 95% interval and what the interval says
against the paper's gain, and gains pooled over group sizes.

A study adds the section by naming it in its sweep folder's `study.yaml`:

    sections:
      - ../../studies/paper/sections.py:beside_table4
"""

import math

import numpy as np

from mazerl.analysis.runs import Run
from mazerl.analysis.stats import mean_se, paired_difference, reading
from mazerl.analysis.study import Summary
from mazerl.analysis.tables import paired_matrix, table_head
from mazerl.eval.metric_names import Metric

PAPER_STEPS = 20_000
# N -> {gamma: (pass@1, pass@128, pass@256)}; gamma 0 is GRPO
TABLE4 = {
    4: {0.0: (65.6, 67.1, 67.3), 0.5: (74.4, 75.8, 75.9), 1.0: (79.7, 81.4, 81.5)},
    8: {0.0: (72.2, 73.3, 73.4), 0.5: (83.4, 84.0, 84.0), 1.0: (76.3, 76.6, 76.6)},
    16: {0.0: (73.9, 74.2, 74.2), 0.5: (83.7, 84.3, 84.3), 1.0: (84.4, 86.4, 86.5)},
    32: {0.0: (74.5, 74.9, 75.1), 0.5: (85.1, 85.8, 85.8), 1.0: (84.9, 85.8, 85.8)},
    64: {0.0: (73.4, 74.4, 74.7), 0.5: (85.4, 86.5, 86.5), 1.0: (84.8, 85.8, 85.8)},
    128: {0.0: (75.8, 76.7, 76.9), 0.5: (93.6, 96.4, 96.5), 1.0: (91.2, 95.7, 95.7)},
}
TABLE4_KS = (1, 128, 256)


def table4_gain(n: int, gamma: float, k: int) -> float | None:
    """The paper's F-GRPO gamma minus GRPO at group size `n` in pass@k (points), or None
    where the paper has no such cell."""
    cells = TABLE4.get(n, {})
    if k not in TABLE4_KS or gamma not in cells or gamma == 0:
        return None
    i = TABLE4_KS.index(k)
    return round(cells[gamma][i] - cells[0.0][i], 1)


KS = (1, 256)
PAPERS = "the paper's"  # how `reading` names the reference
POOLS = {"all N >= 32": lambda n: n >= 32, "all N": lambda n: True}


def _n_gamma(run: Run) -> tuple[int, float]:
    return run.n, run.gamma


def beside_table4(summary: Summary) -> list[str]:
    """The section (a `study.yaml` section): `table4_markdown` of the summary's paired
    comparisons."""
    return table4_markdown(summary.paired)


def table4_markdown(paired: list[dict], set_name: str = "id") -> list[str]:
    """The section, from the entries of `paired_comparisons` that compare F-GRPO with GRPO
    (swept as `focal.gamma`, or as `method` presets): GRPO at gamma 0 against GRPO at a gamma
    above 0, both as the run records read them from the saved configs; nothing where the
    sweep has none or no exact values."""
    cols = [Metric("exact_pass", set_name, k) for k in KS]
    entries = [
        e
        for e in paired
        if e["key"] in ("focal.gamma", "method")
        and all(c in e["diffs"] for c in cols)
        and all(r.method.algo == "grpo" for r in e["pairs"][0])
        and _n_gamma(e["pairs"][0][0])[1] == 0 < _n_gamma(e["pairs"][0][1])[1]
    ]
    if not entries:
        return []
    by_cell = {_n_gamma(e["pairs"][0][1]): e for e in entries}
    ns = sorted({n for n, _ in by_cell})
    gammas = sorted({g for _, g in by_cell})
    heads = ["GRPO", *(f"F-GRPO γ {g:g}" for g in gammas)]
    gains = [f"γ {g:g} − GRPO" for g in gammas]
    lines = [
        f"## Beside the paper's Table 4 ({set_name} set, exact, percent)",
        "",
        "Mean ± standard error over seeds; gains paired by seed and maze with 95% intervals "
        "(two-way decomposition); pooled: each seed's gain averaged over the pool's N first, "
        "the interval over seeds (the N of one seed share its base model and training "
        "stream); the paper: 20,000 steps of 256 mazes, one run per cell. "
        '"< +X": the gain is below +X points with 95% confidence.',
        "",
        *table_head(["N", "metric", *heads, *gains, "paper GRPO / gains", "reading"]),
    ]
    count = 0
    for n in ns:
        for k, col in zip(KS, cols, strict=True):
            first = next(e for (m, _), e in by_cell.items() if m == n)
            grpo = [a.final[col] for a, _ in first["pairs"]]
            cells = [_percent(grpo)]
            diffs, readings = [], []
            for g in gammas:
                e = by_cell.get((n, g))
                cells.append(_percent([b.final[col] for _, b in e["pairs"]]) if e else "-")
                d = e["diffs"][col] if e else None
                diffs.append(_gain(d))
                count += d is not None and math.isfinite(d.se)
                if d is not None and math.isfinite(d.se):
                    lo, hi = (100 * x for x in d.interval())
                    readings.append(
                        f"γ {g:g}: {reading(lo, hi, table4_gain(n, g, k), whose=PAPERS)}"
                    )
            paper = _paper(n, gammas, k)
            lines.append(
                f"| {n} | pass@{k} | " + " | ".join(cells + diffs) + f" | {paper} | "
                + "; ".join(readings) + " |"
            )  # fmt: skip
    pooled = _pooled(by_cell, ns, gammas, cols)
    count += sum(len(p) for p in pooled.values())
    for name, rows in pooled.items():
        for (g, k), (chosen, d) in rows.items():
            lo, hi = (100 * x for x in d.interval())
            paper = [table4_gain(n, g, k) for n in chosen]
            paper_mean = float(np.mean(paper)) if None not in paper else None
            lines.append(
                f"| {name} ({d.seeds} seeds) | pass@{k} | " + " | ".join(["-"] * len(heads))
                + " | " + " | ".join(_gain(d) if h == g else "-" for h in gammas)
                + f" | {'' if paper_mean is None else f'mean gain {paper_mean:+.1f}'} | "
                + f"γ {g:g}: {reading(lo, hi, paper_mean, whose=PAPERS)} |"
            )  # fmt: skip
    return [*lines, "", f"{count} intervals in this table.", ""]


def _pooled(by_cell, ns, gammas, cols) -> dict[str, dict]:
    """`{pool: {(gamma, k): (its N, PairedDiff)}}` for each pool with more than one N, over
    the seeds that every N of the pool ran, where they were evaluated on the same mazes.
    The unit is the seed, not the (N, seed) run: the N of one seed share its base model and
    training-maze stream, so a seed's differences are averaged over N before the interval."""
    out = {}
    for name, keep in POOLS.items():
        chosen = [n for n in ns if keep(n)]
        if len(chosen) < 2 or (name == "all N" and chosen == [n for n in ns if n >= 32]):
            continue
        rows = {}
        for g in gammas:
            cells = [by_cell.get((n, g)) for n in chosen]
            if None in cells:
                continue
            seeds = set.intersection(*({b.seed for _, b in e["pairs"]} for e in cells))
            pairs = [[p for p in e["pairs"] if p[1].seed in seeds] for e in cells]
            for k, col in zip(KS, cols, strict=True):
                parts = [paired_matrix(ps, col) for ps in pairs]
                if len({p.shape[1] for p in parts}) != 1:
                    continue
                units = [b.seed for ps in pairs for _, b in ps]
                rows[(g, k)] = chosen, paired_difference(np.concatenate(parts), np.array(units))
        out[f"pooled, {name}"] = rows
    return out


def _percent(values: list[float]) -> str:
    mean, se = mean_se(values)
    return f"{100 * mean:.1f} ± {100 * se:.1f}" if len(values) > 1 else f"{100 * mean:.1f}"


def _gain(d) -> str:
    return "-" if d is None else d.text(100, 1)


def _paper(n: int, gammas: list[float], k: int) -> str:
    """The paper's GRPO value and its gains for the sweep's gammas, e.g. "72.2 / +11.2, +4.1"."""
    if n not in TABLE4 or k not in (1, 256):
        return ""
    grpo = TABLE4[n][0.0][0 if k == 1 else 2]
    gains = [table4_gain(n, g, k) for g in gammas if g]
    return f"{grpo} / " + ", ".join(f"{x:+.1f}" for x in gains if x is not None)
