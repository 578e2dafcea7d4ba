"""Paired comparisons in mazerl-summarize, against hand computations, and the paper's figures
from a fabricated sweep (real SummaryWriter events, metrics.json and eval/step_*.json)."""

import csv
import json
import math

import numpy as np
import pytest
import yaml
from scipy import stats
from torch.utils.tensorboard import SummaryWriter

from mazerl.analysis import summarize
from mazerl.analysis.stats import paired_difference
from mazerl.eval.passk import exact_pass_at_k

KS = (1, 8, 128, 256, 1024, 2048)


def fake_run(root, name, overrides, exact_p, iterations=20, curve_seed=0):
    """A finished run as the trainer leaves it: `.hydra/overrides.yaml`, TensorBoard events,
    `eval/step_*.json` with per-maze exact probabilities `exact_p` (id set), `metrics.json`
    whose exact pass@k are the means of the per-maze values."""
    run = root / name
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    p = np.asarray(exact_p, dtype=float)
    final = {f"eval/id/exact_pass@{k}": float(exact_pass_at_k(p, k).mean()) for k in KS}
    final["eval/id/pass@1"] = float(p.mean())
    base = {f"eval/id/exact_pass@{k}": float(exact_pass_at_k(p * 0.5, k).mean()) for k in KS}
    base |= {"eval/id/pass@1": float(p.mean()) / 2, "eval/id/success_rate": 0.3}
    for k in list(final):
        final[k.replace("/exact_pass@", "/delta_exact_pass@").replace("/pass@", "/delta_pass@")
              + "_vs_base"] = final[k] - base[k]  # fmt: skip
    writer = SummaryWriter(str(run / "tb"))
    noise = np.random.default_rng(curve_seed)
    for step in range(1, iterations + 1):
        writer.add_scalar("train/reward_mean", 0.3 + 0.02 * step + 0.05 * noise.random(), step)
        if step % 5 == 0:
            for k in (1, 2048):
                writer.add_scalar(f"eval/id/exact_pass@{k}", final[f"eval/id/exact_pass@{k}"], step)
    writer.close()
    per_maze = {"successes": [], "n": 0, "exact_p": p.tolist(), "mazes_hash": "abc"}
    (run / "eval").mkdir()
    (run / "eval" / f"step_{iterations:07d}.json").write_text(
        json.dumps({"id": {"per_maze": per_maze}})
    )
    (run / "metrics.json").write_text(json.dumps({"final": final, "base": base}))
    return run


def test_paired_difference_by_hand():
    d = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.4]])  # 2 seeds x 3 mazes
    out = paired_difference(d)
    # per-seed means 0.2, 0.3: variance 0.005, / 2 seeds = 0.0025
    # per-maze means 0.2, 0.2, 0.35: variance (0.0025 + 0.0025 + 0.01) / 2 = 0.0075, / 3 = 0.0025
    assert out.mean == pytest.approx(0.25)
    assert out.se == pytest.approx(math.sqrt(0.005))
    # Welch-Satterthwaite: 0.005^2 / (0.0025^2 / 1 + 0.0025^2 / 2) = 8 / 3
    assert out.df == pytest.approx(8 / 3)
    lo, hi = out.interval()
    half = stats.t.ppf(0.975, 8 / 3) * math.sqrt(0.005)
    assert (lo, hi) == pytest.approx((0.25 - half, 0.25 + half))
    assert 3.18 < stats.t.ppf(0.975, 8 / 3) < 4.30  # between the tables' df = 3 and df = 2
    one = paired_difference(d[:1])
    assert one.mean == pytest.approx(0.2) and math.isnan(one.se)
    assert one.text() == "+0.200 (n/a)"


