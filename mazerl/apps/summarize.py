"""`mazerl-summarize SWEEP_DIR`: one table and a few pictures for a whole sweep.

Finds every run under SWEEP_DIR (any folder with a `.hydra/` config, whatever the launcher),
groups runs by the swept keys except `seed`, and writes into SWEEP_DIR:
- `summary.md` and `summary.csv`: mean +- standard error over seeds of the final metrics
  (maze runs: exact pass@1, 8, 256, 2048 per evaluation set, or sampled pass@1, 8, 64, 256
  where no exact value exists, and the change against the base model; categorical runs:
  Q_pos, M_ret, rare mass, forgotten count), with the runs that are missing or unfinished
  listed by name; for runs that differ only in `focal.gamma` (or only in `algo`), the paired
  difference of each headline metric against gamma = 0 (or GRPO) with a 95% interval
  (`paired_difference`);
- maze sweeps: `pass_at_k.png` (pass@k versus k per group), `curves.png` (the paper's Fig. 7:
  one row per N, training reward (smoothed), eval pass@1 and exact pass@2048 over iterations,
  one line per method with seed bands) and, when N is swept, `neglog_pass_vs_n.png` (the
  paper's Fig. 6: -log pass@K versus N for K = 1, 128, 1024, 2048, log axes), `pass_vs_n.png`
  (the largest-k pass versus N per method, with the categorical tail-miss curve overlaid as
  a regime guide) and, for braid mazes, `routes.png` (rare-route mass over training, routes
  retained versus N); categorical sweeps: `final_vs_n.png`.
The markdown table is also printed.
"""

import argparse
import csv
import functools
import io
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
from mazerl.eval.passk import exact_pass_at_k, pass_at_k
from mazerl.train.run_state import read_metrics

matplotlib.use("Agg")
import matplotlib.pyplot as plt

MAZE_KS = (1, 8, 64, 256)  # sampled pass@k columns (runs without exact values)
EXACT_KS = (1, 8, 256, 2048)  # exact pass@k columns
FIG6_KS = (1, 128, 1024, 2048)  # the paper's Fig. 6 panels
PAIRED_KEYS = {"focal.gamma": "0", "algo": "grpo"}  # compared key -> reference value
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
            run.metrics, run.problem = read_metrics(metrics)
        runs.append(run)
    return runs


def swept_keys(runs: list[Run]) -> list[str]:
    """Override keys whose value differs between runs."""
    keys = {k for r in runs for k in r.overrides}
    return sorted(k for k in keys if len({r.overrides.get(k) for r in runs}) > 1)


def group_label(run: Run, keys: list[str]) -> str:
    return ", ".join(f"{k}={run.overrides.get(k, '-')}" for k in keys if k != "seed") or "all"


def group_runs(runs: list[Run], keys: list[str]) -> dict[str, list[Run]]:
    """Runs by group label (their values of the swept `keys` other than the seed)."""
    groups: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        groups[group_label(r, keys)].append(r)
    return groups


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
            family, wanted = "exact_pass", EXACT_KS
            ks = logged_ks(finals, f"eval/{s}/exact_pass@")
            if not ks:  # no exact values (allow_revisits): the sampled estimates
                family, wanted = "pass", MAZE_KS
                ks = logged_ks(finals, f"eval/{s}/pass@")
            chosen = [k for k in wanted if k in ks] or ks[:1]
            if ks and ks[-1] not in chosen and ks[-1] < wanted[-1]:
                chosen.append(ks[-1])  # the largest k the evaluation allows
            cols += [f"eval/{s}/{family}@{k}" for k in chosen]
            cols += [f"eval/{s}/delta_{family}@{k}_vs_base" for k in chosen]
        route_cols = [f"routes/id/{k}" for k in ROUTE_KEYS]
        return cols + [c for c in route_cols if all(c in f for f in finals)]
    return [k for k in CATEGORICAL_KEYS if all(k in f for f in finals)]


def logged_ks(finals: list[dict], prefix: str) -> list[int]:
    """The k of every `<prefix>k` metric (standard errors left out), sorted."""
    return sorted(
        {
            int(k.split("@")[1])
            for f in finals
            for k in f
            if k.startswith(prefix) and "_" not in k[len(prefix) :]
        }
    )


def headline(cols: list[str]) -> list[str]:
    """The evaluation metrics among the table's columns (changes against the base left out)."""
    return [c for c in cols if c.startswith("eval/") and "/delta_" not in c]


