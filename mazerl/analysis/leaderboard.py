"""The methods leaderboard: every method at every group size N with its exact pass@1 /
pass@256 / pass@2048 on each evaluation set, its paired difference from GRPO (gamma 0, same N,
seed and maze) with a 95% interval, and whether it is still moving; the sharpening-versus-coverage
frontier `leaderboard.png`; on braid mazes, the routes each method keeps (a table, and
`leaderboard_routes.png`: pass@1 against the routes kept). `summarize` adds it to a sweep that
varies `algo` over `MIN_METHODS` or more values.

    from mazerl.analysis import find_runs
    from mazerl.analysis.leaderboard import board_rows, measure
    from mazerl.analysis.tables import aggregate
    runs = find_runs(Path("runs/my_methods"))
    rows = measure(board_rows(runs), aggregate(runs)[0])  # Row.values, .diffs, .moving

The library holds no study's protocol. A study pairs its runs by another unit than the seed
through a `Pairing` its `study.yaml` names (`pairing: FILE.py:NAME`; the leaderboard's, by
bank model: experiments/studies/leaderboard/protocol.py): its runs that choose an option of
the pairing's config group are paired by the unit it gives each, from one folder or several
(`mazerl-summarize MY_SWEEP OTHER_SWEEP --out DIR` puts a new method beside the committed
ones): `place` finds each run's unit, reads each N at its finished runs' end (before any has
finished, or where they ran different lengths, at the latest evaluation its runs share), and
flags pairs whose runs ran on different machines (CPU kind, vector capability, threads).
`bank_model` says which bank model a run started from (the bank is the library's).
"""

import csv
import itertools
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mazerl.analysis.convergence import difference_slope, group_slope, still_moving
from mazerl.analysis.figures import (
    Output,
    colours,
    footer,
    method_order,
    outside_legend,
    plt,
    save_figure,
)
from mazerl.analysis.runs import (
    DISTINCT_SAMPLES,
    N_KEYS,
    Run,
    at_step,
    declared_method,
    distinct_routes_per_maze,
    evaluations,
    method_name,
    natural_key,
    swept_keys,
)
from mazerl.analysis.stats import PairedDiff, paired_difference, reading
from mazerl.analysis.tables import headline, paired_matrix, same_value, sets_of, table_head
from mazerl.eval.metric_names import Metric

MIN_METHODS = 3  # distinct `algo` values that make a sweep a leaderboard
BOARD_KS = (1, 256, 2048)  # pass@k columns
DIFF_KS = (1, 256)  # pass@k compared with GRPO (and screened for still moving)
REFERENCE = ("grpo", 0.0)  # (algo, focal gamma) every method is compared with
ROUTE_METRICS = (("expected_distinct", DISTINCT_SAMPLES), ("rare_mass", None))  # (family, k)
METHOD_KEYS = ("algo", "focal.gamma", *N_KEYS, "seed")  # any other swept key splits rows
# ... but these: a config group naming a row's N or method, or where and how a run ran
RUN_KEYS = ("cell", "method", "threads", "device", "base.bank", "base.cache_dir", "logger.progress")
CROSS_MARK = "†"  # a row with a pair across machines (`Pairing.cross_note`)
FRONTIER_NOTE = (
    "crosses: 95% interval of the paired difference from GRPO (same N, seed and maze; two-way "
    "seed x maze decomposition) around the method's seed mean: a cross that misses GRPO's dotted "
    "line is a difference shown (intervals across seeds alone would leave out the maze draw "
    "and the pairing); hollow: with the focal weight (circle gamma 0, then one marker per gamma)"
)


@dataclass
class Row:
    """One line of the board at group size `n`: a method (`kind` "method", "reference" for
    GRPO at gamma 0, or "as grpo" for a method acting through the ratio only (`on_ratio`) run
    at one update per batch: shown, not compared) with its finished `runs`, the GRPO runs at
    `n` (`reference`) and the pairs (GRPO run, run) of the seeds both finished; or the base
    model (`kind` "base", `runs` the finished runs at `n`, whose base models it averages).
    Pairs are by seed, or under a `Pairing` by its unit; `crossed` names the pairs whose two
    runs ran on different machines. `measure` fills `values` {column: (mean, seeds)},
    `diffs` {column: PairedDiff} and `moving` {set: yes/no/n/a}."""

    n: int
    name: str
    kind: str
    algo: str
    gamma: float
    runs: list[Run]
    reference: list[Run] = field(default_factory=list)
    pairs: list[tuple[Run, Run]] = field(default_factory=list)
    values: dict[str, tuple[float, int]] = field(default_factory=dict)
    diffs: dict[str, PairedDiff] = field(default_factory=dict)
    moving: dict[str, str] = field(default_factory=dict)
    crossed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Pairing:
    """A study's pairing protocol, named by its `study.yaml` (`pairing: FILE.py:NAME`): runs
    that choose an option of the config group `group` are paired by the unit `unit_of(run)`
    gives (`(unit, "")`, or `(None, why the run cannot be placed)`) instead of by seed.

    Attributes:
        group: the config group whose choice puts a run on the protocol (`cell`).
        unit_of: a run's unit, as `(name, "")` or `(None, why)`.
        unit: the unit's word (`bank model`).
        units: its plural (`bank models`).
        paired_by: the sentence the board says how runs are paired with.
        cross_note: what a pair of runs on different machines means (after `CROSS_MARK`).
    """

    group: str
    unit_of: Callable[[Run], tuple[str | None, str]]
    unit: str
    units: str
    paired_by: str
    cross_note: str

    def applies(self, runs: list[Run]) -> bool:
        """Some run chose an option of `group`."""
        return any(r.choices.get(self.group) for r in runs)


