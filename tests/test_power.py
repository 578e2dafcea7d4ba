"""How many base models (mazerl.analysis.power): variance components recovered from synthetic
paired differences with known components, and the number of base models by hand."""

import json
import math

import numpy as np
import pytest
from test_paired import fake_run

from mazerl.analysis import summarize
from mazerl.analysis.power import (
    Components,
    bases_needed,
    components,
    design_variance,
    half_width,
    two_seeds_range,
)
from mazerl.train.bank import INDEX

# t quantiles (0.975) from a t table
T975 = {1: 12.7062, 2: 4.3027, 11: 2.2010, 16: 2.1199, 17: 2.1098, 23: 2.0687}


def nested(rng, bases, seeds, mazes, s_base, s_rl, s_maze, s_res):
    """`[bases * seeds, mazes]` differences mu + beta_base + rho_unit + b_maze + e and each
    unit's base label."""
    beta = np.repeat(rng.normal(0, s_base, bases), seeds)  # [U]
    rho = rng.normal(0, s_rl, bases * seeds)  # [U]
    b = rng.normal(0, s_maze, mazes)  # [M]
    e = rng.normal(0, s_res, (bases * seeds, mazes))
    return 0.03 + (beta + rho)[:, None] + b[None, :] + e, np.repeat(np.arange(bases), seeds)


def test_components_recover_base_rl_maze_and_residual_variances():
    # 600 base models x 3 RL seeds x 400 mazes. Relative standard errors (chi-square, sqrt(2 /
    # df) and the noise the other terms add): base ~0.07, RL ~0.045, maze ~0.075, residual
    # ~0.002; the tolerances are about 4 of them.
    d, bases = nested(np.random.default_rng(7), 600, 3, 400, 0.08, 0.05, 0.06, 0.2)
    c = components(d, bases)
    assert c.separable and (c.bases, c.units, c.mazes) == (600, 1800, 400)
    assert c.base == pytest.approx(0.08**2, rel=0.25)
    assert c.rl == pytest.approx(0.05**2, rel=0.2)
    assert c.maze == pytest.approx(0.06**2, rel=0.3)
    assert c.residual == pytest.approx(0.2**2, rel=0.01)
    assert c.unit == pytest.approx(c.base + c.rl)
    assert c.mean == pytest.approx(0.03, abs=0.015)  # the maze mean: sd 0.06 / sqrt(400)


def test_components_with_one_rl_seed_per_base_model_give_their_sum_only():
    # 400 units x 300 mazes, unit sd 0.07 (relative se of s2_unit ~ sqrt(2 / 399) = 0.07)
    d, bases = nested(np.random.default_rng(3), 400, 1, 300, 0.05, 0.049, 0.03, 0.25)
    c = components(d, bases)
    assert not c.separable and math.isnan(c.base) and math.isnan(c.rl)
    assert c.unit == pytest.approx(0.05**2 + 0.049**2, rel=0.3)
    assert c.residual == pytest.approx(0.25**2, rel=0.01)
    assert components(d).unit == c.unit  # no labels: one base model per unit


def test_components_by_hand():
    d = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.4]])  # 2 units x 3 mazes
    # unit means 0.2, 0.3: var 0.005; maze means 0.2, 0.2, 0.35: var 0.0075; residuals +-0.05
    # (four) and 0 (two): MS_res = 0.01 / 2 = 0.005
    c = components(d)
    assert c.residual == pytest.approx(0.005)
    assert c.unit == pytest.approx(0.005 - 0.005 / 3)
    assert c.maze == pytest.approx(0.0075 - 0.005 / 2)
    # 2 base models x 2 RL seeds, set-level values: base means 0.2 and 0.7 (variance 0.125),
    # pooled within-base variance ((0.1^2) * 4) / 2 = 0.02, so s2_rl = 0.02 and
    # s2_base = 0.125 - (1/2) 0.02 = 0.115
    c = components(np.array([[0.1], [0.3], [0.6], [0.8]]), ["a", "a", "b", "b"])
    assert (c.rl, c.base, c.maze, c.residual) == pytest.approx((0.02, 0.115, 0.0, 0.0))
    # unequal seeds: base a has 3 units (0.1, 0.2, 0.3), b has 1 (0.8): W = 0.02 / 2 = 0.01
    # on 2 df; base means 0.2, 0.8: var 0.18; mean(1 / R) = (1/3 + 1) / 2 = 2/3
    c = components(np.array([[0.1], [0.2], [0.3], [0.8]]), ["a", "a", "a", "b"])
    assert c.rl == pytest.approx(0.01)
    assert c.base == pytest.approx(0.18 - 2 / 3 * 0.01)


