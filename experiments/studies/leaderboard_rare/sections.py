"""MaxRL's maze table beside ours: the leaderboard_rare study's summary section.

At each cell of the leaderboard protocol (N = 32 read at step 15,000, N = 8 at 20,000), every
method of MaxRL's maze table (`maxrl_table.MAXRL_TABLE`) that the summarized folders hold
runs of (`ALGOS`: MaxRL's row -> our `algo`, at focal gamma 0): our mean exact ID pass@1 and
pass@256 over bank models with a 95% t interval (on U - 1 df, the evaluation mazes held
fixed), our rank and MaxRL's among the methods ranked (rank 1: the highest; ties share the
mean rank), and Spearman's rank correlation between the two rankings with

- Fieller's 95% interval (Fieller, Hartley and Pearson 1957): tanh(atanh(rho) -+ 1.96 s),
  s^2 = 1.06 / (m - 3) over m methods, the methods taken as the sample (m >= 4, |rho| < 1);
- the exact permutation p of `greater` agreement: the share of the m! orderings of our
  values whose rho with MaxRL's is at least ours (`scipy.stats.permutation_test`).

A method with runs at either cell and fewer than `MIN_BANK_MODELS` bank models read at a cell
is listed there as pending (with its count, 0 included) and not ranked.
A study names the section in its sweep folder's `study.yaml`:

    sections:
      - ../../studies/leaderboard_rare/sections.py:beside_maxrl_table
"""

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from scipy import stats

from mazerl.analysis.runs import Run, at_step
from mazerl.analysis.study import Summary, load_module
from mazerl.analysis.tables import table_head
from mazerl.core.errors import UserError
from mazerl.eval.metric_names import Metric

TABLE = load_module(Path(__file__).with_name("maxrl_table.py"))
SETTING = yaml.safe_load(Path(__file__).with_name("claims.yaml").read_text())["reference_setting"]
CELLS = ((32, 15_000), (8, 20_000))  # (N, the step read): the leaderboard protocol's cells
KS = (1, 256)
ALGOS = {  # MaxRL's row -> our algo (at focal gamma 0)
    "GRPO": "grpo",
    "GRPO + entropy bonus": "grpo_entropy",
    "PKPO": "pkpo",
    "SELF": "self",
    "Differential Smoothing": "diff_smoothing",
    "MaxRL": "maxrl",
}
MIN_BANK_MODELS = 2
FIELLER_VAR = 1.06  # var(atanh(rho)) = 1.06 / (m - 3) for Spearman's rho over m pairs


@dataclass(frozen=True)
class Ranked:
    """One cell's ranking at pass@k of the `methods` (MaxRL's rows) ranked: our means
    (`ours`, points), our ranks and MaxRL's among them, Spearman's `rho`, Fieller's interval
    (`lo`, `hi`; nan where undefined) and the exact permutation p of agreement."""

    methods: tuple[str, ...]
    ours: tuple[float, ...]
    our_ranks: tuple[float, ...]
    maxrl_ranks: tuple[float, ...]
    rho: float
    lo: float
    hi: float
    p: float


def cell_values(runs: list[Run], n: int, step: int) -> dict[str, dict[str, np.ndarray]]:
    """`{MaxRL's row: {bank model (seed): [len(KS)] exact ID pass@k, fractions}}` of the runs
    at group size `n` read at `step` (`at_step`; a run without an evaluation there is left
    out), for every row of `ALGOS` with such runs; one seed twice is a `UserError`."""
    row_of = {algo: row for row, algo in ALGOS.items()}
    cols = [Metric("exact_pass", "id", k) for k in KS]
    out: dict[str, dict[str, np.ndarray]] = {}
    seen: dict[tuple[str, str], Run] = {}
    for run in runs:
        row = row_of.get(run.method.algo)
        if row is None or run.gamma != 0 or run.n != n:
            continue
        read = at_step(run, step)
        if read.metrics is None or not all(c in read.final for c in cols):
            continue
        if (row, run.seed) in seen:
            raise UserError(
                f"beside_maxrl_table: {row} at N = {n} has two runs of bank model {run.seed} "
                f"({seen[row, run.seed].path}, {run.path})"
            )
        seen[row, run.seed] = run
        out.setdefault(row, {})[run.seed] = np.array([read.final[c] for c in cols])
    return out


def mean_interval(values: np.ndarray) -> tuple[float, float, float]:
    """The mean of `[U]` values with its 95% t interval on U - 1 df (U >= 2):
    (mean, lo, hi)."""
    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    half = float(stats.t.ppf(0.975, len(x) - 1)) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return mean, mean - half, mean + half


def high_ranks(values) -> np.ndarray:
    """`[m]` ranks of `values`, 1 for the highest, ties sharing their mean rank."""
    return stats.rankdata(-np.asarray(values, dtype=np.float64), method="average")


def fieller_interval(rho: float, m: int) -> tuple[float, float]:
    """Fieller's 95% interval of Spearman's `rho` over `m` pairs: tanh(atanh(rho) -+ 1.96
    sqrt(1.06 / (m - 3))); nan below 4 pairs or at |rho| = 1 (atanh infinite)."""
    if m < 4 or not abs(rho) < 1:
        return math.nan, math.nan
    z, s = math.atanh(rho), math.sqrt(FIELLER_VAR / (m - 3))
    q = float(stats.norm.ppf(0.975))
    return math.tanh(z - q * s), math.tanh(z + q * s)