def aggregate(runs: list[Run]) -> tuple[list[str], list[dict]]:
    """Rows of `{group, n_seeds, <metric>: (mean, se)}` over finished runs, grouped."""
    keys = swept_keys(runs)
    finished = [r for r in runs if r.metrics is not None]
    if not finished:
        return [], []
    cols = metric_columns(finished)
    groups = group_runs(finished, keys)
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


def t_quantile(q: float, df: float) -> float:
    """Quantile q in (0.5, 1) of Student's t with df > 0 degrees of freedom (the normal one for
    df = inf): Newton's method on the CDF, 0.5 + the density integrated from 0 by Simpson's
    rule on 4,001 points (within 1e-6 of the printed tables for df >= 1)."""
    if not math.isfinite(df):
        return math.sqrt(2) * _erfinv(2 * q - 1)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def density(x):
        return np.exp(log_c - (df + 1) / 2 * np.log1p(np.square(x) / df))

    t = 1.0
    for _ in range(200):
        y = density(np.linspace(0.0, t, 4001))
        cdf = 0.5 + t / 12000 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())
        step = (cdf - q) / float(density(t))
        t -= step
        if abs(step) < 1e-10 * t:
            break
    return t


def _erfinv(y: float) -> float:
    """Inverse error function by Newton's method on math.erf."""
    x = 0.0
    for _ in range(100):
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) < 1e-14:
            break
    return x


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
        half = t_quantile(0.5 + level / 2, self.df) * self.se if self.se > 0 else 0.0
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


@functools.lru_cache(maxsize=256)
def final_evaluation(path: Path) -> dict | None:
    """A run's final `eval/step_*.json` (per-maze values), None if absent or unreadable."""
    files = sorted((path / "eval").glob("step_*.json"))
    try:
        return json.loads(files[-1].read_text()) if files else None
    except (OSError, json.JSONDecodeError):
        return None


def per_maze_values(run: Run, col: str) -> tuple[np.ndarray, str] | None:
    """`eval/<set>/exact_pass@k` or `eval/<set>/pass@k` of every evaluation maze of the run's
    final evaluation, and the hash naming those mazes; None where it was not saved."""
    _, set_name, metric = col.split("/")
    family, k = metric.split("@")
    per = ((final_evaluation(run.path) or {}).get(set_name) or {}).get("per_maze") or {}
    if family == "exact_pass" and per.get("exact_p") is not None:
        return exact_pass_at_k(np.array(per["exact_p"]), int(k)), per.get("mazes_hash", "")
    if family == "pass" and per.get("successes") and int(k) <= per["n"]:
        values = pass_at_k(per["n"], np.array(per["successes"]), int(k))
        return np.atleast_1d(values), per.get("mazes_hash", "")
    return None


def paired_matrix(pairs: list[tuple[Run, Run]], col: str) -> np.ndarray:
    """`[S, M]` differences B - A per seed and maze, or `[S, 1]` of the final values where
    any run lacks per-maze values or the runs were evaluated on different mazes."""
    per = [(per_maze_values(a, col), per_maze_values(b, col)) for a, b in pairs]
    if all(x and y and len(x[0]) == len(y[0]) and x[1] == y[1] for x, y in per):
        return np.stack([y[0] - x[0] for x, y in per])
    return np.array([[b.metrics["final"][col] - a.metrics["final"][col]] for a, b in pairs])


def _same(value: str, reference: str) -> bool:
    try:
        return float(value) == float(reference)
    except ValueError:
        return value == reference