@dataclass
class Placement:
    """The runs of a `Pairing` as the board pairs them: `units` {run folder: unit name}, each
    placed run's unit; `machines` {run folder: (cpu, vector capability, threads)} from its
    metrics.json (None while it trains); `steps` {N: step} where N's runs are read at their
    latest common evaluation, not at their ends; `notes`, markdown lines saying so and naming
    each run left out; `pairing`, the protocol."""

    units: dict[Path, str]
    machines: dict[Path, tuple | None]
    steps: dict[int, int]
    notes: list[str]
    pairing: Pairing


def bank_model(run: Run, index: dict[str, dict]) -> tuple[str | None, str]:
    """`("bank model k", "")` for the bank model `run` started from, else `(None, why it
    cannot be placed)`. A finished run by its metrics.json `base_model`: its cache key is bank
    model k's in `index` (`bank_index`) and its sha256 that file's. A run still training (no
    metrics.json yet) by its config: with base.bank=require, base.seed=k loads bank model k
    or stops before its first step."""
    origin = run.origin
    if not run.finished:
        entry = next((e for e in index.values() if e["seed"] == origin.seed), None)
        if origin.bank == "require" and entry is not None:
            return f"bank model {entry['seed']}", ""
        return (
            None,
            "still training; its base model is named when it finishes (not base.bank=require)",
        )
    if origin.key is None and origin.sha256 is None:
        return None, "its metrics.json names no base model (a run from before the bank)"
    entry = index.get(origin.key)
    if entry is None:
        return None, (
            f"its base model ({origin.source}, cache key {origin.key}) is not a bank model"
        )
    if origin.sha256 != entry["sha256"]:
        return None, f"its base model has bank model {entry['seed']}'s cache key but not its sha256"
    return f"bank model {entry['seed']}", ""


def _machine_text(machine: tuple) -> str:
    cpu, capability, threads = machine
    return f"{cpu}, {capability}, {threads} thread{'s' * (threads != 1)}"


def _shared_step(runs: list[Run]) -> int | None:
    """The latest evaluation step every run of `runs` has (None: they share none)."""
    return max(set.intersection(*(set(evaluations(r)) for r in runs)), default=None)


def common_steps(by_n: dict[int, list[Run]]) -> dict[int, int | None]:
    """`{N: step}` for each N of `by_n` (the placed runs with an evaluation, by N) that is
    read at one earlier step: none has finished yet, or the finished ones ended at different
    steps (another length); the step is the latest evaluation they all share (None: they share
    none). An N whose finished runs all ended at one step is read there, its runs still
    training left unfinished (`place` says so)."""
    out = {}
    for n, here in sorted(by_n.items()):
        ends = {max(evaluations(r)) for r in here if r.metrics is not None}
        if len(ends) != 1:
            out[n] = _shared_step(here)
    return out


def _started_by_n(runs: list[Run], units: dict[Path, str]) -> dict[int, list[Run]]:
    """The placed runs with at least one evaluation, by N."""
    by_n: dict[int, list[Run]] = defaultdict(list)
    for r in runs:
        if r.path in units and evaluations(r):
            by_n[r.n].append(r)
    return by_n


