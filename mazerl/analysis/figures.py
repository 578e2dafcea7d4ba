"""The sweep's figures: learning curves, -log pass@K against N, pass@k versus k, behaviour
pictures, braid-maze routes, and the categorical simulation's final values versus N."""

import io
import math
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import matplotlib
import numpy as np

from mazerl.algos.tail_miss import tail_miss
from mazerl.analysis.runs import (
    N_KEYS,
    Method,
    Run,
    eval_curve,
    eval_value,
    eval_values,
    evaluations,
    final_images,
    group_runs,
    natural_key,
    set_order,
    swept_keys,
    train_curves,
)
from mazerl.analysis.stats import mean_se, paired_difference
from mazerl.analysis.tables import headline, logged_ks, paired_matrix, pairings, sets_of
from mazerl.eval.metric_names import Metric

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

FORGOTTEN = Metric("forgotten", "id", source="routes")  # routes forgotten per ID maze
FIG6_KS = (1, 128, 1024, 2048)  # the panels of -log pass@K against N


class Output(NamedTuple):
    """Where the figures go, the command that drew them and the code it ran (`short_code`:
    its commit), printed in each footer."""

    folder: Path
    command: str
    code: str = ""


def final_pictures(run: Run) -> dict[str, np.ndarray]:
    """`{set: (H, W, 3) picture}`: the first behaviour picture (`images/<set>/0`, drawn by
    `mazerl.envs.render.render_behaviour`) of the run's last evaluation."""
    return {s: plt.imread(io.BytesIO(png), format="png") for s, png in final_images(run).items()}


def lacking_training_data(runs: list[Run]) -> bool:
    """No run has training scalars (train.csv or TensorBoard events): a study committed
    before train.csv existed. Its curves.png, routes.png and behaviour.png, drawn when the
    events were there, are then kept rather than redrawn without their training panels."""
    return not any(train_curves(r) for r in runs)


def plot_behaviour(dest: Output, finished: list[Run], keys: list[str]) -> Path | None:
    """`behaviour.png`: for each group (its first run, named with its seed) and evaluation set,
    the behaviour picture of the first maze at the final evaluation, as TensorBoard shows it
    (from the events: committed studies without them draw none)."""
    groups = group_runs(finished, keys)
    shown = {label: groups[label][0] for label in sorted(groups, key=natural_key)}
    rows = {label: final_pictures(run) for label, run in shown.items()}
    rows = {label: pics for label, pics in rows.items() if pics}
    if not rows:
        return None
    found = {s for pics in rows.values() for s in pics}
    sets = [s for s in set_order(finished) if s in found] + sorted(found - set(set_order(finished)))
    fig, axes = plt.subplots(
        len(rows), len(sets), figsize=(4.2 * len(sets), 2.6 * len(rows)), squeeze=False
    )
    for ax_row, (label, pics) in zip(axes, rows.items(), strict=True):
        for ax, s in zip(ax_row, sets, strict=True):
            if s in pics:
                ax.imshow(pics[s])
            ax.set_axis_off()
        run = shown[label]
        ax_row[0].set_title(f"{label}: {run.path.name}, seed {run.seed}", fontsize=8, loc="left")
    for ax, s in zip(axes[0], sets, strict=True):
        ax.set_title(f"{s}\n", fontsize=9)  # above the first row's group label
    footer(fig, dest)
    fig.tight_layout()
    return save_figure(fig, dest.folder / "behaviour.png")


