"""What in a base model decides the gain: features of each bank model measured before RL, and
the per-base-model gains of a study (a method minus GRPO, same bank model and group size N)
regressed on them.

Features (`p_features`, `mean_entropy`), from the base model's exact per-maze success
probabilities p_m on the 1,024 ID mazes of the studies' evaluation (`experiment=maze_long`'s
`id` set) and its own samples there:

- `exact_pass@k` (k = 1, 256, 2048): mean over mazes of 1 - (1 - p_m)^k;
- `p_q10` ... `p_q90`: quantiles of p_m;
- `tail@N` (N = 8, 32): the fraction of mazes with p_m < 1/N, the tail whose groups of N
  samples expect less than one success: the mazes the paper's theory says GRPO forgets;
- `tail_mass@N`: tau_N = mean_m p_m [p_m < 1/N], the correct mass on those mazes;
- `tail_loss@N`, the categorical theory's predicted focal gain score: tau_N Pr(B_tau_N) with
  Pr(B_tau) = (1 - tau)^N - (1 - p)^N - (p - tau)^N (Lemma 3.1, `mazerl.algos.tail_miss`)
  at p = exact pass@1. The reading: the base model's policy over the ID distribution is one
  categorical answer distribution (answers: a maze and a route; correct mass p), whose rare
  correct region is the correct answers on tail mazes (mass tau_N). Pr(B_tau) is the
  chance that a group of N answers gives GRPO a non-zero update (mixed rewards) that samples
  no rare correct answer; such an update raises the sampled answers' logits and, through the
  softmax, lowers the rare mass in proportion to it. tau Pr(B_tau) is therefore, to first
  order and up to the step size, the rare correct mass GRPO loses per update: what focal
  weighting (which shrinks the high-success updates) can save. A simplification: a training
  group is N samples of one maze, not N draws from all mazes;
- `entropy`: the mean per-token entropy (nats) of the policy's action distribution over the
  tokens of its own samples (`samples` per ID maze, at the evaluation temperature).

`mazerl/bank/features.json` holds them for every bank model (`python
experiments/bank_features.py`), so a study's summary needs no model. A study adds the section
"What in a base model decides the gain" (and `base_models.png`) by naming it in its sweep
folder's `study.yaml`:

    sections:
      - ../../studies/bank/sections.py:base_models
"""

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy import stats

from mazerl.algos.tail_miss import tail_miss
from mazerl.analysis.figures import Output, colours, footer, save_figure
from mazerl.analysis.leaderboard import bank_model
from mazerl.analysis.runs import Run
from mazerl.analysis.study import Summary
from mazerl.analysis.tables import table_head
from mazerl.core.config import to_container
from mazerl.core.streams import STREAM_EVAL_SAMPLING, torch_generator
from mazerl.envs.spec import MazeSpec
from mazerl.eval.evaluate import build_sets, exact_route_masses, mazes_hash
from mazerl.eval.metric_names import Metric
from mazerl.eval.passk import exact_pass_at_k
from mazerl.rollout import generate, score
from mazerl.train.bank import BANK_DIR, bank_index
from mazerl.train.sft import load_base

FEATURES = "features.json"
GROUP_SIZES = (8, 32)
PASS_KS = (1, 256, 2048)
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
GAIN = Metric("exact_pass", "id", 1)  # the gain regressed: exact ID pass@1, method minus GRPO
REGRESSORS = ("exact_pass@1", "exact_pass@256", "tail@{n}", "entropy", "tail_loss@{n}")
PREDICTED = "tail_loss@{n}"  # the theory's score, ranked against the measured gains


def tail_loss(p: np.ndarray, n: int) -> float:
    """tau Pr(B_tau) at group size `n` from the per-maze success probabilities `p[M]`:
    p = mean p_m, tau = mean_m p_m [p_m < 1/n] (the module's docstring says why)."""
    p = np.asarray(p, dtype=np.float64)
    tau = float(np.where(p < 1 / n, p, 0.0).mean())
    return tau * float(tail_miss(n, p.mean(), tau))


