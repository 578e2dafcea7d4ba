"""The sweep's tables: final metrics per group (mean +- standard error over seeds) and the
paired differences against gamma = 0 or GRPO, as markdown and CSV."""

import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from mazerl.analysis.runs import (
    Run,
    eval_value,
    evaluations,
    group_label,
    group_runs,
    natural_key,
    per_maze_values,
    set_order,
    swept_keys,
)
from mazerl.analysis.stats import mean_se, paired_difference
from mazerl.core.provenance import short_code
from mazerl.eval.metric_names import FAMILIES, Family, Metric

# key -> reference value (`method`: a preset of conf/method/ naming an algorithm and gamma)
PAIRED_KEYS = {"focal.gamma": "0", "algo": "grpo", "method": "grpo", "model": "base"}
FELL_POINTS = 0.20  # a last evaluation this far below the one before: the run fell


def metric_columns(finished: list[Run]) -> list[Metric]:
    """The final metrics to tabulate, in display order: per evaluation set (as configured, then
    the rest) the families `FAMILIES` shows, in their declared order (undeclared ones after,
    by name), each at the k it shows (`shown_ks`) and its change from the base model where a
    run recorded one; then the route metrics per set; for runs without evaluation sets (the
    categorical simulation) the values every run recorded."""
    finals = [r.final for r in finished]
    if all(any(m.source == "eval" for m in f) for f in finals):
        cols = []
        for source in ("eval", "routes"):
            logged = {m.set for f in finals for m in f if m.source == source}
            configured = [s for s in set_order(finished) if s in logged]
            for s in configured + sorted(logged - set(configured)):
                cols += set_columns(finals, source, s, every=source == "routes")
        return cols
    return set_columns(finals, "", "", every=True)


def _family_order(family: str) -> tuple:
    names = list(FAMILIES)
    return (names.index(family), "") if family in names else (len(names), family)


def set_columns(finals: list[dict], source: str, set_name: str, every: bool) -> list[Metric]:
    """The shown columns of one evaluation set (`source` `eval` or `routes`; "" for values
    without a set): see `metric_columns`; with `every`, only the metrics all `finals` hold."""
    written = [
        m for f in finals for m in f if m.source == source and m.set == set_name and not m.stat
    ]
    families = {m.family for m in written}
    cols = []
    for family in sorted(families, key=_family_order):
        declared = FAMILIES.get(family) or Family(family)
        if not declared.shown or declared.instead_of in families:
            continue
        ks = sorted({m.k for m in written if m.family == family and m.k is not None})
        here = [m for m in dict.fromkeys(written) if m.family == family and m.k is None]
        for k in shown_ks(declared, ks):
            here.append(Metric(family, set_name, k, source))
        if every:
            here = [m for m in here if all(m in f for f in finals)]
        cols += here
        deltas = [m.delta() for m in here if m.k is not None]
        cols += [d for d in deltas if any(d in f for f in finals)]  # runs with a base model
    return cols


def shown_ks(family: Family, ks: list[int]) -> list[int]:
    """The k of `family` a table shows, of those written (`ks`, sorted): `family.ks` (None:
    all); where none of them was written the smallest, and the largest written below the last
    of `family.ks` (the largest the evaluation allows)."""
    if family.ks is None:
        return ks
    chosen = [k for k in family.ks if k in ks] or ks[:1]
    if ks and ks[-1] not in chosen and ks[-1] < family.ks[-1]:
        chosen.append(ks[-1])
    return chosen


def logged_ks(finals: list[dict], like: Metric) -> list[int]:
    """The k of every value of `like`'s family on its set that `finals` hold, sorted."""
    return sorted(
        {
            m.k
            for f in finals
            for m in f
            if m.k is not None
            and not m.stat
            and (m.source, m.set, m.family) == (like.source, like.set, like.family)
        }
    )


def sets_of(cols: list[Metric]) -> list[str]:
    """The evaluation sets of the table's columns, in column order (as configured)."""
    return list(dict.fromkeys(c.set for c in cols if c.source == "eval"))


def headline(cols: list[Metric]) -> list[Metric]:
    """The evaluation metrics among the table's columns (changes against the base left out)."""
    return [c for c in cols if c.source == "eval" and not c.stat]


def aggregate(runs: list[Run]) -> tuple[list[Metric], list[dict]]:
    """Rows of `{group, n_seeds, <metric>: (mean, se)}` over finished runs, grouped."""
    keys = swept_keys(runs)
    finished = [r for r in runs if r.metrics is not None]
    if not finished:
        return [], []
    cols = metric_columns(finished)
    groups = group_runs(finished, keys)
    rows = []
    for label in sorted(groups, key=natural_key):
        members = groups[label]
        row = {"group": label, "n_seeds": len(members)}
        for c in cols:
            row[c] = mean_se([m.final.get(c, float("nan")) for m in members])
        rows.append(row)
    return cols, rows


