"""Still moving as a measured property: the slope of each group's exact pass@1 and pass@256
(and of each paired difference) over the last third of its evaluations.

A group is *still moving* on a metric when the 95% interval of the slope excludes zero and
the slope exceeds `MOVING_SLOPE` (0.5 points per 1,000 steps) in size; a result (a group, or
a paired difference and the two groups it compares) is flagged still moving where any of
them is. This screen declares no margin and gives no verdict: the word `converged` belongs
to the verdict rule (`mazerl.analysis.verdicts.convergence`, a claim's declared margin).

The screen reads the evaluation it is read at, and it is not monotone in that step: the last
third moves with it, so a comparison may read "no" at one step, "yes" at a later one (one
method still rising) and "no" again after that. A "no" says nothing was still moving over the
last third before that step, not that it stays flat after it (docs/concepts/convergence.md
has an example).
"""

import math
from collections.abc import Iterable

import numpy as np

from mazerl.analysis.runs import Run, eval_value, evaluations, group_runs, natural_key, swept_keys
from mazerl.analysis.stats import MOVING_SLOPE, Slope, last_third, slope
from mazerl.analysis.tables import headline, table_head
from mazerl.eval.metric_names import Metric

TREND_KS = (1, 256)


def trend_columns(cols: list[Metric]) -> list[Metric]:
    """The headline pass@1 and pass@256 of each evaluation set (exact where logged)."""
    return [c for c in headline(cols) if c.declared.passk and c.k in TREND_KS]


def values_at(run: Run, col: Metric | str, steps: Iterable[int]) -> list[float]:
    """The set-level value of `eval/<set>/<metric>` at each evaluation step."""
    return [eval_value(run, s, col) for s in steps]


def common_steps(runs: list[Run], col: Metric | str) -> list[int]:
    """The evaluation steps at which every run logged `col`."""
    col = Metric.of(col)
    sets = [{s for s in evaluations(r) if eval_value(r, s, col) is not None} for r in runs]
    return sorted(set.intersection(*sets)) if sets else []


def group_slope(runs: list[Run], col: Metric) -> Slope | None:
    """The slope of `col` over the last third of the runs' common evaluations (one row per
    seed); None with fewer than two evaluations."""
    steps = common_steps(runs, col)
    if len(steps) < 2:
        return None
    tail = last_third(steps)
    return slope(np.array(tail), np.array([values_at(r, col, tail) for r in runs]))


def difference_slope(pairs: list[tuple[Run, Run]], col: Metric) -> Slope | None:
    """The slope of the per-seed difference (run minus reference) of `col`."""
    steps = common_steps([r for p in pairs for r in p], col)
    if len(steps) < 2:
        return None
    tail = last_third(steps)
    diff = [np.subtract(values_at(b, col, tail), values_at(a, col, tail)) for a, b in pairs]
    return slope(np.array(tail), np.array(diff))


def convergence(runs: list[Run], cols: list[Metric], paired: list[dict]) -> dict:
    """`{"groups": {label: {col: Slope | None}}, "paired": [{col: Slope | None}, ...]}` over
    the finished runs; "paired" follows the order of `paired` (`paired_comparisons`)."""
    finished = [r for r in runs if r.metrics is not None]
    trend = trend_columns(cols)
    groups = group_runs(finished, swept_keys(runs))
    return {
        "groups": {
            label: {c: group_slope(groups[label], c) for c in trend}
            for label in sorted(groups, key=natural_key)
        },
        "paired": [{c: difference_slope(e["pairs"], c) for c in trend} for e in paired],
    }


def still_moving(slopes: Iterable[Slope | None]) -> str:
    """`yes` when a slope is still moving, `no` when every slope is measured (has an
    interval) and none is, `n/a` otherwise (too few evaluations or seeds to tell)."""
    slopes = list(slopes)
    if any(s is not None and s.moving for s in slopes):
        return "yes"
    known = bool(slopes) and all(s is not None and math.isfinite(s.lo) for s in slopes)
    return "no" if known else "n/a"


def entry_moving(trends: dict, index: int, entry: dict, set_name: str) -> str:
    """Whether a paired difference on `set_name` is still moving (`still_moving`): either
    group it compares or the difference itself (pass@1 and pass@256)."""
    on_set = [c for c in trends["paired"][index] if c.set == set_name]
    slopes = [trends["paired"][index][c] for c in on_set]
    for label in (entry["group"], entry["reference"]):
        slopes += [trends["groups"].get(label, {}).get(c) for c in on_set]
    return still_moving(slopes)


def convergence_markdown(trends: dict, paired: list[dict]) -> list[str]:
    """The slope tables: per group, then per paired difference."""
    groups = trends["groups"]
    trend = list(next(iter(groups.values()), {}))
    if not trend or all(s is None for g in groups.values() for s in g.values()):
        return []
    any_slope = next(s for g in groups.values() for s in g.values() if s is not None)
    heads = [f"{c.set} {c.short.replace('exact_', '')}" for c in trend]
    lines = [
        "## Convergence",
        "",
        "Slope over the last third of the evaluations (the last "
        f"{any_slope.points} here), points per 1,000 steps, with its 95% interval (each seed "
        f"its own level); `*` = still moving: the interval excludes 0 and the slope exceeds "
        f"{MOVING_SLOPE} points per 1,000 steps. still moving: yes where a slope of the row "
        "is still moving, no where every slope is measured and none is, at this step: the "
        "screen is not monotone in the step (a no here can turn to yes when read later). It "
        "declares no margin; the verdict word for a flat slope comes only from a claim's "
        "declared margin (claims.csv).",
        "",
        *table_head(["group", *heads, "still moving"]),
    ]
    for label, slopes in groups.items():
        cells = [slopes[c].text() if slopes[c] is not None else "n/a" for c in trend]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {still_moving(slopes.values())} |")
    if paired:
        lines += ["", "Paired differences (per-seed difference of the set-level values):", ""]
        lines += table_head(["group", "against", *heads])
        for e, slopes in zip(paired, trends["paired"], strict=True):
            cells = [slopes[c].text() if slopes.get(c) is not None else "n/a" for c in trend]
            lines.append(f"| {e['group']} | {e['reference']} | " + " | ".join(cells) + " |")
    n = sum(s is not None for g in groups.values() for s in g.values())
    n += sum(s is not None for p in trends["paired"] for s in p.values())
    return [*lines, "", f"{n} slope intervals in these tables.", ""]
