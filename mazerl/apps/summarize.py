"""`mazerl-summarize SWEEP_DIR`: one table and a few pictures for a whole sweep.

Finds every run under SWEEP_DIR (any folder with a `.hydra/` config, whatever the launcher),
groups runs by the swept keys except `seed`, and writes into SWEEP_DIR:
- `summary.md` and `summary.csv`: mean +- standard error over seeds of the final metrics
  (maze runs: pass@1, 8, 64, 256 per evaluation set and the change against the base model;
  categorical runs: Q_pos, M_ret, rare mass, forgotten count), with the runs that are missing
  or unfinished listed by name;
- maze sweeps: `pass_at_k.png` (pass@k versus k per group), `curves.png` (training success
  rate and evaluation pass@1 over iterations, seed bands) and, when N is swept,
  `pass_vs_n.png` (the largest-k pass versus N per method, with the categorical tail-miss
  curve overlaid as a regime guide) and, for braid mazes, `routes.png` (rare-route mass over
  training, routes retained versus N); categorical sweeps: `final_vs_n.png`.
The markdown table is also printed.
"""

import argparse
import csv
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from mazerl.algos.tail_miss import tail_miss
from mazerl.core.cli import exit_on_user_error
from mazerl.core.errors import UserError

matplotlib.use("Agg")
import matplotlib.pyplot as plt

MAZE_KS = (1, 8, 64, 256)
CATEGORICAL_KEYS = ("q_pos", "m_ret", "rare_mass", "forgotten")
N_KEYS = ("train.group_size", "sim.group_size")
ROUTE_KEYS = ("rare_mass", "common_mass", "forgotten", "distinct_found")


@dataclass
class Run:
    path: Path
    overrides: dict[str, str]
    metrics: dict | None = None  # None: unfinished or unreadable
    problem: str = ""
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)


def _parse_override(item: str) -> tuple[str, str]:
    key, _, value = item.partition("=")
    return key.lstrip("+~"), value


def find_runs(sweep: Path) -> list[Run]:
    runs = []
    for hydra_dir in sorted(sweep.rglob(".hydra")):
        path = hydra_dir.parent
        try:
            items = yaml.safe_load((hydra_dir / "overrides.yaml").read_text()) or []
        except (OSError, yaml.YAMLError):
            items = []
        run = Run(path, dict(_parse_override(str(i)) for i in items))
        metrics = path / "metrics.json"
        if not metrics.exists():
            ckpts = (
                sorted((path / "checkpoints").glob("ckpt_*.pt"))
                if (path / "checkpoints").is_dir()
                else []
            )
            run.problem = (
                f"unfinished (last checkpoint {ckpts[-1].name})"
                if ckpts
                else "unfinished (no checkpoint)"
            )
        else:
            try:
                run.metrics = json.loads(metrics.read_text())
            except (OSError, json.JSONDecodeError) as e:
                run.problem = f"unreadable metrics.json ({e.__class__.__name__})"
        runs.append(run)
    return runs


def swept_keys(runs: list[Run]) -> list[str]:
    """Override keys whose value differs between runs."""
    keys = {k for r in runs for k in r.overrides}
    return sorted(k for k in keys if len({r.overrides.get(k) for r in runs}) > 1)


def group_label(run: Run, keys: list[str]) -> str:
    return ", ".join(f"{k}={run.overrides.get(k, '-')}" for k in keys if k != "seed") or "all"


