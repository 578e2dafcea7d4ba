"""Paired comparisons in mazerl-summarize, against hand computations, and the paper's figures
from a fabricated sweep (real SummaryWriter events, metrics.json and eval/step_*.json)."""

import csv
import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
import yaml
from scipy import stats
from torch.utils.tensorboard import SummaryWriter

from mazerl.analysis import load_sweep, summarize
from mazerl.analysis.runs import Origin, Run, typed
from mazerl.analysis.stats import bootstrap_means, last_third, paired_difference, reading, slope
from mazerl.analysis.tables import base_row
from mazerl.core.errors import UserError
from mazerl.eval.metric_names import Metric
from mazerl.eval.passk import exact_pass_at_k

KS = (1, 8, 128, 256, 1024, 2048)


PAPER = Path(__file__).parents[1] / "experiments" / "studies" / "paper" / "sections.py"


def beside_the_paper(sweep: Path) -> Path:
    """`sweep` with a `study.yaml` naming the paper study's section (Table 4)."""
    (sweep / "study.yaml").write_text(f"sections:\n  - {PAPER}:beside_table4\n")
    return sweep


def fake_run(root, name, overrides, exact_p, iterations=20, curve_seed=0, rise=None, tb=True):
    """A finished run as the trainer leaves it: `.hydra/overrides.yaml` and `config.yaml`,
    `eval/step_*.json` every 5 steps with per-maze exact probabilities (id set) `exact_p` at
    the last and `exact_p - rise * (iterations - step)` before (default: rising from 60% of
    `exact_p`), `metrics.json` whose exact pass@k are the means of the per-maze values, and
    (`tb`) TensorBoard events of the training reward."""
    run = root / name
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    given = dict(o.split("=") for o in overrides)
    config = {
        "seed": int(given.get("seed", 0)),
        "algo": {"name": given.get("algo", "grpo")},
        "focal": {"gamma": float(given.get("focal.gamma", 0.5))},
        "train": {"group_size": int(given.get("train.group_size", 8))},
        "eval": {"sets": [{"name": "id"}]},
    }
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
    p = np.asarray(exact_p, dtype=float)
    final = {f"eval/id/exact_pass@{k}": float(exact_pass_at_k(p, k).mean()) for k in KS}
    final["eval/id/pass@1"] = float(p.mean())
    base = {f"eval/id/exact_pass@{k}": float(exact_pass_at_k(p * 0.5, k).mean()) for k in KS}
    base |= {"eval/id/pass@1": float(p.mean()) / 2, "eval/id/success_rate": 0.3}
    for k in list(final):
        final[k.replace("/exact_pass@", "/delta_exact_pass@").replace("/pass@", "/delta_pass@")
              + "_vs_base"] = final[k] - base[k]  # fmt: skip
    if tb:
        writer = SummaryWriter(str(run / "tb"))
        noise = np.random.default_rng(curve_seed)
        for step in range(1, iterations + 1):
            writer.add_scalar("train/reward_mean", 0.3 + 0.02 * step + 0.05 * noise.random(), step)
        writer.close()
    (run / "eval").mkdir()
    for step in range(5, iterations + 1, 5):
        if rise is None:
            p_t = p * (0.6 + 0.4 * step / iterations)
        else:
            p_t = p - rise * (iterations - step)
        ev = {f"exact_pass@{k}": float(exact_pass_at_k(p_t, k).mean()) for k in KS}
        ev["per_maze"] = {"successes": [], "n": 0, "exact_p": p_t.tolist(), "mazes_hash": "abc"}
        (run / "eval" / f"step_{step:07d}.json").write_text(json.dumps({"id": ev}))
    (run / "metrics.json").write_text(json.dumps({"final": final, "base": base}))
    return run