def smooth(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average over `window` points (fewer at the start)."""
    if window <= 1:
        return values
    csum = np.concatenate([[0.0], np.cumsum(values)])
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(idx - window, 0)
    return (csum[idx] - csum[lo]) / (idx - lo)


def _band(
    ax, series: list[list[tuple[int, float]]], label: str, color=None, window: int = 1
) -> None:
    """Mean over seeds +- standard error (a band), each seed smoothed over `window` points; at a
    step only some seeds reached, over those seeds (se 0 where one)."""
    steps = sorted({s for one in series for s, _ in one})
    table = np.full((len(series), len(steps)), np.nan)
    index = {s: i for i, s in enumerate(steps)}
    for j, one in enumerate(series):
        for s, v in one:
            table[j, index[s]] = v
        table[j] = smooth(table[j], window)
    mean, se = np.array([mean_se(list(column)) for column in table.T]).T  # [steps] each
    (line,) = ax.plot(steps, mean, label=label, color=color, lw=1.3)
    ax.fill_between(steps, mean - se, mean + se, color=line.get_color(), alpha=0.2, lw=0)


def colours(labels: list[str]) -> dict[str, tuple]:
    """A distinct colour per label (tab10, tab20 beyond 10), the same in every panel."""
    cmap = plt.get_cmap("tab10" if len(labels) <= 10 else "tab20")
    return {label: cmap(i % cmap.N) for i, label in enumerate(labels)}


def outside_legend(fig, axes, title: str = "") -> None:
    """One legend for the figure, above the panels (never over the data)."""
    handles, labels = {}, {}
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
            labels[lab] = lab
    if not handles:
        fig.tight_layout()
        return
    ncol = min(len(handles), 3)
    rows = -(-len(handles) // max(ncol, 1))
    height = fig.get_size_inches()[1]
    top = 1 - (0.3 + 0.22 * rows) / height
    fig.legend(
        list(handles.values()), list(labels), loc="upper center", ncol=ncol, fontsize=8,
        title=title or None, title_fontsize=8, frameon=False,
    )  # fmt: skip
    fig.tight_layout(rect=(0, 0.03, 1, top))


def save_figure(fig, path: Path) -> Path:
    """Write `fig` as a PNG at 110 dpi and free it."""
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def footer(fig, dest: Output) -> None:
    """The command that drew the figure and the code's commit, at its bottom left."""
    text = f"{dest.command}  (code {dest.code})" if dest.code else dest.command
    fig.text(0.005, 0.005, text, fontsize=6, color="0.45")


def method_label(run: Run, keys: list[str], n_key: str | None) -> str:
    """The method as its config names it (`Method.name`), then the other swept values except
    the group size and the seed ("key=value")."""
    head = run.method.name if run.method.algo else ""
    rest = [
        f"{k}={run.overrides[k]}"
        for k in keys
        if k not in (n_key, "seed", "algo", "focal.gamma", "method") and k in run.overrides
    ]
    return ", ".join([head, *rest] if head else rest) or "all"


def method_order(method: Method, label: str | None = None):
    """Sort key of methods: plain methods (the references, focal exponent 0) before focal
    variants (`Method.gamma` > 0), then by `label` (default: the method's name) in natural
    order.

    Args:
        method: the method a run trained with.
        label: how the method is shown (`method_label`), where not its name alone.

    Returns:
        The key.
    """
    return method.gamma > 0, natural_key(label or method.name)


def method_labels(runs: list[Run], keys: list[str], n_key: str | None) -> list[str]:
    """The runs' `method_label`s, each once, in `method_order` of their runs' methods."""
    first: dict[str, Method] = {}
    for r in runs:
        first.setdefault(method_label(r, keys, n_key), r.method)
    return sorted(first, key=lambda label: method_order(first[label], label))


def swept_n_key(keys: list[str]) -> str | None:
    """The swept key that sets the group size N: an N key, or `cell` (a leaderboard cell,
    conf/cell/, which sets N and the length); None where N is not swept."""
    return next((k for k in (*N_KEYS, "cell") if k in keys), None)


def n_of(run: Run, n_key: str | None) -> int:
    """The run's N under the swept `n_key` (0: none): its value, or for `cell` its config's."""
    if n_key is None:
        return 0
    return run.n if n_key == "cell" else int(run.overrides.get(n_key, 0))


def run_label(run: Run, keys: list[str]) -> str:
    """The method, and the group size N where it is swept."""
    n_key = swept_n_key(keys)
    n = f", N = {n_of(run, n_key)}" if n_key and n_key in run.overrides else ""
    return method_label(run, keys, n_key) + n


def base_value(runs: list[Run], col: Metric) -> float | None:
    """The base model's `col` averaged over the runs (one base model per seed, or one for
    all), None where no finished run recorded it."""
    values = [r.base[col] for r in runs if r.metrics is not None and col in r.base]
    return float(np.mean(values)) if values else None


def by_method_and_n(
    runs: list[Run], keys: list[str], n_key: str | None, value
) -> dict[str, dict[int, list[float]]]:
    """`value(run)` grouped by method (in `method_order`), then by group size (0 when N is not
    swept)."""
    out = {label: defaultdict(list) for label in method_labels(runs, keys, n_key)}
    for r in runs:
        n = n_of(r, n_key) if n_key and n_key in r.overrides else 0
        out[method_label(r, keys, n_key)][n].append(value(r))
    return out


def errorbars_vs_n(ax, by_method: dict[str, dict[int, list[float]]], palette=None) -> None:
    """One line per method, in the order of `by_method` (`by_method_and_n`'s): mean +-
    standard error over seeds at each N; a log N axis with a tick at each N (set here: setting
    the scale afterwards would reset the ticks)."""
    for method, by_n in by_method.items():
        ns = sorted(by_n)
        stats = [mean_se(by_n[n]) for n in ns]
        ax.errorbar(
            ns,
            [m for m, _ in stats],
            yerr=[e for _, e in stats],
            marker="o",
            ms=3,
            capsize=3,
            label=method,
            color=(palette or {}).get(method),
        )
    ns = sorted({n for by_n in by_method.values() for n in by_n})
    if ns and ns[0] > 0:  # a log axis labelled at the swept group sizes themselves
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.minorticks_off()


def first_set(cols: list[Metric]) -> str:
    """The in-distribution set (`id`), else the first evaluation set."""
    sets = sets_of(cols)
    return "id" if "id" in sets else sets[0]


def plot_pass_at_k(dest: Output, finished: list[Run], keys: list[str], cols: list[Metric]) -> Path:
    """pass@k versus k per group, one panel per evaluation set (exact where logged)."""
    sets = sets_of(cols)
    groups = group_runs(finished, keys)
    order = sorted(groups, key=natural_key)
    names = {label: run_label(groups[label][0], keys) for label in order}
    palette = colours(order)
    fig, axes = plt.subplots(1, len(sets), figsize=(4.5 * len(sets), 4.2), squeeze=False)
    for ax, s in zip(axes[0], sets, strict=True):
        like = headline([c for c in cols if c.set == s])[0]
        for label in order:
            finals = [r.final for r in groups[label]]
            ks = logged_ks(finals, like)
            means = [mean_se([f.get(like.at(k)) for f in finals])[0] for k in ks]
            ax.plot(ks, means, marker=".", label=names[label], color=palette[label], lw=1.2)
        base = finished[0].base
        bks = logged_ks([base], like)
        if bks:
            ax.plot(bks, [base[like.at(k)] for k in bks], "k--", label="base model")
        ax.set(xscale="log", xlabel="k", ylabel=f"{like.family}@k", title=s)
    outside_legend(fig, axes)
    footer(fig, dest)
    path = dest.folder / "pass_at_k.png"
    return save_figure(fig, path)


def plot_curves(
    dest: Output, finished: list[Run], keys: list[str], cols: list[Metric]
) -> Path | None:
    """`curves.png`: one row per group size N (one row when N is not swept); columns
    train reward (each seed smoothed over 1/25 of its points; from train.csv, else the
    events), eval pass@1 and eval exact pass@K for the largest logged K (2048 in the study
    presets; from eval/*.json) against iteration; one line per method with a seed band (+-
    standard error), the base model dashed."""
    n_key = swept_n_key(keys)
    s = first_set(cols)
    exact = Metric("exact_pass", s, 1)
    exact_ks = logged_ks([r.final for r in finished], exact)
    pass1 = exact if 1 in exact_ks else Metric("pass", s, 1)
    panels = [("train reward (smoothed)", ("train/reward_mean", "train/success_rate"), True)]
    panels.append((f"eval {pass1.label} ({s})", (pass1,), False))
    if exact_ks and exact_ks[-1] > 1:
        big = exact.at(exact_ks[-1])
        panels.append((f"eval exact pass@{exact_ks[-1]} ({s})", (big,), False))
    curves = {r.path: train_curves(r) for r in finished}
    if not any(curves.values()) and (dest.folder / "curves.png").exists():
        return None  # drawn when the events existed: kept (see `lacking_training_data`)
    for r in finished:
        curves[r.path] |= {t: eval_curve(r, t) for _, ts, _ in panels[1:] for t in ts}
    ns = sorted({n_of(r, n_key) if n_key else 0 for r in finished})
    methods = method_labels(finished, keys, n_key)
    palette = colours(methods)
    fig, axes = plt.subplots(
        len(ns), len(panels), figsize=(4.2 * len(panels), 2.6 * len(ns) + 0.9), squeeze=False
    )
    for i, n in enumerate(ns):
        for j, (title, options, smoothed) in enumerate(panels):
            ax = axes[i][j]
            for method in methods:
                members = [
                    r
                    for r in finished
                    if method_label(r, keys, n_key) == method and (not n_key or n_of(r, n_key) == n)
                ]
                series = []
                for r in members:
                    tag = next((t for t in options if t in curves[r.path]), None)
                    if tag is not None:
                        series.append(curves[r.path][tag])
                if series:
                    window = max(1, len(series[0]) // 25) if smoothed else 1
                    _band(ax, series, method, palette[method], window)
            row = [r for r in finished if not n_key or n_of(r, n_key) == n]
            base = base_value(row, options[0]) if j > 0 else None
            if base is not None:
                ax.axhline(base, color="k", ls="--", lw=0.9, label="base model")
            if not ax.lines:
                ax.text(0.5, 0.5, "no train.csv or tb/ events", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8, color="0.4")  # fmt: skip
            ax.set_title(title if i == 0 else "", fontsize=9)
            ax.grid(alpha=0.3)
            ax.ticklabel_format(axis="y", useOffset=False)
            if j == 0 and n_key:
                ax.set_ylabel(f"N = {n}")
            if i == len(ns) - 1:
                ax.set_xlabel("iteration")
    outside_legend(fig, axes)
    footer(fig, dest)
    path = dest.folder / "curves.png"
    return save_figure(fig, path)


def plot_neglog_vs_n(
    dest: Output, finished: list[Run], keys: list[str], n_key: str, cols: list[Metric]
) -> Path | None:
    """`neglog_pass_vs_n.png`: -log pass@K against N (log axes) for K = 1, 128, 1024, 2048 (exact
    values, those logged), one line per method, mean +- standard error over seeds, the base
    model dashed; K = 1 on a linear axis (its values are far from 0). A pass@K of 1 (to float
    precision) is drawn at 1e-6."""
    s = first_set(cols)
    exact = Metric("exact_pass", s, 1)
    logged = logged_ks([r.final for r in finished], exact)
    ks = [k for k in FIG6_KS if k in logged]
    if not ks:
        return None
    methods = method_labels(finished, keys, n_key)
    palette = colours(methods)
    fig, axes = plt.subplots(1, len(ks), figsize=(3.6 * len(ks), 3.9), squeeze=False)
    for ax, k in zip(axes[0], ks, strict=True):

        def neglog(r: Run, col=k) -> float:
            return max(-math.log(max(r.final[exact.at(col)], 1e-300)), 1e-6)

        errorbars_vs_n(ax, by_method_and_n(finished, keys, n_key, neglog), palette)
        base = base_value(finished, exact.at(k))
        if base is not None:
            neg = -math.log(max(base, 1e-300))
            ax.axhline(neg, color="k", ls="--", lw=0.9, label="base model")
        ax.set(yscale="linear" if k == 1 else "log", xlabel="group size N", title=f"K = {k}")
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel(f"-log exact pass@K ({s}), lower is better")
    outside_legend(fig, axes)
    footer(fig, dest)
    path = dest.folder / "neglog_pass_vs_n.png"
    return save_figure(fig, path)


def plot_maze(dest: Output, runs: list[Run], cols: list[Metric]) -> list[Path]:
    finished = [r for r in runs if r.metrics is not None]
    keys = swept_keys(runs)
    out = [plot_pass_at_k(dest, finished, keys, cols)]
    optional = [plot_curves(dest, finished, keys, cols), plot_behaviour(dest, finished, keys)]
    optional += [plot_gap(dest, runs, cols), plot_frontier(dest, runs, cols)]
    out += [p for p in optional if p]
    n_key = swept_n_key(keys)
    if n_key is None:
        return out
    fig6 = plot_neglog_vs_n(dest, finished, keys, n_key, cols)
    out += [fig6] if fig6 else []
    # the largest k versus N, per method, with the tail-miss curve as a regime guide
    s = first_set(cols)
    metric = max((c for c in headline(cols) if c.set == s), key=lambda c: c.k or 0)
    by_method = by_method_and_n(finished, keys, n_key, lambda r: r.final.get(metric))
    palette = colours(list(by_method))
    fig, ax = plt.subplots(figsize=(6.5, 4.4))
    errorbars_vs_n(ax, by_method, palette)
    base = base_value(finished, metric)
    if base is not None:
        ax.axhline(base, color="k", ls="--", lw=0.9, label="base model")
    p = finished[0].base.get(Metric("success_rate", s))
    if p is not None and 0 < p < 1:
        ns = np.unique(np.logspace(0, 8, 200, base=2).astype(int))
        twin = ax.twinx()
        twin.plot(ns, tail_miss(ns, p, 0.1 * p), "k:", label="Pr(B_tau)")
        twin.set_ylabel(f"tail miss Pr(B_tau) at p = {p:.2f}, tau = 0.1 p (dotted)", fontsize=8)
    ax.set(xlabel="group size N", ylabel=metric)
    outside_legend(fig, [ax])
    footer(fig, dest)
    out.append(dest.folder / "pass_vs_n.png")
    save_figure(fig, out[-1])
    return out


def plot_routes(dest: Output, runs: list[Run]) -> Path | None:
    """Rare-route mass over training per group (seed bands; from train.csv, else the events)
    and routes retained versus N, both from zero, the base model dashed."""
    finished = [r for r in runs if r.metrics is not None]
    if lacking_training_data(finished) and (dest.folder / "routes.png").exists():
        return None  # drawn when the events existed: kept
    keys = swept_keys(runs)
    groups = group_runs(finished, keys)
    order = sorted(groups, key=natural_key)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    palette = colours(order)
    for label in order:
        curves = [train_curves(r) for r in groups[label]]
        series = [c["routes/train_rare_mass"] for c in curves if "routes/train_rare_mass" in c]
        if series:  # smoothed over 1/25 of the run's points, as in curves.png
            name = run_label(groups[label][0], keys)
            _band(axes[0], series, name, palette[label], max(1, len(series[0]) // 25))
    base = base_value(finished, Metric("rare_mass", "id", source="routes"))
    if base is not None:
        axes[0].axhline(base, color="k", ls="--", lw=0.9, label="base model (id set)")
    axes[0].set(
        xlabel="iteration",
        ylabel="exact mass of base-rare routes",
        title="rare-route mass over training (smoothed)",
    )
    n_key = swept_n_key(keys)
    retained = [r for r in finished if FORGOTTEN in r.final]  # routes of the ID set's mazes
    errorbars_vs_n(
        axes[1],
        by_method_and_n(
            retained,
            keys,
            n_key,
            lambda r: r.setting("maze.routes") - r.final[FORGOTTEN],
        ),
    )
    routes = {r.setting("maze.routes") for r in retained}
    for n_routes in routes:  # the base model forgets nothing by definition
        axes[1].axhline(n_routes, color="k", ls="--", lw=0.9, label="base model")
    axes[1].set(xlabel="group size N", ylabel="routes per maze not forgotten")
    axes[1].set_title("routes retained", fontsize=10)
    if not axes[0].lines:
        axes[0].text(0.5, 0.5, "no train.csv or tb/ events", ha="center", va="center",
                     transform=axes[0].transAxes, fontsize=8, color="0.4")  # fmt: skip
    for ax in axes:
        ax.set_ylim(bottom=0)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    path = dest.folder / "routes.png"
    return save_figure(fig, path)


def plot_categorical(dest: Output, runs: list[Run], cols: list[Metric]) -> list[Path]:
    finished = [r for r in runs if r.metrics is not None]
    keys = swept_keys(runs)
    n_key = swept_n_key(keys)
    if n_key is None or not cols:
        return []
    fig, axes = plt.subplots(1, len(cols), figsize=(4 * len(cols), 3.5), squeeze=False)
    for ax, col in zip(axes[0], cols, strict=True):
        errorbars_vs_n(ax, by_method_and_n(finished, keys, n_key, lambda r, c=col: r.final[c]))
        ax.set(xlabel="group size N", title=f"final {col.name}")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = dest.folder / "final_vs_n.png"
    save_figure(fig, path)
    return [path]


def trend_metrics(runs: list[Run], set_name: str) -> list[Metric]:
    """Pass@1 and pass@K of `set_name`, K = 256 or the largest k below it, that every run
    logged at every saved evaluation: exact where logged, else sampled; none where a run
    saved no evaluation."""
    if not runs or not all(evaluations(r) for r in runs):
        return []
    for family in ("exact_pass", "pass"):
        like = Metric(family, set_name, 1)
        ks = set.intersection(*(set(logged_ks([eval_values(r, s)], like))
                                for r in runs for s in evaluations(r)))  # fmt: skip
        big = max((k for k in ks if 1 < k <= 256), default=None)
        if 1 in ks and big:
            return [like, like.at(big)]
    return []


def plot_gap(dest: Output, runs: list[Run], cols: list[Metric]) -> Path | None:
    """`gap.png`: per group size N (rows), each method minus its reference (GRPO, gamma 0)
    in pass@1 and pass@256 (columns, in points) against step: the paired difference over
    seeds and mazes at every evaluation that all paired runs reached (the finished pairs where
    two or more have finished, so that a seed just started does not cut the curve; else every
    pair, unfinished runs included), with its 95% band (`paired_difference`)."""
    keys = swept_keys(runs)
    n_key = swept_n_key(keys)
    s = first_set(cols)
    entries = [(k, p) for k, p in pairings(runs) if k in ("focal.gamma", "algo", "method")]
    metrics = trend_metrics([r for _, p in entries for pair in p for r in pair], s)
    if not entries or not metrics:
        return None
    ns = sorted({p[0][0].n for _, p in entries})
    methods = method_labels([p[0][1] for _, p in entries], keys, n_key)
    palette = colours(methods)
    fig, axes = plt.subplots(
        len(ns), 2, figsize=(9.5, 2.8 * len(ns) + 0.9), squeeze=False, sharex=True
    )
    for _, pairs in entries:
        done = [p for p in pairs if all(r.metrics is not None for r in p)]
        pairs = done if len(done) >= 2 else pairs
        a, b = pairs[0]
        n = a.n
        method = method_label(b, keys, n_key)
        row = axes[ns.index(n)]
        steps = sorted(set.intersection(*(set(evaluations(r)) for p in pairs for r in p)))
        for ax, col in zip(row, metrics, strict=True):
            diffs = [paired_difference(paired_matrix(pairs, col, step)) for step in steps]
            mean = 100 * np.array([d.mean for d in diffs])
            lo, hi = (100 * np.array(x) for x in zip(*(d.interval() for d in diffs), strict=True))
            label = f"{method} − {method_label(a, keys, n_key)}"
            ax.plot(steps, mean, color=palette[method], lw=1.3, label=label)
            ax.fill_between(steps, lo, hi, color=palette[method], alpha=0.2, lw=0)
    for i, n in enumerate(ns):
        for j, col in enumerate(metrics):
            ax = axes[i][j]
            ax.axhline(0, color="0.3", lw=0.8)
            ax.grid(alpha=0.3)
            ax.set_title(f"Δ {col.label} ({s}), points" if i == 0 else "", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"N = {n}" if n else "difference")
            if i == len(ns) - 1:
                ax.set_xlabel("step")
                ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    outside_legend(fig, axes)
    footer(fig, dest)
    return save_figure(fig, dest.folder / "gap.png")


def plot_frontier(dest: Output, runs: list[Run], cols: list[Metric]) -> Path | None:
    """`frontier.png`: pass@1 (sharpness) against pass@256 (coverage) over training, one path
    per method (mean over seeds at each evaluation all its runs reached, its finished runs
    where two or more have finished; an arrow at the last),
    one panel per group size N, the base model marked: where each method trades coverage for
    sharpness."""
    keys = swept_keys(runs)
    n_key = swept_n_key(keys)
    s = first_set(cols)
    with_evals = [r for r in runs if evaluations(r)]
    metrics = trend_metrics(with_evals, s)
    if not with_evals or not metrics:
        return None
    p1, p256 = metrics
    ns = sorted({n_of(r, n_key) if n_key else 0 for r in with_evals})
    methods = method_labels(with_evals, keys, n_key)
    palette = colours(methods)
    ncols = min(3, len(ns))
    nrows = -(-len(ns) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 4.2 * nrows + 0.6), squeeze=False)
    for ax in axes.flat[len(ns) :]:
        ax.set_axis_off()
    for ax, n in zip(axes.flat, ns, strict=False):
        here = [r for r in with_evals if not n_key or n_of(r, n_key) == n]
        for method in methods:
            members = [r for r in here if method_label(r, keys, n_key) == method]
            done = [r for r in members if r.metrics is not None]
            members = done if len(done) >= 2 else members  # a seed just started: left out
            if not members:
                continue
            steps = sorted(set.intersection(*(set(evaluations(r)) for r in members)))
            xs = [np.mean([eval_value(r, t, p256) for r in members]) for t in steps]
            ys = [np.mean([eval_value(r, t, p1) for r in members]) for t in steps]
            ax.plot(xs, ys, color=palette[method], lw=1.2, marker=".", ms=3, label=method)
            if len(xs) > 1:
                ax.annotate("", (xs[-1], ys[-1]), (xs[-2], ys[-2]),
                            arrowprops={"arrowstyle": "->", "color": palette[method]})  # fmt: skip
        base = (base_value(here, p256), base_value(here, p1))
        if None not in base:
            ax.plot(*base, "k*", ms=10, label="base model")
        ax.set(xlabel=f"{p256.short} ({s})", title=f"N = {n}" if n_key else "")
        ax.set_ylabel(f"{p1.short} ({s})")
        ax.grid(alpha=0.3)
    outside_legend(fig, axes)
    footer(fig, dest)
    return save_figure(fig, dest.folder / "frontier.png")