def place(
    runs: list[Run], pairing: Pairing | None, step: int | None = None
) -> tuple[list[Run], Placement | None]:
    """The runs as the board of `pairing` reads them, and their `Placement` (the runs as they
    are and None without a pairing, or where no run chose its group). A run without a unit
    (`Pairing.unit_of`) is left out, with one line. Unless `step` (`--at-step`) set one step
    for all, an N is read at its finished runs' end where they all ended at one step (its runs
    still training stay unfinished, with one line), and otherwise (none finished yet, or they
    ran different lengths)
    at the latest evaluation its started runs share (`at_step`); an N whose runs share none is
    left out, with one line."""
    if pairing is None or not pairing.applies(runs):
        return runs, None
    units, machines, notes = {}, {}, []
    for r in runs:
        unit, why = pairing.unit_of(r)
        if unit is None:
            notes.append(f"- {r.path}: left out: {why}")
        else:
            units[r.path], machines[r.path] = unit, r.machine
    by_n = _started_by_n(runs, units)
    steps = {} if step is not None else common_steps(by_n)
    for n, s in steps.items():
        here = by_n[n]
        if s is None:
            last = sorted({max(evaluations(r)) for r in here})
            notes.append(
                f"- N = {n}: left out: its runs share no evaluation step (their last: "
                f"{', '.join(f'{x:,}' for x in last)}); `--at-step STEP` reads those that "
                "evaluated at STEP"
            )
            units = {p: u for p, u in units.items() if p not in {r.path for r in here}}
            continue
        training = sum(r.metrics is None for r in here)
        notes.append(
            f"- N = {n}: read at step {s:,}, the latest evaluation its {len(here)} started runs "
            f"share ({training} still training; `--at-step STEP` reads another step)"
        )
    for n, here in by_n.items():
        training = [r for r in here if r.metrics is None]
        if n in steps or not training:
            continue
        end = next(max(evaluations(r)) for r in here if r.metrics is not None)
        shared = _shared_step(here)
        also = f"; `--at-step {shared}` reads all {len(here)} at the latest evaluation they share"
        notes.append(
            f"- N = {n}: its {len(here) - len(training)} finished runs read at their end (step "
            f"{end:,}), {len(training)} still training not on the board yet"
            f"{also if shared is not None else ''}"
        )
    steps = {n: s for n, s in steps.items() if s is not None}
    read = []
    for r in runs:
        s = steps.get(r.n) if r.path in units else None
        ended_there = r.metrics is not None and r.metrics.get("iterations") == s
        read.append(r if s is None or ended_there else at_step(r, s))
    return read, Placement(units, machines, steps, notes, pairing)


def varies_methods(runs: list[Run]) -> bool:
    """The sweep sets `algo` to `MIN_METHODS` or more values (finished or not)."""
    return len({r.overrides["algo"] for r in runs if "algo" in r.overrides}) >= MIN_METHODS


def board_rows(runs: list[Run], placement: Placement | None = None) -> list[Row]:
    """The board's rows from the finished runs, per N (ascending): the base model (where the
    runs recorded it), then one row per method (its algo and gamma, and any other swept key
    but the seed and `RUN_KEYS`), GRPO at gamma 0 the reference, paired by seed; with a
    `placement` (a `Pairing`'s) only its placed runs, paired by their unit, at any length (its
    steps make it one). Unmeasured: see `measure`."""
    finished = [r for r in runs if r.metrics is not None]
    skip = (*METHOD_KEYS, *RUN_KEYS)
    if placement is not None:
        finished = [r for r in finished if r.path in placement.units]
        skip += ("train.iterations",)
    rest = [k for k in swept_keys(runs) if k not in skip]

    def unit(run: Run) -> str:
        return run.seed if placement is None else placement.units[run.path]

    cells: dict[tuple, list[Run]] = defaultdict(list)
    for r in finished:
        cells[(r.n, r.method.algo, r.gamma, *(r.overrides.get(k, "-") for k in rest))].append(r)
    rows = []
    for n in sorted({key[0] for key in cells}):
        here = [r for r in finished if r.n == n]
        if any(r.base for r in here):
            rows.append(Row(n, "base model", "base", "base", 0.0, here))
        for key in sorted((k for k in cells if k[0] == n), key=lambda k: natural_key(str(k))):
            _, algo, gamma, *values = key
            members = cells[key]
            reference = cells.get((n, *REFERENCE, *values), [])
            by_unit = {unit(r): r for r in reference}
            pairs = [(by_unit[unit(r)], r) for r in members if unit(r) in by_unit]
            pairs.sort(key=lambda p: natural_key(unit(p[1])))
            name = members[0].method.name
            name = ", ".join([name, *(f"{k}={v}" for k, v in zip(rest, values, strict=True))])
            kind = "reference" if (algo, gamma) == REFERENCE else "method"
            kind = "as grpo" if on_ratio(members[0]) and one_update(members[0]) else kind
            rows.append(Row(n, name, kind, algo, gamma, members, reference, pairs))
            rows[-1].crossed = _crossed(pairs, placement) if placement else []
    return rows


def _crossed(pairs: list[tuple[Run, Run]], placement: Placement) -> list[str]:
    """The pairs whose runs ran on different machines (both known), as "<unit> (its machine
    against GRPO's)"."""
    out = []
    for a, b in pairs:
        ma, mb = placement.machines.get(a.path), placement.machines.get(b.path)
        if ma and mb and ma != mb:
            unit = placement.units[b.path]
            out.append(f"{unit} ({_machine_text(mb)} against GRPO's {_machine_text(ma)})")
    return out


