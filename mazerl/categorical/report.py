"""The categorical study's report: plots of one run (`tail_miss.png`, `masses.png`) and,
for a sweep dir, the paper's Fig. 2 (`fig2.png`) with the regimes table (`regimes.md`,
`regimes.csv`); `PaperFigure` writes them when a sweep ends."""

import csv
import json
from pathlib import Path

import matplotlib
import numpy as np
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from mazerl.algos.tail_miss import active, peak_group_size, tail_miss
from mazerl.core.errors import ConfigError

matplotlib.use("Agg")
import matplotlib.pyplot as plt

RHOS = (0.01, 0.05, 0.1, 0.2)  # rare fraction of the correct mass, as the paper's Fig. 3
FIG2_NS = (2, 256, 8192, 131072)  # the group sizes of the paper's Fig. 2(a, b)
ZONE_M_RET = 0.5  # the concentration zone: final mean M_ret below this


def plot_tail_miss(p: float, n_obs: int, path: Path) -> None:
    n = np.unique(np.logspace(0, 17, 400).astype(int))
    fig, ax = plt.subplots(figsize=(6, 4))
    for rho in RHOS:
        peak = peak_group_size(p, rho * p)[0]
        ax.plot(n, tail_miss(n, p, rho * p), label=f"tau = {rho:g} p (peak N={peak})")
    ax.plot(n, active(n, p), "k:", label="Pr(active)")
    ax.axvline(n_obs, color="grey", lw=0.8)
    ax.set(
        xscale="log",
        xlabel="group size N",
        ylabel="probability",
        title=f"tail miss Pr(B_tau), p = {p:.3f}",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_masses(runs: dict[str, dict], path: Path, n: int) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    for label, out in runs.items():
        c = out["curves"]
        for ax, key in zip(axes, ("rare_mass", "q_pos", "m_ret"), strict=True):
            ax.plot(c["step"], c[key], label=label)
            ax.set(xlabel="step", title=key)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"group size N = {n}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def load_sweep(sweep: Path) -> dict[tuple[int, float], dict]:
    """`{(N, gamma): metrics.json}` for the finished runs under a sweep dir."""
    cells = {}
    for path in sorted(Path(sweep).glob("*/metrics.json")):
        m = json.loads(path.read_text())
        cells[(int(m["hparams"]["group_size"]), float(m["hparams"]["gamma"]))] = m
    return cells


def zone(cells: dict, gamma: float) -> tuple[int, int] | None:
    """(first, last) N whose final mean M_ret is below ZONE_M_RET at this gamma, or None."""
    ns = sorted(n for n, g in cells if g == gamma and cells[n, g]["final"]["m_ret"] < ZONE_M_RET)
    return (ns[0], ns[-1]) if ns else None


def curve_group_sizes(ns: list[int]) -> list[int]:
    """The paper's four N when the sweep has them, else four spread evenly on a log axis."""
    if set(FIG2_NS) <= set(ns):
        return list(FIG2_NS)
    return sorted({ns[round(i)] for i in np.linspace(0, len(ns) - 1, min(4, len(ns)))})


def regimes_table(cells: dict) -> tuple[str, list[dict]]:
    """Markdown table and CSV rows: final Q_pos and M_ret (mean over replicas, and M_ret's
    min-max over replicas) per N and gamma, with Pr(B_tau) at the initial p and tau."""
    ns = sorted({n for n, _ in cells})
    gammas = sorted({g for _, g in cells})
    theory = next(iter(cells.values()))["theory"]
    rows = []
    for (n, g), m in sorted(cells.items()):
        per = m["final_per_replica"]
        rows.append(
            {
                "N": n,
                "gamma": g,
                "tail_miss": float(tail_miss(n, theory["p"], theory["tau"])),
                "q_pos": m["final"]["q_pos"],
                "m_ret": m["final"]["m_ret"],
                "m_ret_min": min(per["m_ret"]),
                "m_ret_max": max(per["m_ret"]),
                "replicas": len(per["m_ret"]),
            }
        )
    head = "| N | Pr(B_tau) | " + " | ".join(
        f"Q_pos gamma {g:g} | M_ret gamma {g:g} (replica range)" for g in gammas
    )
    lines = [
        f"Initial p = {theory['p']:.4f}, tracked tau = {theory['tau']:.3g}; final values are "
        "means over replicas.",
        "",
        head + " |",
        "|---" * (2 + 2 * len(gammas)) + "|",
    ]
    by = {(r["N"], r["gamma"]): r for r in rows}
    for n in ns:
        cols = [f"{n}", f"{float(tail_miss(n, theory['p'], theory['tau'])):.4f}"]
        for g in gammas:
            r = by.get((n, g))
            if r is None:
                cols += ["-", "-"]
                continue
            spread = f"({r['m_ret_min']:.3f}-{r['m_ret_max']:.3f})"
            cols += [f"{r['q_pos']:.3f}", f"{r['m_ret']:.3f} {spread}"]
        lines.append("| " + " | ".join(cols) + " |")
    lines.append("")
    for g in gammas:
        z = zone(cells, g)
        where = f"N = {z[0]} ... {z[1]}" if z else "none"
        lines.append(f"Concentration zone (mean M_ret < {ZONE_M_RET:g}), gamma {g:g}: {where}.")
    return "\n".join(lines) + "\n", rows


def plot_fig2(cells: dict, path: Path) -> None:
    """The paper's Fig. 2: (a) Q_pos and (b) M_ret against step for four N (solid: the first
    gamma, dashed: the second); (c) final Q_pos and M_ret against N, the first gamma's
    concentration zone shaded, Pr(B_tau) at the initial p and tau on a second axis."""
    ns = sorted({n for n, _ in cells})
    gammas = sorted({g for _, g in cells})
    styles = dict(zip(gammas, ("-", "--", ":", "-."), strict=False))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for color, n in zip(("C0", "C1", "C2", "C3"), curve_group_sizes(ns), strict=False):
        for g in gammas:
            if (n, g) not in cells:
                continue
            c = next(iter(cells[n, g]["curves"].values()))
            for ax, key in zip(axes[:2], ("q_pos", "m_ret"), strict=True):
                ax.plot(c["step"], c[key], styles[g], color=color, label=f"N={n}, gamma={g:g}")
    axes[0].set(xlabel="step", ylabel="Q_pos", title="(a) total correct mass")
    axes[1].set(xlabel="step", ylabel="M_ret", title="(b) retained positive mass")
    axes[1].legend(fontsize=7)
    ax = axes[2]
    for g in gammas:
        sel = [n for n in ns if (n, g) in cells]
        for key, marker, color in (("q_pos", "o", "C0"), ("m_ret", "s", "C3")):
            y = [cells[n, g]["final"][key] for n in sel]
            ax.plot(sel, y, styles[g], marker=marker, color=color, label=f"{key}, gamma={g:g}")
    z = zone(cells, gammas[0])
    if z:  # half a log step beyond the first and last N in the zone
        ax.axvspan(z[0] / 2**0.5, z[1] * 2**0.5, color="grey", alpha=0.2, label="zone (II)")
    ax.set(xscale="log", xlabel="group size N", ylabel="final value", title="(c) step-final")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(fontsize=7, loc="center left")
    theory = next(iter(cells.values()))["theory"]
    dense = np.unique(np.logspace(0, np.log10(max(ns) * 1.5), 300).astype(int))
    twin = ax.twinx()
    twin.plot(dense, tail_miss(dense, theory["p"], theory["tau"]), "k:", lw=1)
    twin.set(ylabel=f"Pr(B_tau), p={theory['p']:.2f}, tau={theory['tau']:.2g} (dotted)")
    twin.set_ylim(-0.03, 1.03)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def paper_figure(sweep: Path | str) -> Path:
    """Write `fig2.png`, `regimes.md` and `regimes.csv` into a categorical sweep dir."""
    sweep = Path(sweep)
    cells = load_sweep(sweep)
    if not cells:
        raise ConfigError(f"no metrics.json under {sweep}/*/")
    text, rows = regimes_table(cells)
    (sweep / "regimes.md").write_text(text)
    with open(sweep / "regimes.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot_fig2(cells, sweep / "fig2.png")
    return sweep / "fig2.png"


class PaperFigure(Callback):
    """Hydra callback: `paper_figure(sweep dir)` when a multirun ends."""

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        sweep = paper_figure(config.hydra.sweep.dir).parent
        print((sweep / "regimes.md").read_text())