def test_paired_difference_by_hand():
    d = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.4]])  # 2 seeds x 3 mazes
    out = paired_difference(d)
    # seed means 0.2, 0.3 -> MS_unit = 3 * (0.05^2 + 0.05^2) / 1 = 0.015
    # maze means 0.2, 0.2, 0.35 -> MS_maze = 2 * var = 2 * 0.0075 = 0.015
    # residuals d - seed mean - maze mean + 0.25 = +-0.05 (four times) and 0 (twice):
    # MS_res = 0.01 / ((2 - 1)(3 - 1)) = 0.005
    # var = (0.015 + 0.015 - 0.005) / 6; the old sum 0.005 counted MS_res / 6 twice
    assert out.mean == pytest.approx(0.25)
    assert out.se == pytest.approx(math.sqrt(0.025 / 6))
    # Satterthwaite: 0.025^2 / (0.015^2 / 1 + 0.015^2 / 2 + 0.005^2 / 2) = 0.000625 / 0.00035
    assert out.df == pytest.approx(0.000625 / 0.00035)
    lo, hi = out.interval()
    half = stats.t.ppf(0.975, 0.000625 / 0.00035) * math.sqrt(0.025 / 6)
    assert (lo, hi) == pytest.approx((0.25 - half, 0.25 + half))
    one = paired_difference(d[:1])
    assert one.mean == pytest.approx(0.2) and math.isnan(one.se)
    assert one.text() == "+0.200 (n/a)"
    # a maze effect estimated below zero drops out: only the seed mean square is left
    flat = np.array([[0.1, 0.3], [0.4, 0.2]])  # maze means equal: MS_maze = 0 < MS_res
    # seed means 0.2, 0.3: MS_unit = 2 * 0.005 = 0.01; residuals +-0.1: MS_res = 0.04
    # MS_unit < MS_res too: both components drop, var = MS_res / (U M) = 0.04 / 4, df 1
    assert paired_difference(flat).se == pytest.approx(0.1)
    assert paired_difference(flat).df == pytest.approx(1.0)


def test_rows_of_one_unit_are_averaged_before_the_interval():
    # two group sizes x 3 seeds, one maze: gains (points) at N = 8 of seeds 0, 1, 2: 0, 10, 2;
    # at N = 32: 4, 12, 0. The seed is the unit: its means 2, 11, 1, mean 14/3, deviations
    # -8/3, 19/3, -11/3: sum of squares (64 + 361 + 121) / 9 = 546 / 9 on 2 df,
    # var(mean) = 546 / 9 / 2 / 3 = 91 / 9, df 2 (not 5: six runs are three units)
    d = np.array([[0.0], [10.0], [2.0], [4.0], [12.0], [0.0]])
    out = paired_difference(d, units=np.array([0, 1, 2, 0, 1, 2]))
    assert (out.mean, out.seeds, out.mazes) == (pytest.approx(14 / 3), 3, 1)
    assert out.se == pytest.approx(math.sqrt(91 / 9)) and out.df == pytest.approx(2.0)
    half = stats.t.ppf(0.975, 2) * math.sqrt(91 / 9)
    assert out.interval() == pytest.approx((14 / 3 - half, 14 / 3 + half))
    # as six independent runs: squared deviations from 14/3 of 0, 10, 2, 4, 12, 0 sum to
    # (196 + 256 + 64 + 4 + 484 + 196) / 9 = 1200 / 9 on 5 df: var 1200 / 9 / 5 / 6, on 5 df
    six = paired_difference(d)
    assert six.se == pytest.approx(math.sqrt(1200 / 270)) and six.df == pytest.approx(5.0)


def test_a_unit_component_set_to_zero_keeps_the_units_degrees_of_freedom():
    # 3 units x 8 mazes: d = 0.2 + maze effect 0.1 m + interaction e, e's rows and columns
    # summing to zero, so every unit has the same mean: MS_unit = 0 < MS_res, the unit
    # component is set to zero. Maze means 0.2 + 0.1 m: MS_maze = 3 var(0.1 m) = 3 * 0.06;
    # MS_res = sum e^2 / (2 * 7) = 0.05^2 * 16 / 14. var(mean) = MS_maze / (3 * 8).
    e = 0.05 * np.array([[1, -1, 0, 0] * 2, [-1, 1, 1, -1] * 2, [0, 0, -1, 1] * 2])
    d = 0.2 + 0.1 * np.arange(8)[None, :] + e
    out = paired_difference(d)
    assert out.mean == pytest.approx(0.55)
    assert out.se == pytest.approx(math.sqrt(0.18 / 24))
    # Satterthwaite on MS_maze alone would give the maze's 7 df (1,023 with the study's
    # 1,024 mazes); with the unit's variance unknown beyond its 3 - 1 = 2 df, df stays 2
    assert out.df == pytest.approx(2.0)
    half = stats.t.ppf(0.975, 2) * math.sqrt(0.18 / 24)
    assert out.interval() == pytest.approx((0.55 - half, 0.55 + half))
    # both components set to zero (no maze effect either): var MS_res / (U M), still 2 df
    flat = paired_difference(0.2 + e)
    assert flat.se == pytest.approx(math.sqrt(0.05**2 * 16 / 14 / 24))
    assert flat.df == pytest.approx(2.0)