def on_ratio(run: Run) -> bool:
    """The run's loss acts through the ratio only: at one update per batch it is another
    loss (its declaration, `on_policy_loss`; Clip-Cov and KL-Cov: GRPO's clip). Reads the
    losses' registry (torch loads here, not when the analysis is imported)."""
    from mazerl.algos import on_policy_loss  # every loss registered

    loss = run.method.loss
    return loss is not None and on_policy_loss(loss) != loss


def one_update(run: Run) -> bool:
    """The run made one optimizer step per batch (train.ppo_epochs = train.minibatches = 1):
    its ratio rho is 1 at every update, and a method acting through rho (Clip-Cov: its PPO
    clip opened to [0, 2] never binds; KL-Cov: |log rho| = 0) is GRPO."""
    epochs, minibatches = run.setting("train.ppo_epochs"), run.setting("train.minibatches")
    return (epochs or 1) == 1 and (minibatches or 1) == 1


def board_columns(cols: list[Metric]) -> dict[str, list[Metric]]:
    """`{set: [its headline pass@k columns with k in BOARD_KS]}` (exact where logged), sets as
    configured; sets without any left out."""
    heads = [c for c in headline(cols) if c.declared.passk and c.k in BOARD_KS]
    out = {s: [c for c in heads if c.set == s] for s in sets_of(cols)}
    return {s: cs for s, cs in out.items() if cs}


def route_columns(rows: list[Row], sets: list[str]) -> dict[str, list[Metric]]:
    """`{set: [routes/<set>/<metric> for ROUTE_METRICS]}` for the sets on which every finished
    run of the board logged them (braid mazes); empty otherwise."""
    runs = [r for row in rows if row.kind != "base" for r in row.runs]
    out = {}
    for s in sets:
        wanted = [Metric(f, s, k, "routes") for f, k in ROUTE_METRICS]
        if runs and all(c in r.final for r in runs for c in wanted):
            out[s] = wanted
    return out


def row_value(row: Row, col: Metric) -> tuple[float, int]:
    """Mean of `col` over the row's seeds, and their count: final values of its runs, or for
    the base model the base value of each seed (one base model per seed, or one for all)."""
    if row.kind == "base":
        by_seed = {r.seed: r.base[col] for r in row.runs if col in r.base}
        values = list(by_seed.values())
    else:
        values = [r.final[col] for r in row.runs if col in r.final]
    return (float(np.mean(values)) if values else float("nan")), len(values)


def route_matrix(pairs: list[tuple[Run, Run]], col: Metric) -> np.ndarray:
    """`[S, M]` differences B - A of `routes/<set>/expected_distinct@256` per seed and maze (the
    final evaluations' route masses, where every run saved them on the same mazes), else `[S, 1]`
    of the final set-level values (always for the rare mass: which routes are rare is fixed by
    the base model's per-maze masses, not kept in a run's folder)."""
    per = []
    for run in (r for p in pairs for r in p):
        evals = evaluations(run)
        maze = ((evals[max(evals)] if evals else {}).get(col.set) or {}).get("per_maze") or {}
        per.append(maze if maze.get("route_mass") is not None else None)
    same = None not in per and len({(len(p["route_mass"]), p.get("mazes_hash")) for p in per}) == 1
    if col.family == "expected_distinct" and same:
        values = [distinct_routes_per_maze(p) for p in per]  # [2S] of [M]
        return np.stack(values[1::2]) - np.stack(values[0::2])
    return np.array([[b.final[col] - a.final[col]] for a, b in pairs])


def row_moving(row: Row, cols: list[Metric]) -> str:
    """The still-moving screen (`mazerl.analysis.convergence.still_moving`) on the pass@1 and
    pass@256 `cols` of one set: GRPO on its own; a method where it, GRPO or their difference
    is still moving."""
    trend = [c for c in cols if c.k in DIFF_KS]
    slopes = [group_slope(row.runs, c) for c in trend]
    if row.kind == "method":
        slopes += [group_slope(row.reference, c) if row.reference else None for c in trend]
        slopes += [difference_slope(row.pairs, c) if row.pairs else None for c in trend]
    return still_moving(slopes)