def mean_se(values: list[float]) -> tuple[float, float]:
    arr = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(arr) == 0:
        return float("nan"), float("nan")
    se = arr.std(ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0.0
    return float(arr.mean()), float(se)


def metric_columns(finished: list[Run]) -> list[str]:
    """Final-metric names to tabulate, in display order."""
    finals = [r.metrics["final"] for r in finished]
    if all(any(k.startswith("eval/") for k in f) for f in finals):
        sets = sorted({k.split("/")[1] for f in finals for k in f if k.startswith("eval/")})
        cols = []
        for s in sets:
            ks = sorted(
                {
                    int(k.split("@")[1])
                    for f in finals
                    for k in f
                    if k.startswith(f"eval/{s}/pass@") and not k.endswith("_se")
                }
            )
            chosen = [k for k in MAZE_KS if k in ks] or ks[:1]
            if ks and ks[-1] not in chosen and ks[-1] < MAZE_KS[-1]:
                chosen.append(ks[-1])  # the largest k the evaluation allows
            cols += [f"eval/{s}/pass@{k}" for k in chosen]
            cols += [f"eval/{s}/delta_pass@{k}_vs_base" for k in chosen]
        route_cols = [f"routes/id/{k}" for k in ROUTE_KEYS]
        return cols + [c for c in route_cols if all(c in f for f in finals)]
    return [k for k in CATEGORICAL_KEYS if all(k in f for f in finals)]


def aggregate(runs: list[Run]) -> tuple[list[str], list[dict]]:
    """Rows of `{group, n_seeds, <metric>: (mean, se)}` over finished runs, grouped."""
    keys = swept_keys(runs)
    finished = [r for r in runs if r.metrics is not None]
    if not finished:
        return [], []
    cols = metric_columns(finished)
    groups: dict[str, list[Run]] = defaultdict(list)
    for r in finished:
        groups[group_label(r, keys)].append(r)
    rows = []
    for label in sorted(groups, key=_natural):
        members = groups[label]
        row = {"group": label, "n_seeds": len(members)}
        for c in cols:
            row[c] = mean_se([m.metrics["final"].get(c, float("nan")) for m in members])
        rows.append(row)
    return cols, rows


def _natural(label: str):
    out = []
    for part in label.replace("=", ",").split(","):
        try:
            out.append((0, float(part), ""))
        except ValueError:
            out.append((1, 0.0, part))
    return out


def markdown(cols: list[str], rows: list[dict], runs: list[Run]) -> str:
    """One table per evaluation set (maze sweeps) or one table (categorical sweeps), then the
    runs that are missing or unfinished."""
    lines = [
        f"{len(runs)} runs, {sum(r.metrics is not None for r in runs)} finished; "
        "mean ± standard error over seeds.",
        "",
    ]
    sections: dict[str, list[str]] = defaultdict(list)
    for c in cols:
        if c.startswith("eval/"):
            sections[c.split("/")[1]].append(c)
        else:
            sections[
                "routes (id set, exact masses)" if c.startswith("routes/") else "final"
            ].append(c)
    for name, section in sections.items():
        if rows:
            heads = [
                c.split("/")[-1].replace("delta_", "Δ").replace("_vs_base", "") for c in section
            ]
            lines += [
                f"### {name}",
                "",
                "| group | seeds | " + " | ".join(heads) + " |",
                "|---|---|" + "---|" * len(section),
            ]
            for row in rows:
                cells = [f"{row[c][0]:.3f} ± {row[c][1]:.3f}" for c in section]
                lines.append(f"| {row['group']} | {row['n_seeds']} | " + " | ".join(cells) + " |")
            lines.append("")
    missing = [r for r in runs if r.metrics is None]
    if missing:
        lines += [f"Missing or unfinished runs ({len(missing)}):"]
        lines += [f"- {r.path.name}: {r.problem}" for r in missing]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_csv(path: Path, cols: list[str], rows: list[dict]) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["group", "n_seeds"] + [x for c in cols for x in (c, f"{c}_se")])
        for row in rows:
            w.writerow([row["group"], row["n_seeds"]] + [x for c in cols for x in row[c]])


def read_curves(run: Run, tags: tuple[str, ...]) -> dict[str, list[tuple[int, float]]]:
    tb = run.path / "tb"
    if not tb.is_dir():
        return {}
    acc = EventAccumulator(str(tb), size_guidance={"scalars": 0})
    acc.Reload()
    present = set(acc.Tags()["scalars"])
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in tags if t in present}