def p_features(p: np.ndarray) -> dict[str, float]:
    """The features of one base model that its per-maze exact success probabilities `p[M]`
    decide (exact pass@k, quantiles, tail fractions and masses, the predicted score)."""
    p = np.asarray(p, dtype=np.float64)
    out = {f"exact_pass@{k}": float(exact_pass_at_k(p, k).mean()) for k in PASS_KS}
    out |= {f"p_q{round(100 * q)}": float(np.quantile(p, q)) for q in QUANTILES}
    for n in GROUP_SIZES:
        out[f"tail@{n}"] = float((p < 1 / n).mean())
        out[f"tail_mass@{n}"] = float(np.where(p < 1 / n, p, 0.0).mean())
        out[f"tail_loss@{n}"] = tail_loss(p, n)
    return out


@torch.no_grad()
def mean_entropy(
    policy, mazes, samples: int, temperature: float, generator, device, chunk: int = 128
) -> float:
    """Mean per-token entropy (nats) of `policy` over every token of `samples` responses it
    samples for each maze (at `temperature`), in chunks of `chunk` mazes."""
    total, tokens = 0.0, 0.0
    for lo in range(0, len(mazes), chunk):
        part = mazes[lo : lo + chunk]
        r = generate(
            policy, part, samples, temperature=temperature, generator=generator, device=device
        )
        _, entropy = score(policy, r, temperature)  # [B, T], zero beyond each response
        total += float(entropy.sum())
        tokens += float(r.mask.sum())
    return total / tokens


def bank_features(cfg, folder: Path = BANK_DIR, samples: int = 16, log=print) -> dict:
    """The features of every bank model in `folder` (the module's docstring) on the ID set of
    `cfg` (the typed `experiment=maze_long` config: 1,024 mazes, eval.seed 1234), exact
    per-maze p by teacher forcing (as the evaluation computes it), entropy on `samples` samples
    per maze drawn from the evaluation's sampling stream of step 0. One torch thread; a few
    seconds a model."""
    torch.set_num_threads(1)
    device = torch.device("cpu")
    sets = build_sets(MazeSpec.of(cfg.maze), cfg.eval, log)
    index = next(i for i, s in enumerate(sets) if s.name == "id")
    mazes = sets[index].mazes
    models = []
    for entry in sorted(bank_index(folder).values(), key=lambda e: e["seed"]):
        policy, _ = load_base(folder / entry["file"], to_container(cfg.policy), device)
        mass, _ = exact_route_masses(policy, mazes, cfg.eval.temperature, device)
        p = mass.sum(-1).clip(max=1.0)
        generator = torch_generator(device, cfg.eval.seed, STREAM_EVAL_SAMPLING, 0, index)
        entropy = mean_entropy(policy, mazes, samples, cfg.eval.temperature, generator, device)
        row = {k: entry[k] for k in ("name", "seed", "key", "sha256")}
        models.append(row | p_features(p) | {"entropy": entropy})
        log(f"{entry['name']}: exact pass@1 {p.mean():.4f}, tail@8 {models[-1]['tail@8']:.3f}, "
            f"entropy {entropy:.4f}")  # fmt: skip
    return {
        "about": "features of the bank models before RL (experiments/studies/bank/sections.py)",
        "set": {"name": "id", "mazes": len(mazes), "mazes_hash": mazes_hash(mazes)},
        "entropy_samples": samples,
        "models": models,
    }


def read_features(path: Path | None = None) -> dict[str, dict]:
    """`{sha256: features}` of the bank models in `path` (None: the bank's features file;
    empty without the file)."""
    path = BANK_DIR / FEATURES if path is None else path
    if not path.is_file():
        return {}
    return {m["sha256"]: m for m in json.loads(path.read_text())["models"]}


@dataclass
class Fit:
    """A least-squares fit y = b0 + b1 x1 + ...: coefficients (intercept first) with their
    t intervals on n - (features + 1) degrees of freedom, and R^2."""

    coef: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    r2: float
    df: int


