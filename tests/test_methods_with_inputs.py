"""The estimators that ask for more than the rewards: SELF (the prompt's greedy answer),
Differential Smoothing and the unlikeliness reward (each sample's mean token log-probability).
Each against its paper's formula by hand and against the released code's computation
rewritten here; the step hands each only what it asks for, the greedy pass runs only for an
estimator that asks for it and draws no random number, and each trains end to end."""

import dataclasses

import numpy as np
import pytest
import scipy.stats
import torch
from conftest import estimator_kwargs, metrics

from mazerl.algos import ADVANTAGES, AlgoConfig, FocalConfig, check_algo, estimator_inputs
from mazerl.algos.advantages import declares_all_equal_zero
from mazerl.algos.unlikely import average_ranks
from mazerl.apps.bench import Drawn, GuidedPolicy, trainer
from mazerl.categorical.config import SimConfig
from mazerl.categorical.sim import simulate
from mazerl.core.errors import ConfigError
from mazerl.envs.spec import MazeSpec
from mazerl.policy import build_policy
from mazerl.policy.gru import GruConfig
from mazerl.rollout import generate
from mazerl.train import step as step_module
from mazerl.train.collect import greedy_correct

EPS = 1e-6


def t(x, dtype=torch.float64):
    return torch.tensor(x, dtype=dtype)


# ---------------------------------------------------------------- SELF


def _reference_self(group: list[float], greedy_reward: float) -> list[float]:
    """tajwarfahim/maxrl, verl/trainer/ppo/core_algos.py, compute_self_paper_outcome_advantage:
    GRPO's (score - mean) / (torch.std (unbiased) + 1e-6), times 0 where the greedy answer's
    reward (`reward_baselines`) == 1."""
    scores = torch.tensor(group, dtype=torch.float64)
    adv = (scores - scores.mean()) / (torch.std(scores) + EPS)
    return (adv * (greedy_reward != 1)).tolist()


def test_self_by_hand_and_against_maxrls_code():
    rewards = t([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])
    greedy = torch.tensor([False, True, False, True])
    adv = ADVANTAGES.get("self")(rewards, greedy_correct=greedy)
    # group 0: mean 1/4, unbiased variance (9/16 + 3 * 1/16) / 3 = 1/4, std 1/2:
    #   A = (3/4) / (1/2) = 1.5 and (-1/4) / (1/2) = -0.5 (up to eps)
    # group 1: its greedy answer is correct: 0 (GRPO would give +-0.866)
    # groups 2 and 3: all equal: 0, whatever the greedy answer
    by_hand = [[1.5, -0.5, -0.5, -0.5], [0] * 4, [0] * 4, [0] * 4]
    torch.testing.assert_close(adv, t(by_hand), atol=1e-5, rtol=0)
    reference = [
        _reference_self(g, float(c)) for g, c in zip(rewards.tolist(), greedy, strict=True)
    ]
    torch.testing.assert_close(adv, t(reference), atol=1e-12, rtol=0)
    assert torch.equal(adv[1:], torch.zeros(3, 4, dtype=torch.float64))  # exactly 0
    assert declares_all_equal_zero("self")


# ---------------------------------------------------------------- Differential Smoothing


def _reference_dsgrpo(group: list[float], logp: list[float], c_correct, c_wrong) -> list[float]:
    """tajwarfahim/maxrl, verl/trainer/ppo/core_algos.py, compute_dsgrpo_outcome_advantage:
    (score - mean) / (std with unbiased=False + 1e-6), then - c_correct * [score > 0] * l
    + c_wrong * [score == 0] * l, l the response's mean old log-prob."""
    scores, lp = torch.tensor(group, dtype=torch.float64), torch.tensor(logp, dtype=torch.float64)
    adv = (scores - scores.mean()) / (scores.std(unbiased=False) + EPS)
    adv = adv - c_correct * (scores > 0).double() * lp
    return (adv + c_wrong * (scores == 0).double() * lp).tolist()