def paired_comparisons(runs: list[Run], cols: list[str]) -> list[dict]:
    """For each key of PAIRED_KEYS that the sweep varies: every group against the group that
    differs from it only in that key and has the reference value (gamma = 0, GRPO; else the
    smallest value), runs paired by seed. Each entry: `key`, `group`, `reference` (group
    labels as in the table) and `diffs` {headline column: PairedDiff}."""
    keys = swept_keys(runs)
    finished = [r for r in runs if r.metrics is not None]
    out = []
    for key, preferred in PAIRED_KEYS.items():
        if key not in keys:
            continue
        others = [k for k in keys if k not in (key, "seed")]
        cells: dict = defaultdict(lambda: defaultdict(dict))  # rest -> value -> seed -> run
        for r in finished:
            rest = tuple(r.overrides.get(k, "-") for k in others)
            cells[rest][r.overrides.get(key, "-")][r.overrides.get("seed", "-")] = r
        for rest in sorted(cells, key=lambda x: _natural(",".join(x))):
            by_value = cells[rest]
            values = sorted(by_value, key=_natural)
            ref = next((v for v in values if _same(v, preferred)), values[0])
            for value in values:
                seeds = sorted(set(by_value[ref]) & set(by_value[value]), key=_natural)
                pairs = [(by_value[ref][s], by_value[value][s]) for s in seeds]
                if value == ref or not pairs:
                    continue
                cols_here = [
                    c
                    for c in headline(cols)
                    if all(c in r.metrics["final"] for p in pairs for r in p)
                ]
                if not cols_here:
                    continue
                out.append(
                    {
                        "key": key,
                        "group": group_label(pairs[0][1], keys),
                        "reference": group_label(pairs[0][0], keys),
                        "diffs": {c: paired_difference(paired_matrix(pairs, c)) for c in cols_here},
                    }
                )
    return out


def paired_markdown(cols: list[str], paired: list[dict]) -> list[str]:
    """One table per compared key and evaluation set."""
    if not paired:
        return []
    lines = [
        "## Paired differences",
        "",
        "Each group minus the group that differs from it only in the compared key (reference: "
        "gamma = 0, GRPO), runs paired by seed and, where the evaluations saved per-maze values, "
        "by evaluation maze. 95% t interval: variance = var over seeds of the per-seed mean "
        "difference / seeds + var over mazes of the seed-averaged per-maze difference / mazes, "
        "Welch-Satterthwaite degrees of freedom; n/a with one seed.",
        "",
    ]
    for key in PAIRED_KEYS:
        entries = [e for e in paired if e["key"] == key]
        sets = sorted({c.split("/")[1] for e in entries for c in e["diffs"]})
        for set_name in sets:
            section = [c for c in headline(cols) if c.split("/")[1] == set_name]
            heads = ["Δ" + c.split("/")[-1] for c in section]
            lines += [f"### {key}, {set_name}", ""]
            lines += table_head(["group", "against", "seeds", "mazes", *heads])
            for e in entries:
                diffs = [e["diffs"].get(c) for c in section]
                first = next((d for d in diffs if d is not None), None)
                if first is None:
                    continue
                cells = [d.text() if d is not None else "-" for d in diffs]
                lines.append(
                    f"| {e['group']} | {e['reference']} | {first.seeds} | {first.mazes} | "
                    + " | ".join(cells)
                    + " |"
                )
            lines.append("")
    return lines


def table_head(columns: list[str]) -> list[str]:
    """A markdown table's header line and rule."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def markdown(cols: list[str], rows: list[dict], runs: list[Run], paired: list[dict] = ()) -> str:
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
            lines += [f"### {name}", "", *table_head(["group", "seeds", *heads])]
            for row in rows:
                one = row["n_seeds"] < 2
                cells = [
                    f"{row[c][0]:.3f} ± {'n/a' if one else f'{row[c][1]:.3f}'}" for c in section
                ]
                lines.append(f"| {row['group']} | {row['n_seeds']} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += paired_markdown(cols, list(paired))
    missing = [r for r in runs if r.metrics is None]
    if missing:
        lines += [f"Missing or unfinished runs ({len(missing)}):"]
        lines += [f"- {r.path.name}: {r.problem}" for r in missing]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_csv(path: Path, cols: list[str], rows: list[dict], paired: list[dict] = ()) -> None:
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


def events(run: Run) -> EventAccumulator | None:
    """The run's TensorBoard events, read once per summary (every scalar; the last picture of
    each image tag), or None without a `tb/` folder."""
    tb = run.path / "tb"
    if not tb.is_dir():
        return None
    stamp = tuple((p.name, p.stat().st_size) for p in sorted(tb.glob("events.*")))
    return _load_events(tb, stamp)


@functools.lru_cache(maxsize=64)
def _load_events(tb: Path, stamp: tuple) -> EventAccumulator:
    """`stamp` (event files and sizes) keys the cache, so a grown run is read again."""
    acc = EventAccumulator(str(tb), size_guidance={"scalars": 0, "images": 1})
    acc.Reload()
    return acc


def read_curves(run: Run, tags: tuple[str, ...]) -> dict[str, list[tuple[int, float]]]:
    acc = events(run)
    if acc is None:
        return {}
    present = set(acc.Tags()["scalars"])
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in tags if t in present}


def final_pictures(run: Run) -> dict[str, np.ndarray]:
    """`{set: (H, W, 3) picture}`: the first behaviour picture (`images/<set>/0`, drawn by
    `mazerl.envs.render.render_behaviour`) of the run's last evaluation."""
    acc = events(run)
    if acc is None:
        return {}
    out = {}
    for tag in acc.Tags()["images"]:
        _, name, index = tag.split("/")
        if index == "0":
            png = acc.Images(tag)[-1].encoded_image_string  # the reservoir keeps the last
            out[name] = plt.imread(io.BytesIO(png), format="png")
    return out


