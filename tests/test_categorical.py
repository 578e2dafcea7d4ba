"""The categorical abstraction: closed forms against Monte Carlo, the shape of Pr(B_tau),
the redistribution effect, and the simulation app."""

import json

import numpy as np
import pytest
import torch
from conftest import run_app

from mazerl.algos import AlgoConfig, FocalConfig, group_advantages, policy_loss
from mazerl.algos.tail_miss import (
    active,
    all_equal,
    monte_carlo,
    peak_group_size,
    peak_group_size_approx,
    tail_miss,
)
from mazerl.categorical.sim import SimConfig, simulate

GRID = [(n, p, rho) for n in (1, 2, 4, 8, 16, 64) for p in (0.2, 0.5, 0.8) for rho in (0.02, 0.3)]


@pytest.mark.parametrize(("n", "p", "rho"), GRID)
def test_closed_forms_inside_monte_carlo_confidence_interval(n, p, rho):
    tau = rho * p
    mc = monte_carlo(n, p, tau, trials=40_000, rng=np.random.default_rng([n, int(p * 10), 7]))
    for name, exact in (
        ("tail_miss", tail_miss(n, p, tau)),
        ("active", active(n, p)),
        ("all_equal", all_equal(n, p)),
    ):
        assert abs(mc[name] - exact) <= 4 * mc[f"{name}_se"] + 1e-4, (name, mc[name], exact)


def test_tail_miss_by_hand_and_shape():
    # N = 2, p = 0.5, tau = 0.1: 0.9^2 - 0.5^2 - 0.4^2 = 0.81 - 0.25 - 0.16 = 0.40
    assert tail_miss(2, 0.5, 0.1) == pytest.approx(0.40)
    assert tail_miss(1, 0.3, 0.01) == pytest.approx(0.0, abs=1e-15)  # zero at N = 1
    n = np.arange(1, 3000)
    for p, tau in ((0.3, 0.015), (0.8, 0.008), (0.5, 0.005)):
        values = tail_miss(n, p, tau)
        steps = np.sign(np.diff(values))
        assert steps[0] > 0 and steps[-1] < 0  # rises, then falls
        assert np.count_nonzero(np.diff(steps) != 0) == 1  # a single interior maximum
        assert tail_miss(50_000, p, tau) < 1e-3  # decays at large N


def test_peak_group_size_matches_brute_force_and_the_paper_table():
    for p in (0.8, 0.5, 0.3, 0.2):
        for rho in (0.01, 0.05, 0.1, 0.2):
            n = np.arange(1, 5000)
            assert peak_group_size(p, rho * p)[0] == n[np.argmax(tail_miss(n, p, rho * p))]
    # the reference notes' integer argmax table, row mu = 0.3: N* = 14, 9, 8, 6
    assert [peak_group_size(0.3, r * 0.3)[0] for r in (0.01, 0.05, 0.1, 0.2)] == [14, 9, 8, 6]
    # the paper's categorical setting (p = 0.64, tau = 6.3e-5): peak at intermediate N
    assert 16 <= peak_group_size(0.64, 6.3e-5)[0] <= 4096


@pytest.mark.parametrize("p", [0.2, 0.3, 0.8, 0.9])
@pytest.mark.parametrize("rho", [0.001, 0.01, 0.05])
def test_peak_closed_form_approximation(p, rho):
    tau = rho * p
    b, c = 1 - p, p - tau
    assert max(b, c) >= 1.5 * min(b, c)
    dense = np.linspace(1, 20_000, 2_000_001)
    exact = dense[np.argmax(tail_miss(dense, p, tau))]
    assert peak_group_size_approx(p, tau) == pytest.approx(exact, rel=0.02)


def test_one_grpo_step_leaves_unsampled_logits_and_lowers_their_probability():
    """Redistribution: the advantages of a group sum to zero, so the logits of unsampled
    answers get no gradient, yet their probability falls as sampled-correct mass grows."""
    z = torch.tensor([[2.0, 1.0, 1.0, 0.5, 0.5]], dtype=torch.float64, requires_grad=True)
    sample = torch.tensor([[0, 0, 1, 2]])  # answers 3 and 4 are not sampled
    rewards = torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)  # answer 0 correct
    algo = AlgoConfig()
    adv, _ = group_advantages(rewards, algo, FocalConfig(gamma=0.0))
    assert adv.sum().abs() < 1e-12
    logp = torch.log_softmax(z, -1).gather(1, sample).reshape(-1, 1)
    loss, _ = policy_loss(
        algo,
        logp=logp,
        old_logp=logp.detach(),
        advantages=adv.reshape(-1),
        mask=torch.ones_like(logp),
    )
    loss.backward()
    before = torch.softmax(z.detach(), -1)
    z_new = z.detach() - 1.0 * z.grad
    after = torch.softmax(z_new, -1)
    assert z.grad[0, 3:].abs().max() < 1e-15  # unsampled logits unchanged
    assert (after[0, 3:] < before[0, 3:]).all()  # yet their probability falls
    assert after[0, 0] > before[0, 0]