def one_seed(unit=0.0, maze=0.0, residual=0.0, mazes=1024) -> Components:
    return Components(0.0, unit, math.nan, math.nan, maze, residual, 3, 3, mazes)


def test_bases_needed_by_hand():
    # unit sd 0.1 only: half-width t(K - 1) 0.1 / sqrt(K); K = 17: 2.1199 * 0.1 / 4.1231 =
    # 0.0514 > 0.05; K = 18: 2.1098 * 0.1 / 4.2426 = 0.0497
    c = one_seed(unit=0.01)
    assert half_width(c, 17) == pytest.approx(T975[16] * 0.1 / math.sqrt(17), rel=1e-4)
    assert half_width(c, 18) == pytest.approx(T975[17] * 0.1 / math.sqrt(18), rel=1e-4)
    assert bases_needed(c, 0.05) == 18
    # residual only (unit component estimated at zero): var = 0.04 / (1000 K), and the base
    # model keeps its K - 1 degrees of freedom: K = 2: 12.706 * 0.006325 / 1.414 = 0.057 >
    # 0.05; K = 3: 4.3027 * 0.006325 / 1.732 = 0.0157
    c = one_seed(residual=0.04, mazes=1000)
    assert half_width(c, 2) == pytest.approx(T975[1] * math.sqrt(0.04 / 2000), rel=1e-4)
    assert bases_needed(c, 0.05) == 3
    # the maze term alone: 1.96 sqrt(0.0008 / 1) = 0.055 > 0.05 at any K
    assert bases_needed(one_seed(unit=0.01, maze=0.0008, mazes=1), 0.05) is None