def two_way(rng, units, mazes, s_a, s_b, s_e, size=()):
    """d[..., u, m] = a_u + b_m + e_um with normal components of the given sds (mean 0)."""
    a = rng.normal(0, s_a, (*size, units, 1))
    b = rng.normal(0, s_b, (*size, 1, mazes))
    return a + b + rng.normal(0, s_e, (*size, units, mazes))


def test_two_way_interval_covers_and_agrees_with_the_hierarchical_bootstrap():
    rng = np.random.default_rng(0)
    # coverage with the study's 3 seeds: sds of a study's pass@1 differences (seed 0.02,
    # maze 0.15, interaction 0.1), and a case where the interaction dominates: there the
    # unit component is set to zero in most data sets and its 2 df make the interval
    # conservative (it covers about every time)
    for s_a, s_b, s_e, most in ((0.02, 0.15, 0.1, 0.985), (0.005, 0.02, 0.3, 1.0)):
        sims = two_way(rng, 3, 64, s_a, s_b, s_e, size=(2000,))
        hits = 0
        for d in sims:
            lo, hi = paired_difference(d).interval()
            hits += lo <= 0 <= hi
        assert 0.93 <= hits / len(sims) <= most, (s_a, s_b, s_e, hits / len(sims))
    # a real seed variance (sd 0.04) that 3 seeds estimate below zero about one time in ten:
    # the intervals of exactly those data sets still cover (on the maze's 63 df, about 77%)
    sims = two_way(rng, 3, 64, 0.04, 0.15, 0.1, size=(3000,))
    unit_means, maze_means = sims.mean(2), sims.mean(1)  # [B, U], [B, M]
    resid = sims - unit_means[..., None] - maze_means[:, None, :] + sims.mean((1, 2))[:, None, None]
    truncated = 64 * unit_means.var(1, ddof=1) < np.square(resid).sum((1, 2)) / (2 * 63)
    hits = [lo <= 0 <= hi for lo, hi in (paired_difference(d).interval() for d in sims[truncated])]
    assert truncated.sum() > 150 and np.mean(hits) >= 0.95, (truncated.sum(), np.mean(hits))
    # the hierarchical bootstrap (seeds, then mazes) on one data set of 12 seeds x 400 mazes:
    # its exact variance is sum of the population (ddof 0) variances of seed means / U, maze
    # means / M and residuals / (U M); with 12 seeds it agrees with the analytic one
    d = two_way(rng, 12, 400, 0.03, 0.15, 0.05)
    boot = bootstrap_means(d, 4000, rng)
    unit_means, maze_means = d.mean(1), d.mean(0)
    resid = d - unit_means[:, None] - maze_means[None, :] + d.mean()
    exact = unit_means.var() / 12 + maze_means.var() / 400 + resid.var() / (12 * 400)
    assert boot.var() == pytest.approx(exact, rel=0.08)
    assert boot.std() == pytest.approx(paired_difference(d).se, rel=0.08)


def test_slope_by_hand():
    steps = np.array([1000, 2000, 3000])
    # two seeds, levels 0.5 and 0.7, both rising 0.01 per 1,000 steps, residuals +-0.001
    y = np.array([[0.490, 0.501, 0.510], [0.690, 0.699, 0.710]])
    out = slope(steps, y)
    # centred steps -1000, 0, 1000; centred values: seed 0 -0.0103, 0.0007, 0.0097 (mean
    # 0.5003); seed 1 -0.0097, -0.0007, 0.0103 (mean 0.6997). Sxy = 1000 * (0.02 + 0.02),
    # Sxx = 2 * 2e6 -> beta = 1e-5 per step = +1.0 point per 1,000 steps
    assert out.value == pytest.approx(1.0)
    # each seed's own slope: seed 0 Sxy = 1000 * 0.0200 / 2e6 = 1.00e-5, seed 1 the same
    # (1000 * 0.0200): both +1.0, sd 0 -> the interval is the point (t on 1 df)
    assert (out.lo, out.hi) == pytest.approx((1.0, 1.0))
    # seeds rising 0.6 and 1.4 points per 1,000 steps: mean 1.0, sd 0.566 on 1 df
    y = np.array([[0.500, 0.506, 0.512], [0.700, 0.714, 0.728]])
    out = slope(steps, y)
    half = stats.t.ppf(0.975, 1) * 0.8 / math.sqrt(2) / math.sqrt(2)  # sd = 0.8 / sqrt(2)
    assert out.value == pytest.approx(1.0)
    assert (out.lo, out.hi) == pytest.approx((1.0 - half, 1.0 + half))
    assert (out.lo, out.hi) == pytest.approx((-4.08, 6.08), abs=0.01)
    assert not out.moving  # 1 df: the interval holds zero
    one = slope(steps, y[:1])
    assert one.value == pytest.approx(0.6) and math.isnan(one.lo)
    out = slope(steps, np.array([[0.490, 0.501, 0.510], [0.690, 0.699, 0.710]]))
    assert out.moving  # the interval [1.0, 1.0] excludes 0 and 1.0 > 0.5
    flat = slope(steps, np.array([[0.5, 0.5004, 0.5003], [0.7, 0.6999, 0.7002]]))
    assert abs(flat.value) < 0.5 and not flat.moving
    assert last_third(list(range(500, 20001, 500))) == list(range(13500, 20001, 500))
    assert last_third([250, 500, 750, 1000]) == [500, 750, 1000]