def paired_matrix(
    pairs: list[tuple[Run, Run]], col: "Metric | str", step: int | None = None
) -> np.ndarray:
    """`[S, M]` differences B - A per seed and maze of `col` (a `Metric` or its name) at
    evaluation `step` (None: the final one), or `[S, 1]` of the set-level values where any run
    lacks per-maze values or the runs were evaluated on different mazes."""
    col = Metric.of(col)
    per = [(per_maze_values(a, col, step), per_maze_values(b, col, step)) for a, b in pairs]
    if all(x and y and len(x[0]) == len(y[0]) and x[1] == y[1] for x, y in per):
        return np.stack([y[0] - x[0] for x, y in per])
    if step is None:
        return np.array([[b.final[col] - a.final[col]] for a, b in pairs])
    return np.array([[eval_value(b, step, col) - eval_value(a, step, col)] for a, b in pairs])


def same_value(value: str, reference: str) -> bool:
    """Two override values are the same: equal as numbers ("0" and "0.0"), else as text."""
    try:
        return float(value) == float(reference)
    except ValueError:
        return value == reference


def pairings(runs: list[Run]) -> list[tuple[str, list[tuple[Run, Run]]]]:
    """For each key of PAIRED_KEYS that the sweep varies: every group against the group that
    differs from it only in that key and has the reference value (gamma = 0, GRPO; else the
    smallest value), as `(key, [(reference run, run)] paired by seed)`."""
    keys = swept_keys(runs)
    out = []
    for key, preferred in PAIRED_KEYS.items():
        if key not in keys:
            continue
        others = [k for k in keys if k not in (key, "seed")]
        cells: dict = defaultdict(lambda: defaultdict(dict))  # rest -> value -> seed -> run
        for r in runs:
            rest = tuple(r.overrides.get(k, "-") for k in others)
            cells[rest][r.overrides.get(key, "-")][r.overrides.get("seed", "-")] = r
        for rest in sorted(cells, key=lambda x: natural_key(",".join(x))):
            by_value = cells[rest]
            values = sorted(by_value, key=natural_key)
            ref = next((v for v in values if same_value(v, preferred)), values[0])
            for value in values:
                seeds = sorted(set(by_value[ref]) & set(by_value[value]), key=natural_key)
                pairs = [(by_value[ref][s], by_value[value][s]) for s in seeds]
                if value != ref and pairs:
                    out.append((key, pairs))
    return out


def paired_comparisons(runs: list[Run], cols: list[Metric]) -> list[dict]:
    """The paired difference of every headline column between the finished runs of each
    pairing (`pairings`). Each entry: `key`, `group`, `reference` (group labels as in the
    table), `pairs` and `diffs` {headline column: PairedDiff}."""
    keys = swept_keys(runs)
    out = []
    for key, pairs in pairings([r for r in runs if r.metrics is not None]):
        cols_here = [c for c in headline(cols) if all(c in r.final for p in pairs for r in p)]
        if cols_here:
            out.append(
                {
                    "key": key,
                    "group": group_label(pairs[0][1], keys),
                    "reference": group_label(pairs[0][0], keys),
                    "pairs": pairs,
                    "diffs": {c: paired_difference(paired_matrix(pairs, c)) for c in cols_here},
                }
            )
    return out


def paired_markdown(cols: list[Metric], paired: list[dict]) -> list[str]:
    """One table per compared key and evaluation set; `still moving` per set where the entries
    carry it (`moving`, `mazerl.analysis.convergence.entry_moving`)."""
    if not paired:
        return []
    models = {e["key"] for e in paired} == {"model"}  # evaluated models: no training keys
    reference = "model=base" if models else "gamma = 0, GRPO, method=grpo, model=base"
    lines = [
        "## Paired differences",
        "",
        "Each group minus the group that differs from it only in the compared key (reference: "
        f"{reference}), runs paired by seed and, where the "
        "evaluations saved per-maze values, by evaluation maze. 95% t interval from a two-way "
        "(seed x maze) decomposition: "
        "variance = (MS_seed + MS_maze - MS_residual) / (seeds x mazes), the interaction "
        "counted once, Satterthwaite degrees of freedom (seeds - 1 where the seed component "
        "is estimated below zero and set to zero); n/a with one seed.",
        "",
    ]
    for key in PAIRED_KEYS:
        entries = [e for e in paired if e["key"] == key]
        sets = [s for s in sets_of(cols) if any(c.set == s for e in entries for c in e["diffs"])]
        for set_name in sets:
            section = [c for c in headline(cols) if c.set == set_name]
            heads = ["Δ" + c.short for c in section]
            marked = any("moving" in e for e in entries)
            lines += [f"### {key}, {set_name}", ""]
            lines += table_head(
                ["group", "against", "seeds", "mazes", *heads] + ["still moving"] * marked
            )
            count = 0
            for e in entries:
                diffs = [e["diffs"].get(c) for c in section]
                first = next((d for d in diffs if d is not None), None)
                if first is None:
                    continue
                cells = [d.text() if d is not None else "-" for d in diffs]
                cells += [e["moving"][set_name]] if marked else []
                count += sum(d is not None and math.isfinite(d.se) for d in diffs)
                lines.append(
                    f"| {e['group']} | {e['reference']} | {first.seeds} | {first.mazes} | "
                    + " | ".join(cells)
                    + " |"
                )
            lines += [""]
            if count or not models:  # evaluated models, one seed: n/a in every cell says so
                chance = f"about {count / 20:.1f} would miss their true value by chance"
                lines += [f"{count} intervals in this table (at 95% each, {chance}).", ""]
    return lines