def _band(ax, series: list[list[tuple[int, float]]], label: str) -> None:
    steps = sorted({s for one in series for s, _ in one})
    table = np.full((len(series), len(steps)), np.nan)
    index = {s: i for i, s in enumerate(steps)}
    for j, one in enumerate(series):
        for s, v in one:
            table[j, index[s]] = v
    mean = np.nanmean(table, 0)
    se = np.nanstd(table, 0, ddof=1) / np.sqrt(len(series)) if len(series) > 1 else 0 * mean
    (line,) = ax.plot(steps, mean, label=label)
    ax.fill_between(steps, mean - se, mean + se, color=line.get_color(), alpha=0.2)


def method_label(run: Run, keys: list[str], n_key: str | None) -> str:
    """The run's swept values other than the group size and the seed."""
    parts = [
        f"{k}={run.overrides[k]}" for k in keys if k not in (n_key, "seed") and k in run.overrides
    ]
    return ", ".join(parts) or "all"


def by_method_and_n(
    runs: list[Run], keys: list[str], n_key: str | None, value
) -> dict[str, dict[int, list[float]]]:
    """`value(run)` grouped by method, then by group size (0 when N is not swept)."""
    out: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        n = int(r.overrides[n_key]) if n_key and n_key in r.overrides else 0
        out[method_label(r, keys, n_key)][n].append(value(r))
    return out


def errorbars_vs_n(ax, by_method: dict[str, dict[int, list[float]]]) -> None:
    """One line per method: mean +- standard error over seeds at each N."""
    for method, by_n in sorted(by_method.items()):
        ns = sorted(by_n)
        stats = [mean_se(by_n[n]) for n in ns]
        ax.errorbar(
            ns,
            [m for m, _ in stats],
            yerr=[e for _, e in stats],
            marker="o",
            capsize=3,
            label=method,
        )


def plot_maze(sweep: Path, runs: list[Run], cols: list[str], rows: list[dict]) -> list[Path]:
    finished = [r for r in runs if r.metrics is not None]
    keys = swept_keys(runs)
    out = []
    sets = sorted({c.split("/")[1] for c in cols})
    # pass@k versus k per group, one panel per evaluation set
    fig, axes = plt.subplots(1, len(sets), figsize=(5 * len(sets), 3.8), squeeze=False)
    groups: dict[str, list[Run]] = defaultdict(list)
    for r in finished:
        groups[group_label(r, keys)].append(r)
    for ax, s in zip(axes[0], sets, strict=True):
        for label in sorted(groups, key=_natural):
            ks = sorted(
                {
                    int(k.split("@")[1])
                    for r in groups[label]
                    for k in r.metrics["final"]
                    if k.startswith(f"eval/{s}/pass@") and not k.endswith("_se")
                }
            )
            means = [
                mean_se([r.metrics["final"].get(f"eval/{s}/pass@{k}") for r in groups[label]])[0]
                for k in ks
            ]
            ax.plot(ks, means, marker=".", label=label)
        base = finished[0].metrics.get("base", {})
        bks = sorted(
            int(k.split("@")[1])
            for k in base
            if k.startswith(f"eval/{s}/pass@") and not k.endswith("_se")
        )
        if bks:
            ax.plot(bks, [base[f"eval/{s}/pass@{k}"] for k in bks], "k--", label="base model")
        ax.set(xscale="log", xlabel="k", ylabel="pass@k", title=s)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    out.append(sweep / "pass_at_k.png")
    fig.savefig(out[-1], dpi=110)
    plt.close(fig)
    # learning curves with seed bands
    tags = ("train/success_rate", "eval/id/pass@1")
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for label in sorted(groups, key=_natural):
        curves = [read_curves(r, tags) for r in groups[label]]
        for ax, tag in zip(axes, tags, strict=True):
            series = [c[tag] for c in curves if tag in c]
            if series:
                _band(ax, series, label)
            ax.set(xlabel="iteration", title=tag)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    out.append(sweep / "curves.png")
    fig.savefig(out[-1], dpi=110)
    plt.close(fig)
    n_key = next((k for k in N_KEYS if k in keys), None)
    if n_key is None:
        return out
    # the largest k versus N, per method, with the tail-miss curve as a regime guide
    big = max(int(c.split("@")[1]) for c in cols if c.startswith("eval/id/pass@"))
    metric = f"eval/id/pass@{big}"
    by_method = by_method_and_n(finished, keys, n_key, lambda r: r.metrics["final"].get(metric))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    errorbars_vs_n(ax, by_method)
    p = finished[0].metrics.get("base", {}).get("eval/id/success_rate")
    if p is not None and 0 < p < 1:
        ns = np.unique(np.logspace(0, 8, 200, base=2).astype(int))
        twin = ax.twinx()
        twin.plot(ns, tail_miss(ns, p, 0.1 * p), "k:", label="Pr(B_tau)")
        twin.set_ylabel(f"tail miss Pr(B_tau) at p = {p:.2f}, tau = 0.1 p (dotted)", fontsize=8)
    ax.set(xscale="log", xlabel="group size N", ylabel=metric)
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.append(sweep / "pass_vs_n.png")
    fig.savefig(out[-1], dpi=110)
    plt.close(fig)
    return out