def measure(rows: list[Row], cols: list[Metric]) -> list[Row]:
    """Fill each row's values, paired differences from GRPO (pass@1 and pass@256 per set, and
    the route metrics) and the still-moving screen per set; returns the rows."""
    boards = board_columns(cols)
    routes = route_columns(rows, list(boards))
    for row in rows:
        for s, cs in boards.items():
            row.values |= {c: row_value(row, c) for c in cs if row_value(row, c)[1]}
            if row.kind != "base":
                row.moving[s] = row_moving(row, cs)
            if row.kind == "method" and row.pairs:
                compared = [c for c in cs if c.k in DIFF_KS]
                row.diffs |= {c: paired_difference(paired_matrix(row.pairs, c)) for c in compared}
        for cs in routes.values():
            row.values |= {c: row_value(row, c) for c in cs if row_value(row, c)[1]}
            if row.kind == "method" and row.pairs:
                row.diffs |= {c: paired_difference(route_matrix(row.pairs, c)) for c in cs}
    return rows


def ordered(rows: list[Row], col: Metric) -> list[Row]:
    """Rows by N, then by `col` (ID pass@1) highest first; rows without it last."""

    def key(row: Row):
        value = row.values.get(col, (float("nan"), 0))[0]
        return row.n, -value if math.isfinite(value) else math.inf, natural_key(row.name)

    return sorted(rows, key=key)


def _interval(d: PairedDiff | None, scale: float) -> tuple[float, float] | None:
    if d is None or not math.isfinite(d.se):
        return None
    lo, hi = d.interval()
    return scale * lo, scale * hi


def _reading(row: Row, cols: list[Metric], scale: float, unit: str, digits: int = 1) -> str:
    """What each of the row's intervals says ("< +X": below +X with 95% confidence), its bounds
    with `digits` decimals as in the row's Δ cells."""
    if row.kind == "method" and not row.pairs:
        return "no GRPO run of its seeds finished"
    if row.kind == "as grpo":
        return _as_grpo(row)
    parts = []
    for c in cols:
        bounds = _interval(row.diffs.get(c), scale)
        if bounds is not None:
            parts.append(f"{_metric(c)}: {reading(*bounds, None, digits)}{unit}")
    if row.kind == "method" and not parts:
        return "one paired seed: no interval"
    return "; ".join(parts)


def _metric(col: Metric) -> str:
    """ "pass@1" for `eval/id/exact_pass@1`, "routes" and "rare mass" for the route metrics."""
    if col.source == "routes":
        return {"expected_distinct": "routes", "rare_mass": "rare mass"}.get(col.family, col.label)
    return col.short.replace("exact_", "")


def _seeds(row: Row, col: Metric) -> str:
    count = row.values[col][1]
    paired = len(row.pairs)
    return f"{count} ({paired} paired)" if row.kind == "method" and paired != count else str(count)


def board_markdown(
    rows: list[Row], cols: list[Metric], placement: Placement | None = None
) -> list[str]:
    """One table per evaluation set (rows by N, then by ID pass@1), the routes tables on braid
    mazes, each with the count of its intervals; under a `Pairing` (`placement`) paired by
    its unit, with its notes, and each row with a pair across machines marked and named."""
    boards = board_columns(cols)
    if not rows or not boards:
        notes = placement.notes if placement is not None else []
        return ["## Leaderboard", "", "No run could be placed:", "", *notes, ""] if notes else []
    first = "id" if "id" in boards else next(iter(boards))
    rank = boards[first][0]  # pass@1 where logged
    family = rank.family.replace("_", " ")
    units = "seeds" if placement is None else placement.pairing.units
    unit = "seed" if placement is None else placement.pairing.unit
    lines = [
        "## Leaderboard",
        "",
        f"{family} in percent: the mean over each method's finished {units} ({units}: how many; "
        f"the base model: the mean over the {units}' base models). Δ: the method minus GRPO "
        f"(γ 0) at the same N, paired by {unit} and evaluation maze, in points, with its 95% "
        f'interval (two-way {unit} x maze decomposition, as in "Paired differences"); reading: '
        'what the interval says ("< +X": below +X points with 95% confidence). still moving: '
        "yes where the method, GRPO or their difference has a pass@1 or pass@256 slope of that "
        "set still moving, no where none has (see Convergence). Sorted by "
        f"{first} {_metric(rank)} within each N.",
        "",
    ]
    if placement is not None:
        pairing = placement.pairing
        lines += [
            f"{pairing.paired_by} {CROSS_MARK}: {pairing.cross_note}.",
            "",
            *placement.notes,
            *([""] if placement.notes else []),
        ]
    order = ordered(rows, rank)
    for s, cs in boards.items():
        compared = [c for c in cs if c.k in DIFF_KS]
        lines += [f"### Leaderboard, {s}", ""]
        lines += table_head(
            ["N", "method", units, *(_metric(c) for c in cs)]
            + [f"Δ{_metric(c)}" for c in compared] + ["reading", "still moving"]
        )  # fmt: skip
        shown = []
        for row in order:
            if not math.isfinite(row.values.get(cs[0], (math.nan, 0))[0]):
                continue
            shown.append(row)
            name = f"{row.name} {CROSS_MARK}" if row.crossed else row.name
            cells = [f"{100 * row.values[c][0]:.1f}" for c in cs]
            cells += [_diff_cell(row, c, 100, 1) for c in compared]
            cells += [_reading(row, compared, 100, ""), row.moving.get(s, "-")]
            lines.append(f"| {row.n} | {name} | {_seeds(row, cs[0])} | " + " | ".join(cells) + " |")
        lines += ["", _count_line(order, compared), ""]
        crossed = any(row.crossed for row in shown)
        lines += [*_cross_lines(shown, placement.pairing), ""] if crossed else []
    return lines + routes_markdown(order, route_columns(rows, list(boards)))


