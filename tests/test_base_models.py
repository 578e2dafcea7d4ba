"""What in a base model decides the gain (the bank study's section,
experiments/studies/bank/sections.py): the features of a
per-maze p distribution by hand and by enumeration, least squares by hand and on data with a
known slope, the policy entropy of a policy whose distribution is known, and the summary
section from fabricated runs of fabricated bank models."""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats
from test_paired import fake_run

from mazerl.analysis import summarize
from mazerl.analysis.figures import Output
from mazerl.analysis.runs import at_step, find_runs
from mazerl.analysis.study import load_module
from mazerl.envs.spec import MazeSpec
from mazerl.policy import build_policy
from mazerl.policy.gru import GruConfig
from mazerl.train.bank import BANK_DIR, INDEX

SECTIONS = Path(__file__).parents[1] / "experiments" / "studies" / "bank" / "sections.py"
bank = load_module(SECTIONS)
FEATURES, bank_study, markdown_of = bank.FEATURES, bank.bank_study, bank.base_models_markdown
least_squares, mean_entropy, p_features = bank.least_squares, bank.mean_entropy, bank.p_features
plot_base_models, tail_loss = bank.plot_base_models, bank.tail_loss


def tail_miss_by_enumeration(n: int, p: float, tau: float) -> float:
    """Pr(no sample in E, some correct, some wrong) summed over every group of n draws from
    (rare correct tau, other correct p - tau, wrong 1 - p)."""
    total = 0.0
    for draws in itertools.product(range(3), repeat=n):
        if 0 not in draws and 1 in draws and 2 in draws:
            total += math.prod((tau, p - tau, 1 - p)[d] for d in draws)
    return total


def test_tail_features_of_a_categorical_p_distribution_by_hand():
    p = np.array([0.05, 0.1, 0.5, 0.9])
    f = p_features(p)
    assert f["exact_pass@1"] == pytest.approx(0.3875)
    assert f["exact_pass@256"] == pytest.approx(np.mean(1 - (1 - p) ** 256))
    # 1/8 = 0.125: two mazes below; 1/32 = 0.03125: none
    assert (f["tail@8"], f["tail@32"]) == (0.5, 0.0)
    assert f["tail_mass@8"] == pytest.approx((0.05 + 0.1) / 4)
    # the score: tau Pr(B_tau) at N = 8, p = 0.3875, tau = 0.0375, Pr(B_tau) by enumerating
    # the 3^8 groups
    miss = tail_miss_by_enumeration(8, 0.3875, 0.0375)
    assert f["tail_loss@8"] == pytest.approx(0.0375 * miss)
    assert f["tail_loss@32"] == 0.0  # no tail: nothing to lose
    assert tail_loss(p, 4) == pytest.approx(  # 1/4: 0.05 and 0.1 again, N = 4
        0.0375 * tail_miss_by_enumeration(4, 0.3875, 0.0375)
    )
    assert f["p_q50"] == pytest.approx(0.3)  # halfway between 0.1 and 0.5


def test_least_squares_by_hand():
    # x = 0, 1, 2; y = 0, 1, 3: Sxx = 2, Sxy = 3: slope 1.5, intercept 4/3 - 1.5 = -1/6;
    # residuals 1/6, -1/3, 1/6: SSE = 1/6 on 1 df; se(slope) = sqrt((1/6) / 2); t(1) = 12.7062
    fit = least_squares(np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 3.0]))
    assert fit.coef == pytest.approx([-1 / 6, 1.5])
    half = 12.7062 * math.sqrt(1 / 12)
    assert (fit.lo[1], fit.hi[1]) == pytest.approx((1.5 - half, 1.5 + half), rel=1e-5)
    assert fit.r2 == pytest.approx(1 - (1 / 6) / (42 / 9))  # Syy = 16/9 + 1/9 + 25/9
    assert fit.df == 1
    assert np.isnan(least_squares(np.array([0.0, 1.0]), np.array([1.0, 2.0])).lo).all()


def test_least_squares_recovers_known_slopes():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(2000, 2))
    y = 2.0 + 3.0 * x[:, 0] - 1.0 * x[:, 1] + rng.normal(0, 0.5, 2000)
    fit = least_squares(x, y)
    assert fit.lo[1] < 3.0 < fit.hi[1] and fit.lo[2] < -1.0 < fit.hi[2]
    # half-width about 1.96 * 0.5 / sqrt(2000) = 0.0219
    assert fit.hi[1] - fit.lo[1] == pytest.approx(2 * 1.96 * 0.5 / math.sqrt(2000), rel=0.1)
    assert fit.coef == pytest.approx([2.0, 3.0, -1.0], abs=0.05)


def test_entropy_of_a_policy_with_a_known_action_distribution():
    torch.manual_seed(0)
    policy = build_policy(GruConfig(hidden=16, encoder_layers=1)).eval()
    logits = torch.tensor([0.0, 1.0, -1.0, 0.5, 2.0])
    out = policy.head[-1]
    with torch.no_grad():  # every token: softmax(logits), whatever the maze and the history
        out.weight.zero_()
        out.bias.copy_(logits)
    q = torch.softmax(logits, 0).numpy()
    mazes = [MazeSpec(size=4).sample(np.random.default_rng(i)) for i in range(5)]
    gen = torch.Generator().manual_seed(0)
    h = mean_entropy(policy, mazes, 3, 1.0, gen, "cpu", chunk=2)
    assert h == pytest.approx(float(-(q * np.log(q)).sum()), rel=1e-5)
    with torch.no_grad():
        out.bias.zero_()
    assert mean_entropy(policy, mazes, 3, 1.0, gen, "cpu") == pytest.approx(math.log(5))