def test_the_base_model_row_counts_each_base_model_once():
    # bank model A read on two CPU kinds (values 1e-8 apart), bank model B once, and a base
    # model with no recorded weights: 3 base models, mean (0.300 + 0.600 + 0.900) / 3
    col = "eval/id/exact_pass@1"

    def run(name, sha, value):
        weights = {"base_model": {"sha256": sha}} if sha else {}
        metrics = {"final": {}, "base": {col: value}, **weights}
        return Run(Path(name), {}, metrics, origin=Origin(sha256=sha), base=typed(metrics["base"]))

    runs = [run("a", "A", 0.3), run("a2", "A", 0.3 + 1e-8), run("b", "B", 0.6)]
    runs += [run("c", None, 0.9), run("c2", None, 0.9)]  # same values, no sha: once
    assert base_row(runs, [Metric.of(col)]) == ["| base model | 3 | 0.600 ± 0.173 |"]


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
    # two-way mean squares: seeds, mazes and their interaction (residual)
    ms_seed = 4 * np.var([0.15, 0.05, 0.15], ddof=1)
    ms_maze = 3 * np.var([1 / 15, 1 / 6, 2 / 15, 1 / 10], ddof=1)
    resid = d - d.mean(1, keepdims=True) - d.mean(0, keepdims=True) + d.mean()
    ms_res = np.square(resid).sum() / (2 * 3)
    # 0.0133 and 0.0056 against 0.0289: the interaction dominates, both components are
    # estimated below zero and drop out: var = MS_res / (3 * 4), on the seeds' 3 - 1 df (the
    # seed variance is not known to be zero)
    assert ms_seed < ms_res and ms_maze < ms_res
    var, df = ms_res / 12, 2
    half = stats.t.ppf(0.975, df) * math.sqrt(var)
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


def test_runs_that_fell_are_listed_and_kept(tmp_path):
    # fake_run's base model has per-maze p / 2 and its evaluations rise to the final one. Seed
    # 1's gamma 0.5 run collapses: it ends at p = 0.01 on every maze against its base model's
    # 0.2 (exact pass@1 1.0% against 20.0%). Seed 2's falls at the end: 85.0% at step 15,
    # 60.0% at step 20 (25 points); seed 0's 79.0% -> 60.0% (19 points) is not a fall.
    sweep = tmp_path / "sweep"
    for seed in (0, 1, 2):
        fake_run(sweep, f"g0_s{seed}", ["focal.gamma=0", f"seed={seed}"], [0.4] * 4)
        fake_run(sweep, f"g0.5_s{seed}", ["focal.gamma=0.5", f"seed={seed}"], [0.6] * 4)
    metrics = json.loads((sweep / "g0.5_s1" / "metrics.json").read_text())
    metrics["final"]["eval/id/exact_pass@1"] = 0.01
    metrics["base"]["eval/id/exact_pass@1"] = 0.2
    (sweep / "g0.5_s1" / "metrics.json").write_text(json.dumps(metrics))
    for seed, before in ((2, 0.85), (0, 0.79)):
        step15 = sweep / f"g0.5_s{seed}" / "eval" / "step_0000015.json"
        evaluation = json.loads(step15.read_text())
        evaluation["id"]["exact_pass@1"] = before
        step15.write_text(json.dumps(evaluation))
    table = summarize(sweep).splitlines()
    head = "Fell (id exact pass@1 ended below the base model's, or 20 points or more below the"
    at = table.index(next(x for x in table if x.startswith(head)))
    assert table[at].endswith("kept in every mean and interval above): 2 of 6 runs")
    assert table[at + 2 :] == [
        "- g0.5_s1: 1.0%, below its base model's 20.0%",
        "- g0.5_s2: 60.0% at step 20, 85.0% at step 15",
    ]
    # kept: the gamma 0.5 mean over seeds is (0.6 + 0.01 + 0.6) / 3, not 0.6
    assert f"| focal.gamma=0.5 | 3 | {(0.6 + 0.01 + 0.6) / 3:.3f} ± " in "\n".join(table)
    # none fell (seed 1 ends at 60.0% again, seed 2's step 15 at 70.0%): no such section
    metrics["final"]["eval/id/exact_pass@1"] = 0.6
    (sweep / "g0.5_s1" / "metrics.json").write_text(json.dumps(metrics))
    step15 = sweep / "g0.5_s2" / "eval" / "step_0000015.json"
    step15.write_text(step15.read_text().replace('"exact_pass@1": 0.85', '"exact_pass@1": 0.7'))
    assert "Fell (" not in summarize(sweep)