def test_diff_smoothing_by_hand_and_against_maxrls_code():
    rewards = t([[1, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    logp = t([[-0.5, -1.0, -2.0, -0.25]] * 3)
    adv = ADVANTAGES.get("diff_smoothing")(rewards, logp_mean=logp, c_correct=0.05, c_wrong=0.05)
    # group 0: mean 1/4, population std sqrt(3/16) = 0.4330127: GRPO part
    #   0.75 / 0.4330127 = sqrt(3) = 1.7320508 and -0.25 / 0.4330127 = -1/sqrt(3) = -0.5773503;
    #   correct sample 0: - 0.05 * (-0.5) = +0.025; wrong samples: + 0.05 * l = -0.05, -0.1,
    #   -0.0125
    # group 1 (all correct): GRPO part 0, - 0.05 * l: 0.025, 0.05, 0.1, 0.0125
    # group 2 (all wrong): GRPO part 0, + 0.05 * l: -0.025, -0.05, -0.1, -0.0125
    by_hand = [
        [1.7320508 + 0.025, -0.5773503 - 0.05, -0.5773503 - 0.1, -0.5773503 - 0.0125],
        [0.025, 0.05, 0.1, 0.0125],
        [-0.025, -0.05, -0.1, -0.0125],
    ]
    torch.testing.assert_close(adv, t(by_hand), atol=1e-5, rtol=0)
    reference = [
        _reference_dsgrpo(g, lp, 0.05, 0.05)
        for g, lp in zip(rewards.tolist(), logp.tolist(), strict=True)
    ]
    torch.testing.assert_close(adv, t(reference), atol=1e-12, rtol=0)
    assert not declares_all_equal_zero("diff_smoothing")  # all-equal groups keep the l term


# ---------------------------------------------------------------- the unlikeliness reward


def _reference_unlikely(group: list[float], logp: list[float], rank_penalty: float) -> list[float]:
    """AndreHe02/rewarding-unlikely-release, verl/trainer/ppo/ray_lean_trainer.py,
    _compute_advantages: ranks argsort(argsort(l)) / G, score * (1 - rank * rank_penalty), then
    (score' - mean) / (torch.std (unbiased) + 1e-6)."""
    scores, lp = torch.tensor(group, dtype=torch.float64), torch.tensor(logp, dtype=torch.float64)
    ranks = torch.argsort(torch.argsort(lp)) / len(group)
    scores = scores * (1 - ranks * rank_penalty)
    return ((scores - scores.mean()) / (torch.std(scores) + EPS)).tolist()


def test_unlikely_by_hand_and_against_the_authors_code():
    rewards = t([[1, 0, 0, 1], [1, 1, 1, 1], [0, 0, 0, 0]])
    logp = t([[-0.5, -1.0, -2.0, -0.25]] * 3)
    adv = ADVANTAGES.get("unlikely")(rewards, logp_mean=logp, beta=0.25)
    # ranks by l (0 the least likely): -2 -> 0, -1 -> 1, -0.5 -> 2, -0.25 -> 3
    # group 0: r' = [1 - 0.25 * 2/4, 0, 0, 1 - 0.25 * 3/4] = [0.875, 0, 0, 0.8125]; mean
    #   0.421875, deviations 0.453125, -0.421875, -0.421875, 0.390625; unbiased variance
    #   0.7138671875 / 3 = 0.2379557, std 0.4878071: A = 0.92890, -0.86484, -0.86484, 0.80078
    # group 1 (all correct): r' = [0.875, 0.9375, 1, 0.8125], mean 0.90625, deviations
    #   -0.03125, 0.03125, 0.09375, -0.09375; variance 0.01953125 / 3, std 0.0806872:
    #   A = -0.38729, 0.38729, 1.16189, -1.16189 (not zero: the least likely pulled up)
    # group 2 (all wrong): r' = 0: A = 0
    by_hand = [
        [0.92890, -0.86484, -0.86484, 0.80078],
        [-0.38729, 0.38729, 1.16189, -1.16189],
        [0, 0, 0, 0],
    ]
    torch.testing.assert_close(adv, t(by_hand), atol=2e-5, rtol=0)
    reference = [
        _reference_unlikely(g, lp, 0.25)
        for g, lp in zip(rewards.tolist(), logp.tolist(), strict=True)
    ]
    torch.testing.assert_close(adv, t(reference), atol=1e-12, rtol=0)
    assert torch.equal(adv[2], torch.zeros(4, dtype=torch.float64))  # exactly 0
    assert not declares_all_equal_zero("unlikely")  # all-correct groups keep a signal


def test_unlikely_ties_share_their_average_rank():
    # l = [-1, -1, -3, -0.5]: ranks 1.5, 1.5, 0, 3; r = [1, 1, 0, 0]: r' = 1 - 0.25 * 1.5/4 =
    # 0.90625 for both correct samples, so the group is two equal rewards and two zeros:
    # A = +-0.453125 / (0.453125 * 2 / sqrt(3)) = +-sqrt(3)/2 = +-0.8660254
    adv = ADVANTAGES.get("unlikely")(
        t([[1, 1, 0, 0]]), logp_mean=t([[-1.0, -1.0, -3.0, -0.5]]), beta=0.25
    )
    torch.testing.assert_close(adv, t([[0.8660254, 0.8660254, -0.8660254, -0.8660254]]),
                               atol=1e-5, rtol=0)  # fmt: skip
    # an all-correct group of one answer sampled four times: r' all equal, A exactly 0
    same = ADVANTAGES.get("unlikely")(t([[1, 1, 1, 1]]), logp_mean=t([[-0.7] * 4]), beta=0.25)
    assert torch.equal(same, torch.zeros(1, 4, dtype=torch.float64))
    # the ranks are scipy's average ranks (less 1), ties or not
    gen = np.random.default_rng(0)
    values = gen.integers(0, 5, size=(50, 8)).astype(np.float64)
    expected = scipy.stats.rankdata(values, axis=1) - 1
    np.testing.assert_array_equal(average_ranks(torch.as_tensor(values)).numpy(), expected)


def test_unlikely_is_grpo_where_every_correct_sample_is_one_answer():
    """In a single-solution maze every correct sample is the same move sequence, so the same l:
    the correct samples tie, share one rank and one factor c = 1 - beta rank / G, r' = c r,
    and A = c (r - mean r) / (c std(r) + eps) = GRPO's with eps / c. The method then acts
    only through eps (it acts where a maze has several routes: braid mazes)."""
    rewards = t([[1, 0, 0, 1]])
    # l: wrong -2.0 (rank 0) and -0.1 (rank 3); the two correct samples -0.3 tie at ranks 1
    # and 2: average 1.5, c = 1 - 0.25 * 1.5 / 4 = 0.90625
    logp = t([[-0.3, -2.0, -0.1, -0.3]])
    adv = ADVANTAGES.get("unlikely")(rewards, logp_mean=logp, beta=0.25)
    grpo = ADVANTAGES.get("grpo")
    torch.testing.assert_close(adv, grpo(rewards, eps=1e-6 / 0.90625), atol=1e-12, rtol=0)
    # r - mean = +-0.5, std (unbiased) = sqrt(1/3) = 0.5773503, + eps / c = 1.1e-6:
    # A = +-0.5 / 0.5773514 = +-0.8660238
    torch.testing.assert_close(adv, t([[0.8660238, -0.8660238, -0.8660238, 0.8660238]]),
                               atol=1e-7, rtol=0)  # fmt: skip
    assert (adv - grpo(rewards)).abs().max() < 1e-6


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("diff_smoothing", {"c_correct": 0.05, "c_wrong": -1}, "c_wrong must be a finite"),
        ("unlikely", {"beta": float("nan")}, "beta must be a finite"),
        ("self", {"greedy_correct": True}, "greedy_correct: computed by the step, not a setting$"),
    ],
)
def test_bad_settings_are_one_line_naming_the_key(name, kwargs, message):
    with pytest.raises(ConfigError, match=rf"^algo.advantage_kwargs: {message}"):
        check_algo(AlgoConfig(advantage=name, advantage_kwargs=kwargs), 8)


# ---------------------------------------------------------------- what the step hands over


def test_each_estimator_declares_its_inputs_by_keyword():
    asks = {name: estimator_inputs(name) for name in ADVANTAGES.names()}
    assert asks["self"] == ("greedy_correct",)
    assert asks["diff_smoothing"] == asks["unlikely"] == ("logp_mean",)
    assert asks["grpo"] == asks["maxrl"] == asks["w_reinforce"] == ()


def _step(name: str):
    learner, step = trainer("experiment=smoke", f"algo={name}")
    spec = MazeSpec(size=3)
    mazes = Drawn([spec.sample(np.random.default_rng(i)) for i in range(step.train.num_prompts)])
    return learner, step, mazes


def test_the_greedy_pass_runs_only_when_asked_and_leaves_the_samples_alone(monkeypatch):
    calls = []
    real = step_module.greedy_correct
    monkeypatch.setattr(
        step_module, "greedy_correct", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    batches = {}
    for name in ("grpo", "diff_smoothing", "self"):
        learner, step, mazes = _step(name)
        batches[name] = step.collect(learner, mazes, 0)
    assert len(calls) == 1  # SELF's collection only
    assert batches["grpo"].greedy_correct is None is batches["diff_smoothing"].greedy_correct
    # the same sampled rollouts with and without the greedy pass
    assert torch.equal(batches["grpo"].rollouts.actions, batches["self"].rollouts.actions)
    # the greedy answers: those of the policy's argmax, one per prompt
    learner, step, mazes = _step("self")
    by_argmax = generate(learner.policy, mazes.mazes, 1, greedy=True)
    assert torch.equal(batches["self"].greedy_correct, by_argmax.reward > 0)
    # handed over to the estimator and logged
    _, group_metrics = step.advantages(batches["self"])
    assert group_metrics["greedy_correct"] == pytest.approx(
        float((by_argmax.reward > 0).float().mean())
    )


def test_the_step_hands_over_only_what_the_estimator_asks_for(monkeypatch):
    seen = {}

    def spy(rewards, *, logp_mean):
        seen["logp_mean"] = logp_mean
        return torch.zeros_like(rewards)

    monkeypatch.setitem(ADVANTAGES._entries, "spy_for_test", spy)
    learner, step, mazes = _step("grpo")
    batch = step.collect(learner, mazes, 0)
    step = dataclasses.replace(step, algo=AlgoConfig(advantage="spy_for_test"))
    step.advantages(batch)
    r = batch.rollouts
    # each response's mean log-prob: the sum of its tokens' over its length, by hand per row
    by_row = [float(r.logp[b, : r.length[b]].mean()) for b in range(len(r.reward))]
    got = seen["logp_mean"]
    assert got.shape == (len(r.mazes), r.group_size)
    np.testing.assert_allclose(got.flatten().numpy(), by_row, rtol=1e-6)
    # an estimator of rewards alone is handed nothing else: the registry refuses an extra
    with pytest.raises(ConfigError, match="takes no argument 'logp_mean'"):
        ADVANTAGES.call("grpo", r.rewards_by_group, logp_mean=got)


@pytest.mark.parametrize("share", [False, True])
def test_greedy_generation_takes_the_argmax_and_draws_nothing(share):
    torch.manual_seed(0)
    policy = build_policy(GruConfig(hidden=32, encoder_layers=2))
    mazes = [MazeSpec(size=4).sample(np.random.default_rng(i)) for i in range(6)]
    state, gen = torch.get_rng_state(), torch.Generator().manual_seed(3)
    gen_state = gen.get_state()
    r = generate(policy, mazes, 2, greedy=True, generator=gen, share=share)
    assert torch.equal(torch.get_rng_state(), state) and torch.equal(gen.get_state(), gen_state)
    # every token is the most likely under the policy, given the same earlier tokens
    logits = policy(r.prompts, 2, r.actions, r.positions)
    on = r.mask.bool()
    assert torch.equal(logits.argmax(-1)[on], r.actions[on])
    again = generate(policy, mazes, 2, greedy=True, share=share)
    assert torch.equal(again.actions, r.actions)
    assert torch.equal(r.actions[0::2], r.actions[1::2])  # a group's greedy answers agree
    # a policy steered onto each solution (+100 on its moves' logits) answers correctly
    guided = GuidedPolicy(policy, mazes, 1, bonus=100.0)
    assert greedy_correct(guided, mazes, "cpu", allow_revisits=False).all()


# ---------------------------------------------------------------- end to end


@pytest.mark.parametrize(
    "name", [n for n in ADVANTAGES.names() if estimator_inputs(n)]
)  # fmt: skip
def test_each_trains_end_to_end(train, name):
    _, run = train(f"algo={name}", "train.iterations=2", "train.eval_every=0")
    got = metrics(run)
    assert got["iterations"] == 2
    assert ("greedy_correct" in got["train"]) == ("greedy_correct" in estimator_inputs(name))


def test_the_categorical_simulation_hands_over_the_inputs():
    """One-action answers: the mean log-prob is the sampled action's, the greedy answer the
    argmax. The anchor (a correct action) has the largest logit, so every replica's greedy
    answer is correct: SELF's advantages are all 0 and no logit moves."""
    cfg = SimConfig(
        num_actions=200, num_correct=20, num_rare=10, group_size=8, steps=20, lr=0.3,
        replicas=4, anchor_logit=3.0, correct_logit=1.0, rare_logit=-1.5, incorrect_logit=-1.0,
    )  # fmt: skip
    still = simulate(cfg, AlgoConfig(advantage="self"), FocalConfig(gamma=0.0))["curves"]
    assert set(still["q_pos"]) == {still["q_pos"][0]}
    for name in ("diff_smoothing", "unlikely"):
        algo = AlgoConfig(advantage=name, advantage_kwargs=estimator_kwargs(name))
        moved = simulate(cfg, algo, FocalConfig(gamma=0.0))["curves"]
        assert moved["q_pos"][-1] != moved["q_pos"][0], name


def test_the_llm_bridges_refuse_them_in_one_line(capsys):
    """TRL and verl hand an estimator neither greedy answers nor (verl 0.9.1: only to its own
    optimal-token-baseline estimators) the sampling log-probabilities: such an estimator is
    not a bridge name, and asking for one says why in one line (exit 2 from the command)."""
    from mazerl.apps.llm import main
    from mazerl.llm.objective import check_objective, estimator_names

    for name in ADVANTAGES.names():
        needs = estimator_inputs(name)
        assert (name in estimator_names()) == (not needs), name
        if not needs:
            continue
        start = f"advantage estimator {name!r} runs in mazerl-train only: it needs {needs[0]}: "
        with pytest.raises(ConfigError, match=f"^{start}") as e:
            check_objective(name, 0.5, {})
        assert "\n" not in str(e.value)
        with pytest.raises(SystemExit) as exit_:
            main(["verl-args", "--algo", name])
        assert exit_.value.code == 2 and capsys.readouterr().err == f"error: {e.value}\n"