def plot_behaviour(sweep: Path, finished: list[Run], keys: list[str]) -> Path | None:
    """`behaviour.png`: for each group (its first seed) and evaluation set, the behaviour
    picture of the first maze at the final evaluation, as TensorBoard shows it."""
    groups = group_runs(finished, keys)
    rows = {label: final_pictures(groups[label][0]) for label in sorted(groups, key=_natural)}
    rows = {label: pics for label, pics in rows.items() if pics}
    if not rows:
        return None
    sets = sorted({s for pics in rows.values() for s in pics})
    fig, axes = plt.subplots(
        len(rows), len(sets), figsize=(4.2 * len(sets), 2.6 * len(rows)), squeeze=False
    )
    for ax_row, (label, pics) in zip(axes, rows.items(), strict=True):
        for ax, s in zip(ax_row, sets, strict=True):
            if s in pics:
                ax.imshow(pics[s])
            ax.set_axis_off()
        ax_row[0].set_title(label, fontsize=8, loc="left")
    for ax, s in zip(axes[0], sets, strict=True):
        ax.set_title(f"{s}\n", fontsize=9)  # above the first row's group label
    footer(fig, sweep)
    fig.tight_layout()
    return save_figure(fig, sweep / "behaviour.png")


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
    """Mean over seeds +- standard error (a band), each seed smoothed over `window` points."""
    steps = sorted({s for one in series for s, _ in one})
    table = np.full((len(series), len(steps)), np.nan)
    index = {s: i for i, s in enumerate(steps)}
    for j, one in enumerate(series):
        for s, v in one:
            table[j, index[s]] = v
        table[j] = smooth(table[j], window)
    mean = np.nanmean(table, 0)
    se = np.nanstd(table, 0, ddof=1) / np.sqrt(len(series)) if len(series) > 1 else 0 * mean
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


def footer(fig, sweep: Path) -> None:
    """The command that drew the figure, at its bottom left."""
    fig.text(0.005, 0.005, f"mazerl-summarize {sweep}", fontsize=6, color="0.45")


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


def errorbars_vs_n(ax, by_method: dict[str, dict[int, list[float]]], palette=None) -> None:
    """One line per method: mean +- standard error over seeds at each N; a log N axis with
    a tick at each N (set here: setting the scale afterwards would reset the ticks)."""
    for method, by_n in sorted(by_method.items()):
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


def first_set(cols: list[str]) -> str:
    """The in-distribution set (`id`), else the first evaluation set."""
    sets = sorted({c.split("/")[1] for c in cols if c.startswith("eval/")})
    return "id" if "id" in sets else sets[0]


def plot_pass_at_k(sweep: Path, finished: list[Run], keys: list[str], cols: list[str]) -> Path:
    """pass@k versus k per group, one panel per evaluation set (exact where logged)."""
    sets = sorted({c.split("/")[1] for c in cols if c.startswith("eval/")})
    groups = group_runs(finished, keys)
    palette = colours(sorted(groups, key=_natural))
    fig, axes = plt.subplots(1, len(sets), figsize=(4.5 * len(sets), 4.2), squeeze=False)
    for ax, s in zip(axes[0], sets, strict=True):
        family = headline([c for c in cols if c.split("/")[1] == s])[0].split("/")[2]
        prefix = f"eval/{s}/{family.split('@')[0]}@"
        for label in sorted(groups, key=_natural):
            finals = [r.metrics["final"] for r in groups[label]]
            ks = logged_ks(finals, prefix)
            means = [mean_se([f.get(f"{prefix}{k}") for f in finals])[0] for k in ks]
            ax.plot(ks, means, marker=".", label=label, color=palette[label], lw=1.2)
        base = finished[0].metrics.get("base", {})
        bks = logged_ks([base], prefix)
        if bks:
            ax.plot(bks, [base[f"{prefix}{k}"] for k in bks], "k--", label="base model")
        ax.set(xscale="log", xlabel="k", ylabel=prefix.split("/")[-1] + "k", title=s)
    outside_legend(fig, axes)
    footer(fig, sweep)
    path = sweep / "pass_at_k.png"
    return save_figure(fig, path)