def test_forked_runs_are_listed_with_what_differs(tmp_path):
    sweep = tmp_path / "sweep"
    for seed in (0, 1):
        fake_run(sweep, f"g0_s{seed}", ["focal.gamma=0", f"seed={seed}"], [0.4] * 3)
        fake_run(sweep, f"g0.5_s{seed}", ["focal.gamma=0.5", f"seed={seed}"], [0.6] * 3)
    assert "Forked (" not in summarize(sweep)  # no metrics.json names a fork
    path = sweep / "g0.5_s1" / "metrics.json"
    metrics = json.loads(path.read_text())
    metrics["forked"] = {"checkpoint": "/r/checkpoints/ckpt_0019500.pt", "iteration": 19500,
                         "differs": ["train.zero_gradient_step"]}  # fmt: skip
    path.write_text(json.dumps(metrics))
    table = summarize(sweep).splitlines()
    at = table.index(next(x for x in table if x.startswith("Forked (")))
    assert table[at].endswith("kept in every mean and interval above): 1 of 4 runs")
    assert table[at + 2] == (
        "- g0.5_s1: from /r/checkpoints/ckpt_0019500.pt at iteration 19,500; settings that "
        "differ: train.zero_gradient_step"
    )


def test_without_per_maze_values_pairs_over_seeds_only(tmp_path):
    sweep = tmp_path / "sweep"
    for seed, (a, b) in enumerate([(0.2, 0.3), (0.4, 0.6), (0.6, 0.6)]):
        for algo, p in (("grpo", a), ("cispo", b)):
            run = fake_run(sweep, f"{algo}_{seed}", [f"algo={algo}", f"seed={seed}"], [p] * 3)
            for f in (run / "eval").glob("step_*.json"):
                f.unlink()
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
    pngs = ("curves.png", "neglog_pass_vs_n.png", "pass_vs_n.png", "pass_at_k.png", "gap.png")
    for png in (*pngs, "frontier.png"):
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


def test_figures_and_tables_from_committed_files_only(tmp_path):
    """No TensorBoard events (they are not committed): every table and figure is still drawn,
    the training-reward panel says what it lacks."""
    sweep = tmp_path / "sweep"
    for gamma in ("0", "0.5"):
        for seed in (0, 1):
            overrides = [f"focal.gamma={gamma}", f"seed={seed}"]
            fake_run(sweep, f"g{gamma}_s{seed}", overrides, [0.3, 0.6, 0.9], tb=False)
    table = summarize(sweep)
    assert "## Paired differences" in table and "## Convergence" in table
    for png in ("curves.png", "pass_at_k.png", "gap.png", "frontier.png"):
        assert (sweep / png).stat().st_size > 10_000, png


