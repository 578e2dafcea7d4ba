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
from mazerl.core.provenance import code_identity

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
    assert m["code"] == code_identity()  # the code it ran: this checkout, as this process sees it
    bad = run_app(
        "mazerl.apps.categorical", f"hydra.run.dir={tmp_path}/bad", "sim.group_size=1", cwd=tmp_path
    )
    assert bad.returncode == 2 and "sim.group_size must be >= 2" in bad.stderr


def test_categorical_sweep_is_summarized(tmp_path):
    from mazerl.analysis import summarize

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


def compose_preset(name: str):
    from hydra import compose, initialize_config_dir

    from mazerl.apps.schema import register_configs
    from mazerl.core.config import CONF_DIR

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(
            config_name="categorical",
            overrides=[f"experiment={name}"],
            return_hydra_config=True,
        )


def test_paper_categorical_preset_is_the_papers_setting():
    from mazerl.categorical.sim import masses

    cfg = compose_preset("paper_categorical")
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
    # the reading that reproduces Fig. 2: Adam (no weight decay) on the ratio surrogate
    assert (s.optimizer, cfg.algo.advantage, cfg.algo.loss, cfg.algo.loss_agg_mode) == (
        "adam",
        "drgrpo",
        "clip",
        "token-mean",
    )
    params = cfg.hydra.sweeper.params
    assert params["sim.group_size"].split(",") == [str(2**k) for k in range(1, 18)]
    assert params["focal.gamma"] == "0,1"
    assert "paper_figure" in cfg.hydra.callbacks
    p, _ = masses(SimConfig(**s))
    assert p == pytest.approx(0.6301, abs=1e-4)  # the paper's correct mass 0.63
    # the literal reading is one preset away and differs only in the update
    literal = compose_preset("paper_categorical_literal")
    assert (literal.sim.optimizer, literal.algo.loss) == ("sgd", "linear")
    same = {**cfg.sim, "optimizer": "sgd"} == dict(literal.sim)
    assert same and {**cfg.algo, "loss": "linear"} == dict(literal.algo)


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def preset_run(name: str, **sim) -> dict:
    """Simulate one cell of a preset's update with some `sim` settings changed."""
    cfg = compose_preset(name)
    algo = AlgoConfig(**cfg.algo)
    gamma = sim.pop("gamma")
    return simulate(SimConfig(**{**cfg.sim, **sim}), algo, FocalConfig(gamma, 1.0))["final"]


def test_paper_reading_shows_the_three_regimes_of_fig2(one_thread):
    """The shipped update on 1,000 actions (100 correct, logits 5/3/0, p = 0.70, one correct
    answer's mass 0.0066) for 600 steps: regime I at N = 2 (Q_pos rises a little, M_ret stays
    near 1), II at N = 32 (Q_pos near 1, M_ret collapses), III at N = 2,048 (both near 1,
    every correct answer sampled about 14 times a step); gamma 1 keeps more M_ret in II."""
    small = dict(num_actions=1000, num_correct=100, steps=600, log_every=600)
    final = {
        (n, g): {
            k: np.mean(v)
            for k, v in preset_run("paper_categorical", **small, group_size=n, gamma=g).items()
        }
        for n, g in ((2, 0.0), (32, 0.0), (32, 1.0), (2048, 0.0))
    }
    p = 0.7036  # initial Q_pos: (e^5 + 99 e^3) / (e^5 + 99 e^3 + 900)
    assert final[2, 0.0]["m_ret"] > 0.9 and 0.73 < final[2, 0.0]["q_pos"] < 0.85
    assert final[32, 0.0]["m_ret"] < 0.5 and final[32, 0.0]["q_pos"] > 0.95
    assert final[2048, 0.0]["m_ret"] > 0.99 and final[2048, 0.0]["q_pos"] > 0.95
    assert final[32, 1.0]["m_ret"] > final[32, 0.0]["m_ret"] + 0.2
    assert all(f["q_pos"] > p for f in final.values())  # Q_pos rises for every N


def test_literal_reading_does_not_move(one_thread):
    """SGD at lr 1e-2 on pi(a) itself moves each logit by about lr x pi(a): at the paper's
    128,000 actions 20 steps change Q_pos by under 1e-6; the shipped reading by over 1e-3."""
    cells = dict(steps=20, log_every=20, group_size=256, gamma=0.0)
    p = 0.630075
    literal = np.mean(preset_run("paper_categorical_literal", **cells)["q_pos"])
    shipped = np.mean(preset_run("paper_categorical", **cells)["q_pos"])
    assert abs(literal - p) < 1e-6 and shipped - p > 1e-3


def test_paper_sweep_writes_fig2_and_regimes_table(tmp_path):
    sweep = tmp_path / "sweep"
    out = run_app(
        "mazerl.apps.categorical",
        "-m",
        "experiment=paper_categorical",
        "sim.group_size=2,8,64",
        "sim.steps=10",
        "sim.replicas=2",
        "sim.num_actions=50",
        "sim.num_correct=5",
        f"hydra.sweep.dir={sweep}",
        "threads=1",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert (sweep / "fig2.png").stat().st_size > 20_000
    table = (sweep / "regimes.md").read_text()
    assert "| N | Pr(B_tau) | Q_pos gamma 0 | M_ret gamma 0 (replica range) |" in table
    assert table.count("\n| ") == 4  # header and N = 2, 8, 64
    assert "Concentration zone (mean M_ret < 0.5), gamma 1:" in table
    rows = (sweep / "regimes.csv").read_text().splitlines()
    assert rows[0].startswith("N,gamma,tail_miss,q_pos,m_ret") and len(rows) == 7


def test_concentration_zone_and_curve_group_sizes():
    from mazerl.categorical.report import curve_group_sizes, zone

    m_ret = {2: 0.99, 8: 0.4, 16: 0.05, 32: 0.45, 64: 0.97}
    cells = {(n, 0.0): {"final": {"m_ret": v}} for n, v in m_ret.items()}
    cells[4, 1.0] = {"final": {"m_ret": 0.9}}
    assert zone(cells, 0.0) == (8, 32)
    assert zone(cells, 1.0) is None
    assert curve_group_sizes([2**k for k in range(1, 18)]) == [2, 256, 8192, 131072]
    assert curve_group_sizes([2, 4, 8, 16, 32, 64, 128]) == [2, 8, 32, 128]