def _cross_lines(rows: list[Row], pairing: Pairing) -> list[str]:
    """The footnote of the rows marked `CROSS_MARK`: which pairs, on which CPUs."""
    return [
        f"{CROSS_MARK} {row.name} at N = {row.n}, {pairing.cross_note}: {'; '.join(row.crossed)}."
        for row in rows
        if row.crossed
    ]


def _diff_cell(row: Row, col: Metric, scale: float, digits: int) -> str:
    if row.kind == "reference":
        return "reference"
    if row.kind == "as grpo":
        return "not compared"
    d = row.diffs.get(col)
    return "-" if d is None else d.text(scale, digits)


def _as_grpo(row: Row) -> str:
    """ "= GRPO at one update per batch" (its focal form: "= F-GRPO γ 0.5 ...")."""
    return f"= {method_name(REFERENCE[0], row.gamma)} at one update per batch"


def _count_line(rows: list[Row], compared: list[str]) -> str:
    count = sum(_interval(row.diffs.get(c), 1) is not None for row in rows for c in compared)
    return (
        f"{count} intervals in this table (at 95% each, about {count / 20:.1f} would miss "
        "their true value by chance)."
    )


def routes_markdown(rows: list[Row], routes: dict[str, list[Metric]]) -> list[str]:
    """Per set with route masses: routes kept (the exact expected number of distinct routes in
    256 samples) and the rare-route mass, with paired differences from GRPO."""
    if not routes:
        return []
    lines = [
        "### Routes kept (braid mazes)",
        "",
        f"routes in {DISTINCT_SAMPLES}: the exact expected number of distinct correct routes "
        f"among {DISTINCT_SAMPLES} samples of a maze (mean over mazes); rare mass: the exact "
        "probability of the routes the base model gives under 20% of its success mass, percent. "
        "Δ against GRPO (γ 0) at the same N with 95% intervals: routes paired by seed and maze, "
        "the rare mass by seed only (the base model's per-maze masses that define the rare "
        "routes are not kept in a run's folder). Still moving: see the tables above.",
        "",
    ]
    for s, (distinct, rare) in routes.items():
        lines += [f"#### {s}", ""]
        lines += table_head(
            ["N", "method", "seeds", f"routes in {DISTINCT_SAMPLES}", "rare mass",
             "Δroutes", "Δrare mass", "reading"]
        )  # fmt: skip
        count = 0
        for row in rows:
            if row.kind == "base" or distinct not in row.values:
                continue
            readings = [_reading(row, [distinct], 1, " routes", 2), _reading(row, [rare], 100, "")]
            cells = [f"{row.values[distinct][0]:.2f}", f"{100 * row.values[rare][0]:.1f}"]
            cells += [_diff_cell(row, distinct, 1, 2), _diff_cell(row, rare, 100, 1)]
            cells.append("; ".join(dict.fromkeys(r for r in readings if r)))
            count += sum(_interval(row.diffs.get(c), 1) is not None for c in (distinct, rare))
            lines.append(
                f"| {row.n} | {row.name} | {_seeds(row, distinct)} | " + " | ".join(cells) + " |"
            )
        lines += ["", f"{count} intervals in this table.", ""]
    return lines


def sweeper_grid(run: Run) -> dict[str, list[str]]:
    """The sweep a run was launched in: `{key: values}` of its `.hydra/hydra.yaml`
    `hydra.sweeper.params` (comma-separated lists only; empty without one)."""
    params = (run.hydra.get("sweeper") or {}).get("params") or {}
    values = {k: str(v).split(",") for k, v in params.items()}
    return {} if any("(" in v for vs in values.values() for v in vs) else values