def fake_bank(folder, tail_losses):
    """An index and a features file of bank models 0..len-1 (sha256 "sha<k>")."""
    folder.mkdir(parents=True)
    models = [
        {"name": f"m{k}", "seed": k, "key": f"key{k}", "file": f"m{k}.pt", "sha256": f"sha{k}"}
        for k in range(len(tail_losses))
    ]
    (folder / INDEX).write_text(json.dumps({"models": models}))
    features = []
    for m, score in zip(models, tail_losses, strict=True):
        f = {k: 0.3 + 0.01 * m["seed"] for k in ("exact_pass@1", "exact_pass@256")}
        f |= {"tail@8": 0.3, "tail@32": 0.2, "entropy": 0.1 + 0.02 * (m["seed"] % 2)}
        f |= {"tail_loss@8": score, "tail_loss@32": score / 2}
        features.append(m | f)
    (folder / FEATURES).write_text(json.dumps({"models": features}))
    return folder / FEATURES


def bank_sweep(root, gains):
    """GRPO and gamma 0.5 at N = 8 from bank model k (seed k); gamma 0.5 = GRPO + gains[k] on
    every maze."""
    grpo = np.linspace(0.1, 0.5, 8)
    for k, gain in enumerate(gains):
        for gamma, p in (("0", grpo), ("0.5", grpo + gain)):
            run = fake_run(root, f"g{gamma}_s{k}", [f"focal.gamma={gamma}", f"seed={k}"], p,
                           tb=False)  # fmt: skip
            metrics = json.loads((run / "metrics.json").read_text())
            metrics["base_model"] = {"source": "bank", "key": f"key{k}", "sha256": f"sha{k}"}
            (run / "metrics.json").write_text(json.dumps(metrics))
    return root


def test_gains_per_bank_model_against_the_features(tmp_path):
    features = fake_bank(tmp_path / "bank", [0.04, 0.01, 0.03, 0.02, 0.05])
    # gains rise with the score except models 1 and 3 swapped: ranks of the score 4, 1, 3, 2,
    # 5 against the gains' 4, 2, 3, 1, 5: Spearman 1 - 6 (0 + 1 + 0 + 1 + 0) / (5 * 24) = 0.9
    gains = [0.06, 0.04, 0.05, 0.02, 0.10]
    sweep = bank_sweep(tmp_path / "sweep", gains)
    study = bank_study(find_runs(sweep), features)
    assert set(study.gains) == {("F-GRPO γ 0.5", 8)}
    assert study.gains[("F-GRPO γ 0.5", 8)] == pytest.approx(
        {f"sha{k}": g for k, g in enumerate(gains)}
    )
    # read at an evaluation step (`--at-step`): the bank models are still known
    at_20 = bank_study([at_step(r, 20) for r in find_runs(sweep)], features)
    assert at_20.gains[("F-GRPO γ 0.5", 8)] == pytest.approx(study.gains[("F-GRPO γ 0.5", 8)])
    lines = markdown_of(study)
    row = next(x for x in lines if x.startswith("| F-GRPO γ 0.5 | 8 |"))
    cells = [x.strip() for x in row.strip("|").split("|")]
    # p-value: t = rho sqrt((n - 2) / (1 - rho^2)) = 3.576 on 3 df, two-sided: 0.037
    assert 2 * stats.t.sf(0.9 * math.sqrt(3 / 0.19), 3) == pytest.approx(0.0374, abs=1e-4)
    assert cells[2:5] == ["5", "+5.4", "+0.90 (0.04)"]
    # pass@1 = 0.3 + 0.01 k: gain on k (points) by least squares, per sd of k (1.5811)
    slope = np.polyfit(np.arange(5), 100 * np.array(gains), 1)[0] * np.std(np.arange(5), ddof=1)
    assert cells[5].startswith(f"{slope:+.1f} [")
    assert cells[7] == "-"  # tail@8 is the same for every model: no slope
    # the theory's score per bank model in the features table
    assert "| m3 | 0.3300 | 0.3300 | 0.3000 | 0.2000 | 0.1200 | 0.0200 | 0.0100 |" in lines
    assert plot_base_models(Output(tmp_path, "mazerl-summarize sweep"), study).exists()


def test_the_section_says_when_there_are_too_few_bank_models(tmp_path, monkeypatch):
    features = fake_bank(tmp_path / "bank", [0.04, 0.01])
    monkeypatch.setattr(bank, "BANK_DIR", features.parent)
    sweep = bank_sweep(tmp_path / "sweep", [0.06, 0.04])
    assert "## What in a base model decides the gain" not in summarize(sweep)  # not its study
    (sweep / "study.yaml").write_text(f"sections:\n  - {SECTIONS}:base_models\n")
    text = summarize(sweep)
    assert "## What in a base model decides the gain" in text
    assert "2 bank model(s): a regression needs at least 3." in text
    assert not (sweep / "base_models.png").exists()


def test_committed_features_agree_with_the_bank_index():
    """The features file's exact pass@1 and pass@256 are the index's (both exact, on the same
    1,024 ID mazes), for every bank model."""
    index = json.loads((BANK_DIR / INDEX).read_text())["models"]
    features = json.loads((BANK_DIR / FEATURES).read_text())
    assert features["set"]["mazes"] == 1024
    by_sha = {m["sha256"]: m for m in features["models"]}
    assert set(by_sha) == {e["sha256"] for e in index}
    for e in index:
        for k in ("exact_pass@1", "exact_pass@256"):
            assert by_sha[e["sha256"]][k] == pytest.approx(e["exact"]["id"][k], abs=1e-6)