def test_one_rl_seed_per_base_model_is_best_for_a_fixed_number_of_runs():
    c = Components(0.0, 0.005, 0.004, 0.001, 0.0009, 0.06, 5, 10, 1024)
    # Var = s2_base / K + s2_rl / (K R) + s2_maze / M + s2_res / (K R M)
    by_hand = 0.004 / 12 + 0.001 / 24 + 0.0009 / 1024 + 0.06 / (24 * 1024)
    assert design_variance(c, 12, 2) == pytest.approx(by_hand)
    assert half_width(c, 12, 2) == pytest.approx(T975[11] * math.sqrt(by_hand), rel=1e-4)
    widths = [half_width(c, 24 // r, r) for r in (1, 2, 3, 4)]  # 24 runs each
    assert widths == sorted(widths) and widths[0] < widths[1]
    assert two_seeds_range(c, 24) == pytest.approx((widths[1], widths[1]))
    # not separable: from all of s2_unit = 0.005 being RL (12 x 2: same variance as 24 x 1,
    # 11 df) to all of it being the base model's (0.005 / 12)
    c = one_seed(unit=0.005, residual=0.06)
    rest = 0.06 / (24 * 1024)
    lo, hi = two_seeds_range(c, 24)
    assert lo == pytest.approx(T975[11] * math.sqrt(0.005 / 24 + rest), rel=1e-4)
    assert hi == pytest.approx(T975[11] * math.sqrt(0.005 / 12 + rest), rel=1e-4)
    assert half_width(c, 24) == pytest.approx(T975[23] * math.sqrt(0.005 / 24 + rest), rel=1e-4)
    assert half_width(c, 24) < lo
    with pytest.raises(ValueError, match="not separable"):
        design_variance(c, 12, 2)


def test_summary_says_how_many_base_models_reach_five_points(tmp_path):
    # gamma 0.5 minus gamma 0 is the seed's shift on every maze: 0, +0.1, +0.2 (sd 0.1), no
    # maze or residual part: K = 18 (above), half-width now t(2) sqrt(0.01 / 3) = 0.2484
    sweep = tmp_path / "sweep"
    base = np.linspace(0.1, 0.6, 12)
    for seed, shift in enumerate((0.0, 0.1, 0.2)):
        for gamma, p in (("0", base), ("0.5", base + shift)):
            overrides = [f"focal.gamma={gamma}", f"seed={seed}"]
            fake_run(sweep, f"g{gamma}_s{seed}", overrides, p, tb=False)
    text = summarize(sweep)
    section = text.split("## How many base models (to reach ±5 points)")[1].split("\n## ")[0]
    row = next(x for x in section.splitlines() if x.startswith("| focal.gamma=0.5"))
    cells = [x.strip() for x in row.strip("|").split("|")]
    # group, against, units, mazes, Δ, sd unit, sd base / RL, sd maze, sd residual, ± now,
    # K, ± at K, same runs with 2 RL seeds
    assert cells[2:11] == ["3", "12", "+10.0", "10.0", "n/a", "0.0", "0.0", "24.8", "18"]
    assert cells[11] == f"{100 * T975[17] * 0.1 / math.sqrt(18):.1f}"


def test_summary_separates_base_models_from_rl_seeds_on_bank_runs(tmp_path, monkeypatch):
    # 3 bank models x 2 RL seeds; the difference is constant over mazes: 0, 0.02 | 0.10, 0.12 |
    # 0.20, 0.22. Within a bank model: variance 0.0002 (each pair) -> s2_rl = 0.0002 (1.4
    # points); bank-model means 0.01, 0.11, 0.21: variance 0.01 -> s2_base = 0.01 - 0.0002 / 2
    # = 0.0099 (9.9 points)
    bank = tmp_path / "bank"
    bank.mkdir()
    models = [{"seed": k, "key": f"key{k}", "sha256": f"sha{k}", "file": "-"} for k in range(3)]
    (bank / INDEX).write_text(json.dumps({"models": models}))
    monkeypatch.setattr("mazerl.analysis.power.BANK_DIR", bank)
    sweep = tmp_path / "sweep"
    base = np.linspace(0.1, 0.6, 12)
    for seed, shift in enumerate((0.0, 0.02, 0.10, 0.12, 0.20, 0.22)):
        for gamma, p in (("0", base), ("0.5", base + shift)):
            overrides = [f"focal.gamma={gamma}", f"seed={seed}"]
            run = fake_run(sweep, f"g{gamma}_s{seed}", overrides, p, tb=False)
            metrics = json.loads((run / "metrics.json").read_text())
            k = seed // 2
            metrics["base_model"] = {"source": "bank", "key": f"key{k}", "sha256": f"sha{k}"}
            (run / "metrics.json").write_text(json.dumps(metrics))
    text = summarize(sweep)
    section = text.split("## How many base models (to reach ±5 points)")[1].split("\n## ")[0]
    row = next(x for x in section.splitlines() if x.startswith("| focal.gamma=0.5"))
    cells = [x.strip() for x in row.strip("|").split("|")]
    assert cells[2:7] == ["3 x 2", "12", "+11.0", f"{100 * math.sqrt(0.0099 + 0.0002):.1f}",
                          "9.9 / 1.4"]  # fmt: skip
    # K for one RL seed each: t(K - 1) sqrt(0.0101 / K) <= 0.05 -> K = 18 (as for 0.01:
    # K = 17 gives 2.1199 * 0.02437 = 0.0517, K = 18 gives 2.1098 * 0.02369 = 0.0500)
    assert T975[17] * math.sqrt(0.0101 / 18) <= 0.05 < T975[16] * math.sqrt(0.0101 / 17)
    assert cells[10] == "18"