def test_convergence_slopes_by_hand(tmp_path):
    sweep = tmp_path / "sweep"
    p = np.array([0.5, 0.7, 0.9])
    # exact pass@1 = mean p - rise * (20 - step) at steps 5, 10, 15, 20: a straight line
    for gamma, rise in (("0", 1e-5), ("0.5", 1e-6)):
        for seed in (0, 1):
            overrides = [f"focal.gamma={gamma}", f"seed={seed}"]
            fake_run(sweep, f"g{gamma}_s{seed}", overrides, p + 0.01 * seed, rise=rise, tb=False)
    table = summarize(sweep)
    section = table.split("## Convergence")[1]
    assert "the last 3 here" in section  # the last third of 4 evaluations, at least 3
    # 1e-5 per step = +1.0 point per 1,000 steps, no residual: a zero-width interval; moving
    row = next(line for line in section.splitlines() if line.startswith("| focal.gamma=0 |"))
    assert row.split(" | ")[1] == "+1.0 [+1.0, +1.0] *" and row.endswith("| yes |")
    row = next(line for line in section.splitlines() if line.startswith("| focal.gamma=0.5 |"))
    assert row.split(" | ")[1] == "+0.1 [+0.1, +0.1]"  # below 0.5 points: flat
    assert row.endswith("| no |")  # every slope measured, none still moving
    # the paired difference rises 1e-6 - 1e-5 per step: -0.9 points per 1,000 steps, moving
    row = next(line for line in section.splitlines() if "| focal.gamma=0 | " in line[2:])
    assert row.split(" | ")[2] == "-0.9 [-0.9, -0.9] *"
    paired = table.split("## Paired differences")[1].split("## Convergence")[0]
    row = next(line for line in paired.splitlines() if line.startswith("| focal.gamma=0.5 |"))
    assert row.endswith("| yes |")  # GRPO (and the difference) still moving
    assert "| still moving |" in paired and "converged" not in table  # the verdict's word


def test_beside_the_paper_pools_group_sizes(tmp_path):
    sweep = tmp_path / "sweep"
    gains = {32: [0.02, 0.04], 64: [0.06, 0.06]}  # gamma 0.5 minus GRPO per seed, every maze
    for n, by_seed in gains.items():
        for seed, gain in enumerate(by_seed):
            for gamma, shift in (("0", 0.0), ("0.5", gain)):
                overrides = [f"focal.gamma={gamma}", f"seed={seed}", f"train.group_size={n}"]
                p = np.array([0.2, 0.5, 0.7]) + shift
                fake_run(sweep, f"n{n}_g{gamma}_s{seed}", overrides, p, tb=False)
    assert "## Beside the paper's Table 4" not in summarize(sweep)  # a study's section
    table = summarize(beside_the_paper(sweep))
    section = table.split("## Beside the paper's Table 4")[1].split("## ")[0]
    # pooled pass@1 gain over the seed (the unit: N = 32 and 64 of a seed share its base
    # model): seed 0 (2 + 6) / 2 = 4, seed 1 (4 + 6) / 2 = 5 points, mean +4.5; deviations
    # -0.5, +0.5: sum of squares 0.5 on 1 df, var(mean) = 0.5 / 2 (as four independent
    # (N, seed) units around their N's mean: 2 / 2 / 4, the same variance on 2 df, t 4.3
    # in place of 12.7)
    half = stats.t.ppf(0.975, 1) * math.sqrt(0.5 / 2)
    row = next(line for line in section.splitlines() if line.startswith("| pooled, all N >= 32"))
    assert row.split(" | ")[1:3] == ["pass@1", "-"] and "(2 seeds)" in row
    assert f"+4.5 [{4.5 - half:+.1f}, {4.5 + half:+.1f}]" in row
    # the paper's mean gain for gamma 0.5 at N = 32, 64: (10.6 + 12.0) / 2 = +11.3
    assert "below the paper's +11.3" in row
    assert "6 intervals in this table." in section  # 2 N x 2 metrics + pooled x 2 metrics


def test_reading_of_an_interval_against_the_paper():
    paper = "the paper's"
    assert reading(-1.0, 2.5, 10.6, whose=paper) == f"no gain shown: < +2.5; below {paper} +10.6"
    assert reading(1.9, 4.5, 10.4, whose=paper) == f"gain +1.9 to +4.5; below {paper} +10.4"
    assert reading(12.6, 16.7, 10.7, whose=paper) == f"gain +12.6 to +16.7; above {paper} +10.7"
    assert reading(-1.0, 12.0, 4.1) == "no gain shown: < +12.0; the reference's +4.1 inside"
    assert reading(-3.0, -1.0, None) == "loss -3.0 to -1.0"
    assert reading(0.004, 0.021, None, 2) == "gain +0.00 to +0.02"  # routes: two decimals
    assert reading(-0.2, 0.46, None, 2) == "no gain shown: < +0.46"