def plot_curves(sweep: Path, finished: list[Run], keys: list[str], cols: list[str]) -> Path:
    """The paper's Fig. 7: one row per group size N (one row when N is not swept); columns
    train reward (each seed smoothed over 1/25 of the run), eval pass@1 and eval exact
    pass@K for the largest logged K (2048 in the study presets) against iteration; one line
    per method with a seed band (+- standard error)."""
    n_key = next((k for k in N_KEYS if k in keys), None)
    s = first_set(cols)
    exact_ks = logged_ks([r.metrics["final"] for r in finished], f"eval/{s}/exact_pass@")
    pass1 = f"eval/{s}/exact_pass@1" if 1 in exact_ks else f"eval/{s}/pass@1"
    panels = [("train reward (smoothed)", ("train/reward_mean", "train/success_rate"), True)]
    panels.append((f"eval {pass1.split('/')[2].replace('_', ' ')} ({s})", (pass1,), False))
    if exact_ks and exact_ks[-1] > 1:
        big = f"eval/{s}/exact_pass@{exact_ks[-1]}"
        panels.append((f"eval exact pass@{exact_ks[-1]} ({s})", (big,), False))
    tags = tuple(t for _, ts, _ in panels for t in ts)
    curves = {r.path: read_curves(r, tags) for r in finished}
    ns = sorted({int(r.overrides.get(n_key, 0)) if n_key else 0 for r in finished})
    methods = sorted({method_label(r, keys, n_key) for r in finished}, key=_natural)
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
                    if method_label(r, keys, n_key) == method
                    and (not n_key or int(r.overrides.get(n_key, 0)) == n)
                ]
                series = []
                for r in members:
                    tag = next((t for t in options if t in curves[r.path]), None)
                    if tag is not None:
                        series.append(curves[r.path][tag])
                if series:
                    window = max(1, len(series[0]) // 25) if smoothed else 1
                    _band(ax, series, method, palette[method], window)
            ax.set_title(title if i == 0 else "", fontsize=9)
            ax.grid(alpha=0.3)
            ax.ticklabel_format(axis="y", useOffset=False)
            if j == 0 and n_key:
                ax.set_ylabel(f"N = {n}")
            if i == len(ns) - 1:
                ax.set_xlabel("iteration")
    outside_legend(fig, axes)
    footer(fig, sweep)
    path = sweep / "curves.png"
    return save_figure(fig, path)


def plot_neglog_vs_n(
    sweep: Path, finished: list[Run], keys: list[str], n_key: str, cols: list[str]
) -> Path | None:
    """The paper's Fig. 6: -log pass@K against N (log axes) for K = 1, 128, 1024, 2048 (exact
    values, those logged), one line per method, mean +- standard error over seeds. A pass@K
    of 1 (to float precision) is drawn at 1e-6."""
    s = first_set(cols)
    logged = logged_ks([r.metrics["final"] for r in finished], f"eval/{s}/exact_pass@")
    ks = [k for k in FIG6_KS if k in logged]
    if not ks:
        return None
    methods = sorted({method_label(r, keys, n_key) for r in finished}, key=_natural)
    palette = colours(methods)
    fig, axes = plt.subplots(1, len(ks), figsize=(3.6 * len(ks), 3.9), squeeze=False)
    for ax, k in zip(axes[0], ks, strict=True):

        def neglog(r: Run, col=f"eval/{s}/exact_pass@{k}") -> float:
            return max(-math.log(max(r.metrics["final"][col], 1e-300)), 1e-6)

        errorbars_vs_n(ax, by_method_and_n(finished, keys, n_key, neglog), palette)
        ax.set(yscale="log", xlabel="group size N", title=f"K = {k}")
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel(f"-log exact pass@K ({s})")
    outside_legend(fig, axes)
    footer(fig, sweep)
    path = sweep / "neglog_pass_vs_n.png"
    return save_figure(fig, path)


def plot_maze(sweep: Path, runs: list[Run], cols: list[str]) -> list[Path]:
    finished = [r for r in runs if r.metrics is not None]
    keys = swept_keys(runs)
    out = [plot_pass_at_k(sweep, finished, keys, cols), plot_curves(sweep, finished, keys, cols)]
    pictures = plot_behaviour(sweep, finished, keys)
    out += [pictures] if pictures else []
    n_key = next((k for k in N_KEYS if k in keys), None)
    if n_key is None:
        return out
    fig6 = plot_neglog_vs_n(sweep, finished, keys, n_key, cols)
    out += [fig6] if fig6 else []
    # the largest k versus N, per method, with the tail-miss curve as a regime guide
    s = first_set(cols)
    metric = max(
        (c for c in headline(cols) if c.split("/")[1] == s), key=lambda c: int(c.split("@")[1])
    )
    by_method = by_method_and_n(finished, keys, n_key, lambda r: r.metrics["final"].get(metric))
    palette = colours(sorted(by_method, key=_natural))
    fig, ax = plt.subplots(figsize=(6.5, 4.4))
    errorbars_vs_n(ax, by_method, palette)
    p = finished[0].metrics.get("base", {}).get(f"eval/{s}/success_rate")
    if p is not None and 0 < p < 1:
        ns = np.unique(np.logspace(0, 8, 200, base=2).astype(int))
        twin = ax.twinx()
        twin.plot(ns, tail_miss(ns, p, 0.1 * p), "k:", label="Pr(B_tau)")
        twin.set_ylabel(f"tail miss Pr(B_tau) at p = {p:.2f}, tau = 0.1 p (dotted)", fontsize=8)
    ax.set(xlabel="group size N", ylabel=metric)
    outside_legend(fig, [ax])
    footer(fig, sweep)
    out.append(sweep / "pass_vs_n.png")
    save_figure(fig, out[-1])
    return out


def plot_routes(sweep: Path, runs: list[Run]) -> Path:
    """Rare-route mass over training per group (seed bands) and routes retained versus N."""
    finished = [r for r in runs if r.metrics is not None]
    keys = swept_keys(runs)
    groups = group_runs(finished, keys)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    palette = colours(sorted(groups, key=_natural))
    for label in sorted(groups, key=_natural):
        curves = [read_curves(r, ("routes/train_rare_mass",)) for r in groups[label]]
        series = [c["routes/train_rare_mass"] for c in curves if "routes/train_rare_mass" in c]
        if series:  # one value per iteration: smoothed over 1/25 of the run, as in curves.png
            _band(axes[0], series, label, palette[label], max(1, len(series[0]) // 25))
    axes[0].set(
        xlabel="iteration",
        ylabel="exact mass of base-rare routes",
        title="rare-route mass over training (smoothed)",
    )
    axes[0].legend(fontsize=7)
    n_key = next((k for k in N_KEYS if k in keys), None)

    def retained(r: Run) -> float:
        config = yaml.safe_load((r.path / ".hydra" / "config.yaml").read_text())
        return config["maze"]["routes"] - r.metrics["final"]["routes/id/forgotten"]

    errorbars_vs_n(axes[1], by_method_and_n(finished, keys, n_key, retained))
    axes[1].set(
        xlabel="group size N",
        ylabel="routes per maze not forgotten",
        title="routes retained",
    )
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    path = sweep / "routes.png"
    return save_figure(fig, path)


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
        ax.set(xlabel="group size N", title=f"final {col}")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = sweep / "final_vs_n.png"
    save_figure(fig, path)
    return [path]


def summarize(sweep: Path) -> str:
    if not sweep.is_dir():
        raise UserError(f"sweep dir {sweep} does not exist")
    runs = find_runs(sweep)
    if not runs:
        raise UserError(f"no runs under {sweep} (looked for folders with a .hydra/ config)")
    cols, rows = aggregate(runs)
    paired = paired_comparisons(runs, cols) if rows else []
    text = markdown(cols, rows, runs, paired)
    (sweep / "summary.md").write_text(text)
    write_csv(sweep / "summary.csv", cols, rows, paired)
    if rows:
        if any(c.startswith("eval/") for c in cols):
            plot_maze(sweep, runs, cols)
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