def test_summary_pairs_gamma_by_seed_and_maze(tmp_path):
    sweep = tmp_path / "sweep"
    grpo = {0: [0.5, 0.5, 0.5, 0.5], 1: [0.4, 0.4, 0.4, 0.4], 2: [0.6, 0.2, 0.4, 0.2]}
    focal = {0: [0.7, 0.8, 0.6, 0.5], 1: [0.4, 0.5, 0.6, 0.3], 2: [0.6, 0.3, 0.5, 0.6]}
    for seed in (0, 1, 2):
        for gamma, p in (("0", grpo[seed]), ("0.5", focal[seed])):
            fake_run(sweep, f"g{gamma}_s{seed}", [f"focal.gamma={gamma}", f"seed={seed}"], p)
    fake_run(sweep, "g1_s0", ["focal.gamma=1", "seed=0"], [0.9, 0.9, 0.9, 0.9])  # one seed
    table = summarize(sweep)
    # exact pass@1 = p: differences per seed and maze
    d = np.array([focal[s] for s in (0, 1, 2)]) - np.array([grpo[s] for s in (0, 1, 2)])
    # d = [[.2, .3, .1, 0], [0, .1, .2, -.1], [0, .1, .1, .4]]: seed means .15, .05, .15;
    # maze means 1/15, 1/6, 2/15, 1/10 (by hand)
    np.testing.assert_allclose(d.mean(1), [0.15, 0.05, 0.15], atol=1e-12)
    np.testing.assert_allclose(d.mean(0), [1 / 15, 1 / 6, 2 / 15, 1 / 10], atol=1e-12)
    v_seed = np.var([0.15, 0.05, 0.15], ddof=1) / 3  # 0.01 / 3 / 3
    v_maze = np.var([1 / 15, 1 / 6, 2 / 15, 1 / 10], ddof=1) / 4
    df = (v_seed + v_maze) ** 2 / (v_seed**2 / 2 + v_maze**2 / 3)
    half = stats.t.ppf(0.975, df) * math.sqrt(v_seed + v_maze)
    mean = 0.35 / 3  # the mean of d
    expected = f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"
    row = next(
        line
        for line in table.splitlines()
        if line.startswith("| focal.gamma=0.5 | focal.gamma=0 |")
    )
    assert row.split(" | ")[2:5] == ["3", "4", expected]
    # gamma 1 has one seed: the paired difference has no interval, the table no error
    row = next(
        line for line in table.splitlines() if line.startswith("| focal.gamma=1 | focal.gamma=0 |")
    )
    assert row.split(" | ")[2:5] == ["1", "4", f"{0.9 - 0.5:+.3f} (n/a)"]
    assert "| focal.gamma=1 | 1 | 0.900 ± n/a |" in table
    rows = list(csv.DictReader((sweep / "summary.csv").open()))
    by_group = {r["group"]: r for r in rows}
    g05 = by_group["focal.gamma=0.5"]
    assert g05["paired_focal.gamma/reference"] == "focal.gamma=0"
    assert float(g05["paired_focal.gamma/eval/id/exact_pass@1"]) == pytest.approx(mean)
    assert float(g05["paired_focal.gamma/eval/id/exact_pass@1_hi"]) == pytest.approx(mean + half)
    g1 = by_group["focal.gamma=1"]
    assert (
        g1["paired_focal.gamma/eval/id/exact_pass@1_lo"] == ""
        and g1["eval/id/exact_pass@1_se"] == ""
    )
    assert by_group["focal.gamma=0"]["paired_focal.gamma/reference"] == ""


def test_without_per_maze_values_pairs_over_seeds_only(tmp_path):
    sweep = tmp_path / "sweep"
    for seed, (a, b) in enumerate([(0.2, 0.3), (0.4, 0.6), (0.6, 0.6)]):
        for algo, p in (("grpo", a), ("cispo", b)):
            run = fake_run(sweep, f"{algo}_{seed}", [f"algo={algo}", f"seed={seed}"], [p] * 3)
            (run / "eval" / "step_0000020.json").unlink()
    table = summarize(sweep)
    # differences 0.1, 0.2, 0.0: mean 0.1, sd 0.1, t(0.975, 2) = 4.3027
    half = 4.302653 * 0.1 / math.sqrt(3)
    expected = f"+0.100 [{0.1 - half:+.3f}, {0.1 + half:+.3f}]"
    row = next(line for line in table.splitlines() if line.startswith("| algo=cispo | algo=grpo |"))
    assert row.split(" | ")[2:5] == ["3", "1", expected]


def test_paper_figures_from_a_tiny_sweep(tmp_path):
    sweep = tmp_path / "sweep"
    for n in (4, 16):
        for gamma in ("0", "0.5"):
            for seed in (0, 1):
                p = np.linspace(0.01, 0.9, 6) * (1.1 if gamma == "0.5" else 1.0) / (n / 4) ** 0.2
                overrides = [f"focal.gamma={gamma}", f"seed={seed}", f"train.group_size={n}"]
                fake_run(sweep, f"n{n}_g{gamma}_s{seed}", overrides, p, curve_seed=seed)
    summarize(sweep)
    for png in ("curves.png", "neglog_pass_vs_n.png", "pass_vs_n.png", "pass_at_k.png"):
        assert (sweep / png).stat().st_size > 10_000, png
    import matplotlib.image

    # Fig. 7: one row of panels per N, so two rows are taller than one
    two_rows = matplotlib.image.imread(sweep / "curves.png").shape[0]
    single = tmp_path / "single"
    for seed in (0, 1):
        fake_run(single, f"s{seed}", ["focal.gamma=0", f"seed={seed}"], [0.5, 0.6], curve_seed=seed)
    summarize(single)
    assert matplotlib.image.imread(single / "curves.png").shape[0] < two_rows
    assert not (single / "neglog_pass_vs_n.png").exists()  # N not swept: no Fig. 6