def test_load_sweep_has_a_row_per_run_and_evaluation(tmp_path):
    sweep = tmp_path / "sweep"
    for gamma in ("0", "0.5"):
        fake_run(sweep, f"g{gamma}", [f"focal.gamma={gamma}", "seed=0"], [0.2, 0.4], tb=False)
    df = load_sweep(sweep)
    assert len(df) == 2 * 4 and set(df["step"]) == {5, 10, 15, 20}
    row = df[(df["focal.gamma"] == "0.5") & (df["step"] == 10)].iloc[0]
    # at step 10 of 20 the fabricated p is 80% of the final: mean(0.16, 0.32)
    assert row["id/exact_pass@1"] == pytest.approx(0.24) and bool(row["finished"])


def test_summary_of_runs_from_several_folders(tmp_path):
    grpo, focal = tmp_path / "grpo", tmp_path / "focal"
    for seed, (a, b) in enumerate([(0.2, 0.3), (0.4, 0.6)]):
        fake_run(grpo, f"s{seed}", ["focal.gamma=0", f"seed={seed}"], [a, a], tb=False)
        fake_run(focal, f"s{seed}", ["focal.gamma=0.5", f"seed={seed}"], [b, b], tb=False)
    with pytest.raises(UserError, match="--out"):
        summarize(grpo, focal)
    table = summarize(grpo, focal, out=tmp_path / "both")
    assert (tmp_path / "both" / "summary.md").read_text() == table
    # paired across the folders by seed: differences 0.1 and 0.2 on both mazes
    row = next(line for line in table.splitlines() if line.startswith("| focal.gamma=0.5 | focal"))
    assert row.split(" | ")[2:4] == ["2", "2"] and row.split(" | ")[4].startswith("+0.150 [")
    # the same overrides in two folders: every run is named by its folder, none hidden
    again = tmp_path / "again"
    fake_run(again, "s0", ["focal.gamma=0", "seed=0"], [0.9, 0.9], tb=False)
    table = summarize(grpo, again, out=tmp_path / "apart")
    assert f"| folder={again} | 1 | 0.900 ± n/a |" in table
    assert f"| folder={grpo} | 2 | 0.300 ± 0.100 |" in table