def declared_cells(runs: list[Run]) -> list[dict[str, str]]:
    """Every run the sweep declares, as `{key: value}`: the product of each distinct
    `sweeper_grid` of the runs, each cell also holding the overrides that every run launched
    with that grid shares outside it (a second folder's `algo=grpo`, so that two folders'
    grids name one run once), else (no hydra.yaml) the product of the values the runs show
    for the swept keys."""
    by_grid: dict[tuple, list[Run]] = defaultdict(list)
    for r in runs:
        by_grid[tuple((k, tuple(v)) for k, v in sweeper_grid(r).items())].append(r)
    by_grid.pop((), None)
    if not by_grid:
        keys = swept_keys(runs)
        grid = tuple((k, tuple(dict.fromkeys(r.overrides.get(k, "-") for r in runs))) for k in keys)
        by_grid = {grid: []}
    cells = []
    for grid in sorted(by_grid):
        keys = [k for k, _ in grid]
        members = by_grid[grid]
        shared = {
            k: v
            for k, v in (members[0].overrides.items() if members else ())
            if k not in keys and all(m.overrides.get(k) == v for m in members)
        }
        for values in itertools.product(*(v for _, v in grid)):
            cell = shared | dict(zip(keys, values, strict=True))
            if not any(_same_cell(cell, c) for c in cells):
                cells.append(cell)
    return cells


def _same_cell(a: dict[str, str], b: dict[str, str]) -> bool:
    return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)


def _matches(run: Run, cell: dict[str, str]) -> bool:
    return all(k in run.overrides and same_value(run.overrides[k], v) for k, v in cell.items())


def missing_markdown(runs: list[Run], rows: list[Row]) -> list[str]:
    """The declared runs not finished, per N and method: which seeds, and why (not started,
    or the run's `problem`); one line for an N with nothing finished."""
    cells = declared_cells(runs)
    n_default = next((r.n for r in runs if r.n), 0)
    missing = []  # (N, method name, seed, why)
    methods = {r.method.name: r.method for r in runs}  # name -> Method, for the order
    for cell in cells:
        found = [r for r in runs if _matches(r, cell)]
        if any(r.metrics is not None for r in found):
            continue
        n, method = declared_method(cell, found + runs)
        methods[method.name] = method
        missing.append(
            (n or n_default, method.name, cell.get("seed", "-"),
             found[0].problem if found else "not started")
        )  # fmt: skip
    for r in runs:
        if r.metrics is None and not any(_matches(r, c) for c in cells):
            missing.append((r.n, r.method.name, r.seed, r.problem))
    if not missing:
        return []
    lines = [
        f"Not on the board yet: {len(missing)} runs (the sweep declares {len(cells)}: the "
        "product of its hydra.sweeper.params, else of the values its runs show):",
        "",
    ]
    on_board = {row.n for row in rows if row.kind != "base"}
    for n in sorted({m[0] for m in missing}):
        here = [m for m in missing if m[0] == n]
        if n not in on_board:
            started = sum(why != "not started" for *_, why in here)
            lines.append(f"- N = {n}: none of its {len(here)} runs finished ({started} started)")
            continue
        names = sorted({m[1] for m in here}, key=lambda name: method_order(methods[name]))
        on_row = {row.name for row in rows if row.n == n}
        idle = [
            x
            for x in names
            if x not in on_row and all(m[3] == "not started" for m in here if m[1] == x)
        ]
        if idle:
            lines.append(f"- N = {n}, not started: " + ", ".join(idle))
        for name in (x for x in names if x not in idle):
            by_why = defaultdict(list)
            for _, _, seed, why in (m for m in here if m[1] == name):
                by_why[why].append(seed)
            parts = [
                f"seed{'s' * (len(seeds) > 1)} {', '.join(sorted(seeds, key=natural_key))} {why}"
                for why, seeds in by_why.items()
            ]
            lines.append(f"- N = {n}, {name}: " + "; ".join(parts))
    return [*lines, ""]