def test_simulation_tracks_masses_and_focal_keeps_rare_mass():
    cfg = SimConfig(
        num_actions=200,
        num_correct=20,
        num_rare=10,
        group_size=8,
        steps=150,
        lr=0.3,
        replicas=32,
        anchor_logit=3.0,
        correct_logit=1.0,
        rare_logit=-1.5,
        incorrect_logit=-1.0,
    )
    base = simulate(cfg, AlgoConfig(), FocalConfig(gamma=0.0))
    focal = simulate(cfg, AlgoConfig(), FocalConfig(gamma=1.0))
    for out in (base, focal):
        c = out["curves"]
        assert c["step"][0] == 0 and c["step"][-1] == 150
        assert c["m_ret"][0] == pytest.approx(1.0) and c["forgotten"][0] == 0.0
        assert c["q_pos"][-1] > c["q_pos"][0]
        assert len(out["final"]["rare_mass"]) == 32
    assert np.mean(focal["final"]["rare_mass"]) > np.mean(base["final"]["rare_mass"])
    assert np.mean(focal["final"]["forgotten"]) < np.mean(base["final"]["forgotten"])


def test_categorical_app_writes_plots_and_metrics(tmp_path):
    out = run_app(
        "mazerl.apps.categorical",
        f"hydra.run.dir={tmp_path}/run",
        "sim.steps=20",
        "sim.replicas=4",
        "sim.num_actions=100",
        "sim.num_correct=10",
        "sim.num_rare=4",
        "threads=1",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    run = tmp_path / "run"
    for png in ("tail_miss.png", "masses.png"):
        assert (run / png).stat().st_size > 10_000
    m = json.loads((run / "metrics.json").read_text())
    assert set(m["curves"]) == {"grpo, gamma=0.5", "grpo, gamma=0"}
    assert 0 < m["theory"]["p"] < 1 and m["hparams"]["group_size"] == 8
    bad = run_app(
        "mazerl.apps.categorical", f"hydra.run.dir={tmp_path}/bad", "sim.group_size=1", cwd=tmp_path
    )
    assert bad.returncode == 2 and "sim.group_size must be >= 2" in bad.stderr


def test_categorical_sweep_is_summarized(tmp_path):
    from mazerl.apps.summarize import summarize

    sweep = tmp_path / "sweep"
    out = run_app(
        "mazerl.apps.categorical",
        "-m",
        "sim.group_size=2,8",
        "focal.gamma=0,1",
        "sim.steps=10",
        "sim.replicas=2",
        "sim.num_actions=50",
        "sim.num_correct=5",
        "sim.num_rare=2",
        f"hydra.sweep.dir={sweep}",
        "threads=1",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    table = summarize(sweep)
    assert "4 runs, 4 finished" in table and "| q_pos | m_ret | rare_mass | forgotten |" in table
    assert all(json.loads(p.read_text())["final"] for p in sweep.glob("*/metrics.json"))
    assert len(list(sweep.glob("*/metrics.json"))) == 4
    assert (sweep / "final_vs_n.png").stat().st_size > 5000


def test_paper_categorical_preset_is_the_papers_setting():
    from hydra import compose, initialize_config_dir

    from mazerl.apps.categorical import CategoricalConfig  # noqa: F401 (registers the schema)
    from mazerl.categorical.sim import masses
    from mazerl.core.config import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            config_name="categorical",
            overrides=["experiment=paper_categorical"],
            return_hydra_config=True,
        )
    s = cfg.sim
    assert (s.num_actions, s.num_correct, s.steps, s.lr, s.replicas) == (
        128000,
        10000,
        1000,
        1e-2,
        4,
    )
    assert (s.anchor_logit, s.correct_logit, s.incorrect_logit) == (5.0, 3.0, 0.0)
    assert (s.reward_correct, s.reward_wrong) == (1.0, -1.0)
    assert (cfg.algo.advantage, cfg.algo.loss, cfg.algo.loss_agg_mode) == (
        "drgrpo",
        "linear",
        "token-mean",
    )
    params = cfg.hydra.sweeper.params
    assert params["sim.group_size"].split(",") == [str(2**k) for k in range(1, 18)]
    assert params["focal.gamma"] == "0,1"
    p, _ = masses(SimConfig(**s))
    assert p == pytest.approx(0.6301, abs=1e-4)  # the paper's correct mass 0.63