def test_method_presets_are_paired_with_grpo_and_set_beside_the_paper(tmp_path):
    """The decisive study sweeps `method=` presets (conf/method/): each is paired with
    method=grpo by seed and maze, F-GRPO's read beside the paper (its algo and gamma from the
    config), and every comparison gets its "how many base models" row."""
    sweep = tmp_path / "sweep"
    presets = {"grpo": ("grpo", 0.0), "fgrpo05": ("grpo", 0.5), "maxrl": ("maxrl", 0.0)}
    gains = {"grpo": [0.0, 0.0], "fgrpo05": [0.02, 0.04], "maxrl": [0.10, 0.10]}  # per seed
    for method, (algo, gamma) in presets.items():
        for seed, gain in enumerate(gains[method]):
            p = np.array([0.2, 0.5, 0.7]) + gain
            run = fake_run(sweep, f"{method}_s{seed}", [f"method={method}", f"seed={seed}"], p)
            config = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
            config |= {"algo": {"name": algo}, "focal": {"gamma": gamma},
                       "train": {"group_size": 32}}  # fmt: skip
            (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
    table = summarize(beside_the_paper(sweep))
    # gamma 0.5 - GRPO: 0.02 on every maze of seed 0, 0.04 of seed 1: MS_seed = 3 x 2 x 0.01^2
    # = 0.0006 on 1 df, MS_maze = MS_res = 0: se = sqrt(0.0006 / 6) = 0.01, t(0.975, 1)
    half = 100 * stats.t.ppf(0.975, 1) * 0.01
    paired = table.split("### method, id")[1].split("##")[0]
    row = next(line for line in paired.splitlines() if line.startswith("| method=fgrpo05 |"))
    assert row.split(" | ")[1:4] == ["method=grpo", "2", "3"]
    assert row.split(" | ")[4] == f"+0.030 [{0.03 - half / 100:+.3f}, {0.03 + half / 100:+.3f}]"
    assert "| method=maxrl | method=grpo | 2 | 3 | +0.100 " in paired
    beside = table.split("## Beside the paper's Table 4")[1].split("## ")[0]
    assert "| N | metric | GRPO | F-GRPO γ 0.5 | γ 0.5 − GRPO |" in beside  # MaxRL not in it
    row = next(line for line in beside.splitlines() if line.startswith("| 32 | pass@1 |"))
    assert f"+3.0 [{3 - half:+.1f}, {3 + half:+.1f}]" in row and "paper's +10.6" in row
    power = table.split("## How many base models")[1].split("## ")[0]
    assert "| method=fgrpo05 | method=grpo | 2 | 3 | +3.0 |" in power
    assert "| method=maxrl | method=grpo | 2 | 3 | +10.0 |" in power


def test_a_curve_band_at_a_step_few_seeds_reached_is_over_those_seeds():
    """Three seeds, two of them at step 20: the band there is their mean 0.4 +- se 0.1
    (sd 0.141 over sqrt(2)), not over sqrt(3); one seed at step 30: se 0, and no warning."""
    import warnings

    from mazerl.analysis.figures import _band

    series = [[(0, 0.1), (10, 0.2), (20, 0.3), (30, 0.7)], [(0, 0.3), (10, 0.6), (20, 0.5)]]
    series.append([(0, 0.2), (10, 0.4)])
    fig, ax = plt.subplots()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _band(ax, series, "method")
    assert np.allclose(ax.lines[0].get_ydata(), [0.2, 0.4, 0.4, 0.7])
    band = ax.collections[0].get_paths()[0].vertices
    assert np.allclose(sorted(band[band[:, 0] == 20][:, 1]), [0.3, 0.5])
    assert np.allclose(band[band[:, 0] == 30][:, 1], 0.7)
    plt.close(fig)


def test_gap_curve_is_not_cut_by_a_seed_just_started(tmp_path, monkeypatch):
    """gap.png draws the finished pairs to their last evaluation (step 20) when a third seed's
    runs have only reached step 5; with one finished pair it reads every pair, to step 5."""
    import mazerl.analysis.figures as figures

    drawn = {}

    def keep(fig, path):
        if path.name == "gap.png":
            drawn["x"] = [list(line.get_xdata()) for line in fig.axes[0].lines]
        plt.close(fig)
        return path

    monkeypatch.setattr(figures, "save_figure", keep)
    sweep = tmp_path / "sweep"
    for gamma, shift in (("0", 0.0), ("0.5", 0.05)):
        for seed in (0, 1, 2):
            overrides = [f"focal.gamma={gamma}", f"seed={seed}"]
            fake_run(sweep, f"g{gamma}_s{seed}", overrides, np.array([0.3, 0.6]) + shift, tb=False)
    for gamma in ("0", "0.5"):  # seed 2 just started: one evaluation, no metrics.json
        run = sweep / f"g{gamma}_s2"
        (run / "metrics.json").unlink()
        for step in (10, 15, 20):
            (run / "eval" / f"step_{step:07d}.json").unlink()
    summarize(sweep)
    assert [x for x in drawn["x"] if x[0] == 5] == [[5, 10, 15, 20]]
    (sweep / "g0_s1" / "metrics.json").unlink()  # one finished pair: all pairs, to step 5
    summarize(sweep)
    assert [x for x in drawn["x"] if x[0] == 5] == [[5]]


def test_a_cell_sweep_splits_figures_by_the_group_size_its_cells_set(tmp_path, monkeypatch):
    """`cell=n8,n32` (conf/cell/) sets N through the config: the frontier gets a panel per N
    and a method's runs of two N are never averaged into one path."""
    import mazerl.analysis.figures as figures

    drawn = {}

    def keep(fig, path):
        drawn[path.name] = [(ax.get_title(), len(ax.lines)) for ax in fig.axes if ax.axison]
        plt.close(fig)
        return path

    monkeypatch.setattr(figures, "save_figure", keep)
    sweep = tmp_path / "sweep"
    for cell, n in (("n8", 8), ("n32", 32)):
        for seed in (0, 1):
            for gamma in ("0", "0.5"):
                over = [f"cell={cell}", f"focal.gamma={gamma}", f"seed={seed}"]
                run = fake_run(sweep, f"{cell}_g{gamma}_s{seed}", over, [0.3, 0.6], tb=False)
                config = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
                config["train"]["group_size"] = n
                (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
    summarize(sweep)
    # two methods and the base model's star in each panel
    assert drawn["frontier.png"] == [("N = 8", 3), ("N = 32", 3)]