def base_row(runs: list[Run], section: list[Metric]) -> list[str]:
    """The base model's line of a table: its values averaged over the finished runs' base
    models (one per seed where the base seed follows the seed; their count in `seeds`). A base
    model is known by its weights' sha256 where `metrics.json` records it: one bank model
    evaluated on two CPU kinds (values that differ in the last digits) counts once, with the
    values of the first run that read it."""
    bases: dict = {}
    for r in runs:
        if r.metrics is not None and r.base:
            bases.setdefault(r.origin.sha256 or tuple(sorted(r.base.items(), key=str)), r.base)
    if not bases or not any(c in b for b in bases.values() for c in section):
        return []
    cells = []
    for c in section:
        values = [b[c] for b in bases.values() if c in b]
        if c.stat or not values:
            cells.append("-")
            continue
        mean, se = mean_se(values)
        cells.append(f"{mean:.3f} ± {'n/a' if len(values) < 2 else f'{se:.3f}'}")
    return [f"| base model | {len(bases)} | " + " | ".join(cells) + " |"]


def code_line(runs: list[Run]) -> str:
    """Which code the finished runs ran at (`metrics.json`'s `code`), most runs first:
    `Code: 3 runs at 1a2b3c4d5e6f, 2 at 9f8e7d6c5b4a+dirty; 12 runs recorded none (older
    runs)`; a run read at a step before it finished (`at_step`) has no `metrics.json` yet to
    record it. Empty without finished runs."""
    finished = [r for r in runs if r.metrics is not None]
    counts: dict[str, int] = defaultdict(int)
    for r in finished:
        if isinstance(code := r.metrics.get("code"), dict):
            counts[short_code(code)] += 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])  # ties: as first met
    parts = []
    for label, n in ranked:  # the unit named once: "3 runs at A, 2 at B"
        unit = "" if parts else "run " if n == 1 else "runs "
        parts.append(f"{n} {unit}at {label}")
    missing = [r for r in finished if not isinstance(r.metrics.get("code"), dict)]
    running = sum(not (r.path / "metrics.json").exists() for r in missing)
    tail = []
    if len(missing) > running:
        n = len(missing) - running
        tail.append(f"{n} {'run' if n == 1 else 'runs'} recorded none (older runs)")
    if running:
        tail.append(f"{running} still training (metrics.json, written last, records it)")
    text = "; ".join(x for x in (", ".join(parts), *tail) if x)
    return f"Code: {text}." if text else ""


def fell_markdown(runs: list[Run], set_name: str = "id") -> list[str]:
    """The finished runs that fell, by exact pass@1 on `set_name`: those that ended below their
    own base model's (`metrics.json`'s `final` against its `base`) and those whose last
    evaluation is `FELL_POINTS` or more below the one before it (`eval/step_*.json`), one line
    each. Listed, never dropped: each stays in every mean and interval. Empty where none fell."""
    col = Metric("exact_pass", set_name, 1)
    fell = []
    for r in runs:
        final = r.final.get(col) if r.metrics is not None else None
        if final is None:
            continue
        base = r.base.get(col)
        steps = sorted(evaluations(r))
        previous = eval_value(r, steps[-2], col) if len(steps) > 1 else None
        if base is not None and final < base:
            fell.append(
                f"- {r.path.name}: {100 * final:.1f}%, below its base model's {100 * base:.1f}%"
            )
        elif previous is not None and final <= previous - FELL_POINTS:
            fell.append(
                f"- {r.path.name}: {100 * final:.1f}% at step {steps[-1]:,}, "
                f"{100 * previous:.1f}% at step {steps[-2]:,}"
            )
    if not fell:
        return []
    finished = sum(r.metrics is not None for r in runs)
    return [
        f"Fell ({set_name} exact pass@1 ended below the base model's, or "
        f"{100 * FELL_POINTS:.0f} points or more below the evaluation before; kept in every "
        f"mean and interval above): {len(fell)} of {finished} runs",
        "",
        *fell,
        "",
    ]