def least_squares(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> Fit:
    """Ordinary least squares of `y[n]` on `x[n, f]` (or `x[n]`) with an intercept; nan
    intervals without residual degrees of freedom."""
    x = np.asarray(x, dtype=np.float64).reshape(len(y), -1)
    y = np.asarray(y, dtype=np.float64)
    design = np.column_stack([np.ones(len(y)), x])  # [n, f + 1]
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    df = len(y) - design.shape[1]
    total = float(np.square(y - y.mean()).sum())
    r2 = 1 - float(np.square(resid).sum()) / total if total > 0 else float("nan")
    if df < 1:
        nan = np.full_like(coef, np.nan)
        return Fit(coef, nan, nan, r2, df)
    s2 = float(np.square(resid).sum()) / df
    se = np.sqrt(s2 * np.diag(np.linalg.pinv(design.T @ design)))
    half = stats.t.ppf(0.5 + level / 2, df) * se
    return Fit(coef, coef - half, coef + half, r2, df)


@dataclass
class BankStudy:
    """The runs of a study that started from bank models: `features` {sha256: features} of
    those bank models, `gains` {(method, N): {sha256: gain}} (exact ID pass@1, method minus
    GRPO at the same N from the same bank model, runs of one cell averaged), `missing` the
    bank models whose features the file lacks."""

    features: dict[str, dict]
    gains: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def bank_study(runs: list[Run], features_path: Path | None = None) -> BankStudy | None:
    """The study's bank models and gains (`BankStudy`), the features read from
    `features_path` (None: the bank's) and the index beside it; None where no finished run
    (or run read `at_step`) started from a bank model (`leaderboard.bank_model`: the cache key
    and sha256 its metrics.json records are a bank model's)."""
    features_path = BANK_DIR / FEATURES if features_path is None else features_path
    index = bank_index(features_path.parent)
    by_label = {f"bank model {e['seed']}": e for e in index.values()}
    known = read_features(features_path)
    cells: dict = defaultdict(lambda: defaultdict(list))  # (method, N) -> sha256 -> values
    used = set()
    for r in runs:
        if r.metrics is None or GAIN not in r.final:
            continue
        label, _ = bank_model(r, index)
        if label is None:
            continue
        sha = by_label[label]["sha256"]
        used.add(sha)
        cells[(r.method.name, r.n)][sha].append(r.final[GAIN])
    if not used:
        return None
    study = BankStudy({s: known[s] for s in used if s in known})
    names = {e["sha256"]: e["name"] for e in index.values()}
    study.missing = sorted(names[s] for s in used if s not in known)
    for (method, n), by_model in cells.items():
        grpo = cells.get(("GRPO", n), {})
        if method == "GRPO":
            continue
        both = [s for s in by_model if s in grpo and s in study.features]
        if both:
            study.gains[(method, n)] = {
                s: float(np.mean(by_model[s]) - np.mean(grpo[s])) for s in both
            }
    return study


def base_models(summary: Summary) -> list[str]:
    """The section (a `study.yaml` section): `base_models_markdown` of the summary's runs, and
    `base_models.png` (`plot_base_models`)."""
    study = bank_study(summary.runs)
    plot_base_models(summary.dest, study)
    return base_models_markdown(study)


def base_models_markdown(study: BankStudy | None) -> list[str]:
    """The section "What in a base model decides the gain": the features of the study's bank
    models, then per method and N the Spearman rank correlation of the predicted score with
    the measured gain and each feature's slope (alone, in points of gain per standard
    deviation of the feature across the bank models) with its 95% interval; with fewer than
    3 bank models it says so instead. Nothing where no run started from a bank model."""
    if study is None:
        return []
    lines = ["## What in a base model decides the gain", ""]
    if study.missing:
        lines += [
            f"Bank models without features in mazerl/bank/{FEATURES}: "
            f"{', '.join(study.missing)} (`python experiments/bank_features.py` measures "
            "them); left out below.",
            "",
        ]
    models = sorted(study.features.values(), key=lambda m: m["seed"])
    lines += [
        "Before RL, exact on the 1,024 ID mazes (experiments/studies/bank/sections.py "
        "defines each): tail@N = fraction of mazes with p < 1/N; tail_loss@N = tau Pr(B_tau) "
        "(Lemma 3.1 at p = pass@1, tau = correct mass on the tail mazes), the theory's "
        "predicted focal gain score; entropy in nats per token of the model's own samples.",
        "",
        *table_head(["bank model", "pass@1", "pass@256", "tail@8", "tail@32", "entropy",
                     "tail_loss@8", "tail_loss@32"]),
    ]  # fmt: skip
    for m in models:
        values = [m["exact_pass@1"], m["exact_pass@256"], m["tail@8"], m["tail@32"]]
        values += [m["entropy"], m["tail_loss@8"], m["tail_loss@32"]]
        lines.append(f"| {m['name']} | " + " | ".join(f"{v:.4f}" for v in values) + " |")
    lines.append("")
    if len(models) < 3:
        return [*lines, f"{len(models)} bank model(s): a regression needs at least 3.", ""]
    heads = [f.format(n="N") for f in REGRESSORS]
    lines += [
        "Per-base-model gain (exact ID pass@1, points: the method minus GRPO from the same bank "
        "model at the same N) against each feature alone: slope in points per standard "
        "deviation of the feature across the bank models, 95% t interval (n - 2 degrees of "
        f"freedom); ρ: Spearman's rank correlation of {PREDICTED.format(n='N')} with the gain "
        "(p-value).",
        "",
        *table_head(["method", "N", "models", "mean gain", "ρ (p)", *heads]),
    ]
    count = 0
    for (method, n), gains in sorted(
        study.gains.items(), key=lambda item: (item[0][1], item[0][0])
    ):
        if len(gains) < 3 or n not in GROUP_SIZES:  # features are measured at GROUP_SIZES
            lines.append(f"| {method} | {n} | {len(gains)} | - | - |" + " - |" * len(heads))
            continue
        shas = sorted(gains)
        y = 100 * np.array([gains[s] for s in shas])
        rho, p_value = stats.spearmanr(predicted(study, shas, n), y)
        cells = []
        for name in REGRESSORS:
            x = np.array([study.features[s][name.format(n=n)] for s in shas])
            if x.std() == 0:
                cells.append("-")
                continue
            fit = least_squares((x - x.mean()) / x.std(ddof=1), y)
            cells.append(f"{fit.coef[1]:+.1f} [{fit.lo[1]:+.1f}, {fit.hi[1]:+.1f}]")
            count += 1
        lines.append(
            f"| {method} | {n} | {len(gains)} | {y.mean():+.1f} | {rho:+.2f} ({p_value:.2f}) | "
            + " | ".join(cells) + " |"
        )  # fmt: skip
    return [*lines, "", f"{count} slope intervals in this table.", ""]


def predicted(study: BankStudy, shas: list[str], n: int) -> np.ndarray:
    """The theory's score (`PREDICTED` at group size `n`) of the bank models `shas`."""
    return np.array([study.features[s][PREDICTED.format(n=n)] for s in shas])


def plot_base_models(dest: Output, study: BankStudy | None) -> Path | None:
    """`base_models.png`: per group size N, each method's measured gain per bank model (points,
    labelled with the bank model's seed) against the predicted score, Spearman's rho in the
    legend; None with fewer than 3 bank models."""
    ns = sorted({n for _, n in study.gains if n in GROUP_SIZES}) if study else []
    if not ns or len(study.features) < 3:
        return None
    methods = sorted({m for m, _ in study.gains})
    palette = colours(methods)
    fig, axes = plt.subplots(1, len(ns), figsize=(5.2 * len(ns), 4.2), squeeze=False)
    for ax, n in zip(axes[0], ns, strict=True):
        for method in methods:
            gains = study.gains.get((method, n), {})
            if not gains:
                continue
            shas = sorted(gains)
            x, y = predicted(study, shas, n), 100 * np.array([gains[s] for s in shas])
            rho = stats.spearmanr(x, y)[0] if len(shas) >= 3 else math.nan
            ax.scatter(x, y, color=palette[method], s=18, label=f"{method} (ρ {rho:+.2f})")
            for s, xi, yi in zip(shas, x, y, strict=True):
                ax.annotate(str(study.features[s]["seed"]), (xi, yi), fontsize=6,
                            xytext=(2, 2), textcoords="offset points")  # fmt: skip
        ax.axhline(0, color="k", lw=0.6)
        ax.set(xlabel=f"predicted score {PREDICTED.format(n=n)}", ylabel="gain over GRPO, points",
               title=f"N = {n}: exact ID pass@1 gain per bank model")  # fmt: skip
        ax.legend(fontsize=7)
    footer(fig, dest)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return save_figure(fig, dest.folder / "base_models.png")