def write_board_csv(path: Path, rows: list[Row]) -> None:
    """One line per N, method and metric (fractions; routes in routes): the seed mean, the
    paired difference from GRPO with its 95% interval (empty where there is none), the
    still-moving screen of the metric's set, and how many pairs ran on two machines (a pairing's
    `cross_note`)."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["N", "method", "algo", "focal_gamma", "metric", "seeds", "mean", "diff_vs_grpo",
                    "diff_lo", "diff_hi", "paired_seeds", "mazes", "still_moving",
                    "paired_across_cpus"])  # fmt: skip
        for row in rows:
            for col, (mean, seeds) in row.values.items():
                d = row.diffs.get(col)
                bounds = _interval(d, 1) or ("", "")
                paired = [d.mean, *bounds, d.seeds, d.mazes] if d else [""] * 5
                moving = row.moving.get(col.set, "")
                w.writerow([row.n, row.name, row.algo, row.gamma if row.kind != "base" else "",
                            col, seeds, mean, *paired, moving, len(row.crossed)])  # fmt: skip


@dataclass
class Point:
    """A method on the frontier: `x` pass@256 and `y` pass@1 (fractions, seed means), `dx` and
    `dy` the half-widths of the 95% intervals of its paired differences from GRPO (nan: none)."""

    name: str
    kind: str
    algo: str
    gamma: float
    x: float
    y: float
    dx: float
    dy: float


def frontier_points(rows: list[Row], x_col: Metric, y_col: Metric) -> dict[int, list[Point]]:
    """`{N: [Point]}` of every row with both values."""
    out: dict[int, list[Point]] = defaultdict(list)
    for row in rows:
        (x, _), (y, _) = row.values.get(x_col, (math.nan, 0)), row.values.get(y_col, (math.nan, 0))
        if math.isfinite(x) and math.isfinite(y) and row.kind != "as grpo":
            half = [_interval(row.diffs.get(c), 1) for c in (x_col, y_col)]
            dx, dy = ((b[1] - b[0]) / 2 if b else math.nan for b in half)
            out[row.n].append(Point(row.name, row.kind, row.algo, row.gamma, x, y, dx, dy))
    return dict(out)


def draw_frontier(points: dict[int, list[Point]], x_label: str, y_label: str, x_top: float = 1.02):
    """One panel per N: each method at its seed means with its interval cross, GRPO a black
    square with dotted lines through it, the base model a black star; a colour per algorithm
    (its focal variants hollow, in the same colour) and a marker per gamma (F-GRPO at 0.5 and
    at 1.0 apart). The x axis ends by `x_top` (a pass@k: 1.02), the y axis (a pass@k) by 1.02.
    Returns the figure and its axes."""
    ns = sorted(points)
    methods = [p for ps in points.values() for p in ps if p.kind == "method"]
    palette = colours(sorted({p.algo for p in methods}))
    marker = dict(zip(sorted({0.0} | {p.gamma for p in methods}), "oDv^<>ph8", strict=False))
    fig, axes = plt.subplots(1, len(ns), figsize=(max(6.5, 5.2 * len(ns)), 5.0), squeeze=False)
    for ax, n in zip(axes[0], ns, strict=True):
        for p in points[n]:
            if p.kind == "base":
                ax.plot(p.x, p.y, "k*", ms=12, label="base model")
            elif p.kind == "reference":
                ax.plot(p.x, p.y, "ks", ms=8, label=p.name)
                ax.axvline(p.x, color="k", ls=":", lw=0.8)
                ax.axhline(p.y, color="k", ls=":", lw=0.8)
            else:
                colour = palette[p.algo]
                ax.errorbar(
                    p.x, p.y, xerr=None if math.isnan(p.dx) else p.dx,
                    yerr=None if math.isnan(p.dy) else p.dy, fmt=marker[p.gamma], ms=6, capsize=2,
                    color=colour, mfc="none" if p.gamma else colour, label=p.name,
                )  # fmt: skip
        ax.set(xlabel=x_label, ylabel=y_label, title=f"N = {n}" if n else "")
        ax.set_xlim(max(ax.get_xlim()[0], -0.02), min(ax.get_xlim()[1], x_top))
        ax.set_ylim(max(ax.get_ylim()[0], -0.02), min(ax.get_ylim()[1], 1.02))
        ax.grid(alpha=0.3)
    return fig, axes


def plot_board(dest: Output, rows: list[Row], cols: list[Metric]) -> list[Path]:
    """`leaderboard.png`: pass@1 against pass@256 on the ID set (exact where logged), per N
    (`draw_frontier`); on braid mazes also `leaderboard_routes.png`: pass@1 against the routes
    kept in `DISTINCT_SAMPLES` samples. Returns the figures drawn (none without pass@1)."""
    boards = board_columns(cols)
    s = "id" if "id" in boards else next(iter(boards), None)
    ks = {c.k: c for c in boards.get(s, [])}
    if 1 not in ks:
        return []
    label = ks[1].family.replace("_", " ")
    y_label = f"{label}@1 ({s}, sharpness)"
    figures = []
    if 256 in ks:
        x_label = f"{label}@256 ({s}, coverage)"
        figures.append(("leaderboard.png", frontier_points(rows, ks[256], ks[1]), x_label, 1.02))
    if s in (routes := route_columns(rows, [s])):
        x_label = f"routes kept in {DISTINCT_SAMPLES} samples ({s}, exact)"
        points = frontier_points(rows, routes[s][0], ks[1])
        figures.append(("leaderboard_routes.png", points, x_label, math.inf))
    drawn = []
    for name, points, x_label, x_top in figures:
        if not points:
            continue
        fig, axes = draw_frontier(points, x_label, y_label, x_top)
        outside_legend(fig, axes)
        fig.subplots_adjust(bottom=fig.subplotpars.bottom + 0.06)
        fig.text(0.005, 0.03, FRONTIER_NOTE, fontsize=6, wrap=True)
        footer(fig, dest)
        drawn.append(save_figure(fig, dest.folder / name))
    return drawn