def forked_markdown(runs: list[Run]) -> list[str]:
    """The finished runs that started from another run's checkpoint (`train.fork`; their
    `metrics.json`'s `forked`), one line each with the checkpoint, its iteration and the
    settings that differ. Kept in every mean and interval. Empty where none was forked."""
    forked = [(r.path.name, r.metrics.get("forked")) for r in runs if r.metrics is not None]
    lines = [
        f"- {name}: from {f['checkpoint']} at iteration {f['iteration']:,}; settings that "
        f"differ: {', '.join(f['differs']) or 'none'}"
        for name, f in forked
        if f
    ]
    if not lines:
        return []
    return [
        f"Forked (started from another run's checkpoint, `train.fork`; kept in every mean and "
        f"interval above): {len(lines)} of {len(forked)} runs",
        "",
        *lines,
        "",
    ]


def table_head(columns: list[str]) -> list[str]:
    """A markdown table's header line and rule."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def markdown(
    cols: list[Metric],
    rows: list[dict],
    runs: list[Run],
    paired: list[dict] = (),
    extra: list[str] = (),
) -> str:
    """The code the runs ran at (`code_line`), one table per evaluation set (maze sweeps) or
    one table (categorical sweeps), the paired differences, the `extra` lines (convergence),
    then the runs that fell (`fell_markdown`), the forked ones (`forked_markdown`) and the
    runs that are missing or unfinished."""
    read = [r for r in runs if r.metrics is not None]
    training = sum(not (r.path / "metrics.json").exists() for r in read)  # read at a step
    still = f" and {training} still training, read at an earlier step" if training else ""
    lines = [
        f"{len(runs)} runs, {len(read) - training} finished{still}; "
        "mean ± standard error over seeds.",
        "",
    ]
    if code := code_line(runs):
        lines += [code, ""]
    sections: dict[str, list[Metric]] = defaultdict(list)
    for c in cols:
        if c.source == "eval":
            sections[c.set].append(c)
        else:
            sections[f"routes ({c.set} set, exact masses)" if c.source else "final"].append(c)
    for name, section in sections.items():
        if rows:
            heads = [("Δ" if c.stat else "") + c.short for c in section]
            lines += [f"### {name}", "", *table_head(["group", "seeds", *heads])]
            lines += base_row(runs, section)
            for row in rows:
                one = row["n_seeds"] < 2
                cells = [
                    f"{row[c][0]:.3f} ± {'n/a' if one else f'{row[c][1]:.3f}'}" for c in section
                ]
                lines.append(f"| {row['group']} | {row['n_seeds']} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += paired_markdown(cols, list(paired))
    lines += list(extra)
    lines += fell_markdown(runs)
    lines += forked_markdown(runs)
    missing = [r for r in runs if r.metrics is None]
    if missing:
        lines += [f"Missing or unfinished runs ({len(missing)}):"]
        lines += [f"- {r.path.name}: {r.problem}" for r in missing]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_csv(path: Path, cols: list[Metric], rows: list[dict], paired: list[dict] = ()) -> None:
    """One row per group: mean and standard error of every column (the error empty with one
    seed), then per compared key the reference group and the paired difference of each
    headline metric with its 95% interval (`paired_<key>/<metric>`, `_lo`, `_hi`; empty where
    the group is a reference or has no partner, the interval empty with one seed)."""
    found = {(e["key"], e["group"]): e for e in paired}
    compared = {  # key -> the headline columns that have a paired difference
        k: [c for c in headline(cols) if any(k == e["key"] and c in e["diffs"] for e in paired)]
        for k in PAIRED_KEYS
        if any(e["key"] == k for e in paired)
    }
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        head = ["group", "n_seeds"] + [x for c in cols for x in (c, f"{c}_se")]
        for k, paired_cols in compared.items():
            head.append(f"paired_{k}/reference")
            head += [f"paired_{k}/{c}{x}" for c in paired_cols for x in ("", "_lo", "_hi")]
        w.writerow(head)
        for row in rows:
            one = row["n_seeds"] < 2
            line = [row["group"], row["n_seeds"]]
            line += [x for c in cols for x in (row[c][0], "" if one else row[c][1])]
            for k, paired_cols in compared.items():
                e = found.get((k, row["group"]), {"reference": "", "diffs": {}})
                line.append(e["reference"])
                for c in paired_cols:
                    d = e["diffs"].get(c)
                    lo, hi = d.interval() if d else (math.nan, math.nan)
                    line += [d.mean if d else ""] + [
                        x if math.isfinite(x) else "" for x in (lo, hi)
                    ]
            w.writerow(line)