def plot_routes(sweep: Path, runs: list[Run]) -> Path:
    """Rare-route mass over training per group (seed bands) and routes retained versus N."""
    finished = [r for r in runs if r.metrics is not None]
    keys = swept_keys(runs)
    groups: dict[str, list[Run]] = defaultdict(list)
    for r in finished:
        groups[group_label(r, keys)].append(r)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for label in sorted(groups, key=_natural):
        curves = [read_curves(r, ("routes/train_rare_mass",)) for r in groups[label]]
        series = [c["routes/train_rare_mass"] for c in curves if "routes/train_rare_mass" in c]
        if series:
            _band(axes[0], series, label)
    axes[0].set(
        xlabel="iteration",
        ylabel="exact mass of base-rare routes",
        title="rare-route mass over training",
    )
    axes[0].legend(fontsize=7)
    n_key = next((k for k in N_KEYS if k in keys), None)

    def retained(r: Run) -> float:
        config = yaml.safe_load((r.path / ".hydra" / "config.yaml").read_text())
        return config["maze"]["routes"] - r.metrics["final"]["routes/id/forgotten"]

    errorbars_vs_n(axes[1], by_method_and_n(finished, keys, n_key, retained))
    axes[1].set(
        xscale="log" if n_key else "linear",
        xlabel="group size N",
        ylabel="routes per maze not forgotten",
        title="routes retained",
    )
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    path = sweep / "routes.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_categorical(sweep: Path, runs: list[Run], cols: list[str]) -> list[Path]:
    finished = [r for r in runs if r.metrics is not None]
    keys = swept_keys(runs)
    n_key = next((k for k in N_KEYS if k in keys), None)
    if n_key is None or not cols:
        return []
    fig, axes = plt.subplots(1, len(cols), figsize=(4 * len(cols), 3.5), squeeze=False)
    for ax, col in zip(axes[0], cols, strict=True):
        errorbars_vs_n(
            ax, by_method_and_n(finished, keys, n_key, lambda r, c=col: r.metrics["final"][c])
        )
        ax.set(xscale="log", xlabel="group size N", title=f"final {col}")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = sweep / "final_vs_n.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def summarize(sweep: Path) -> str:
    if not sweep.is_dir():
        raise UserError(f"sweep dir {sweep} does not exist")
    runs = find_runs(sweep)
    if not runs:
        raise UserError(f"no runs under {sweep} (looked for folders with a .hydra/ config)")
    cols, rows = aggregate(runs)
    text = markdown(cols, rows, runs)
    (sweep / "summary.md").write_text(text)
    write_csv(sweep / "summary.csv", cols, rows)
    if rows:
        if any(c.startswith("eval/") for c in cols):
            plot_maze(sweep, runs, cols, rows)
            if any(c.startswith("routes/") for c in cols):
                plot_routes(sweep, runs)
        else:
            plot_categorical(sweep, runs, cols)
    return text


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="mazerl-summarize", description=__doc__.split("\n")[0])
    ap.add_argument("sweep_dir", type=Path)
    args = ap.parse_args(argv)
    print(summarize(args.sweep_dir), end="")


if __name__ == "__main__":
    main()