def spearman_p(ours, theirs) -> float:
    """The exact permutation p that `ours` and `theirs` (`[m]`) agree at least as much as
    they do: the share of the m! orderings of `ours` whose Spearman rho with `theirs` is at
    least the observed one."""

    theirs = np.asarray(theirs, dtype=np.float64)

    def rho(x):
        return stats.spearmanr(x, theirs).statistic

    found = stats.permutation_test(  # one sample permuted: the m! orderings, exactly
        (np.asarray(ours, dtype=np.float64),),
        rho,
        permutation_type="pairings",
        alternative="greater",
        n_resamples=math.factorial(len(ours)),
    )
    return float(found.pvalue)


def ranking(means: dict[str, float], k: int) -> Ranked | None:
    """The ranking at pass@`k` of the methods of `means` (MaxRL's row -> our mean, points)
    beside MaxRL's table; None with fewer than 2 methods."""
    methods = tuple(means)
    if len(methods) < 2:
        return None
    ours = [means[m] for m in methods]
    theirs = [TABLE.MAXRL_TABLE[m][TABLE.MAXRL_KS.index(k)] for m in methods]
    rho = float(stats.spearmanr(ours, theirs).statistic)
    lo, hi = fieller_interval(rho, len(methods))
    return Ranked(
        methods, tuple(ours), tuple(high_ranks(ours)), tuple(high_ranks(theirs)), rho, lo, hi,
        spearman_p(ours, theirs),
    )  # fmt: skip


def beside_maxrl_table(summary: Summary) -> list[str]:
    """The section (a `study.yaml` section): `maxrl_markdown` of the summary's runs."""
    return maxrl_markdown(summary.runs)


def number(x: float) -> str:
    """A correlation or its bound as the section prints it: "+0.80", "n/a" for nan."""
    return "n/a" if not math.isfinite(x) else f"{x:+.2f}"


def maxrl_markdown(runs: list[Run]) -> list[str]:
    """The section's markdown from `runs`: one table per cell, sorted by our pass@1, then
    Spearman's rho per pass@k, and the pending methods; nothing where the runs hold no
    method of MaxRL's table."""
    cells = {(n, step): cell_values(runs, n, step) for n, step in CELLS}
    if not any(cells.values()):
        return []
    lines = [
        "## Beside MaxRL's maze table (exact ID pass@k, percent)",
        "",
        "Ours: the mean over bank models with its 95% t interval (bank models as the units, "
        f"the evaluation mazes fixed). MaxRL's: {SETTING}. Ranks among the "
        "methods ranked at the cell (1: the highest). Spearman's rho between the two rankings, "
        "with Fieller's 95% interval (atanh(rho) -+ 1.96 sqrt(1.06 / (m - 3)), the methods as "
        "the sample) and the exact permutation p (the share of the m! orderings of ours whose "
        f"rho is at least the one found). Methods with fewer than {MIN_BANK_MODELS} bank "
        "models at a cell: pending, not ranked.",
        "",
    ]
    missing = [row for row in ALGOS if not any(row in found for found in cells.values())]
    for (n, step), found in cells.items():
        ranked = {row: v for row, v in found.items() if len(v) >= MIN_BANK_MODELS}
        pending = {  # a method with runs at either cell, fewer than 2 bank models at this one
            row: len(found.get(row, {}))
            for row in ALGOS
            if row not in missing and len(found.get(row, {})) < MIN_BANK_MODELS
        }
        summaries = {
            row: [mean_interval(100 * np.stack(list(v.values()))[:, i]) for i in range(len(KS))]
            for row, v in ranked.items()
        }
        orders = {k: ranking({r: s[i][0] for r, s in summaries.items()}, k)
                  for i, k in enumerate(KS)}  # fmt: skip
        lines += [f"### N = {n}, step {step:,}", ""]
        if summaries:
            heads = ["method", "bank models"]
            for k in KS:
                heads += [f"pass@{k} [95% CI]", "rank", f"MaxRL pass@{k}", "MaxRL rank"]
            lines += table_head(heads)
            for row in sorted(summaries, key=lambda r: -summaries[r][0][0]):
                cells_text = [row, str(len(ranked[row]))]
                for i, k in enumerate(KS):
                    mean, lo, hi = summaries[row][i]
                    order = orders[k]
                    j = order.methods.index(row) if order else None
                    cells_text += [
                        f"{mean:.1f} [{lo:.1f}, {hi:.1f}]",
                        f"{order.our_ranks[j]:g}" if order else "-",
                        f"{TABLE.MAXRL_TABLE[row][TABLE.MAXRL_KS.index(k)]:.1f}",
                        f"{order.maxrl_ranks[j]:g}" if order else "-",
                    ]
                lines.append("| " + " | ".join(cells_text) + " |")
            lines.append("")
        for k in KS:
            order = orders[k]
            if order is None:
                lines.append(f"pass@{k}: fewer than 2 methods ranked, no rank correlation.")
                continue
            m = len(order.methods)
            lines.append(
                f"pass@{k}: Spearman's rho over {m} methods {number(order.rho)}, Fieller's 95% "
                f"interval [{number(order.lo)}, {number(order.hi)}], exact permutation p "
                f"{order.p:.3g} ({math.factorial(m)} orderings)."
            )
        if pending:
            lines.append(
                "Pending (fewer than 2 bank models read at this cell): "
                + ", ".join(f"{row} ({k})" for row, k in pending.items())
                + "."
            )
        lines.append("")
    if missing:
        lines += [f"MaxRL's rows without runs here: {', '.join(missing)}.", ""]
    return lines
